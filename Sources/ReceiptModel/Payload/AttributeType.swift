/// What is known of each receipt attribute type: its name and the ASN.1 value it carries.
///
/// Documented types come from Apple's "Receipt Fields"; undocumented ones are those seen in real
/// receipts (receipt-facts §b.4), named as the open-source parsers name them. Types not listed here
/// are still decoded and re-encoded untouched: the catalogue only adds names and value decoding.
public struct AttributeType: Sendable, Hashable {
    /// The ASN.1 value an attribute of this type holds inside its OCTET STRING.
    public enum ValueKind: String, Sendable, Hashable, Codable {
        case utf8String, ia5String, integer
        /// Bytes that are not an ASN.1 value (opaque value, SHA-1 hash, unknown blobs).
        case raw
        /// A nested `SET OF ReceiptAttribute` (in-app purchase).
        case attributeSet
    }

    public let code: Int
    public let name: String
    public let kind: ValueKind
    /// Whether Apple documents the type (undocumented ones "must be ignored" by validators).
    public let isDocumented: Bool

    public static func named(_ code: Int) -> AttributeType? { catalogue[code] }

    // Receipt-level types.
    public static let receiptType = 0
    public static let appItemID = 1
    public static let bundleID = 2
    public static let appVersion = 3
    public static let opaqueValue = 4
    public static let sha1Hash = 5
    public static let receiptCreationDate = 12
    public static let inAppPurchase = 17
    public static let originalPurchaseDate = 18
    public static let originalAppVersion = 19
    public static let expirationDate = 21
    // In-app purchase types.
    public static let quantity = 1701
    public static let productID = 1702
    public static let transactionID = 1703
    public static let purchaseDate = 1704
    public static let originalTransactionID = 1705
    public static let originalPurchaseDateIAP = 1706
    public static let productType = 1707
    public static let subscriptionExpirationDate = 1708
    public static let webOrderLineItemID = 1711
    public static let cancellationDate = 1712
    public static let isTrialPeriod = 1713
    public static let isInIntroOfferPeriod = 1719
    public static let promotionalOfferID = 1721

    private static let catalogue: [Int: AttributeType] = {
        let entries: [(Int, String, ValueKind, Bool)] = [
            (0, "receipt_type", .utf8String, false),
            (1, "app_item_id", .integer, false),
            (2, "bundle_id", .utf8String, true),
            (3, "application_version", .utf8String, true),
            (4, "opaque_value", .raw, true),
            (5, "sha1_hash", .raw, true),
            (6, "undocumented_6", .raw, false),
            (7, "undocumented_7", .raw, false),
            (8, "request_date", .ia5String, false),
            (9, "fulfillment_tool_version", .integer, false),
            (10, "age_rating", .ia5String, false),
            (11, "developer_id", .integer, false),
            (12, "receipt_creation_date", .ia5String, true),
            (13, "os_version", .integer, false),
            (14, "undocumented_14", .integer, false),
            (15, "download_id", .integer, false),
            (16, "version_external_identifier", .integer, false),
            (17, "in_app", .attributeSet, true),
            (18, "original_purchase_date", .ia5String, false),
            (19, "original_application_version", .utf8String, true),
            (20, "undocumented_20", .utf8String, false),
            (21, "expiration_date", .ia5String, true),
            (22, "preorder_date", .ia5String, false),
            (23, "vpp_string", .utf8String, false),
            (25, "undocumented_25", .integer, false),
            (1701, "quantity", .integer, true),
            (1702, "product_id", .utf8String, true),
            (1703, "transaction_id", .utf8String, true),
            (1704, "purchase_date", .ia5String, true),
            (1705, "original_transaction_id", .utf8String, true),
            (1706, "original_purchase_date", .ia5String, true),
            (1707, "product_type", .integer, false),
            (1708, "expires_date", .ia5String, true),
            (1709, "undocumented_1709", .utf8String, false),
            (1710, "undocumented_1710", .integer, false),
            (1711, "web_order_line_item_id", .integer, true),
            (1712, "cancellation_date", .ia5String, true),
            (1713, "is_trial_period", .integer, false),
            (1714, "undocumented_1714", .utf8String, false),
            (1715, "undocumented_1715", .utf8String, false),
            (1716, "undocumented_1716", .utf8String, false),
            (1717, "undocumented_1717", .utf8String, false),
            (1718, "undocumented_1718", .utf8String, false),
            (1719, "is_in_intro_offer_period", .integer, true),
            (1721, "promotional_offer_id", .utf8String, true),
            (1722, "undocumented_1722", .integer, false),
        ]
        return Dictionary(uniqueKeysWithValues: entries.map { ($0.0, AttributeType(code: $0.0, name: $0.1, kind: $0.2, isDocumented: $0.3)) })
    }()
}
