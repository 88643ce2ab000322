#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import _ForgeSupport
public import AppStoreVocabulary

/// The decoded form Apple's `verifyReceipt` returns, rendered from one ``Receipt`` value: read from a receipt's own
/// bytes (``Receipt/init(_:)``: the server judges what it is sent) or from the store the receipt is made from
/// (StoreForge: `forge make --format json`, which decodes nothing it made). Either way one function writes each field.
///
/// Shapes follow receipt-facts §b.7: dates as triplets (`x` = `"2019-10-15 14:01:41 Etc/GMT"`,
/// `x_ms` = milliseconds as a string, `x_pst` = Pacific time), almost every value a string
/// (`"quantity": "1"`, `"is_trial_period": "false"`), and `adam_id`, `app_item_id`, `download_id`,
/// `version_external_identifier` as numbers. Auto-renewable subscriptions add `latest_receipt_info`,
/// `pending_renewal_info` and `latest_receipt`.
public enum VerifyReceiptJSON {
    /// What the bytes cannot say: the verifyReceipt-only fields, and what Apple's server knows that the
    /// receipt on the device does not (`forge serve`'s timeline).
    public struct Extras: Sendable {
        /// `cancellation_reason` by transaction id ("0" other, "1" app issue).
        public var cancellationReasons: [String: Int]
        /// `in_app_ownership_type` by transaction id, as the store holds it: a receipt carries none, so one not
        /// named here is `PURCHASED`.
        public var ownership: [String: OwnershipType] = [:]
        /// The base64 receipt echoed as `latest_receipt`.
        public var latestReceipt: String?
        /// The time of the request (`request_date`); the receipt's own type 8 or creation date when nil.
        public var requestDate: Date?
        /// The time auto-renew status is judged at: a subscription whose latest period ended before it is not renewing.
        public var now: Date?
        /// The server's transactions, newer than the receipt's (`latest_receipt_info`); the receipt's own when nil.
        public var latestTransactions: [Purchase]?
        /// The server's renewal state per subscription (`pending_renewal_info`); derived from the receipt when nil.
        public var pendingRenewals: [PendingRenewal]?
        /// `exclude-old-transactions`: only the latest transaction of each subscription in `latest_receipt_info`.
        public var excludeOldTransactions: Bool

        public init(
            cancellationReasons: [String: Int] = [:], latestReceipt: String? = nil, requestDate: Date? = nil, now: Date? = nil,
            latestTransactions: [Purchase]? = nil, pendingRenewals: [PendingRenewal]? = nil, excludeOldTransactions: Bool = false
        ) {
            self.cancellationReasons = cancellationReasons
            self.latestReceipt = latestReceipt
            self.requestDate = requestDate
            self.now = now
            self.latestTransactions = latestTransactions
            self.pendingRenewals = pendingRenewals
            self.excludeOldTransactions = excludeOldTransactions
        }
    }

    /// What verifyReceipt reports of a receipt: its fields as the receipt carries them (a date as the instant its text
    /// names, an absent or empty attribute as nil), purchases in the receipt's order.
    public struct Receipt: Sendable, Hashable {
        public var receiptType: String?
        public var appItemID: Int64?
        public var bundleID: String?
        public var appVersion: String?
        /// Attribute 15.
        public var downloadID: Int64?
        /// Attribute 16.
        public var versionExternalIdentifier: Int64?
        public var creationDate: Date?
        /// Attribute 8, the receipt's own request date (empty in sandbox and Xcode receipts).
        public var requestDate: Date?
        public var originalPurchaseDate: Date?
        public var originalAppVersion: String?
        public var expirationDate: Date?
        public var inApp: [Purchase]

        public init(
            receiptType: String?, appItemID: Int64?, bundleID: String?, appVersion: String?, downloadID: Int64?, versionExternalIdentifier: Int64?,
            creationDate: Date?, requestDate: Date?, originalPurchaseDate: Date?, originalAppVersion: String?, expirationDate: Date?, inApp: [Purchase]
        ) {
            self.receiptType = receiptType
            self.appItemID = appItemID
            self.bundleID = bundleID
            self.appVersion = appVersion
            self.downloadID = downloadID
            self.versionExternalIdentifier = versionExternalIdentifier
            self.creationDate = creationDate
            self.requestDate = requestDate
            self.originalPurchaseDate = originalPurchaseDate
            self.originalAppVersion = originalAppVersion
            self.expirationDate = expirationDate
            self.inApp = inApp
        }

