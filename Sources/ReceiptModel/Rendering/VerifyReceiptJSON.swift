public import Foundation
public import ForgeSupport
public import AppStoreVocabulary

/// The decoded form Apple's `verifyReceipt` returns, rendered from a receipt's own bytes.
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
        /// The base64 receipt echoed as `latest_receipt`.
        public var latestReceipt: String?
        /// The time of the request (`request_date`); the receipt's own type 8 or creation date when nil.
        public var requestDate: Date?
        /// The time auto-renew status is judged at: a subscription whose latest period ended before it is not renewing.
        public var now: Date?
        /// The server's transactions, newer than the receipt's (`latest_receipt_info`); the receipt's own when nil.
        public var latestTransactions: [InAppPurchase]?
        /// The server's renewal state per subscription (`pending_renewal_info`); derived from the receipt when nil.
        public var pendingRenewals: [PendingRenewal]?
        /// `exclude-old-transactions`: only the latest transaction of each subscription in `latest_receipt_info`.
        public var excludeOldTransactions: Bool

        public init(
            cancellationReasons: [String: Int] = [:], latestReceipt: String? = nil, requestDate: Date? = nil, now: Date? = nil,
            latestTransactions: [InAppPurchase]? = nil, pendingRenewals: [PendingRenewal]? = nil, excludeOldTransactions: Bool = false
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

    /// The whole response body with status 0.
    public static func response(for receipt: AppReceipt, extras: Extras = Extras()) -> JSONValue {
        let type = receipt.receiptType ?? ""
        // The environment the receipt type names (ProductionVPPSandbox is Sandbox); a type Apple never writes, as itself.
        let environment = Environment(receiptType: type)?.rawValue ?? type
        var members: JSONObject = [
            ("status", .integer(0)), ("environment", .string(environment)),
            ("receipt", receiptObject(receipt, extras: extras)),
        ]
        let isSubscription = { (purchase: InAppPurchase) in purchase.productType == 3 || (purchase.productType == nil && purchase.expiresDate != nil) }
        let subscriptions = (extras.latestTransactions ?? receipt.inAppPurchases).filter(isSubscription)
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
    static func derivedRenewals(_ latestFirst: [InAppPurchase], now: Date?) -> [PendingRenewal] {
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

    /// The `receipt` object.
    public static func receiptObject(_ receipt: AppReceipt, extras: Extras = Extras()) -> JSONValue {
        var members = JSONObject()
        if let type = receipt.receiptType { members.append(("receipt_type", .string(type))) }
        let itemID = receipt.appItemID ?? 0
        members += [("adam_id", .integer(itemID)), ("app_item_id", .integer(itemID))]
        if let bundle = receipt.bundleID { members.append(("bundle_id", .string(bundle))) }
        if let version = receipt.appVersion { members.append(("application_version", .string(version))) }
        let payload = receipt.payload.payload
        members.append(("download_id", .integer(payload.first(15)?.integerValue ?? 0)))
        members.append(("version_external_identifier", .integer(payload.first(16)?.integerValue ?? 0)))
        if let created = receipt.creationDate { members += triplet("receipt_creation_date", created) }
        let request = extras.requestDate ?? payload.first(8)?.stringValue.flatMap(ReceiptDate.parse) ?? receipt.creationDate
        if let request { members += triplet("request_date", request) }
        if let original = receipt.originalPurchaseDateText.flatMap(ReceiptDate.parse) { members += triplet("original_purchase_date", original) }
        if let originalVersion = receipt.originalAppVersion { members.append(("original_application_version", .string(originalVersion))) }
        if let expiration = receipt.expirationDate { members += triplet("expiration_date", expiration) }
        let inApp = receipt.inAppPurchases.sorted { ($0.purchaseDate ?? .distantPast) < ($1.purchaseDate ?? .distantPast) }
        members.append(("in_app", .array(inApp.map { transaction($0, extras: extras) })))
        return .object(members)
    }

    static func transaction(_ purchase: InAppPurchase, extras: Extras) -> JSONValue {
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
        members.append(("in_app_ownership_type", .string("PURCHASED")))
        return .object(members)
    }

    /// `name`, `name_ms`, `name_pst`.
    public static func triplet(_ name: String, _ date: Date) -> [(String, JSONValue)] {
        // Receipt dates are parsed from four-digit years, so always representable; anything else is written as it is.
        let milliseconds = ReceiptDate.milliseconds(date).map(String.init) ?? String(date.timeIntervalSince1970 * 1000)
        return [
            (name, .string(wallClock(date, offsetSeconds: 0) + " Etc/GMT")),
            (name + "_ms", .string(milliseconds)),
            (name + "_pst", .string(wallClock(date, offsetSeconds: pacificOffset(date)) + " America/Los_Angeles")),
        ]
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
