#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport

/// The fields of a decoded receipt payload, read leniently: a missing or mistyped field is nil,
/// never an error, so a validator can say exactly which check failed and an inspector can show
/// whatever is there. Unknown attribute types stay available through `payload`.
public struct AppReceipt: Sendable, Hashable {
    public let payload: DecodedPayload
    public let inAppPurchases: [InAppPurchase]

    public init(payload: DecodedPayload) throws(ReceiptDecodingError) {
        self.payload = payload
        var purchases: [InAppPurchase] = []
        for entry in payload.entries where entry.attribute.type == AttributeType.inAppPurchase {
            do throws(ReceiptDecodingError) {
                purchases.append(InAppPurchase(payload: try DecodedPayload(berEncoded: entry.attribute.value, region: "in-app purchase byte")))
            } catch {
                throw ReceiptDecodingError(error.code, at: entry.offset, "in-app purchase attribute: \(error)", region: "payload byte")
            }
        }
        inAppPurchases = purchases
    }

    public init(payloadBytes: [UInt8]) throws(ReceiptDecodingError) {
        try self.init(payload: DecodedPayload(berEncoded: payloadBytes))
    }

    private func attribute(_ type: Int) -> ReceiptAttribute? { payload.payload.first(type) }

    public var receiptType: String? { attribute(AttributeType.receiptType)?.stringValue }
    public var appItemID: Int64? { attribute(AttributeType.appItemID)?.integerValue }
    public var bundleID: String? { attribute(AttributeType.bundleID)?.stringValue }
    /// The bundle-id attribute's value as encoded, tag and length included: the device hash covers these bytes.
    public var bundleIDValue: [UInt8]? { attribute(AttributeType.bundleID)?.value }
    public var appVersion: String? { attribute(AttributeType.appVersion)?.stringValue }
    public var opaqueValue: [UInt8]? { attribute(AttributeType.opaqueValue)?.value }
    public var sha1Hash: [UInt8]? { attribute(AttributeType.sha1Hash)?.value }
    public var creationDateText: String? { attribute(AttributeType.receiptCreationDate)?.stringValue }
    public var creationDate: Date? { creationDateText.flatMap(ReceiptDate.parse) }
    public var originalAppVersion: String? { attribute(AttributeType.originalAppVersion)?.stringValue }
    public var originalPurchaseDateText: String? { attribute(AttributeType.originalPurchaseDate)?.stringValue }
    public var expirationDateText: String? { attribute(AttributeType.expirationDate)?.stringValue }
    /// Type 21; nil when absent or empty (App Store receipts carry none, Xcode's the 4001 sentinel).
    public var expirationDate: Date? { expirationDateText.flatMap(ReceiptDate.parse) }
    public var ageRating: String? { attribute(10)?.stringValue }

    /// The device hash a receipt for this device must carry:
    /// SHA-1(device id ‖ opaque value ‖ bundle-id attribute value with its UTF8String tag and length).
    /// Returns the bytes to hash; the caller hashes them (this module holds no crypto).
    public func deviceHashInput(deviceID: [UInt8]) -> [UInt8]? {
        guard let opaque = opaqueValue, let bundle = bundleIDValue else { return nil }
        return deviceID + opaque + bundle
    }
}

/// One in-app purchase (attribute 17): a nested payload.
public struct InAppPurchase: Sendable, Hashable {
    public let payload: DecodedPayload

    public init(payload: DecodedPayload) { self.payload = payload }

    private func attribute(_ type: Int) -> ReceiptAttribute? { payload.payload.first(type) }
    private func date(_ type: Int) -> Date? { attribute(type)?.stringValue.flatMap(ReceiptDate.parse) }

    public var quantity: Int64? { attribute(AttributeType.quantity)?.integerValue }
    public var productID: String? { attribute(AttributeType.productID)?.stringValue }
    public var transactionID: String? { attribute(AttributeType.transactionID)?.stringValue }
    public var originalTransactionID: String? { attribute(AttributeType.originalTransactionID)?.stringValue }
    public var purchaseDate: Date? { date(AttributeType.purchaseDate) }
    public var originalPurchaseDate: Date? { date(AttributeType.originalPurchaseDateIAP) }
    public var productType: Int64? { attribute(AttributeType.productType)?.integerValue }
    public var expiresDate: Date? { date(AttributeType.subscriptionExpirationDate) }
    public var webOrderLineItemID: Int64? { attribute(AttributeType.webOrderLineItemID)?.integerValue }
    /// Set only when refunded or cancelled; an empty IA5String means "not cancelled".
    public var cancellationDate: Date? { date(AttributeType.cancellationDate) }
    public var isTrialPeriod: Bool? { attribute(AttributeType.isTrialPeriod)?.integerValue.map { $0 != 0 } }
    public var isInIntroOfferPeriod: Bool? { attribute(AttributeType.isInIntroOfferPeriod)?.integerValue.map { $0 != 0 } }
    public var promotionalOfferID: String? {
        attribute(AttributeType.promotionalOfferID)?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    }
}