        /// The fields of a decoded receipt.
        public init(_ receipt: AppReceipt) {
            let payload = receipt.payload.payload
            self.init(
                receiptType: receipt.receiptType, appItemID: receipt.appItemID, bundleID: receipt.bundleID, appVersion: receipt.appVersion,
                downloadID: payload.first(15)?.integerValue, versionExternalIdentifier: payload.first(16)?.integerValue, creationDate: receipt.creationDate,
                requestDate: payload.first(8)?.stringValue.flatMap(ReceiptDate.parse), originalPurchaseDate: receipt.originalPurchaseDateText.flatMap(ReceiptDate.parse),
                originalAppVersion: receipt.originalAppVersion, expirationDate: receipt.expirationDate, inApp: receipt.inAppPurchases.map(Purchase.init))
        }
    }

    /// What verifyReceipt reports of one in-app purchase record (``Receipt``'s conventions).
    public struct Purchase: Sendable, Hashable {
        public var quantity: Int64?
        public var productID: String?
        public var transactionID: String?
        public var originalTransactionID: String?
        public var purchaseDate: Date?
        public var originalPurchaseDate: Date?
        /// Attribute 1707 (3: auto-renewable); absent from Xcode receipts.
        public var productType: Int64?
        public var expiresDate: Date?
        public var webOrderLineItemID: Int64?
        public var cancellationDate: Date?
        public var isTrialPeriod: Bool?
        public var isInIntroOfferPeriod: Bool?
        /// Nil when absent or empty.
        public var promotionalOfferID: String?

        public init(
            quantity: Int64?, productID: String?, transactionID: String?, originalTransactionID: String?, purchaseDate: Date?, originalPurchaseDate: Date?,
            productType: Int64?, expiresDate: Date?, webOrderLineItemID: Int64?, cancellationDate: Date?, isTrialPeriod: Bool?, isInIntroOfferPeriod: Bool?,
            promotionalOfferID: String?
        ) {
            self.quantity = quantity
            self.productID = productID
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.purchaseDate = purchaseDate
            self.originalPurchaseDate = originalPurchaseDate
            self.productType = productType
            self.expiresDate = expiresDate
            self.webOrderLineItemID = webOrderLineItemID
            self.cancellationDate = cancellationDate
            self.isTrialPeriod = isTrialPeriod
            self.isInIntroOfferPeriod = isInIntroOfferPeriod
            self.promotionalOfferID = promotionalOfferID
        }

        /// The fields of a decoded in-app purchase record.
        public init(_ purchase: InAppPurchase) {
            self.init(
                quantity: purchase.quantity, productID: purchase.productID, transactionID: purchase.transactionID,
                originalTransactionID: purchase.originalTransactionID, purchaseDate: purchase.purchaseDate, originalPurchaseDate: purchase.originalPurchaseDate,
                productType: purchase.productType, expiresDate: purchase.expiresDate, webOrderLineItemID: purchase.webOrderLineItemID,
                cancellationDate: purchase.cancellationDate, isTrialPeriod: purchase.isTrialPeriod, isInIntroOfferPeriod: purchase.isInIntroOfferPeriod,
                promotionalOfferID: purchase.promotionalOfferID)
        }
    }

    /// The whole response body with status 0, of a decoded receipt.
    public static func response(for receipt: AppReceipt, extras: Extras = Extras()) -> JSONValue { response(for: Receipt(receipt), extras: extras) }

    /// The whole response body with status 0.
    public static func response(for receipt: Receipt, extras: Extras = Extras()) -> JSONValue {
        let type = receipt.receiptType ?? ""
        // The environment the receipt type names (ProductionVPPSandbox is Sandbox); a type Apple never writes, as itself.
        let environment = Environment(receiptType: type)?.rawValue ?? type
        var members: JSONObject = [
            ("status", .integer(0)), ("environment", .string(environment)),
            ("receipt", receiptObject(receipt, extras: extras)),
        ]
        let isSubscription = { (purchase: Purchase) in purchase.productType == 3 || (purchase.productType == nil && purchase.expiresDate != nil) }
        let subscriptions = (extras.latestTransactions ?? receipt.inApp).filter(isSubscription)
        if !subscriptions.isEmpty {
            // Newest first, as Apple's responses are observed to be (clients read element 0); not documented.
            var latestFirst = subscriptions.sorted { ($0.purchaseDate ?? .distantPast) > ($1.purchaseDate ?? .distantPast) }
            if extras.excludeOldTransactions {
                var seen = Set<String>()
                latestFirst = latestFirst.filter { seen.insert($0.originalTransactionID ?? $0.transactionID ?? "").inserted }
            }
            if let latest = extras.latestReceipt { members.append(("latest_receipt", .string(latest))) }
            members.append(("latest_receipt_info", .array(latestFirst.map { transaction($0, extras: extras) })))
            let pending = extras.pendingRenewals ?? derivedRenewals(latestFirst, now: extras.now)
            members.append(("pending_renewal_info", .array(pending.map(\.json))))
        }
        return .object(members)
    }

