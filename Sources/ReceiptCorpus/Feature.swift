/// What a vector may require of a validator beyond "judge this receipt". A harness declares the features
/// it supports in its `hello`; vectors needing others are SKIP, with the reason, never scored.
public enum Feature: String, Codable, Sendable, Hashable, CaseIterable, Comparable {
    case deviceHash = "device-hash"
    case xcode
    case sha1
    case robustness
    case large
    case transportDecoding = "transport-decoding"
    case jws

    /// The manifest's `features` entry: what declaring the feature promises.
    public var summary: String {
        switch self {
        case .deviceHash: "The validator checks attribute 5 against a device identifier (context.deviceId)."
        case .xcode:
            "The validator accepts Xcode StoreKit receipts when the StoreKit certificate is the trust anchor, and Xcode-signed StoreKit 2 JWS checked as environment Xcode when the Xcode JWS certificate is."
        case .sha1: "The validator accepts SHA-1-era receipts."
        case .robustness: "Hostile or truncated input; the validator must reject without crashing or hanging."
        case .large: "Receipts over 100 KiB with hundreds of purchases, and StoreKit 2 JWS over 256 KiB (a verifier may refuse those under apple-compatible)."
        case .jws:
            "The validator verifies StoreKit 2 JWS (context.artifact jws-*): ES256, x5c to the anchor, bundleId, environment, appAppleId."
        case .transportDecoding:
            "The validator takes the receipt as text too (base64 and its variants, PEM), not only as DER bytes, as verifyReceipt's receipt-data or a server's request body carries it."
        }
    }

    /// Every feature, by name, as the manifest lists them.
    public static var descriptions: [String: String] {
        Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0.summary) })
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
