#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport
public import AppStoreVocabulary

/// Something that happened to a purchase after it was made: the scenario's `timeline`.
///
/// A receipt shows the events up to its creation time; `forge serve` shows those up to the time of the
/// request, so `latest_receipt_info` and `pending_renewal_info` can be ahead of the receipt on the
/// device — the situation server code must handle.
public struct TimelineEvent: Encodable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// `count` more periods (default 1), back to back from the latest one's end; `at` is ignored.
        case renew
        /// The customer turns auto-renew off at `at`; the subscription runs to the end of its period.
        case cancel
        /// Apple refunds the latest transaction of the product at `at` (`reason`: other / app-issue), in full, or in
        /// part with `percentage` (milli-percent, 1–99999: Apple's prorated refund and its `revocationPercentage`).
        case refund
        /// The renewal at the end of the latest period failed; Apple keeps retrying (from `at`).
        case billingRetry = "billing-retry"
        /// As billing-retry, with a grace period of `days` (default 16) after the latest period's end.
        case gracePeriod = "grace-period"
        /// Billing recovered at `at`: a new period starts then and the retry state ends.
        case recover
        /// A price increase at `at`; `consent` pending (default), accepted or declined.
        case priceIncrease = "price-increase"
        /// From the next renewal on, the subscription renews as product `to` (upgrade, downgrade, crossgrade).
        case changeProduct = "change-product"
        /// The customer's account is gone from `at` on: verifyReceipt answers 21010.
        case accountDeleted = "account-deleted"
        /// Apple stops retrying the payment at `at`: the subscription has expired (expiration intent 2).
        case billingRetryEnded = "billing-retry-ended"
        /// The product leaves sale at `at`: the subscription does not renew (expiration intent 4).
        case productWithdrawn = "product-withdrawn"
        /// The developer extends the renewal date by `days` (1–90) at `at` (Apple's Extend a Subscription Renewal
        /// Date): the period in force then ends `days` later, and every later period starts that much later.
        case extend
        /// The developer sets the purchase's `appAccountToken` to `token` at `at` (Apple's Set App Account Token):
        /// every transaction of the purchase (`originalTransactionId`, default the product's latest) carries it.
        case appAccountToken = "app-account-token"
        /// A parent revokes consent for the app at `at` (Texas SB 2420): Apple sends RESCIND_CONSENT, about the app
        /// (its `appData` carries the AppTransaction), not a purchase. Nothing else changes.
        case consentRevoked = "consent-revoked"
        /// The customer asks Apple at `at` to refund the product's latest transaction, for `requestReason` (Apple's
        /// `consumptionRequestReason`, default UNINTENDED_PURCHASE): Apple sends CONSUMPTION_REQUEST, asking the
        /// developer for consumption information. Nothing changes until a `refund` event says Apple granted it.
        case refundRequest = "refund-request"
    }

    public enum Consent: String, Codable, Sendable, CaseIterable { case pending, accepted, declined }

    public var event: Kind
    public var at: String?
    /// The product the event concerns; default: the scenario's first auto-renewable subscription.
    public var productID: String?
    public var count: Int?
    public var reason: CancellationReason?
    public var days: Int?
    public var consent: Consent?
    public var to: String?
    /// The UUID an `app-account-token` event sets.
    public var token: String?
    /// The purchase an `app-account-token` event concerns, by its original transaction id (a product bought twice).
    public var originalTransactionID: String?
    /// The share a prorated `refund` gives back, in milli-percent (50000 = half); nil: a full refund.
    public var percentage: Int?
    /// Why the customer asked for the refund of a `refund-request` event.
    public var requestReason: ConsumptionRequestReason?

    public init(
        _ event: Kind, at: String? = nil, productID: String? = nil, count: Int? = nil, reason: CancellationReason? = nil,
        days: Int? = nil, consent: Consent? = nil, to: String? = nil, token: String? = nil, originalTransactionID: String? = nil, percentage: Int? = nil,
        requestReason: ConsumptionRequestReason? = nil
    ) {
        self.percentage = percentage
        self.requestReason = requestReason
        self.token = token
        self.originalTransactionID = originalTransactionID
        self.event = event
        self.at = at
        self.productID = productID
        self.count = count
        self.reason = reason
        self.days = days
        self.consent = consent
        self.to = to
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case event, at, productID = "productId", count, reason, days, consent, to, token, originalTransactionID = "originalTransactionId", percentage,
            requestReason
    }

    func validate(place: String, products: [Purchase]) throws(ForgeError) {
        if event != .renew, at == nil {
            throw ForgeError(.invalidScenario, "'\(place)at' is required for a \(event.rawValue) event (a date like 2025-02-01T00:00:00Z)")
        }
        if let at {
            guard let date = ReceiptDate.parse(at) else {
                throw ForgeError(.invalidScenario, "'\(place)at' '\(at)' is not a date like 2025-02-01T00:00:00Z")
            }
            if !ReceiptDate.writable.contains(date) { throw ForgeError(.invalidScenario, "'\(place)at' \(at) is \(ReceiptDate.outsideWritable)") }
        }
        if let count, !ScenarioLimits.renewCount.contains(count) {
            throw ForgeError(.invalidScenario, "'\(place)count' \(ScenarioLimits.renewCount.requirement), not \(count)")
        }
        if let days, !ScenarioLimits.graceDays.contains(days) {
            throw ForgeError(.invalidScenario, "'\(place)days' \(ScenarioLimits.graceDays.requirement), not \(days)")
        }
        if requestReason != nil, event != .refundRequest {
            throw ForgeError(.invalidScenario, "'\(place)requestReason' is for refund-request events, not \(event.rawValue)")
        }
        if let percentage {
            if event != .refund { throw ForgeError(.invalidScenario, "'\(place)percentage' is for refund events (a prorated refund), not \(event.rawValue)") }
            if !ScenarioLimits.refundPercentage.contains(percentage) {
                throw ForgeError(.invalidScenario, "'\(place)percentage' \(ScenarioLimits.refundPercentage.requirement), not \(percentage)")
            }
        }
        if event == .changeProduct, to?.isEmpty ?? true { throw ForgeError(.invalidScenario, "'\(place)to' names the product a change-product event renews as") }
        if event == .extend, days == nil { throw ForgeError(.invalidScenario, "'\(place)days' is required for an extend event: the days (1–90) the renewal date moves") }
        if event == .appAccountToken, token.flatMap(UUID.init(uuidString:)) == nil {
            throw ForgeError(.invalidScenario, "'\(place)token' is required for an app-account-token event: a UUID")
        }
        if event == .consentRevoked, productID != nil || originalTransactionID != nil {
            throw ForgeError(
                .invalidScenario, "a consent-revoked event concerns the app, not a purchase: leave out '\(place)\(productID != nil ? "productId" : "originalTransactionId")'")
        }
        guard event != .accountDeleted, event != .consentRevoked else { return }
        let concerned = products.filter { productID == nil ? $0.resolvedType == .autoRenewable : $0.productID == productID }
        if concerned.isEmpty {
            throw ForgeError(
                .invalidScenario,
                productID.map { "'\(place)productId' \($0) is not one of the scenario's purchases" }
                    ?? "'\(place)productId' is needed: the scenario has no auto-renewable subscription")
        }
        if ![.refund, .refundRequest, .appAccountToken].contains(event), concerned.contains(where: { $0.resolvedType != .autoRenewable }) {
            throw ForgeError(.invalidScenario, "a \(event.rawValue) event needs an auto-renewable subscription; \(productID ?? "") is not one")
        }
    }
}

