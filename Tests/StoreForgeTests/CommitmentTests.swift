import AppStoreVocabulary
import Foundation
import JWSModel
import StoreForge
import StoreModel
import Testing
import _ForgeSupport

/// Issue 40, item 3: a yearly subscription billed MONTHLY over a 12-month commitment (App Store Server API 1.21):
/// twelve numbered monthly periods, then the commitment's renewal, in the store model and in its JWS.
@Suite("Monthly billing with a 12-month commitment", .timeLimit(.minutes(2)))
struct CommitmentTests {
    static let now = ReceiptDate.parse("2026-03-15T00:00:00Z") ?? Date()
    static let yearly = ProductDefinition(
        productID: "pro.yearly", type: .autoRenewable, period: "P1Y", price: "99.99",
        billingPlans: [BillingPlan(billingPlanType: .billedUpfront), BillingPlan(billingPlanType: .monthly, commitmentPrice: "119.88")])

    static func scenario(renewals: Int, timeline: [TimelineEvent]? = nil, plan: BillingPlanType? = .monthly) -> Scenario {
        Scenario(
            bundleID: "com.example.app", seed: 7,
            purchases: [Purchase(productID: "pro.yearly", purchaseDate: "2025-01-31T10:00:00Z", renewals: renewals, billingPlan: plan)],
            timeline: timeline, products: [yearly])
    }

    static func date(_ text: String) -> Date? { ReceiptDate.parse(text) }

    @Test("Twelve monthly periods numbered 1 to 12 end with the commitment; its renewal numbers from 1 again, a year on")
    func periods() throws {
        let store = try Store(Self.scenario(renewals: 13), now: Self.now)
        let made = store.transactions
        #expect(made.count == 14)
        #expect(made.map { $0.commitment?.billingPeriodNumber } == Array(1...12) + [1, 2])
        #expect(made.allSatisfy { $0.commitment?.totalBillingPeriods == 12 && $0.billingPlan == .monthly })
        // Monthly periods, clamped to the month (Jan 31, Feb 28, Mar 31 …), from one anchor.
        #expect(made.prefix(3).map(\.purchaseDate) == ["2025-01-31T10:00:00Z", "2025-02-28T10:00:00Z", "2025-03-31T10:00:00Z"].map(Self.date))
        #expect(made[11].expiresDate == Self.date("2026-01-31T10:00:00Z"))
        #expect(made.prefix(12).allSatisfy { $0.commitment?.expiresDate == Self.date("2026-01-31T10:00:00Z") })
        #expect(made.suffix(2).allSatisfy { $0.commitment?.expiresDate == Self.date("2027-01-31T10:00:00Z") })

        // The timeline's renewals carry on the same count, into the next commitment.
        let renewed = try Store(Self.scenario(renewals: 9, timeline: [TimelineEvent(.renew, count: 4)]), now: Self.now).transactions
        #expect(renewed.map { $0.commitment?.billingPeriodNumber } == Array(1...12) + [1, 2])
        let second = try #require(renewed.count == 14 ? renewed[12] : nil)
        #expect(renewed.suffix(2).allSatisfy { $0.commitment?.expiresDate == SubscriptionPeriod.month.advance(second.purchaseDate, by: 12) })

        // Extending the renewal date moves the commitment's end as much, in every period of it.
        let extended = try Store(Self.scenario(renewals: 3, timeline: [TimelineEvent(.extend, at: "2025-03-10T00:00:00Z", days: 10)]), now: Self.now)
        #expect(extended.transactions.map { $0.commitment?.expiresDate } == Array(repeating: Self.date("2026-02-10T10:00:00Z"), count: 4))

        // Paid up front: one yearly period, the plan named, no commitment.
        let upfront = try Store(Self.scenario(renewals: 1, plan: .billedUpfront), now: Self.now).transactions
        #expect(upfront.map(\.billingPlan) == [.billedUpfront, .billedUpfront] && upfront.allSatisfy { $0.commitment == nil })
        #expect(upfront.first?.expiresDate == Self.date("2026-01-31T10:00:00Z"))
    }

    @Test("The transaction carries billingPlanType and commitmentInfo; renewal info renewalBillingPlanType and the commitment's renewal")
    func jwsFields() throws {
        let forge = try Forge(receiptPKI: .bundled())
        let scenario = Self.scenario(renewals: 13)
        let transaction = try forge.make(.transaction, scenario: scenario, now: Self.now).payload
        #expect(transaction["billingPlanType"] == .string("MONTHLY") && transaction["price"] == .integer(9990))
        let info = try #require(transaction["commitmentInfo"])
        #expect(info["billingPeriodNumber"] == .integer(2) && info["totalBillingPeriods"] == .integer(12))
        #expect(info["commitmentPrice"] == .integer(119_880))
        #expect(info["commitmentExpiresDate"] == .integer(Int64((Self.date("2027-01-31T10:00:00Z") ?? .distantPast).timeIntervalSince1970 * 1000)))

        let renewal = try forge.make(.renewal, scenario: scenario, now: Self.now).payload
        #expect(renewal["renewalBillingPlanType"] == .string("MONTHLY") && renewal["renewalPrice"] == .integer(9990))
        let next = try #require(renewal["commitmentInfo"])
        #expect(next["commitmentAutoRenewProductId"] == .string("pro.yearly") && next["commitmentAutoRenewStatus"] == .integer(1))
        #expect(next["commitmentRenewalBillingPlanType"] == .string("MONTHLY") && next["commitmentRenewalPrice"] == .integer(119_880))
        #expect(next["commitmentRenewalDate"] == info["commitmentExpiresDate"])

        // Turned off, the commitment does not renew.
        let cancelled = Self.scenario(renewals: 13, timeline: [TimelineEvent(.cancel, at: "2026-03-10T00:00:00Z")])
        #expect(try forge.make(.renewal, scenario: cancelled, now: Self.now).payload["commitmentInfo"]?["commitmentAutoRenewStatus"] == .integer(0))
        // A purchase without a billing plan has none of these members.
        var plain = Self.scenario(renewals: 1, plan: nil)
        plain.products = nil
        for kind in [JWSKind.transaction, .renewal] {
            let payload = try forge.make(kind, scenario: plain, now: Self.now).payload
            #expect(["billingPlanType", "renewalBillingPlanType", "commitmentInfo"].allSatisfy { payload[$0] == nil }, "\(kind)")
        }
    }

