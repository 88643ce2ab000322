public import AppStoreVocabulary
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport

/// An ISO 8601 subscription period: days, weeks, months or years.
public struct SubscriptionPeriod: Sendable, Hashable, CustomStringConvertible {
    public enum Unit: Character, Sendable { case day = "D", week = "W", month = "M", year = "Y" }
    public let count: Int
    public let unit: Unit

    public init?(_ text: String) {
        guard text.count >= 3, text.first == "P", let unit = text.last.flatMap(Unit.init(rawValue:)),
            let count = Int(text.dropFirst().dropLast()), ScenarioLimits.periodCount.contains(count)
        else { return nil }
        self.count = count
        self.unit = unit
    }

    public static let month = SubscriptionPeriod(count: 1, unit: .month)
    /// What a period must be, for messages.
    public static let expected = "an ISO 8601 period such as P1W, P1M, P3M or P1Y (1 to 1000 days, weeks, months or years)"

    private init(count: Int, unit: Unit) {
        self.count = count
        self.unit = unit
    }
    public var description: String { "P\(count)\(unit.rawValue)" }

    /// `times` of these back to back as one period: three P1M are P3M.
    public func times(_ times: Int) -> SubscriptionPeriod { SubscriptionPeriod(count: count * max(1, times), unit: unit) }

    /// `date` moved by `times` periods (negative goes back), in UTC calendar terms: months clamp the day.
    public func advance(_ date: Date, by times: Int) -> Date {
        switch unit {
        case .day: return date.addingTimeInterval(Double(86_400 * count * times))
        case .week: return date.addingTimeInterval(Double(7 * 86_400 * count * times))
        case .month, .year:
            let months = (unit == .year ? 12 : 1) * count * times
            let parts = ReceiptDate.civil(date)
            let total = parts.year * 12 + (parts.month - 1) + months
            let year = total >= 0 ? total / 12 : (total - 11) / 12
            let month = total - year * 12 + 1
            return ReceiptDate.instant(
                year: year, month: month, day: min(parts.day, ReceiptDate.daysIn(month: month, year: year)),
                hour: parts.hour, minute: parts.minute, second: parts.second)
        }
    }
}

/// One in-app transaction as it will appear in the receipt (one type-17 attribute).
public struct Transaction: Sendable, Hashable {
    public var productID: String
    public var type: ProductType
    public var quantity: Int
    public var transactionID: String
    public var originalTransactionID: String
    public var purchaseDate: Date
    public var originalPurchaseDate: Date
    public var expiresDate: Date?
    public var webOrderLineItemID: Int64
    public var cancellationDate: Date?
    public var cancellationReason: CancellationReason?
    public var isTrialPeriod: Bool
    public var isInIntroOfferPeriod: Bool
    public var promotionalOfferID: String?
    /// Set by the developer after the purchase (a timeline `app-account-token`); StoreKit 2 payloads carry it.
    public var appAccountToken: String? = nil
    /// The customer upgraded out of this period before it ended (StoreKit 2's `isUpgraded`).
    public var isUpgraded = false
    /// The product this period was upgraded from: it began with the upgrade, a purchase, not a renewal.
    public var upgradedFrom: String? = nil
    /// Bought by the customer, or shared by a family member: the purchase's, for every period of it.
    public var ownership: OwnershipType = .purchased
    /// The share of a prorated refund, in milli-percent (Apple's `revocationPercentage`, 50000 for half); nil for a full one.
    public var refundedPercentage: Int64? = nil

    /// How the App Store took the transaction back (Apple's `revocationType`), if it did: a family member loses a shared
    /// purchase (REVOKE), or the customer is refunded in full or in part (REFUND).
    public var revocationType: RevocationType? {
        guard cancellationDate != nil else { return nil }
        if ownership == .familyShared { return .familyRevoke }
        return refundedPercentage == nil ? .refundFull : .refundProrated
    }
    /// How this period was paid (`billingPlanType`); nil for a purchase that names no billing plan.
    public var billingPlan: BillingPlanType? = nil
    /// Billed `MONTHLY`: where this period stands in its 12-month commitment (`commitmentInfo`).
    public var commitment: Commitment? = nil
}

