public import _ForgeSupport
public import AppStoreVocabulary

/// A real receipt shape to reproduce (receipt-facts §b.1, §b.4, §d.1; interop/README.md).
///
/// Each preset fixes everything observed to be constant in its kind of real receipt: container
/// layout, digest and signer algorithm, certificate chain and order, SET ordering, opaque-value
/// length and attribute version, date style, the fields present and the sandbox constants.
public enum Preset: String, Sendable, Hashable, CaseIterable, Codable {
    /// Current App Store (WWDR G5, from Aug 2023): SHA-256, DER, three certificates leaf first.
    case appstore
    /// App Store before the SHA-256 switch: SHA-1 digest, SHA-1-era chain, no type 1722.
    case appstoreSHA1 = "appstore-sha1"
    /// Sandbox/TestFlight (G5): as `appstore` with `ProductionSandbox` and the sandbox constants.
    case sandbox
    /// Xcode StoreKit testing, 2020–2021: BER indefinite, rsaEncryption, `+hhmm` dates.
    case xcode2020 = "xcode-2020"
    /// Xcode StoreKit testing, 2023: BER indefinite, sha256WithRSAEncryption, `Z` dates.
    case xcode2023 = "xcode-2023"

    public var isXcode: Bool { self == .xcode2020 || self == .xcode2023 }

    /// The receipt type (attribute 0) this preset writes unless the scenario says otherwise.
    public var receiptType: ReceiptType {
        switch self {
        case .appstore, .appstoreSHA1: .production
        case .sandbox: .productionSandbox
        case .xcode2020, .xcode2023: .xcode
        }
    }

    /// Opaque value (type 4): 16 bytes at version 2 from the App Store, 8 bytes at version 1 from Xcode.
    public var opaqueValue: (length: Int, version: Int) { isXcode ? (8, 1) : (16, 2) }

    /// How dates are written. Xcode 2020 wrote local time with a `+hhmm` offset (here +01:00, as in
    /// the 2020 sample); everything else writes `Z`.
    public var dateStyle: ReceiptDate.Style { self == .xcode2020 ? .offset(minutes: 60) : .zulu }

    /// Sandbox receipts carry fixed values where production ones carry real ids.
    public var isSandbox: Bool { self == .sandbox }

    /// The original purchase date (type 18) every sandbox receipt carries.
    public static let sandboxOriginalPurchaseDate = "2013-08-01T07:00:00Z"
}
