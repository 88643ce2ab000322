/// What a step of a reference validator checks, shared by the receipt validator and the JWS verifier so a step both
/// run has one name: the raw value is the text users see (`FAIL bundle id: …`, a report's `checks[].name`).
package enum CheckName: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    // Both artefacts.
    case signature
    case chain
    case bundleID = "bundle id"
    case environment
    // Receipts (Apple's documented on-device steps).
    case parse
    case structure
    case payload
    case receiptType = "receipt type"
    case appVersion = "app version"
    case creationDate = "creation date"
    case deviceHash = "device hash"
    case expiration
    // StoreKit 2 JWS.
    case format
    case header
    case revocation
    case appAppleID = "appAppleId"
    case nested
    // iOS 6 transaction receipts.
    case transaction

    package var description: String { rawValue }
}