extension Purchase {
    /// Checks the purchase on its own. Errors name fields by key path, `place` first (`'purchases[1].trial'`),
    /// and list them in ``ForgeError/fields`` so a front end can say them its own way.
    func validate(place: String) throws(ForgeError) {
        func name(_ field: String) -> String { "'\(place)\(field)'" }
        func problem(_ code: ForgeError.Code, _ fields: [String], _ message: String) -> ForgeError {
            ForgeError(code, message, fields: fields.map { place + $0 })
        }
        let type = resolvedType
        if expired == true, expiresDate != nil {
            throw problem(.conflictingOptions, ["expired", "expiresDate"], "\(name("expired")) conflicts with \(name("expiresDate")): give one or the other")
        }
        if trial == true, intro == true {
            throw problem(.conflictingOptions, ["trial", "intro"], "\(name("trial")) conflicts with \(name("intro")): a period is a free trial or an introductory offer, not both")
        }
        // A one-time purchase may name an offer code of its product (`promo`, checked against 'products').
        if type != .autoRenewable {
            let used = ["expired", "expiresDate", "renewals", "trial", "intro", "period", "billingPlan"].filter { field in
                switch field {
                case "expired": expired == true
                case "expiresDate": expiresDate != nil
                case "renewals": renewals != nil
                case "trial": trial == true
                case "intro": intro == true
                case "period": period != nil
                default: billingPlan != nil
                }
            }
            if !used.isEmpty {
                throw problem(
                    .conflictingOptions, used + ["type"],
                    "\(used.map(name).joined(separator: ", ")) conflicts with \(name("type")) \(type.rawValue): only auto-renewable subscriptions expire, renew or have trials")
            }
        }
        if let renewals, !ScenarioLimits.renewals.contains(renewals) {
            throw problem(.invalidScenario, ["renewals"], "\(name("renewals")) \(ScenarioLimits.renewals.requirement), not \(renewals)")
        }
        if let quantity, !ScenarioLimits.quantity.contains(quantity) {
            throw problem(.invalidScenario, ["quantity"], "\(name("quantity")) \(ScenarioLimits.quantity.requirement), not \(quantity)")
        }
        if let period, SubscriptionPeriod(period) == nil {
            throw problem(.invalidScenario, ["period"], "\(name("period")) '\(period)' is not \(SubscriptionPeriod.expected)")
        }
        for (field, value) in [("purchaseDate", purchaseDate), ("expiresDate", expiresDate)] {
            if let value, ReceiptDate.parse(value) == nil {
                throw problem(.invalidScenario, [field], "\(name(field)) '\(value)' is not a date like 2025-01-31T12:00:00Z")
            }
        }
        if productID.isEmpty { throw problem(.invalidScenario, ["productId"], "\(name("productId")) must not be empty") }
        try validateBillingPlan(place: place)
    }

    /// Refuses a date of this purchase's transactions (`made`) outside ``ReceiptDate/writable``, naming the
    /// purchase, the period and the fields that put it there (`place`: `purchases[0].`; `now` when no date anchors it).
    func checkDates(of made: [Transaction], place: String) throws(ForgeError) {
        for (index, transaction) in made.enumerated() {
            let edges = [
                (made.count == 1 ? "bought" : "period \(index + 1) of \(made.count) starts", transaction.purchaseDate),
                (made.count == 1 ? "its period ends" : "period \(index + 1) of \(made.count) ends", transaction.expiresDate),
                ("refunded", transaction.cancellationDate),
                ("its commitment ends", transaction.commitment?.expiresDate),
            ]
            for case (let edge, let date?) in edges where !ReceiptDate.writable.contains(date) {
                let set = [("purchaseDate", purchaseDate), ("expiresDate", expiresDate), ("renewals", renewals.map(String.init)), ("period", period)]
                let causes = set.filter { $0.1 != nil }.map { place + $0.0 } + (purchaseDate == nil && expiresDate == nil ? ["now"] : [])
                throw ForgeError(
                    .invalidScenario,
                    "purchase \(productID): \(edge) at \(ReceiptDate.format(date)), \(ReceiptDate.outsideWritable) "
                        + "(set by \(causes.map { "'\($0)'" }.joined(separator: ", ")))",
                    fields: causes)
            }
        }
    }

