import Foundation
import StoreForge
import ReceiptModel
import Testing
import _ForgeSupport
import StoreModel
import AppStoreVocabulary

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
        #expect(!cancelled.autoRenewStatus && cancelled.expirationIntent == .voluntary && cancelled.isInBillingRetryPeriod == false)

        let refunded = try Self.state([TimelineEvent(.refund, at: "2025-01-05T00:00:00Z", reason: .appIssue)], at: "2025-01-06T00:00:00Z")
        #expect(refunded.transactions[0].cancellationDate == ReceiptDate.parse("2025-01-05T00:00:00Z"))
        #expect(refunded.history.cancellationReasons == [refunded.transactions[0].transactionID: 1])
        #expect(refunded.history.pendingRenewals.first?.autoRenewStatus == false)

        let retrying = try #require(try Self.state([TimelineEvent(.billingRetry, at: end)], at: "2025-01-20T00:00:00Z").history.pendingRenewals.first)
        #expect(retrying.autoRenewStatus && retrying.expirationIntent == .billingError && retrying.isInBillingRetryPeriod == true)

        let grace = try #require(try Self.state([TimelineEvent(.gracePeriod, at: end, days: 6)], at: "2025-01-18T00:00:00Z").history.pendingRenewals.first)
        #expect(grace.gracePeriodExpiresDate == ReceiptDate.parse("2025-01-21T00:00:00Z") && grace.expirationIntent == nil)

        let recovered = try Self.state([TimelineEvent(.billingRetry, at: end), TimelineEvent(.recover, at: "2025-01-20T00:00:00Z")], at: "2025-01-25T00:00:00Z")
        #expect(recovered.transactions.count == 2 && recovered.transactions[1].expiresDate == ReceiptDate.parse("2025-02-20T00:00:00Z"))
        #expect(recovered.history.pendingRenewals.first?.isInBillingRetryPeriod == nil)

        let declined = try #require(
            try Self.state([TimelineEvent(.priceIncrease, at: "2025-01-05T00:00:00Z", consent: .declined)], at: "2025-01-20T00:00:00Z").history.pendingRenewals.first)
        #expect(declined.priceConsentStatus == .notYetConsented && declined.expirationIntent == .priceIncreaseDeclined && !declined.autoRenewStatus)

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

    /// The renewal fields a timeline reaches, as verifyReceipt's `pending_renewal_info` (strings) and the JWS renewal
    /// info (numbers) render them.
    static func renderedRenewal(_ events: [TimelineEvent], at date: String) throws -> (model: PendingRenewal, receipt: JSONValue, jws: [String: Any]) {
        let instant = try #require(ReceiptDate.parse(date))
        let made = try forge.make(scenario(events), now: madeAt, reissuedAt: instant)
        let model = try #require(made.history.pendingRenewals.first)
        var extras = VerifyReceiptJSON.Extras(requestDate: instant, now: instant)
        extras.pendingRenewals = made.history.pendingRenewals
        let response = VerifyReceiptJSON.response(for: try AppReceipt(payloadBytes: made.payload), extras: extras)
        let receipt = try #require(response["pending_renewal_info"]?.arrayValue?.first)
        let latest = try #require(made.transactions.last)
        let signed = try forge.rendering(scenario(events), madeAt: madeAt, now: instant).signedRenewal(of: latest)
        let parts = signed.split(separator: ".")
        let bytes = try #require(parts.count == 3 ? Base64URL.decode(parts[1]) : nil)
        let jws = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        return (model, receipt, jws)
    }

    @Test(
        "Issue 39, item 4: each expiration intent and price consent the timeline reaches is typed in the model and Apple's integer in both renderings",
        arguments: [
            ([TimelineEvent(.cancel, at: "2025-01-05T00:00:00Z")], ExpirationIntent.voluntary),
            ([TimelineEvent(.billingRetry, at: "2025-01-15T00:00:00Z")], .billingError),
            ([TimelineEvent(.billingRetryEnded, at: "2025-01-16T00:00:00Z")], .billingError),
            ([TimelineEvent(.priceIncrease, at: "2025-01-05T00:00:00Z", consent: .declined)], .priceIncreaseDeclined),
            ([TimelineEvent(.productWithdrawn, at: "2025-01-05T00:00:00Z")], .productUnavailable),
        ])
    func expirationIntentRendered(_ events: [TimelineEvent], intent: ExpirationIntent) throws {
        let (model, receipt, jws) = try Self.renderedRenewal(events, at: "2025-01-20T00:00:00Z")
        #expect(model.expirationIntent == intent)
        #expect(receipt["expiration_intent"] == .string(String(intent.rawValue)))
        #expect(jws["expirationIntent"] as? Int == intent.rawValue)
        let consent = events.first?.consent == .declined ? "0" : nil
        #expect(receipt["price_consent_status"]?.stringValue == consent && receipt["price_increase_status"]?.stringValue == consent)
        #expect((jws["priceIncreaseStatus"] as? Int).map(String.init) == consent)
    }

    @Test("Issue 39, item 4: a pending or accepted price increase is the customer's consent, 0 or 1, in both renderings; no expiration intent")
    func priceConsentRendered() throws {
        for (consent, status) in [(TimelineEvent.Consent.pending, PriceConsentStatus.notYetConsented), (.accepted, .consented)] {
            let (model, receipt, jws) = try Self.renderedRenewal([TimelineEvent(.priceIncrease, at: "2025-01-05T00:00:00Z", consent: consent)], at: "2025-01-10T00:00:00Z")
            #expect(model.priceConsentStatus == status && model.expirationIntent == nil)
            #expect(receipt["price_consent_status"] == .string(String(status.rawValue)) && receipt["price_increase_status"] == .string(String(status.rawValue)))
            #expect(jws["priceIncreaseStatus"] as? Int == status.rawValue && jws["expirationIntent"] == nil)
            #expect(receipt["expiration_intent"] == nil)
        }
    }
}