    /// Without a server-side history: one entry per subscription, renewing unless its latest period was
    /// cancelled or ended before `now` (then the customer is taken to have cancelled).
    static func derivedRenewals(_ latestFirst: [Purchase], now: Date?) -> [PendingRenewal] {
        var pending: [PendingRenewal] = []
        var seen = Set<String>()
        for purchase in latestFirst {
            let original = purchase.originalTransactionID ?? purchase.transactionID ?? ""
            guard seen.insert(original).inserted else { continue }
            let lapsed = purchase.cancellationDate != nil || (now.flatMap { now in purchase.expiresDate.map { $0 <= now } } ?? false)
            pending.append(
                PendingRenewal(
                    originalTransactionID: original, productID: purchase.productID ?? "", autoRenewStatus: !lapsed,
                    expirationIntent: lapsed ? .voluntary : nil))
        }
        return pending
    }

    /// The `receipt` object of a decoded receipt.
    public static func receiptObject(_ receipt: AppReceipt, extras: Extras = Extras()) -> JSONValue { receiptObject(Receipt(receipt), extras: extras) }

    /// The `receipt` object.
    public static func receiptObject(_ receipt: Receipt, extras: Extras = Extras()) -> JSONValue {
        var members = JSONObject()
        if let type = receipt.receiptType { members.append(("receipt_type", .string(type))) }
        let itemID = receipt.appItemID ?? 0
        members += [("adam_id", .integer(itemID)), ("app_item_id", .integer(itemID))]
        if let bundle = receipt.bundleID { members.append(("bundle_id", .string(bundle))) }
        if let version = receipt.appVersion { members.append(("application_version", .string(version))) }
        members.append(("download_id", .integer(receipt.downloadID ?? 0)))
        members.append(("version_external_identifier", .integer(receipt.versionExternalIdentifier ?? 0)))
        if let created = receipt.creationDate { members += triplet("receipt_creation_date", created) }
        let request = extras.requestDate ?? receipt.requestDate ?? receipt.creationDate
        if let request { members += triplet("request_date", request) }
        if let original = receipt.originalPurchaseDate { members += triplet("original_purchase_date", original) }
        if let originalVersion = receipt.originalAppVersion { members.append(("original_application_version", .string(originalVersion))) }
        if let expiration = receipt.expirationDate { members += triplet("expiration_date", expiration) }
        let inApp = receipt.inApp.sorted { ($0.purchaseDate ?? .distantPast) < ($1.purchaseDate ?? .distantPast) }
        members.append(("in_app", .array(inApp.map { transaction($0, extras: extras) })))
        return .object(members)
    }

    static func transaction(_ purchase: Purchase, extras: Extras) -> JSONValue {
        var members: JSONObject = [("quantity", .string(String(purchase.quantity ?? 1)))]
        if let product = purchase.productID { members.append(("product_id", .string(product))) }
        if let id = purchase.transactionID { members.append(("transaction_id", .string(id))) }
        members.append(("original_transaction_id", .string(purchase.originalTransactionID ?? purchase.transactionID ?? "")))
        if let date = purchase.purchaseDate { members += triplet("purchase_date", date) }
        if let date = purchase.originalPurchaseDate ?? purchase.purchaseDate { members += triplet("original_purchase_date", date) }
        if let date = purchase.expiresDate { members += triplet("expires_date", date) }
        if let id = purchase.webOrderLineItemID, id != 0 { members.append(("web_order_line_item_id", .string(String(id)))) }
        if let date = purchase.cancellationDate {
            members += triplet("cancellation_date", date)
            let reason = purchase.transactionID.flatMap { extras.cancellationReasons[$0] } ?? 0
            members.append(("cancellation_reason", .string(String(reason))))
        }
        members.append(("is_trial_period", .string(purchase.isTrialPeriod == true ? "true" : "false")))
        if purchase.expiresDate != nil {
            members.append(("is_in_intro_offer_period", .string(purchase.isInIntroOfferPeriod == true ? "true" : "false")))
        }
        if let promo = purchase.promotionalOfferID { members.append(("promotional_offer_id", .string(promo))) }
        let ownership = purchase.transactionID.flatMap { extras.ownership[$0] } ?? .purchased
        members.append(("in_app_ownership_type", .string(ownership.rawValue)))
        return .object(members)
    }

    /// `name`, `name_ms`, `name_pst`.
    public static func triplet(_ name: String, _ date: Date) -> [(String, JSONValue)] {
        let texts = dateTexts(date)
        return [(name, .string(texts.gmt)), (name + "_ms", .string(texts.milliseconds)), (name + "_pst", .string(texts.pacific))]
    }

