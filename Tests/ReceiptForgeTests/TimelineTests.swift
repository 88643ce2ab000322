import Foundation
import ReceiptForge
import ReceiptModel
import Testing
import ForgeSupport
import StoreModel

/// A scenario's timeline: what Apple's server knows after the receipt on the device was made.
@Suite("Scenario timeline", .timeLimit(.minutes(2)))
struct TimelineTests {
    static let forge = try! Forge.bundled()
    static let madeAt = ReceiptDate.parse("2025-01-01T00:00:00Z")!

    static func scenario(_ events: [TimelineEvent], product: Purchase? = nil) -> Scenario {
        Scenario(
            bundleID: "com.example.app", now: "2025-01-01T00:00:00Z",
            purchases: [product ?? Purchase(productID: "pro.monthly", purchaseDate: "2024-12-15T00:00:00Z", period: "P1M")],
            timeline: events)
    }

    static func state(_ events: [TimelineEvent], at date: String) throws -> ForgedReceipt {
        try forge.make(scenario(events), now: madeAt, reissuedAt: ReceiptDate.parse(date))
    }

    @Test("Renewals happen at each period's end, up to the instant; the receipt's own ids never move")
    func renewals() throws {
        let device = try Self.forge.make(Self.scenario([TimelineEvent(.renew, count: 3)]), now: Self.madeAt)
        #expect(device.transactions.count == 1)  // the first renewal is on Jan 15, after the receipt was made
        let later = try Self.state([TimelineEvent(.renew, count: 3)], at: "2025-02-20T00:00:00Z")
        #expect(later.transactions.map { ReceiptDate.format($0.purchaseDate) } == ["2024-12-15T00:00:00Z", "2025-01-15T00:00:00Z", "2025-02-15T00:00:00Z"])
        #expect(later.transactions[0].transactionID == device.transactions[0].transactionID)
        #expect(Set(later.transactions.map(\.originalTransactionID)) == [device.transactions[0].transactionID])
        let pending = try #require(later.history.pendingRenewals.first)
        #expect(pending.autoRenewStatus && pending.expirationIntent == nil)
    }

    @Test("cancel, refund, billing-retry, grace-period, recover, price-increase, change-product and account-deleted set Apple's renewal fields")
    func renewalState() throws {
        let end = "2025-01-15T00:00:00Z"
        let cancelled = try #require(try Self.state([TimelineEvent(.cancel, at: "2025-01-05T00:00:00Z")], at: "2025-01-20T00:00:00Z").history.pendingRenewals.first)
        #expect(!cancelled.autoRenewStatus && cancelled.expirationIntent == 1 && cancelled.isInBillingRetryPeriod == false)

        let refunded = try Self.state([TimelineEvent(.refund, at: "2025-01-05T00:00:00Z", reason: .appIssue)], at: "2025-01-06T00:00:00Z")
        #expect(refunded.transactions[0].cancellationDate == ReceiptDate.parse("2025-01-05T00:00:00Z"))
        #expect(refunded.history.cancellationReasons == [refunded.transactions[0].transactionID: 1])
        #expect(refunded.history.pendingRenewals.first?.autoRenewStatus == false)

        let retrying = try #require(try Self.state([TimelineEvent(.billingRetry, at: end)], at: "2025-01-20T00:00:00Z").history.pendingRenewals.first)
        #expect(retrying.autoRenewStatus && retrying.expirationIntent == 2 && retrying.isInBillingRetryPeriod == true)

        let grace = try #require(try Self.state([TimelineEvent(.gracePeriod, at: end, days: 6)], at: "2025-01-18T00:00:00Z").history.pendingRenewals.first)
        #expect(grace.gracePeriodExpiresDate == ReceiptDate.parse("2025-01-21T00:00:00Z") && grace.expirationIntent == nil)

        let recovered = try Self.state([TimelineEvent(.billingRetry, at: end), TimelineEvent(.recover, at: "2025-01-20T00:00:00Z")], at: "2025-01-25T00:00:00Z")
        #expect(recovered.transactions.count == 2 && recovered.transactions[1].expiresDate == ReceiptDate.parse("2025-02-20T00:00:00Z"))
        #expect(recovered.history.pendingRenewals.first?.isInBillingRetryPeriod == nil)

        let declined = try #require(
            try Self.state([TimelineEvent(.priceIncrease, at: "2025-01-05T00:00:00Z", consent: .declined)], at: "2025-01-20T00:00:00Z").history.pendingRenewals.first)
        #expect(declined.priceConsentStatus == 0 && declined.expirationIntent == 3 && !declined.autoRenewStatus)

        let changed = try #require(
            try Self.state([TimelineEvent(.changeProduct, at: "2025-01-05T00:00:00Z", to: "pro.yearly")], at: "2025-01-06T00:00:00Z").history.pendingRenewals.first)
        #expect(changed.autoRenewProductID == "pro.yearly" && changed.productID == "pro.monthly")

        #expect(try Self.state([TimelineEvent(.accountDeleted, at: "2025-02-01T00:00:00Z")], at: "2025-01-20T00:00:00Z").history.accountDeletedAt == nil)
        #expect(try Self.state([TimelineEvent(.accountDeleted, at: "2025-02-01T00:00:00Z")], at: "2025-02-02T00:00:00Z").history.accountDeletedAt != nil)
    }

    @Test("A timeline that cannot apply is refused with the key that is wrong")
    func refusals() throws {
        func message(_ json: String) -> String? {
            do {
                _ = try Self.forge.make(try Scenario.decode(json: Data(json.utf8)), now: Self.madeAt)
                return nil
            } catch { return error.message }
        }
        #expect(message(#"{"purchases": [{"productId": "p", "period": "P1M"}], "timeline": [{"event": "refund"}]}"#)?.contains("'timeline[0].at' is required") == true)
        #expect(message(#"{"purchases": [{"productId": "p", "period": "P1M"}], "timeline": [{"event": "renew", "when": "x"}]}"#)?.contains("unknown key 'when'") == true)
        #expect(message(#"{"purchases": [{"productId": "p"}], "timeline": [{"event": "renew"}]}"#)?.contains("no auto-renewable subscription") == true)
        #expect(message(#"{"purchases": [{"productId": "p", "period": "P1M"}], "timeline": [{"event": "renew", "productId": "q"}]}"#)?.contains("not one of") == true)
        #expect(message(#"{"purchases": [{"productId": "p", "period": "P1M"}], "timeline": [{"event": "grace-period", "at": "2025-01-01T00:00:00Z", "days": 0}]}"#) != nil)
        #expect(message(#"{"purchases": [{"productId": "p", "period": "P1M"}], "timeline": [{"event": "explode"}]}"#) != nil)
    }
}