/// What Apple's server knows at one instant: every transaction (the receipt's and the timeline's) and
/// each subscription's renewal state.
public struct SubscriptionHistory: Sendable, Hashable {
    public var pendingRenewals: [PendingRenewal]
    /// `cancellation_reason` by transaction id, for refunds.
    public var cancellationReasons: [String: Int]
    /// From when the account is deleted (verifyReceipt 21010), if it is by the instant.
    public var accountDeletedAt: Date?

    /// The renewal state of the subscription `originalTransactionID` names.
    public func renewal(of originalTransactionID: String) -> PendingRenewal? {
        pendingRenewals.first { $0.originalTransactionID == originalTransactionID }
    }

    /// The status at `date` of the subscription whose latest transaction is `latest`.
    public func status(of latest: Transaction, at date: Date) -> SubscriptionStatus {
        SubscriptionStatus(
            expiresDate: latest.expiresDate, revoked: latest.cancellationDate != nil, renewal: renewal(of: latest.originalTransactionID), at: date)
    }

    /// Each auto-renewable subscription's latest transaction (the first of equal purchase dates), by original
    /// transaction id.
    public static func latestOfEachSubscription(_ transactions: [Transaction]) -> [String: Transaction] {
        var latest: [String: Transaction] = [:]
        for t in transactions where t.type == .autoRenewable {
            if let known = latest[t.originalTransactionID], known.purchaseDate >= t.purchaseDate { continue }
            latest[t.originalTransactionID] = t
        }
        return latest
    }