    /// The transactions this purchase makes, on a timeline anchored at `now`.
    ///
    /// Subscriptions: the latest period ends at `expiresDate`, or ended one day before `now` when
    /// `expired`, or starts at `purchaseDate` and runs forward, or else started an hour before `now`.
    /// Earlier periods chain backwards, back to back. Other products were bought an hour before `now`.
    /// `introductory`: the product's offer (``ProductDefinition/introductoryOffer``), taken when the purchase's
    /// `trial` or `intro` says so: its first transactions last the offer's period, not the renewal period.
    func transactions(now: Date, ids: inout IDSource, introductory: SubscriptionOffer? = nil) -> [Transaction] {
        let type = resolvedType
        let quantity = self.quantity ?? 1
        guard type == .autoRenewable else {
            let bought = purchaseDate.flatMap(ReceiptDate.parse) ?? now.addingTimeInterval(-3600)
            let id = ids.transactionID()
            return [
                Transaction(
                    productID: productID, type: type, quantity: quantity, transactionID: id, originalTransactionID: id,
                    purchaseDate: bought, originalPurchaseDate: bought, expiresDate: nil, webOrderLineItemID: 0,
                    cancellationDate: cancelled == nil ? nil : min(now, bought.addingTimeInterval(3600)),
                    cancellationReason: cancelled, isTrialPeriod: false, isInIntroOfferPeriod: false, promotionalOfferID: promo,
                    ownership: ownership ?? .purchased)
            ]
        }
        let period = billingPeriod
        let count = (renewals ?? 0) + 1
        // The offer's transactions first (a free trial or pay-up-front is one; pay-as-you-go one per period), then
        // the renewal period's. Without a defined offer, `trial` or `intro` marks the first period only.
        let offer = (trial == true || intro == true) ? introductory : nil
        let offered = min(count, offer?.transactionCount ?? ((trial == true || intro == true) ? 1 : 0))
        let offerPeriod = offer?.transactionPeriod ?? period
        // Boundaries are computed from one anchor per run of equal periods, so month lengths never drift
        // (Jan 31 → Feb 28 → Mar 31): the anchor's run first, then the other from their shared boundary.
        func chain(anchor index: Int, at date: Date) -> [Date] {
            var result = [Date](repeating: date, count: count + 1)
            if index >= offered {
                for i in offered...count { result[i] = period.advance(date, by: i - index) }
                for i in 0..<offered { result[i] = offerPeriod.advance(result[offered], by: i - offered) }
            } else {
                for i in 0...offered { result[i] = offerPeriod.advance(date, by: i - index) }
                for i in offered...count { result[i] = period.advance(result[offered], by: i - offered) }
            }
            return result
        }
        let anchor: (index: Int, date: Date)
        if let end = expiresDate.flatMap(ReceiptDate.parse) ?? (expired == true ? now.addingTimeInterval(-86_400) : nil) {
            anchor = (count, end)
        } else if let first = purchaseDate.flatMap(ReceiptDate.parse) {
            anchor = (0, first)
        } else {
            anchor = (count - 1, now.addingTimeInterval(-3600))
        }
        let boundaries = chain(anchor: anchor.index, at: anchor.date)
        /// Billed monthly, period `index`'s place in its commitment: every twelve periods from the first, ending
        /// on a boundary of the same run (a commitment has no offer periods).
        func commitment(_ index: Int) -> Commitment? {
            guard billingPlan == .monthly else { return nil }
            let total = Commitment.billingPeriods
            let end = period.advance(anchor.date, by: (index / total + 1) * total - anchor.index)
            return Commitment(billingPeriodNumber: index % total + 1, totalBillingPeriods: total, expiresDate: end)
        }
        let starts = Array(boundaries.dropLast())
        let originalID = ids.transactionID()
        var result: [Transaction] = []
        for (index, start) in starts.enumerated() {
            let end = boundaries[index + 1]
            let isLast = index == starts.count - 1
            let cancelledAt = isLast && cancelled != nil ? min(now, start.addingTimeInterval(end.timeIntervalSince(start) / 2)) : nil
            result.append(
                Transaction(
                    productID: productID, type: type, quantity: quantity, transactionID: index == 0 ? originalID : ids.transactionID(),
                    originalTransactionID: originalID, purchaseDate: start, originalPurchaseDate: starts[0], expiresDate: end,
                    webOrderLineItemID: ids.webOrderLineItemID(), cancellationDate: cancelledAt, cancellationReason: isLast ? cancelled : nil,
                    isTrialPeriod: index < offered && trial == true, isInIntroOfferPeriod: index < offered && intro == true,
                    promotionalOfferID: isLast ? promo : nil, ownership: ownership ?? .purchased, billingPlan: billingPlan,
                    commitment: commitment(index)))
        }
        return result
    }
}

/// Ids drawn from the seeded generator; Xcode receipts write every transaction id as "0".
struct IDSource {
    var random: SeededGenerator
    let isXcode: Bool

    mutating func transactionID() -> String { isXcode ? "0" : random.decimalString(digits: 15) }
    mutating func webOrderLineItemID() -> Int64 { isXcode ? 0 : Int64(random.decimalString(digits: 15)) ?? 0 }
}
