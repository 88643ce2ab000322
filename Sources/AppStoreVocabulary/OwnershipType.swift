/// How the customer holds a transaction (Apple's `InAppOwnershipType`: StoreKit 2's and the Server API's
/// `inAppOwnershipType`, verifyReceipt's `in_app_ownership_type`): bought, or reached through Family Sharing.
///
/// A value Apple adds later is kept as written (``unknown(_:)``), as Apple's libraries keep the raw value beside
/// the enum; ``allCases`` are the values Apple documents, the ones a scenario or a query may name.
public enum OwnershipType: Sendable, Hashable, RawRepresentable, CaseIterable, Codable {
    /// The customer bought it.
    case purchased
    /// A family member bought it and shares it through Family Sharing.
    case familyShared
    /// A value Apple does not document (yet).
    case unknown(String)

    public static let allCases: [OwnershipType] = [.purchased, .familyShared]

    public init(rawValue: String) {
        self =
            switch rawValue {
            case "PURCHASED": .purchased
            case "FAMILY_SHARED": .familyShared
            default: .unknown(rawValue)
            }
    }

    public var rawValue: String {
        switch self {
        case .purchased: "PURCHASED"
        case .familyShared: "FAMILY_SHARED"
        case .unknown(let raw): raw
        }
    }

    public init(from decoder: any Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// One of the values Apple documents, or nil: what a scenario or a query may name.
    public init?(documented rawValue: String) {
        let value = OwnershipType(rawValue: rawValue)
        guard Self.allCases.contains(value) else { return nil }
        self = value
    }
}