    /// Whether every subscription has lapsed by `date` (verifyReceipt's legacy 21006): revoked, or its latest period
    /// over. A subscription in billing retry or its grace period has lapsed too, though its status is not `expired`.
    public func allSubscriptionsExpired(at date: Date, transactions: [Transaction]) -> Bool {
        let latest = Self.latestOfEachSubscription(transactions).values
        return !latest.isEmpty && latest.allSatisfy { status(of: $0, at: date) == .revoked || ($0.expiresDate.map { $0 <= date } ?? false) }
    }
}

extension Scenario {
    /// Applies the timeline's events up to `until` to the purchases' transactions. New transactions get
    /// ids from a generator of their own, so the receipt's ids do not move when the timeline grows.
    func history(
        applyingTo base: [Transaction], periods: [String: SubscriptionPeriod], until: Date, seed: UInt64, isXcode: Bool
    ) -> (transactions: [Transaction], history: SubscriptionHistory, addedBy: [Int]) {
        var transactions = base
        var periods = periods  // an upgrade adds the new product's
        var addedBy: [Int] = []  // the timeline index of each transaction after `base`
        var ids = IDSource(random: SeededGenerator(seed: seed ^ 0x7469_6D65_6C69_6E65), isXcode: isXcode)  // "timeline"
        struct State {
            var autoRenew = true
            var autoRenewProduct: String?
            var retry = false
            var grace: Date?
            var consent: TimelineEvent.Consent?
            /// Why it expired, when an event says so (billing retry ended, product withdrawn).
            var intent: ExpirationIntent?
        }
        var states: [String: State] = [:]  // by product id
        var reasons: [String: Int] = [:]
        var deleted: Date?
        var subscriptionProducts: [String] = []
        for purchase in purchases where purchase.resolvedType == .autoRenewable && !subscriptionProducts.contains(purchase.productID) {
            subscriptionProducts.append(purchase.productID)
        }

        // The latest transaction of each product, as found, kept up to date as periods are appended (else a timeline
        // of n renewals costs n² to apply, at every instant a server looks at it); forgotten when an extension moves them.
        var latest: [String: Int] = [:]
        func latestIndex(_ product: String) -> Int? {
            if let index = latest[product] { return index }
            let found = transactions.indices.filter { transactions[$0].productID == product }.max {
                transactions[$0].purchaseDate < transactions[$1].purchaseDate
            }
            latest[product] = found
            return found
        }
        func append(_ transaction: Transaction) {
            transactions.append(transaction)
            // Of equal dates the first stays the latest, as `max` finds it; one not yet found is found when asked for.
            if let index = latest[transaction.productID], transaction.purchaseDate > transactions[index].purchaseDate {
                latest[transaction.productID] = transactions.count - 1
            }
        }
        func appendPeriod(_ product: String, from start: Date, event: Int) {
            guard let last = latestIndex(product).map({ transactions[$0] }) else { return }
            addedBy.append(event)
            let period = periods[product] ?? .month
            append(
                Transaction(
                    productID: product, type: .autoRenewable, quantity: last.quantity, transactionID: ids.transactionID(),
                    originalTransactionID: last.originalTransactionID, purchaseDate: start, originalPurchaseDate: last.originalPurchaseDate,
                    expiresDate: period.advance(start, by: 1), webOrderLineItemID: ids.webOrderLineItemID(), cancellationDate: nil,
                    cancellationReason: nil, isTrialPeriod: false, isInIntroOfferPeriod: false, promotionalOfferID: nil,
                    appAccountToken: last.appAccountToken, ownership: last.ownership, billingPlan: last.billingPlan,
                    commitment: last.commitment?.next(startingAt: start)))
        }
        /// The period of `product` in force at `at` ends `days` later, and the periods after it move as much; a
        /// period that moves past `until` has not begun yet.
        func extend(_ product: String, at: Date, by days: Int, until: Date) {
            let shift = Double(days) * 86_400
            latest = [:]
            guard
                let current = transactions.indices.first(where: {
                    transactions[$0].productID == product && transactions[$0].purchaseDate <= at && (transactions[$0].expiresDate.map { at < $0 } ?? false)
                }), let end = transactions[current].expiresDate
            else { return }
            transactions[current].expiresDate = end.addingTimeInterval(shift)
            for index in transactions.indices where transactions[index].productID == product && transactions[index].purchaseDate >= end {
                transactions[index].purchaseDate.addTimeInterval(shift)
                transactions[index].expiresDate?.addTimeInterval(shift)
            }
            // The commitment in force ends as much later, in each of its periods, and so do the ones after it.
            for index in transactions.indices where transactions[index].productID == product && (transactions[index].commitment.map { $0.expiresDate > at } ?? false) {
                transactions[index].commitment?.expiresDate.addTimeInterval(shift)
            }
            let kept = transactions.indices.filter { $0 < base.count || transactions[$0].purchaseDate <= until }
            if kept.count < transactions.count {
                addedBy = kept.filter { $0 >= base.count }.map { addedBy[$0 - base.count] }
                transactions = kept.map { transactions[$0] }
            }
        }

        /// A subscription upgraded to another product is that product from then on, whichever its events name.
        var upgradedTo: [String: String] = [:]
        func current(_ product: String) -> String {
            var product = product
            var seen: Set<String> = []
            while let next = upgradedTo[product], seen.insert(product).inserted { product = next }
            return product
        }
        for (place, event) in (timeline ?? []).enumerated() {
            let at = event.at.flatMap(ReceiptDate.parse)
            if let at, at > until { continue }
            if event.event == .accountDeleted {
                deleted = deleted ?? at
                continue
            }
            if event.event == .consentRevoked { continue }
            guard let named = event.productID ?? subscriptionProducts.first else { continue }
            let product = current(named)
            var state = states[product] ?? State()
            // An upgrade (up a level of the products' group) takes effect at once, as Apple applies it: the period in
            // force is marked upgraded, and a period of the new product starts then, the same subscription.
            if event.event == .changeProduct, isUpgrade(event), let at, let to = event.to,
                let index = transactions.indices.first(where: {
                    transactions[$0].productID == product && transactions[$0].purchaseDate <= at && (transactions[$0].expiresDate.map { at < $0 } ?? false)
                        && transactions[$0].cancellationDate == nil
                })
            {
                let old = transactions[index]
                transactions[index].isUpgraded = true
                let period = definition(of: to)?.period.flatMap(SubscriptionPeriod.init) ?? .month
                periods[to] = period
                addedBy.append(place)
                var upgraded = Transaction(
                    productID: to, type: .autoRenewable, quantity: old.quantity, transactionID: ids.transactionID(),
                    originalTransactionID: old.originalTransactionID, purchaseDate: at, originalPurchaseDate: old.originalPurchaseDate,
                    expiresDate: period.advance(at, by: 1), webOrderLineItemID: ids.webOrderLineItemID(), cancellationDate: nil, cancellationReason: nil,
                    isTrialPeriod: false, isInIntroOfferPeriod: false, promotionalOfferID: nil, appAccountToken: old.appAccountToken,
                    ownership: old.ownership)
                upgraded.upgradedFrom = product
                append(upgraded)
                upgradedTo[product] = to
                if let position = subscriptionProducts.firstIndex(of: product) { subscriptionProducts[position] = to }
                state.autoRenewProduct = nil
                states[product] = nil
                states[to] = state
                continue
            }
            switch event.event {
            case .renew:
                for _ in 0..<(event.count ?? 1) {
                    guard let end = latestIndex(product).flatMap({ transactions[$0].expiresDate }), end <= until else { break }
                    appendPeriod(product, from: end, event: place)
                }
            case .cancel:
                state.autoRenew = false
            case .refund:
                if let index = latestIndex(product), let at {
                    transactions[index].cancellationDate = at
                    transactions[index].cancellationReason = event.reason ?? .other
                    transactions[index].refundedPercentage = event.percentage.map(Int64.init)
                    reasons[transactions[index].transactionID] = (event.reason ?? .other).code
                    state.autoRenew = false
                }
            case .billingRetry:
                state.retry = true
            case .gracePeriod:
                state.retry = true
                state.grace = latestIndex(product).flatMap { transactions[$0].expiresDate }.map { $0.addingTimeInterval(Double((event.days ?? 16) * 86_400)) }
            case .recover:
                if let at { appendPeriod(product, from: at, event: place) }
                state.retry = false
                state.grace = nil
            case .priceIncrease:
                state.consent = event.consent ?? .pending
            case .changeProduct:
                state.autoRenewProduct = event.to
            case .billingRetryEnded:
                state.retry = false
                state.grace = nil
                state.autoRenew = false
                state.intent = .billingError
            case .productWithdrawn:
                state.autoRenew = false
                state.intent = .productUnavailable
            case .extend:
                if let at { extend(product, at: at, by: event.days ?? 0, until: until) }
            case .appAccountToken:
                let original = event.originalTransactionID ?? latestIndex(product).map { transactions[$0].originalTransactionID }
                for index in transactions.indices where transactions[index].originalTransactionID == original {
                    transactions[index].appAccountToken = event.token
                }
            case .accountDeleted, .consentRevoked, .refundRequest:
                break
            }
            states[product] = state
        }

        // The refunded ones first: a lookup for each of thousands of periods is most of the cost of looking at a store.
        for transaction in transactions where transaction.cancellationDate != nil && reasons[transaction.transactionID] == nil {
            if let reason = transaction.cancellationReason { reasons[transaction.transactionID] = reason.code }
        }
        var pending: [PendingRenewal] = []
        for product in subscriptionProducts {
            guard let last = latestIndex(product).map({ transactions[$0] }) else { continue }
            let state = states[product] ?? State()
            let lapsed = last.cancellationDate != nil || (last.expiresDate.map { $0 <= until } ?? false)
            let inGrace = state.grace.map { $0 > until } ?? false
            var intent: ExpirationIntent?
            var autoRenew = state.autoRenew && state.consent != .declined
            // In a grace period the customer keeps the service: no expiration intent yet.
            if lapsed, !inGrace {
                if let stated = state.intent {
                    intent = stated
                    autoRenew = false
                } else if state.retry && last.cancellationDate == nil {
                    intent = .billingError
                } else if state.consent == .declined {
                    intent = .priceIncreaseDeclined
                } else {
                    intent = .voluntary
                    autoRenew = false
                }
            }
            pending.append(
                PendingRenewal(
                    originalTransactionID: last.originalTransactionID, productID: last.productID,
                    autoRenewProductID: state.autoRenewProduct ?? last.productID, autoRenewStatus: autoRenew, expirationIntent: intent,
                    isInBillingRetryPeriod: lapsed || state.retry ? state.retry && last.cancellationDate == nil : nil,
                    gracePeriodExpiresDate: inGrace ? state.grace : nil,
                    priceConsentStatus: state.consent.map { $0 == .accepted ? .consented : .notYetConsented }))
        }
        return (transactions, SubscriptionHistory(pendingRenewals: pending, cancellationReasons: reasons, accountDeletedAt: deleted), addedBy)
    }
}

