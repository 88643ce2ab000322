// swift-tools-version:6.2
import PackageDescription

// libFuzzer targets for receipt-forge (the swift-protobuf FuzzTesting pattern): each is built with
// `-sanitize=fuzzer,address` by scripts/fuzz.sh and fed the corpus's seeds and token dictionary.
// Inputs that ever crashed live in FailCases/ and are replayed by the main package's ordinary tests.
let package = Package(
    name: "FuzzTesting",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "receipt-forge", path: "..")],
    targets: [
        // Declares libFuzzer's driver; FuzzSupport runs it from each target's entry point.
        .target(name: "CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
        // BER/DER in: ReceiptInput (transport), ReceiptContainer (PKCS#7) and AppReceipt (payload).
        .executableTarget(name: "FuzzReceiptDecoder", dependencies: ["FuzzSupport", .product(name: "_ForgeFuzzingInternals", package: "receipt-forge")]),
        // The reference validator on arbitrary bytes, under the TEST roots.
        .executableTarget(
            name: "FuzzReferenceValidator",
            dependencies: [
                "FuzzSupport",
                .product(name: "_ForgeFuzzingInternals", package: "receipt-forge"), .product(name: "StoreForge", package: "receipt-forge"),
            ]),
        // forge inspect's text and JSON rendering of whatever the validator could read.
        .executableTarget(
            name: "FuzzInspect",
            dependencies: [
                "FuzzSupport",
                .product(name: "_ForgeFuzzingInternals", package: "receipt-forge"), .product(name: "StoreForge", package: "receipt-forge"),
            ]),
        // forge mutate --replay on arbitrary JSON.
        .executableTarget(name: "FuzzRecipeReplay", dependencies: ["FuzzSupport", .product(name: "StoreForge", package: "receipt-forge")]),
        // forge mutate --replay on JWS recipes: JSON recipes, and bytes read as choices of JWS mutations.
        .executableTarget(
            name: "FuzzJWSRecipeReplay",
            dependencies: ["FuzzSupport", .product(name: "StoreForge", package: "receipt-forge")]),
        // forge serve's verifyReceipt service: request bodies, receipts, fault specs and scenario timelines.
        .executableTarget(
            name: "FuzzVerifyReceipt",
            dependencies: [
                "FuzzSupport", .product(name: "_ForgeFuzzingInternals", package: "receipt-forge"), .product(name: "StoreForge", package: "receipt-forge"),
            ]),
        // The reference JWS verifier and the JWS inspector on arbitrary text.
        .executableTarget(
            name: "FuzzJWSVerifier",
            dependencies: [
                "FuzzSupport", .product(name: "_ForgeFuzzingInternals", package: "receipt-forge"), .product(name: "StoreForge", package: "receipt-forge"),
            ]),
        // The manifest, baseline, mapping, results and harness-message decoders.
        .executableTarget(
            name: "FuzzDecoders",
            dependencies: [
                "FuzzSupport",
                .product(name: "ReceiptCorpus", package: "receipt-forge"), .product(name: "ReceiptConformance", package: "receipt-forge"),
            ]),
        // forge serve's App Store Server API: method, path, query, Host, X-Forge-Now, bearer token (open, a valid token,
        // claims the fuzzer writes signed with the server's key, raw headers) and bodies, on two apps' customers.
        .executableTarget(
            name: "FuzzServerAPI",
            dependencies: ["FuzzSupport", .product(name: "_ForgeFuzzingInternals", package: "receipt-forge"), .product(name: "StoreForge", package: "receipt-forge")]),
        // forge serve --ocsp: OCSP requests by POST and GET, answers by path, and the control route's specs.
        .executableTarget(name: "FuzzOCSP", dependencies: ["FuzzSupport", .product(name: "_ForgeFuzzingInternals", package: "receipt-forge")]),
        // Xcode .storekit files: the reader, forge storekit show's listing and JSON, the scenario, and what forge makes of it.
        .executableTarget(
            name: "FuzzStoreKitConfiguration",
            dependencies: ["FuzzSupport", .product(name: "StoreForge", package: "receipt-forge")]),
        // forge run merge: results.json shards merged against the corpus, and the reports written from them.
        .executableTarget(
            name: "FuzzRunMerge",
            dependencies: [
                "FuzzSupport", .product(name: "ReceiptConformance", package: "receipt-forge"), .product(name: "ReceiptCorpus", package: "receipt-forge"),
            ]),
        // A webhook's answer, over loopback: the HTTP client notifications and realtime requests are sent with, the
        // attempt it records, and forge bench realtime's reading of the body. Run in a network namespace of its own
        // (scripts/fuzz.sh), as a redirect can name any host.
        .executableTarget(
            name: "FuzzWebhookAnswer",
            dependencies: [
                "FuzzSupport", .product(name: "_ForgeFuzzingInternals", package: "receipt-forge"),
            ]),
    ]
)