    @Test("A commitment asked of what cannot have one is refused with a coded error naming the fields")
    func refusals() throws {
        func refusal(_ purchase: Purchase, products: [ProductDefinition]? = nil) -> ForgeError? {
            do {
                _ = try Store(Scenario(purchases: [purchase], products: products), now: Self.now)
                return nil
            } catch { return error }
        }
        let monthlyPeriod = refusal(Purchase(productID: "p", period: "P1M", billingPlan: .monthly))
        #expect(monthlyPeriod?.code == .conflictingOptions && monthlyPeriod?.fields == ["purchases[0].billingPlan", "purchases[0].period"])
        #expect(monthlyPeriod?.message.contains("must be P1Y, not P1M") == true, "\(monthlyPeriod?.message ?? "")")
        let consumable = refusal(Purchase(productID: "p", type: .consumable, billingPlan: .monthly))
        #expect(consumable?.code == .conflictingOptions && consumable?.fields == ["purchases[0].billingPlan", "purchases[0].type"])
        let trial = refusal(Purchase(productID: "p", trial: true, billingPlan: .monthly))
        #expect(trial?.code == .conflictingOptions && trial?.fields == ["purchases[0].billingPlan", "purchases[0].trial"])
        let notOffered = refusal(
            Purchase(productID: "pro.yearly", billingPlan: .monthly), products: [ProductDefinition(productID: "pro.yearly", type: .autoRenewable, period: "P1Y")])
        #expect(notOffered?.code == .conflictingOptions && notOffered?.message.contains("not a billing plan of pro.yearly") == true)
        let onConsumable = refusal(
            Purchase(productID: "coins"), products: [ProductDefinition(productID: "coins", type: .consumable, billingPlans: [BillingPlan(billingPlanType: .monthly)])])
        #expect(onConsumable?.code == .invalidScenario && onConsumable?.fields == ["products[0].billingPlans"])
        // A spec's value outside Apple's two names the key and the values.
        #expect {
            try Scenario.decode(json: Data(#"{"purchases": [{"productId": "p", "billingPlan": "monthly"}]}"#.utf8))
        } throws: { error in
            let error = error as? ForgeError
            return error?.code == .invalidScenario && error?.fields == ["purchases[0].billingPlan"] && error?.message.contains("BILLED_UPFRONT, MONTHLY") == true
        }
        // And in a spec, the plan reads as the model's.
        let spec = #"""
            {"purchases": [{"productId": "p", "billingPlan": "MONTHLY"}], "products": [{"productId": "p", "type": "auto-renewable", "period": "P1Y",
              "billingPlans": [{"billingPlanType": "MONTHLY", "commitmentPrice": "119.88"}]}]}
            """#
        let read = try Scenario.decode(json: Data(spec.utf8))
        #expect(read.purchases.first?.billingPlan == .monthly && read.products?.first?.billingPlans == [BillingPlan(billingPlanType: .monthly, commitmentPrice: "119.88")])
    }

    @Test("A .storekit subscription's billingPlans are its product's; a value outside Apple's is refused with its path")
    func storeKitFile() throws {
        let plans = #""billingPlans" : [ { "billingPlanType" : "MONTHLY", "commitmentDisplayPrice" : "119.88" }, { "billingPlanType" : "billedUpfront" } ],"#
        let text = StoreKitConfigurationTests.file(version: 4).replacingOccurrences(
            of: #""productID" : "pro.yearly""#, with: plans + #" "productID" : "pro.yearly""#)
        let yearly = try #require(try StoreKitConfigurationTests.read(text).products(named: ["pro.yearly"]).first)
        #expect(yearly.billingPlans == [BillingPlan(billingPlanType: .monthly, commitmentPrice: "119.88"), BillingPlan(billingPlanType: .billedUpfront)])
        #expect(yearly.commitmentPriceMilliunits == 119_880)
        let wrong = text.replacingOccurrences(of: #""billingPlanType" : "MONTHLY""#, with: #""billingPlanType" : "WEEKLY""#)
        #expect {
            try StoreKitConfigurationTests.read(wrong)
        } throws: { error in
            (error as? StoreKitFileError)?.keyPath == "subscriptionGroups[0].subscriptions[1].billingPlans[0].billingPlanType"
        }
    }
}
