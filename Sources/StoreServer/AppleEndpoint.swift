/// Apple's two verifyReceipt endpoints, as `forge serve` mounts them.
package enum AppleEndpoint: String, Sendable, Hashable, CaseIterable, Codable {
    /// `https://buy.itunes.apple.com/verifyReceipt`
    case production
    /// `https://sandbox.itunes.apple.com/verifyReceipt`
    case sandbox

    /// The path on the stand-in server.
    package var path: String { self == .production ? "/verifyReceipt" : "/sandbox/verifyReceipt" }
}

/// verifyReceipt's `status` (receipt-facts §b.7): a value, with Apple's meaning and retry advice.
package struct VerifyReceiptStatus: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    package let rawValue: Int64
    package init(rawValue: Int64) { self.rawValue = rawValue }
    package init(_ rawValue: Int64) { self.rawValue = rawValue }

    package static let valid = Self(0)
    /// The request was not an HTTP POST, or its body was not a readable JSON object.
    package static let unreadableRequest = Self(21000)
    /// `receipt-data` missing or malformed (Apple: also a temporary problem).
    package static let malformedReceiptData = Self(21002)
    package static let notAuthenticated = Self(21003)
    package static let sharedSecretMismatch = Self(21004)
    package static let serverUnavailable = Self(21005)
    /// Valid, but the subscription has expired (iOS 6-style receipts; `forge serve --legacy-expired-status`).
    package static let subscriptionExpired = Self(21006)
    package static let sandboxReceiptInProduction = Self(21007)
    package static let productionReceiptInSandbox = Self(21008)
    package static let internalDataAccessError = Self(21009)
    package static let accountNotFound = Self(21010)

    /// 21100–21199: internal data access errors, the only statuses that carry `is-retryable`.
    package var isInternalRange: Bool { (21100...21199).contains(rawValue) }

    /// Whether Apple's documentation lists the code (so a fault may send it).
    package var isDocumented: Bool { (0 == rawValue) || (21000...21010).contains(rawValue) || isInternalRange }

    package var meaning: String {
        switch rawValue {
        case 0: "valid"
        case 21000: "the request was not an HTTP POST or its JSON could not be read"
        case 21001: "no longer sent"
        case 21002: "receipt-data was malformed or missing, or the service had a temporary problem"
        case 21003: "the receipt could not be authenticated"
        case 21004: "the shared secret does not match the account's"
        case 21005: "the receipt server is temporarily unavailable"
        case 21006: "valid, but the subscription has expired"
        case 21007: "a test-environment (sandbox) receipt was sent to production"
        case 21008: "a production receipt was sent to the test environment"
        case 21009: "internal data access error; retry later"
        case 21010: "the user account cannot be found or has been deleted"
        case 21100...21199: "internal data access error"
        default: "not a status Apple documents"
        }
    }

    package var description: String { "\(rawValue) (\(meaning))" }
}