extension TimelineEvent.Kind {
    /// The notification Apple sends when an event of this kind happens, its type and subtype: the one table, read by
    /// ``Store/announcements`` (notification history and `--notify`'s deliveries) and ``Scenario/notification(for:)``
    /// (`forge jws make --event`, `forge notify --event`). nil for an account deletion or an app account token, which
    /// Apple announces to no server. A change of product renews as the other product from the next period on, which
    /// Apple reports as DID_CHANGE_RENEWAL_PREF/DOWNGRADE, and an upgrade (applied at once) as .../UPGRADE; a declined
    /// price increase ends the subscription (EXPIRED/PRICE_INCREASE); a refund of a purchase shared through Family
    /// Sharing takes it from the family member (REVOKE).
    public func notification(
        consent: TimelineEvent.Consent? = nil, upgrade: Bool = false, ownership: OwnershipType = .purchased
    ) -> (type: NotificationType, subtype: NotificationSubtype?)? {
        switch self {
        case .renew: (.didRenew, nil)
        case .cancel: (.didChangeRenewalStatus, .autoRenewDisabled)
        case .refund: ownership == .familyShared ? (.revoke, nil) : (.refund, nil)
        case .billingRetry: (.didFailToRenew, nil)
        case .gracePeriod: (.didFailToRenew, .gracePeriod)
        case .recover: (.didRenew, .billingRecovery)
        case .priceIncrease:
            switch consent {
            case .accepted: (.priceIncrease, .accepted)
            case .declined: (.expired, .priceIncrease)
            case .pending, nil: (.priceIncrease, .pending)
            }
        case .changeProduct: (.didChangeRenewalPref, upgrade ? .upgrade : .downgrade)
        case .billingRetryEnded: (.expired, .billingRetry)
        case .productWithdrawn: (.expired, .productNotForSale)
        case .extend: (.renewalExtended, nil)
        case .consentRevoked: (.rescindConsent, nil)
        case .refundRequest: (.consumptionRequest, nil)
        case .accountDeleted, .appAccountToken: nil
        }
    }
}

