#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport
public import AppStoreVocabulary

/// A notification Apple sends about a store (App Store Server Notifications V2): its type and subtype, when it is
/// sent, and the transaction it carries.
public struct Announcement: Sendable, Hashable {
    public let date: Date
    public let type: NotificationType
    public let subtype: NotificationSubtype?
    /// nil: it is about the app, not a purchase (RESCIND_CONSENT, whose `appData` carries the AppTransaction).
    public let transaction: Transaction?
    /// A CONSUMPTION_REQUEST's `consumptionRequestReason`: the refund request's.
    public let consumptionRequestReason: ConsumptionRequestReason?

    public init(
        date: Date, type: NotificationType, subtype: NotificationSubtype?, transaction: Transaction?, consumptionRequestReason: ConsumptionRequestReason? = nil
    ) {
        self.consumptionRequestReason = consumptionRequestReason
        self.date = date
        self.type = type
        self.subtype = subtype
        self.transaction = transaction
    }
}

extension Store {
    /// Every notification Apple has sent about this store by ``now``: each purchase (SUBSCRIBED/INITIAL_BUY, or
    /// ONE_TIME_CHARGE), each renewal (DID_RENEW, after billing retry DID_RENEW/BILLING_RECOVERY), each refund
    /// (REFUND, REVOKE for a purchase shared through Family Sharing), each other timeline event
    /// (``Scenario/notification(for:)``), each about the transaction it concerns (a revoked consent about the app). The transactions' first, in the
    /// store's order, then the timeline's. What the Server API's notification history lists and `--notify` delivers;
    /// the pairs are ``TimelineEvent/Kind/notification(consent:upgrade:ownership:)``'s, as `forge jws make --event`'s.
    public var announcements: [Announcement] {
        let timeline = (scenario.timeline ?? []).compactMap { event -> (TimelineEvent, Date)? in
            guard let at = event.at.flatMap(ReceiptDate.parse), at <= now else { return nil }
            return (event, at)
        }
        let made = transactions.filter { $0.purchaseDate <= now }
        var announcements: [Announcement] = []
        func announce(
            _ date: Date, _ pair: (type: NotificationType, subtype: NotificationSubtype?)?, _ t: Transaction?, reason: ConsumptionRequestReason? = nil
        ) {
            guard let pair else { return }
            announcements.append(Announcement(date: date, type: pair.type, subtype: pair.subtype, transaction: t, consumptionRequestReason: reason))
        }
        for t in made {
            if t.upgradedFrom != nil {
                // Announced by its timeline event (DID_CHANGE_RENEWAL_PREF/UPGRADE) below.
            } else if t.type != .autoRenewable {
                announce(t.purchaseDate, (.oneTimeCharge, nil), t)
            } else if t.transactionID == t.originalTransactionID {
                announce(t.purchaseDate, (.subscribed, .initialBuy), t)
            } else {
                let recovered = timeline.contains { event, at in
                    event.event == .recover && at == t.purchaseDate && (event.productID ?? t.productID) == t.productID
                }
                let kind: TimelineEvent.Kind = recovered ? .recover : .renew
                announce(t.purchaseDate, kind.notification(ownership: t.ownership), t)
            }
            if let refunded = t.cancellationDate, refunded <= now { announce(refunded, TimelineEvent.Kind.refund.notification(ownership: t.ownership), t) }
        }
        // Announced above, by the transactions they make or revoke.
        let announced: Set<TimelineEvent.Kind> = [.renew, .recover, .refund]
        for (event, at) in timeline where !announced.contains(event.event) {
            guard let pair = scenario.notification(for: event) else { continue }
            if event.event == .consentRevoked {
                announce(at, pair, nil)
                continue
            }
            let product = scenario.announcedProduct(of: event) ?? made.first { $0.type == .autoRenewable }?.productID
            let concerned = made.filter { $0.productID == product && $0.purchaseDate <= at }
            guard let t = concerned.max(by: { $0.purchaseDate < $1.purchaseDate }) else { continue }
            announce(at, pair, t, reason: event.event == .refundRequest ? event.requestReason ?? .unintendedPurchase : nil)
        }
        return announcements
    }
}
