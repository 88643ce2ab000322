import Foundation
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import Testing
import _ForgeSupport
import StoreModel

/// Get Notification History's `paginationToken` is the server's own: a made-up, altered or future-dated one is 4000014,
/// so none can outlive its day. The history's `revision` is left unauthenticated on purpose (it must outlive restarts)
/// and a made-up one only positions a read the caller may make whole.
@Suite("Pagination tokens are the server's own; a revision grants nothing", .timeLimit(.minutes(2)))
struct PaginationTokenTests {
    static let clock = "2025-01-01T00:00:00Z"
    /// A daily subscription in the sandbox: over 20 notifications in the 30 days the history reaches back, two pages.
    static let scenario = #"""
        {"preset": "sandbox", "bundleId": "com.example.daily", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.daily", "purchaseDate": "2024-12-05T00:00:00Z", "period": "P1D", "renewals": 40}]}
        """#
    static let history = "/sandbox/inApps/v1/notifications/history"

    static func application() throws -> ForgeApplication {
        let service = try ServerAPIService(
            scenarios: [try Scenario.decode(json: Data(scenario.utf8))], forge: try Forge.bundled(),
            configuration: .init(now: ReceiptDate.parse(clock), access: .open))
        return try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), serverAPI: service,
            faults: try FaultPlan(), log: try RequestLog(file: nil, capacity: 100))
    }

    static func body() throws -> ByteBuffer {
        let start = try #require(ReceiptDate.parse("2024-12-04T00:00:00Z")), end = try #require(ReceiptDate.parse(clock))
        return ByteBuffer(string: #"{"startDate":\#(ReceiptDate.milliseconds(start) ?? 0),"endDate":\#((ReceiptDate.milliseconds(end) ?? 0) + 1)}"#)
    }

    @Test(
        "A token made up for the year 9999, one altered, and one issued after the request's clock are 4000014; the server's own token reads the next page, and expires a day later (4000017)"
    )
    func forgedTokensRefused() async throws {
        try await Self.application().test(.router) { client in
            let first = try await client.execute(uri: Self.history, method: .post, body: try Self.body())
            let page1 = ServerAPIRouteTests.object(first)
            #expect(first.status == .ok && (page1["notificationHistory"] as? [Any])?.count == 20 && page1["hasMore"] as? Bool == true)
            let token = try #require(page1["paginationToken"] as? String)

            let second = try await client.execute(uri: Self.history + "?paginationToken=" + token, method: .post, body: try Self.body())
            let page2 = ServerAPIRouteTests.object(second)
            #expect(second.status == .ok && (page2["notificationHistory"] as? [Any])?.isEmpty == false && page2["hasMore"] as? Bool == false, "\(page2)")

            // Its fingerprint (the request's filters) read back, in a token dated 9999-12-31 that would never expire.
            let decoded = try #require(Base64URL.decode(token))
            let fingerprint = try #require(decoded.split(separator: UInt8(ascii: ":"), maxSplits: 2).dropFirst().first)
            let forever = Base64URL.encode(Array("1:".utf8) + fingerprint + Array(":253402300799000:0".utf8))
            var altered = decoded
            altered[altered.count - 1] ^= 1
            for (name, forged) in [("year 9999", forever), ("altered", Base64URL.encode(altered))] {
                let answer = try await client.execute(
                    uri: Self.history + "?paginationToken=" + forged, method: .post, headers: try ServerAPIRouteTests.clockHeader("2025-01-02T00:00:00Z"),
                    body: try Self.body())
                ServerAPIRouteTests.expectError(answer, .invalidPaginationToken)
                #expect(answer.status == .badRequest, "\(name): \(String(buffer: answer.body))")
            }
            let before = try await client.execute(
                uri: Self.history + "?paginationToken=" + token, method: .post, headers: try ServerAPIRouteTests.clockHeader("2024-12-31T00:00:00Z"),
                body: try Self.body())
            ServerAPIRouteTests.expectError(before, .invalidPaginationToken)
            let expired = try await client.execute(
                uri: Self.history + "?paginationToken=" + token, method: .post, headers: try ServerAPIRouteTests.clockHeader("2025-01-02T00:00:01Z"),
                body: try Self.body())
            ServerAPIRouteTests.expectError(expired, .paginationTokenExpired)
        }
    }

    @Test("A made-up history revision only positions the read: from the start it is the first page, past the end an empty one; nothing beyond the caller's own history")
    func madeUpRevisionGrantsNothing() async throws {
        let ids = try ServerAPIRouteTests.sandboxIDs()
        let monthly = try #require(ids["pro.monthly"])
        try await ServerAPIRouteTests.application().test(.router) { client in
            let plain = try await client.execute(uri: "/sandbox/inApps/v2/history/\(monthly[0])", method: .get)
            let start = Base64URL.encode(Array("1:A:0:0".utf8))
            let fromStart = try await client.execute(uri: "/sandbox/inApps/v2/history/\(monthly[0])?revision=\(start)", method: .get)
            let ids = { (response: TestResponse) in ServerAPIRouteTests.transactions(response).compactMap { $0["transactionId"] as? String } }
            #expect(fromStart.status == .ok && ids(fromStart) == ids(plain) && ids(plain).count == 20)
            let end = Base64URL.encode(Array("1:A:9223372036854775807:99999999999999999999".utf8))
            let pastEnd = try await client.execute(uri: "/sandbox/inApps/v2/history/\(monthly[0])?revision=\(end)", method: .get)
            #expect(pastEnd.status == .ok && ids(pastEnd).isEmpty && ServerAPIRouteTests.object(pastEnd)["hasMore"] as? Bool == false)
        }
    }
}
