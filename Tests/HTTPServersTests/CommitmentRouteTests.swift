import Foundation
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import Testing
import _ForgeSupport
import StoreModel

/// Issue 40, item 3: a commitment is in the Server API's signed transactions and renewal info, from the store, and in
/// no receipt: verifyReceipt's JSON has no billing plan, as Apple's has none.
@Suite("The Server API and verifyReceipt: a 12-month commitment", .timeLimit(.minutes(2)))
struct CommitmentRouteTests {
    static let scenario = """
        {"preset": "sandbox", "bundleId": "com.example.app", "now": "2026-03-15T00:00:00Z",
         "products": [{"productId": "pro.yearly", "type": "auto-renewable", "period": "P1Y", "price": "99.99",
                       "billingPlans": [{"billingPlanType": "MONTHLY", "commitmentPrice": "119.88"}]}],
         "purchases": [{"productId": "pro.yearly", "purchaseDate": "2025-01-31T10:00:00Z", "renewals": 13, "billingPlan": "MONTHLY"}]}
        """

    @Test("Get Transaction History numbers the monthly periods 1 to 12 and the renewed commitment's from 1; Get All Subscription Statuses' renewal info says MONTHLY")
    func serverAPI() async throws {
        let scenario = try Scenario.decode(json: Data(Self.scenario.utf8))
        let clock = try #require(ReceiptDate.parse("2026-03-15T00:00:00Z"))
        let store = try Forge.bundled().rendering(scenario, madeAt: clock, now: clock).store
        let original = try #require(store.transactions.first?.originalTransactionID)
        let service = try ServerAPIService(scenarios: [scenario], forge: try Forge.bundled(), configuration: .init(now: clock, access: .open))
        let application = try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), serverAPI: service,
            faults: try FaultPlan(), log: try RequestLog(file: nil, capacity: 100))
        try await application.test(.router) { client in
            let history = ServerAPIRouteTests.transactions(try await client.execute(uri: "/sandbox/inApps/v2/history/\(original)", method: .get))
            #expect(history.map { ($0["commitmentInfo"] as? [String: Any])?["billingPeriodNumber"] as? Int } == Array(1...12) + [1, 2])
            #expect(history.allSatisfy { $0["billingPlanType"] as? String == "MONTHLY" && $0["price"] as? Int == 9990 })
            let statuses = ServerAPIRouteTests.object(try await client.execute(uri: "/sandbox/inApps/v1/subscriptions/\(original)", method: .get))
            let last = try #require(((statuses["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first)
            let renewal = ServerAPIRouteTests.payload(last["signedRenewalInfo"])
            #expect(renewal["renewalBillingPlanType"] as? String == "MONTHLY")
            #expect((renewal["commitmentInfo"] as? [String: Any])?["commitmentRenewalPrice"] as? Int == 119_880)
        }
    }

    @Test("verifyReceipt's JSON carries no billing plan or commitment")
    func verifyReceiptHasNone() async throws {
        let scenario = Self.scenario.replacingOccurrences(of: #""preset": "sandbox", "#, with: "")
        let receipt = try VerifyReceiptServeTests.receipt(scenario)
        try await VerifyReceiptServeTests.application(scenarios: [scenario]).test(.router) { client in
            let answer = try await VerifyReceiptServeTests.verify(client, ["receipt-data": receipt])
            #expect(VerifyReceiptServeTests.status(answer) == 0, "\(answer)")
            let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
            #expect(latest.count == 14)
            let text = String(decoding: try JSONSerialization.data(withJSONObject: answer), as: UTF8.self).lowercased()
            #expect(!text.contains("commitment") && !text.contains("billing_plan") && !text.contains("billingplan"))
        }
    }
}
