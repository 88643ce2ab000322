import Foundation
import Hummingbird
import StoreForge
import StoreServer
import HTTPServers
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport

/// Issue 39, item 2: one `SubscriptionStatus`, worked out once from the store. Every status a timeline reaches is
/// the same Apple integer in the store model, a notification's `data.status`, the Server API's `status` and its
/// `status=` filter.
@Suite("One subscription status, rendered alike", .timeLimit(.minutes(2)))
struct SubscriptionStatusTests {
    static let madeAt = "2025-01-01T00:00:00Z"

    /// A monthly subscription bought 2024-12-15 (its period ends 2025-01-15), its timeline bringing it to `status`
    /// at `clock`.
    struct Reached: CustomTestStringConvertible, Sendable {
        let status: SubscriptionStatus
        let timeline: [TimelineEvent]
        let clock: String
        var testDescription: String { status.name }

        var scenario: Scenario {
            Scenario(
                bundleID: "com.example.status", now: SubscriptionStatusTests.madeAt, seed: 39,
                purchases: [Purchase(productID: "pro.monthly", type: .autoRenewable, purchaseDate: "2024-12-15T00:00:00Z", period: "P1M")],
                timeline: timeline)
        }
    }

    static let reached: [Reached] = [
        Reached(status: .active, timeline: [], clock: "2025-01-10T00:00:00Z"),
        Reached(status: .expired, timeline: [TimelineEvent(.cancel, at: "2025-01-05T00:00:00Z")], clock: "2025-01-20T00:00:00Z"),
        Reached(status: .billingRetry, timeline: [TimelineEvent(.billingRetry, at: "2025-01-15T00:00:00Z")], clock: "2025-01-20T00:00:00Z"),
        Reached(status: .gracePeriod, timeline: [TimelineEvent(.gracePeriod, at: "2025-01-15T00:00:00Z", days: 16)], clock: "2025-01-20T00:00:00Z"),
        Reached(status: .revoked, timeline: [TimelineEvent(.refund, at: "2025-01-05T00:00:00Z")], clock: "2025-01-06T00:00:00Z"),
    ]

    @Test("Apple's integers and names: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked")
    func rawValues() {
        #expect(SubscriptionStatus.allCases.map(\.rawValue) == [1, 2, 3, 4, 5])
        #expect(SubscriptionStatus.allCases.map(\.name) == ["active", "expired", "billing retry", "grace period", "revoked"])
        #expect(Set(Self.reached.map(\.status)) == Set(SubscriptionStatus.allCases), "every status is reachable by a timeline")
    }

    static func payload(_ compact: String?) -> [String: Any] {
        guard let parts = compact?.split(separator: "."), parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    @Test("The store's status, the notification's data.status and the Server API's status and status= filter agree", arguments: reached)
    func renderedAlike(_ reached: Reached) async throws {
        let madeAt = try #require(ReceiptDate.parse(Self.madeAt))
        let clock = try #require(ReceiptDate.parse(reached.clock))
        let store = try Store(reached.scenario, now: madeAt, reissuedAt: clock)
        let latest = try #require(SubscriptionHistory.latestOfEachSubscription(store.transactions).values.first)
        #expect(store.subscriptionStatus(of: latest) == reached.status)

        let forge = try Forge.bundled()
        let rendering = try forge.rendering(reached.scenario, madeAt: madeAt, now: clock)
        #expect(rendering.subscriptionStatus(latest) == reached.status)
        let notification = Self.payload(try rendering.signedNotification(.didChangeRenewalStatus, subtype: nil, about: latest, uuid: "status"))
        #expect((notification["data"] as? [String: Any])?["status"] as? Int == Int(reached.status.rawValue))

        let service = try ServerAPIService(
            scenarios: [reached.scenario], forge: forge, configuration: .init(now: clock, access: .open))
        let application = try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), serverAPI: service,
            faults: try FaultPlan(), log: try RequestLog(file: nil, capacity: 10))
        let path = "/inApps/v1/subscriptions/\(latest.originalTransactionID)"
        try await application.test(.router) { client in
            func statuses(_ query: String) async throws -> [Int] {
                let answer = try await client.execute(uri: path + query, method: .get)
                #expect(answer.status == .ok, "\(query): \(String(buffer: answer.body))")
                let body = ServerAPIRouteTests.object(answer)
                return (body["data"] as? [[String: Any]] ?? []).flatMap { $0["lastTransactions"] as? [[String: Any]] ?? [] }.compactMap { $0["status"] as? Int }
            }
            #expect(try await statuses("") == [Int(reached.status.rawValue)])
            for status in SubscriptionStatus.allCases {
                let kept = try await statuses("?status=\(status.rawValue)")
                #expect(kept == (status == reached.status ? [Int(status.rawValue)] : []), "status=\(status.rawValue)")
            }
            #expect(try await statuses("?status=1&status=2&status=3&status=4&status=5") == [Int(reached.status.rawValue)])
            for refused in ["0", "6", "-1", "active", "1.0", ""] {
                ServerAPIRouteTests.expectError(try await client.execute(uri: path + "?status=" + refused, method: .get), .invalidStatus)
            }
        }
    }
}