    /// A date as Apple's old servers wrote it three ways: `"2019-10-15 14:01:41 Etc/GMT"`, milliseconds since 1970 as
    /// text, and Pacific time (`… America/Los_Angeles`). verifyReceipt's triplets and the transaction receipt's dates.
    public static func dateTexts(_ date: Date) -> (gmt: String, milliseconds: String, pacific: String) {
        // Receipt dates are parsed from four-digit years, so always representable; anything else is written as it is.
        let milliseconds = ReceiptDate.milliseconds(date).map(String.init) ?? String(date.timeIntervalSince1970 * 1000)
        return (wallClock(date, offsetSeconds: 0) + " Etc/GMT", milliseconds, wallClock(date, offsetSeconds: pacificOffset(date)) + " America/Los_Angeles")
    }

    private static func wallClock(_ date: Date, offsetSeconds: Int) -> String {
        let text = ReceiptDate.format(date.addingTimeInterval(Double(offsetSeconds)))  // "YYYY-MM-DDThh:mm:ssZ"
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(8))
    }

    /// US Pacific offset by the rule in force since 2007 (DST from 02:00 on the second Sunday of
    /// March to 02:00 on the first Sunday of November). Computed, not read from tzdata, so the
    /// output is the same on every machine.
    static func pacificOffset(_ date: Date) -> Int {
        let year = ReceiptDate.civil(date).year
        func sunday(month: Int, nth: Int) -> Date {
            let first = ReceiptDate.instant(year: year, month: month, day: 1, hour: 0, minute: 0, second: 0)
            let weekday = ((Int((first.timeIntervalSince1970 / 86_400).rounded(.down)) + 4) % 7 + 7) % 7  // 0 = Sunday
            return first.addingTimeInterval(Double(((7 - weekday) % 7 + 7 * (nth - 1)) * 86_400))
        }
        let start = sunday(month: 3, nth: 2).addingTimeInterval(10 * 3600)  // 02:00 PST = 10:00 UTC
        let end = sunday(month: 11, nth: 1).addingTimeInterval(9 * 3600)  // 02:00 PDT = 09:00 UTC
        return date >= start && date < end ? -7 * 3600 : -8 * 3600
    }
}

extension VerifyReceiptJSON {
    /// verifyReceipt's `receipt` for an iOS 6 transaction receipt (apple-2026-facts §4): flat, each `purchase-info` key
    /// with underscores (`original_purchase_date_pst`), each value the string the receipt carries.
    public static func transactionReceiptObject(_ purchaseInfo: [(key: String, value: String)]) -> JSONValue {
        .object(JSONObject(purchaseInfo.map { entry -> (String, JSONValue) in (String(entry.key.map { $0 == "-" ? "_" : $0 }), .string(entry.value)) }))
    }

    /// The whole answer to a transaction receipt: `status` and the flat `receipt`; for an expired auto-renewable
    /// subscription (21006) also `latest_receipt_info` (an object, not an array) and, where the server says so,
    /// `latest_expired_receipt_info`.
    public static func transactionReceiptResponse(
        status: Int, receipt: [(key: String, value: String)], latestReceiptInfo: [(key: String, value: String)]? = nil,
        latestExpiredReceiptInfo: [(key: String, value: String)]? = nil, latestReceipt: String? = nil
    ) -> JSONValue {
        var members: JSONObject = [("status", .integer(Int64(status))), ("receipt", transactionReceiptObject(receipt))]
        if let latestReceipt { members.append(("latest_receipt", .string(latestReceipt))) }
        if let latestReceiptInfo { members.append(("latest_receipt_info", transactionReceiptObject(latestReceiptInfo))) }
        if let latestExpiredReceiptInfo { members.append(("latest_expired_receipt_info", transactionReceiptObject(latestExpiredReceiptInfo))) }
        return .object(members)
    }
}

extension PendingRenewal {
    var json: JSONValue {
        var members: JSONObject = [
            ("auto_renew_product_id", .string(autoRenewProductID)), ("product_id", .string(productID)),
            ("original_transaction_id", .string(originalTransactionID)), ("auto_renew_status", .string(autoRenewStatus ? "1" : "0")),
        ]
        if let expirationIntent { members.append(("expiration_intent", .string(String(expirationIntent.rawValue)))) }
        if let isInBillingRetryPeriod { members.append(("is_in_billing_retry_period", .string(isInBillingRetryPeriod ? "1" : "0"))) }
        if let gracePeriodExpiresDate { members += VerifyReceiptJSON.triplet("grace_period_expires_date", gracePeriodExpiresDate) }
        if let priceConsentStatus {
            members.append(("price_consent_status", .string(String(priceConsentStatus.rawValue))))
            members.append(("price_increase_status", .string(String(priceConsentStatus.rawValue))))
        }
        if let promotionalOfferID { members.append(("promotional_offer_id", .string(promotionalOfferID))) }
        return .object(members)
    }
}