extension Scenario {
    /// The product a change-product event moves away from: the one it names, else the first subscription bought
    /// (by its definition's type when the scenario defines it).
    func changedProduct(_ event: TimelineEvent) -> String? {
        event.productID ?? purchases.first { (definition(of: $0.productID)?.type ?? $0.resolvedType) == .autoRenewable }?.productID
    }

    /// Whether a change of product moves up a level of its group (Xcode's `groupNumber`, 1 the highest): Apple
    /// applies an upgrade at once, a downgrade or crossgrade at the next renewal.
    func isUpgrade(_ event: TimelineEvent) -> Bool {
        guard event.event == .changeProduct, let to = event.to, let target = definition(of: to), let targetLevel = target.groupLevel else { return false }
        guard let from = changedProduct(event), let source = definition(of: from), let sourceLevel = source.groupLevel, source.group == target.group else { return false }
        return targetLevel < sourceLevel
    }

    /// The notification Apple sends for `event` in this scenario: ``TimelineEvent/Kind/notification(consent:upgrade:ownership:)``
    /// of the event, an upgrade (``isUpgrade(_:)``) and the ownership of the purchase a refund takes back.
    public func notification(for event: TimelineEvent) -> (type: NotificationType, subtype: NotificationSubtype?)? {
        var ownership = OwnershipType.purchased
        if event.event == .refund {
            let product = event.productID ?? purchases.first { $0.resolvedType == .autoRenewable }?.productID
            ownership = purchases.first { $0.productID == product }?.ownership ?? .purchased
        }
        return event.event.notification(consent: event.consent, upgrade: isUpgrade(event), ownership: ownership)
    }

