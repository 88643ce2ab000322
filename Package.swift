// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),  // SE-0335
    .enableUpcomingFeature("MemberImportVisibility"),  // SE-0444
    .enableUpcomingFeature("InternalImportsByDefault"),  // SE-0409
]

let package = Package(
    name: "receipt-forge",
    targets: [
        // The receipt as bytes: BER in, DER or chosen BER out. No crypto, no dependencies.
        .target(name: "ReceiptModel", swiftSettings: swiftSettings),
        .testTarget(name: "ReceiptModelTests", dependencies: ["ReceiptModel"], swiftSettings: swiftSettings),
    ]
)
