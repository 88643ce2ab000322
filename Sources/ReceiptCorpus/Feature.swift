/// What a vector may require of a validator beyond "judge this receipt". A harness declares the features
/// it supports in its `hello`; vectors needing others are SKIP, with the reason, never scored.
public enum Feature: String, Codable, Sendable, Hashable, CaseIterable, Comparable {
    case deviceHash = "device-hash"
    case xcode
    case sha1
    case robustness
    case large
    case transportDecoding = "transport-decoding"
    case online

    /// The manifest's `features` entry: what declaring the feature promises.
    public var summary: String {
        switch self {
        case .deviceHash: "The validator checks attribute 5 against a device identifier (context.deviceId)."
        case .xcode:
            "The validator accepts Xcode StoreKit receipts when the StoreKit certificate is the trust anchor, and Xcode-signed StoreKit 2 JWS checked as environment Xcode when the Xcode JWS certificate is."
        case .sha1: "The validator accepts SHA-1-era receipts."
        case .robustness: "Hostile or truncated input; the validator must reject without crashing or hanging."
        case .large: "Receipts over 100 KiB with hundreds of purchases, and StoreKit 2 JWS over 256 KiB (a verifier may refuse those under apple-compatible)."
        case .transportDecoding:
            "The validator takes the receipt as text too (base64 and its variants, PEM), not only as DER bytes, as verifyReceipt's receipt-data or a server's request body carries it."
        case .online:
            "The verifier checks revocation online, as Apple's with enableOnlineChecks: OCSP for the leaf and the intermediate at their AIA URLs, at the wall clock. The certificates name a TEST responder on 127.0.0.1:6960 (context.ocsp) that forge run starts for the run."
        }
    }

    /// Whether a target without a hello of its own (exec, exit, mappings) is credited with it unless `--features`
    /// says otherwise: every feature but `online`, which needs a verifier that goes online and is off unless declared.
    public var creditedByDefault: Bool { self != .online }

    /// Every feature, by name, as the manifest lists them.
    public static var descriptions: [String: String] {
        Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0.summary) })
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What `forge run --artifacts` and a harness's hello (`"artifacts": ["receipt", "jws"]`) select: app receipts,
/// StoreKit 2 JWS or iOS 6 transaction receipts. Every ``ArtifactKind`` belongs to one group; a run judges the vectors of the groups it selects
/// and leaves the others out (not sent, not scored, not counted), so a receipt validator is never charged with JWS.
public enum ArtifactGroup: String, Codable, Sendable, Hashable, CaseIterable, Comparable {
    /// PKCS#7 app receipts (`ArtifactKind.receipt`).
    case receipt
    /// StoreKit 2 signed data: transactions, renewal info, app transactions, notifications (`ArtifactKind` jws-*).
    case jws
    /// iOS 6 transaction receipts (`ArtifactKind.transactionReceipt`).
    case transactionReceipt = "transaction-receipt"

    /// How help texts and reports name the group in a sentence.
    public var displayName: String {
        switch self {
        case .receipt: "app receipts"
        case .jws: "StoreKit 2 JWS"
        case .transactionReceipt: "iOS 6 transaction receipts"
        }
    }

    /// An unknown name is refused naming the known ones, not with Codable's text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let group = ArtifactGroup(rawValue: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not an artifact; known: \(Self.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = group
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }
}

/// The harness and results schemas list the groups by name.
extension ArtifactGroup: SchemaEnumeration {}

extension ArtifactKind {
    /// The group `--artifacts` selects this kind by.
    public var group: ArtifactGroup {
        switch self {
        case .receipt: .receipt
        case .transactionReceipt: .transactionReceipt
        case .jwsTransaction, .jwsRenewal, .jwsAppTransaction, .jwsNotification, .jwsRealtime: .jws
        }
    }
}
