import _ForgeSupport
import ForgeTestSupport
import Foundation
import Hummingbird
import HTTPServers
import StoreForge
import StoreModel
import Testing

/// Issue 42 §3: `GET /_forge/ids` gives a fixture the ids to call the Server API with, so that none scrapes them from a
/// signed payload.
@Suite("GET /_forge/ids in process", .timeLimit(.minutes(2)))
struct ForgeIdsRouteTests {
    typealias Server = ExampleServer

    @Test(
        "GET /_forge/ids: per customer its bundle id, environment, appAppleId and appTransactionId, per purchase the original and latest transaction id, the latest's order id and every transaction id; each id is one the Server API answers"
    )
    func identifiers() async throws {
        let ids = try ExampleIDs()
        let at = try #require(ReceiptDate.parse(Server.clock))
        let scenarios = try Server.scenarios()
        let forge = try Forge.bundled()
        let sandbox = try forge.rendering(scenarios[0], madeAt: at, now: at)
        let production = try forge.rendering(scenarios[1], madeAt: at, now: at)
        try await Server().application.test(.router) { client in
            let answer = try await client.execute(uri: "/_forge/ids", method: .get, headers: Server.control)
            #expect(answer.status == .ok && answer.headers[.contentType] == "application/json", "\(String(buffer: answer.body))")
            let body = Server.object(answer)
            #expect(body["now"] as? String == Server.clock)
            let customers = try #require(body["customers"] as? [[String: Any]], "\(body)")
            try #require(customers.count == 2)
            let (first, second) = (customers[0], customers[1])
            #expect(first["bundleId"] as? String == "com.example.api" && first["environment"] as? String == "Sandbox", "\(first)")
            #expect(first["appTransactionId"] as? String == sandbox.appTransactionID && first["served"] as? Bool == true)
            let purchases = first["purchases"] as? [[String: Any]] ?? []
            let monthly = try #require(purchases.first { $0["productId"] as? String == "pro.monthly" }, "\(purchases)")
            #expect(monthly["originalTransactionId"] as? String == ids.original && monthly["latestTransactionId"] as? String == ids.latest, "\(monthly)")
            #expect(monthly["transactionIds"] as? [String] == ids.monthly && monthly["type"] as? String == "auto-renewable")
            #expect(purchases.first { $0["productId"] as? String == "lifetime" }?["latestTransactionId"] as? String == ids.lifetime, "\(purchases)")
            #expect(second["environment"] as? String == "Production" && second["appAppleId"] as? Int64 == production.appAppleID, "\(second)")
            let yearly = (second["purchases"] as? [[String: Any]])?.first
            #expect(yearly?["latestTransactionId"] as? String == ids.productionTransaction && yearly?["orderId"] as? String == ids.productionOrder, "\(second)")

            // The ids are the API's: the latest transaction, the order and the app transaction are found.
            let info = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(ids.latest)", method: .get)
            let order = try await client.execute(uri: "/inApps/v1/lookup/\(ids.productionOrder)", method: .get)
            let app = try await client.execute(uri: "/sandbox/inApps/v1/transactions/appTransactions/\(sandbox.appTransactionID)", method: .get)
            #expect(info.status == .ok && order.status == .ok && app.status == .ok, "\(info.status) \(order.status) \(app.status)")

            // Behind the control routes' rules like the others: no token, no ids.
            let refused = try await client.execute(uri: "/_forge/ids", method: .get)
            #expect(refused.status == .unauthorized)
        }
    }
}