    /// The product the notification of `event` is about: an upgrade's, the period of the new product it began; any
    /// other event's, the product it names (nil: the scenario's default).
    public func announcedProduct(of event: TimelineEvent) -> String? { isUpgrade(event) ? event.to : event.productID }

    /// The product a timeline's change-product event already renews `product` as, if any.
    private func changesProduct(_ product: String) -> String? {
        (timeline ?? []).last { $0.event == .changeProduct && ($0.productID ?? product) == product }?.to
    }

    /// What a subscription is downgraded to when the scenario does not say: another auto-renewable product of the
    /// scenario, else a product named after it (`.lower`).
    private func downgradeTarget(of product: String) -> String {
        // With the products defined, the next level down of the product's own group.
        if let defined = definition(of: product), let group = defined.group, let level = defined.groupLevel,
            let lower = (products ?? []).filter({ $0.group == group && ($0.groupLevel ?? 0) > level }).min(by: { ($0.groupLevel ?? 0) < ($1.groupLevel ?? 0) })
        {
            return lower.productID
        }
        return purchases.first { $0.resolvedType == .autoRenewable && $0.productID != product }?.productID ?? product + ".lower"
    }

    /// This scenario brought into `state` at `now` through its purchase and timeline, so the receipt, verifyReceipt
    /// and the JWS forged from it all show what a notification of `pair` says: the purchase `productID` (default:
    /// the first) lapses, renews, enters billing retry or is refunded. The scenario's own values win; one that
    /// contradicts the state is a `conflictingOptions` error naming it.
    public func stating(_ state: NotificationState, pair: String, about productID: String?, now: Date) throws(ForgeError) -> Scenario {
        let chosen = productID.map { id in purchases.firstIndex { $0.productID == id } } ?? (purchases.isEmpty ? nil : 0)
        guard state != .unchanged, let index = chosen else { return self }
        var purchase = purchases[index]
        let product = purchase.productID
        // A subscription's notification implies an auto-renewable product, as subscription fields (`expired`) do;
        // only a type the scenario states contradicts it. Set only where it changes the type: the scenario is the
        // seed of every drawn value (appAppleId), so one already auto-renewable must stay the same scenario.
        if state.needsSubscription, purchase.type == nil, purchase.resolvedType != .autoRenewable { purchase.type = .autoRenewable }
        if state.needsSubscription, purchase.resolvedType != .autoRenewable {
            throw ForgeError(
                .conflictingOptions, "\(pair) is about an auto-renewable subscription, and \(product) is \(purchase.resolvedType.rawValue): make it auto-renewable")
        }
        let stamp = ReceiptDate.format(now)
        let explicitEnd = purchase.expiresDate.flatMap(ReceiptDate.parse)
        func event(_ kind: TimelineEvent.Kind, days: Int? = nil, consent: TimelineEvent.Consent? = nil) -> TimelineEvent {
            TimelineEvent(kind, at: stamp, productID: product, days: days, consent: consent)
        }
        /// The latest period ends before `now`: one day before unless the purchase says when.
        func lapse() throws(ForgeError) {
            guard let explicitEnd else {
                purchase.expired = true
                return
            }
            if explicitEnd > now {
                throw ForgeError(
                    .conflictingOptions, "\(pair) says the subscription's period has ended, but \(product) expires at \(purchase.expiresDate ?? ""), after now (\(stamp))")
            }
        }
        var events: [TimelineEvent] = []
        switch state {
        case .unchanged:
            break
        case .oneTimePurchase:
            if purchase.resolvedType == .autoRenewable {
                throw ForgeError(
                    .conflictingOptions, "\(pair) is about a one-time purchase, and \(product) is auto-renewable: give a consumable, non-consumable or non-renewing product")
            }
        case .active, .autoRenewOff, .priceIncrease, .downgradePending:
            if purchase.expired == true || explicitEnd.map({ $0 <= now }) == true {
                let end = purchase.expired == true ? "is expired" : "expires at \(purchase.expiresDate ?? "")"
                throw ForgeError(.conflictingOptions, "\(pair) says the subscription is in its period, but \(product) \(end), before now (\(stamp))")
            }
            if state == .autoRenewOff { events.append(event(.cancel)) }
            if state == .downgradePending, changesProduct(product) == nil {
                events.append(TimelineEvent(.changeProduct, at: stamp, productID: product, to: downgradeTarget(of: product)))
            }
            if case .priceIncrease(let consent) = state { events.append(event(.priceIncrease, consent: consent)) }
        case .renewed:
            let renewed =
                (purchase.renewals ?? 0) > 0 || (timeline ?? []).contains { [.renew, .recover].contains($0.event) && ($0.productID ?? product) == product }
            if !renewed {
                try lapse()
                events.append(TimelineEvent(.renew, productID: product))
            }
        case .recovered:
            try lapse()
            events += [event(.billingRetry), event(.recover)]
        case .expired(let intent):
            try lapse()
            switch intent {
            case .voluntary, .other: events.append(event(.cancel))
            case .billingError: events += [event(.billingRetry), event(.billingRetryEnded)]
            case .priceIncreaseDeclined: events.append(event(.priceIncrease, consent: .declined))
            case .productUnavailable: events.append(event(.productWithdrawn))
            }
        case .billingRetry:
            try lapse()
            events.append(event(.billingRetry))
        case .gracePeriod:
            try lapse()
            events.append(event(.gracePeriod))
        case .gracePeriodExpired:
            // A one-day grace period after a period that ended a day ago (or earlier) is over by now.
            try lapse()
            events.append(event(.gracePeriod, days: 1))
        case .revoked, .familySharingRevoked:
            if state == .familySharingRevoked {
                if purchase.ownership == .purchased {
                    throw ForgeError(.conflictingOptions, "\(pair) is about a purchase shared through Family Sharing, and \(product) is PURCHASED: make it FAMILY_SHARED")
                }
                purchase.ownership = .familyShared
            }
            if purchase.cancelled == nil { events.append(event(.refund)) }
        }
        var scenario = self
        scenario.purchases[index] = purchase
        if !events.isEmpty { scenario.timeline = (timeline ?? []) + events }
        return scenario
    }
}
