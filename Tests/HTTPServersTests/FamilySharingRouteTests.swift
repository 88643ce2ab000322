import Foundation
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import Testing
import _ForgeSupport
import StoreModel

/// Issue 39, item 1: a purchase shared through Family Sharing is FAMILY_SHARED in the Server API's transactions, and
/// Get Transaction History's `inAppOwnershipType` filters by the transaction's own ownership.
@Suite("The Server API: inAppOwnershipType from the store", .timeLimit(.minutes(2)))
struct FamilySharingRouteTests {
    static let scenario = """
        {"preset": "sandbox", "bundleId": "com.example.family", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-11-15T00:00:00Z", "period": "P1M", "renewals": 1, "ownership": "FAMILY_SHARED"},
                       {"productId": "lifetime", "type": "non-consumable", "purchaseDate": "2024-06-01T00:00:00Z"}]}
        """

    @Test("History renders FAMILY_SHARED for the shared subscription; inAppOwnershipType=FAMILY_SHARED returns it alone, PURCHASED the rest")
    func historyFiltersByOwnership() async throws {
        let scenario = try Scenario.decode(json: Data(Self.scenario.utf8))
        let clock = try #require(ReceiptDate.parse("2025-01-01T00:00:00Z"))
        let store = try Forge.bundled().rendering(scenario, madeAt: clock, now: clock).store
        let lifetime = try #require(store.transactions.first { $0.productID == "lifetime" })
        let service = try ServerAPIService(scenarios: [scenario], forge: try Forge.bundled(), configuration: .init(now: clock, access: .open))
        let application = try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), serverAPI: service,
            faults: try FaultPlan(), log: try RequestLog(file: nil, capacity: 100))
        try await application.test(.router) { client in
            func history(_ query: String) async throws -> [[String: Any]] {
                ServerAPIRouteTests.transactions(
                    try await client.execute(uri: "/sandbox/inApps/v2/history/\(lifetime.transactionID)?" + query, method: .get))
            }
            let all = try await history("")
            #expect(all.count == 3)
            for t in all {
                #expect(t["inAppOwnershipType"] as? String == (t["productId"] as? String == "pro.monthly" ? "FAMILY_SHARED" : "PURCHASED"))
            }
            let shared = try await history("inAppOwnershipType=FAMILY_SHARED")
            #expect(shared.count == 2 && shared.allSatisfy { $0["productId"] as? String == "pro.monthly" && $0["inAppOwnershipType"] as? String == "FAMILY_SHARED" })
            let purchased = try await history("inAppOwnershipType=PURCHASED")
            #expect(purchased.map { $0["productId"] as? String } == ["lifetime"])
        }
    }
}

extension FamilySharingRouteTests {
    @Test("verifyReceipt's JSON says in_app_ownership_type FAMILY_SHARED for the shared subscription's transactions, PURCHASED for the rest")
    func verifyReceiptTakesTheOwnership() async throws {
        let scenario = Self.scenario.replacingOccurrences(of: #""preset": "sandbox", "#, with: "")
        let receipt = try VerifyReceiptServeTests.receipt(scenario)
        try await VerifyReceiptServeTests.application(scenarios: [scenario]).test(.router) { client in
            let answer = try await VerifyReceiptServeTests.verify(client, ["receipt-data": receipt])
            #expect(VerifyReceiptServeTests.status(answer) == 0, "\(answer)")
            let inApp = try #require((answer["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])
            let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
            #expect(inApp.count == 3 && latest.count == 2)
            for transaction in inApp + latest {
                let shared = transaction["product_id"] as? String == "pro.monthly"
                #expect(transaction["in_app_ownership_type"] as? String == (shared ? "FAMILY_SHARED" : "PURCHASED"), "\(transaction)")
            }
        }
    }
}
