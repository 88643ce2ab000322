import _ForgeSupport
import ForgeTestSupport
import Foundation
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import StoreModel
import Testing

/// Issue 22, items 1, 3, 4 and 5, in process: the endpoints that change or announce the store — Extend a Subscription
/// Renewal Date (one and mass, with status), Set App Account Token, Look Up Order ID, Request a Test Notification and
/// its status, Get Notification History, history v1 — and the server clock (`POST /_forge/clock`) walking a timeline
/// those changes joined, verifyReceipt included. Apple's Python client meets the same endpoints over a socket in
/// `Tests/ForgeCLITests/ServerAPITests.swift` (`appleClientEndToEnd`).
@Suite("Server API state in process: extensions, tokens, notifications, the clock", .timeLimit(.minutes(2)))
struct ServerAPIStateRouteTests {
    typealias Server = ExampleServer
    static let (start, day, january15) = (Server.start, Server.day, Server.january15)

    /// Each answer's `errorCode`, in order.
    static func codes(_ responses: [TestResponse]) -> [Int?] { responses.map(Server.errorCode) }

    /// `PUT …/subscriptions/extend/{id}` of the sandbox with `body`.
    static func extend(_ client: some TestClientProtocol, _ id: String, _ body: [String: Any]) async throws -> TestResponse {
        try await client.execute(uri: "/sandbox/inApps/v1/subscriptions/extend/\(id)", method: .put, body: try Server.body(body))
    }

    /// `POST /_forge/clock` with `body`.
    static func moveClock(_ client: some TestClientProtocol, _ body: String) async throws -> TestResponse {
        try await client.execute(uri: "/_forge/clock", method: .post, headers: Server.control, body: ByteBuffer(string: body))
    }

    @Test(
        "Extend a Subscription Renewal Date moves expiresDate and renewalDate, a retried request identifier extends once, twice a year at most; 4000008/9/10/11, 4030004/5, 4040005"
    )
    func extendRenewalDate() async throws {
        let ids = try ExampleIDs()
        try await Server().application.test(.router) { client in
            let first = try await Self.extend(client, ids.original, ["extendByDays": 10, "extendReasonCode": 1, "requestIdentifier": "first"])
            let retried = try await Self.extend(client, ids.original, ["extendByDays": 10, "extendReasonCode": 1, "requestIdentifier": "first"])
            let info = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(ids.latest)", method: .get)
            let statuses = try await client.execute(uri: "/sandbox/inApps/v1/subscriptions/\(ids.latest)", method: .get)
            let second = try await Self.extend(client, ids.original, ["extendByDays": 5, "extendReasonCode": 0, "requestIdentifier": "second"])
            var refused: [TestResponse] = []
            for (id, body) in [
                (ids.original, ["extendByDays": 5, "extendReasonCode": 0, "requestIdentifier": "third"]),
                (ids.original, ["extendByDays": 91, "extendReasonCode": 0, "requestIdentifier": "long"]),
                (ids.original, ["extendByDays": 1, "extendReasonCode": 7, "requestIdentifier": "why"]), (ids.original, ["extendByDays": 1, "extendReasonCode": 0]),
                ("12ab", ["extendByDays": 1, "extendReasonCode": 0, "requestIdentifier": "bad-id"]),
                ("999999999", ["extendByDays": 1, "extendReasonCode": 0, "requestIdentifier": "unknown"]),
                (ids.lifetime, ["extendByDays": 1, "extendReasonCode": 0, "requestIdentifier": "not-a-subscription"]),
            ] as [(String, [String: Any])] {
                refused.append(try await Self.extend(client, id, body))
            }
            let extended = Self.january15 + 10 * Self.day
            let answer = Server.object(first)
            #expect(first.status == .ok && answer["success"] as? Bool == true && answer["effectiveDate"] as? Int64 == extended, "\(answer)")
            #expect(answer["originalTransactionId"] as? String == ids.original && answer["webOrderLineItemId"] is String)
            #expect(Server.object(retried)["effectiveDate"] as? Int64 == extended, "the retried request identifier answers as the first time")
            #expect(Server.payload(Server.object(info)["signedTransactionInfo"])["expiresDate"] as? Int64 == extended, "\(Server.object(info))")
            let last = ((Server.object(statuses)["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first
            #expect(Server.payload(last?["signedRenewalInfo"])["renewalDate"] as? Int64 == extended, "\(Server.object(statuses))")
            #expect(Server.object(second)["effectiveDate"] as? Int64 == extended + 5 * Self.day, "a second extension adds to the first")
            #expect(Self.codes(refused) == [4_030_005, 4_000_009, 4_000_010, 4_000_011, 4_000_008, 4_040_005, 4_030_004], "\(refused.map(Server.object))")
            #expect(refused.map(\.status.code) == [403, 400, 400, 400, 400, 404, 403])
        }
    }

    @Test(
        "The clock walks the timeline the extension joined: POST /_forge/clock moves it, the next renewal starts at the extended date in the history, verifyReceipt's latest_receipt_info and the RENEWAL_EXTENDED notification show it"
    )
    func clockWalksTheTimeline() async throws {
        let ids = try ExampleIDs()
        let receipt = try Forge.bundled().make(try ExampleServer.scenarios()[0], now: try #require(ReceiptDate.parse(Server.clock))).bytes
        try await Server().application.test(.router) { client in
            let first = try await client.execute(uri: "/sandbox/inApps/v2/history/\(ids.latest)", method: .get)
            #expect(Server.object(first)["hasMore"] as? Bool == true)
            // The client reads to the end, keeps the last revision, then the developer extends the subscription.
            let revision1 = try #require(Server.object(first)["revision"] as? String)
            let end = try await client.execute(uri: "/sandbox/inApps/v2/history/\(ids.latest)?revision=\(revision1)", method: .get)
            #expect(Server.object(end)["hasMore"] as? Bool == false)
            let revision = try #require(Server.object(end)["revision"] as? String)
            let extended = try await Self.extend(client, ids.original, ["extendByDays": 10, "extendReasonCode": 0, "requestIdentifier": "clock"])
            #expect(extended.status == .ok, "\(Server.object(extended))")
            let history = try await client.execute(
                uri: "/sandbox/inApps/v1/notifications/history", method: .post,
                body: try Server.body(["startDate": Self.start - Self.day, "endDate": Self.start + Self.day, "notificationType": "RENEWAL_EXTENDED"]))
            let extensions = (Server.object(history)["notificationHistory"] as? [[String: Any]] ?? []).map { Server.payload($0["signedPayload"]) }
            #expect(extensions.count == 1 && extensions.first?["signedDate"] as? Int64 == Self.start, "\(Server.object(history))")
            let data = extensions.first?["data"] as? [String: Any]
            #expect(Server.payload(data?["signedTransactionInfo"])["expiresDate"] as? Int64 == Self.january15 + 10 * Self.day, "\(extensions)")

            let backwards = try await Self.moveClock(client, #"{"now":"2024-12-01T00:00:00Z"}"#)
            #expect(backwards.status == .badRequest && String(buffer: backwards.body).contains("only moves forward"), "\(String(buffer: backwards.body))")
            #expect(try await Self.moveClock(client, "soon").status == .badRequest)
            let moved = try await Self.moveClock(client, #"{"advance":"P1M"}"#)
            #expect(moved.status == .ok && String(buffer: moved.body) == #"{"now":"2025-02-01T00:00:00Z"}"#, "\(String(buffer: moved.body))")
            let now = try await client.execute(uri: "/_forge/clock", method: .get, headers: Server.control)
            #expect(String(buffer: now.body) == #"{"now":"2025-02-01T00:00:00Z"}"#)
            let after = try await client.execute(uri: "/sandbox/inApps/v2/history/\(ids.latest)?revision=\(revision)", method: .get)
            // The renewal that was due on January 15 starts on January 25: the extension moved the period it follows.
            #expect(Server.transactions(after).map { $0["purchaseDate"] as? Int64 } == [Self.january15 + 10 * Self.day], "\(Server.object(after))")

            // verifyReceipt answers from the same state on the same clock: the latest period is the one after the extension.
            let answer = try await client.execute(
                uri: "/sandbox/verifyReceipt", method: .post, body: try Server.body(["receipt-data": Data(receipt).base64EncodedString()]))
            let latest = (Server.object(answer)["latest_receipt_info"] as? [[String: Any]])?.filter { $0["product_id"] as? String == "pro.monthly" }
            let purchases = latest?.compactMap { ($0["purchase_date_ms"] as? String).flatMap { Int64($0) } }.sorted()
            #expect(purchases?.last == Self.january15 + 10 * Self.day, "\(String(buffer: answer.body).prefix(400))")
        }
    }

    @Test(
        "GET /_forge/scenarios gives each customer as the server holds it (seed pinned, the API's changes in its timeline): a server of what it gives serves the same JWS, byte for byte"
    )
    func stateReplays() async throws {
        let ids = try ExampleIDs()
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let (jws, held) = try await Server().application.test(.router) { client in
            let extended = try await Self.extend(client, ids.original, ["extendByDays": 10, "extendReasonCode": 0, "requestIdentifier": "r"])
            #expect(extended.status == .ok)
            let set = try await client.execute(
                uri: "/sandbox/inApps/v1/transactions/\(ids.original)/appAccountToken", method: .put, body: try Server.body(["appAccountToken": token]))
            #expect(set.status == .ok)
            let served = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(ids.latest)", method: .get)
            let jws = try #require(Server.object(served)["signedTransactionInfo"] as? String)
            let held = try await client.execute(uri: "/_forge/scenarios", method: .get, headers: Server.control)
            return (jws, Data(String(buffer: held.body).utf8))
        }
        let scenarios = try #require(try JSONSerialization.jsonObject(with: held) as? [[String: Any]])
        #expect(scenarios.count == 2)
        let events = (scenarios.first?["timeline"] as? [[String: Any]])?.compactMap { $0["event"] as? String }
        #expect(events == ["renew", "refund", "extend", "app-account-token"], "\(String(decoding: held, as: UTF8.self))")
        #expect(Server.payload(jws)["appAccountToken"] as? String == token)
        // `forge serve --scenario` of what the server held (`forge jws make --spec` of a file serves the same JWS as
        // `forge serve --scenario` of it: `sameJWSAsMake` in Tests/ForgeCLITests/ServerAPITests.swift).
        var replayed: [Scenario] = []
        for scenario in scenarios { replayed.append(try Scenario.decode(json: try JSONSerialization.data(withJSONObject: scenario))) }
        try await Server(scenarios: replayed).application.test(.router) { client in
            let served = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(ids.latest)", method: .get)
            #expect(Server.object(served)["signedTransactionInfo"] as? String == jws)
        }
    }

    @Test("Set App Account Token: later JWS of the purchase carry the token, set again the same; 4000183 not a UUID, 4000187 not the original id, 4040010 unknown")
    func appAccountToken() async throws {
        let ids = try ExampleIDs()
        let token = "7E3FB20B-4CDB-47CC-936D-99D65F608138"
        try await Server().application.test(.router) { client in
            func set(_ id: String, _ value: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/sandbox/inApps/v1/transactions/\(id)/appAccountToken", method: .put, body: try Server.body(["appAccountToken": value]))
            }
            for _ in 0..<2 {
                let accepted = try await set(ids.original, token)
                #expect(accepted.status == .ok && accepted.body.readableBytes == 0, "\(String(buffer: accepted.body))")
                let info = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(ids.latest)", method: .get)
                #expect(Server.payload(Server.object(info)["signedTransactionInfo"])["appAccountToken"] as? String == token.lowercased(), "\(Server.object(info))")
                let statuses = try await client.execute(uri: "/sandbox/inApps/v1/subscriptions/\(ids.latest)", method: .get)
                let last = ((Server.object(statuses)["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first
                #expect(Server.payload(last?["signedRenewalInfo"])["appAccountToken"] as? String == token.lowercased())
                let refused = [try await set(ids.original, "not-a-uuid"), try await set(ids.latest, token), try await set("999999999", token)]
                #expect(Self.codes(refused) == [4_000_183, 4_000_187, 4_040_010], "\(refused.map(Server.object))")
            }
            let other = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(ids.lifetime)", method: .get)
            let payload = Server.payload(Server.object(other)["signedTransactionInfo"])
            #expect(payload["transactionId"] as? String == ids.lifetime && payload["appAccountToken"] == nil, "another purchase keeps no token")
        }
    }

    @Test(
        "Test notifications and Get Notification History: a TEST signedPayload, sent once to the webhook (refused; the retry an hour away on a pinned clock), the history derived from the store (SUBSCRIBED, DID_RENEW, ONE_TIME_CHARGE, REFUND, TEST) in pages of 20 by paginationToken, the sandbox's 30-day window; 4000012/13/14/17/18/19/20, 4040007 (no webhook), 4040008"
    )
    func notifications() async throws {
        let ids = try ExampleIDs()
        // A sandbox webhook that refuses every connection: the TEST is still sent (and fails), as Apple's would.
        // The application delivers by itself (a service of it), in process as on a socket.
        let server = try Server(webhooks: [.sandbox: try HTTPURL("http://127.0.0.1:9/apple")])
        try await server.application.test(.router) { client in
            func history(_ body: [String: Any], page: String? = nil) async throws -> TestResponse {
                let query = try page.map { "?paginationToken=" + (try #require($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics))) } ?? ""
                return try await client.execute(uri: "/sandbox/inApps/v1/notifications/history" + query, method: .post, body: try Server.body(body))
            }
            func kinds(_ response: TestResponse) -> [String] {
                (Server.object(response)["notificationHistory"] as? [[String: Any]] ?? []).map {
                    let payload = Server.payload($0["signedPayload"])
                    return "\(payload["notificationType"] ?? "")/\(payload["subtype"] ?? "-")"
                }
            }
            func status(_ token: String) async throws -> TestResponse {
                try await client.execute(uri: "/sandbox/inApps/v1/notifications/test/\(token)", method: .get)
            }
            let production = try await client.execute(uri: "/inApps/v1/notifications/test", method: .post)
            #expect(Server.errorCode(production) == 4_040_007, "production has no webhook")

            let requested = try await client.execute(uri: "/sandbox/inApps/v1/notifications/test", method: .post)
            let token = try #require(Server.object(requested)["testNotificationToken"] as? String, "\(Server.object(requested))")
            let month = try await history(["startDate": Self.start - 29 * Self.day, "endDate": Self.start + Self.day])
            // December 15's renewal and the TEST just asked for: the 30-day sandbox window holds nothing older.
            #expect(kinds(month) == ["DID_RENEW/-", "TEST/-"], "\(Server.object(month))")
            let unknown = [try await status("00000000-0000-0000-0000-000000000000"), try await status("nope")]
            #expect(Self.codes(unknown) == [4_040_008, 4_000_020])

            try await eventually("the TEST's first attempt, refused, is recorded", within: .seconds(30)) {
                (Server.object(try await status(token))["sendAttempts"] as? [Any])?.count == 1
            }
            let tested = Server.object(try await status(token))
            let signed = Server.payload(tested["signedPayload"])
            #expect(signed["notificationType"] as? String == "TEST" && (signed["data"] as? [String: Any])?["bundleId"] as? String == "com.example.api", "\(signed)")
            #expect((tested["sendAttempts"] as? [Any])?.count == 1, "the refused first attempt: the retry is an hour away on a pinned clock")

            for _ in 0..<20 { #expect(try await client.execute(uri: "/sandbox/inApps/v1/notifications/test", method: .post).status == .ok) }
            let window: [String: Any] = ["startDate": Self.start - Self.day, "endDate": Self.start + Self.day]
            let page = try await history(window)
            let first = Server.object(page)
            #expect((first["notificationHistory"] as? [Any])?.count == 20 && first["hasMore"] as? Bool == true, "\(first)")
            let pagination = try #require(first["paginationToken"] as? String)
            let next = Server.object(try await history(window, page: pagination))
            let rest = next["notificationHistory"] as? [[String: Any]] ?? []
            #expect(rest.count == 1 && next["hasMore"] as? Bool == false && !(next["paginationToken"] is String), "\(next)")
            let uuids = Set(((first["notificationHistory"] as? [[String: Any]] ?? []) + rest).compactMap { Server.payload($0["signedPayload"])["notificationUUID"] as? String })
            #expect(uuids.count == 21, "every notification has its own notificationUUID, and no page repeats one")
            var other = window
            other["notificationType"] = "TEST"
            let refused = [
                try await history(other, page: pagination), try await history(["startDate": Self.start - 31 * Self.day, "endDate": Self.start]),
                try await history(["startDate": Self.start, "endDate": Self.start - Self.day]),
                try await history(["startDate": Self.start - Self.day, "endDate": Self.start, "transactionId": ids.latest, "notificationType": "TEST"]),
                try await history(["startDate": Self.start - Self.day, "endDate": Self.start, "notificationSubtype": "UPGRADE"]),
                try await history(["startDate": Self.start - Self.day, "endDate": Self.start, "notificationType": "TEST", "notificationSubtype": "UPGRADE"]),
            ]
            #expect(Self.codes(refused) == [4_000_014, 4_000_012, 4_000_013, 4_000_019, 4_000_018, 4_000_018], "\(refused.map(Server.object))")

            // Two days on, the token has expired (its request is still in the window).
            let moved = try await Self.moveClock(client, #"{"advance":172800}"#)
            #expect(moved.status == .ok, "\(String(buffer: moved.body))")
            let expired = try await history(window, page: pagination)
            #expect(Server.errorCode(expired) == 4_000_017, "\(expired.status) \(String(buffer: expired.body))")

            // A customer's history by any of its transaction ids, once the clock has passed a renewal and a refund.
            #expect(try await Self.moveClock(client, #"{"now":"2025-02-21T00:00:00Z"}"#).status == .ok)
            let later = try await history(["startDate": Self.start + 25 * Self.day, "endDate": Self.start + 60 * Self.day, "transactionId": ids.lifetime])
            #expect(kinds(later) == ["DID_RENEW/-", "REFUND/-"], "\(Server.object(later))")
        }
    }

    @Test("Look Up Order ID (production only) finds the order `forge jws make` names; mass extension and its status; history v1; 4000027/28, 4040009")
    func orderLookupAndMassExtension() async throws {
        let ids = try ExampleIDs()
        try await Server().application.test(.router) { client in
            func info() async throws -> Int64? {
                let answer = try await client.execute(uri: "/inApps/v1/transactions/\(ids.productionTransaction)", method: .get)
                return Server.payload(Server.object(answer)["signedTransactionInfo"])["expiresDate"] as? Int64
            }
            func massExtend(_ body: [String: Any]) async throws -> TestResponse {
                try await client.execute(uri: "/inApps/v1/subscriptions/extend/mass", method: .post, body: try Server.body(body))
            }
            let found = try await client.execute(uri: "/inApps/v1/lookup/\(ids.productionOrder)", method: .get)
            #expect(Server.object(found)["status"] as? Int == 0, "\(Server.object(found))")
            #expect(Server.transactions(found).map { $0["transactionId"] as? String } == [ids.productionTransaction])
            let missing = try await client.execute(uri: "/inApps/v1/lookup/NOSUCHORDR", method: .get)
            #expect(Server.object(missing)["status"] as? Int == 1 && Server.transactions(missing).isEmpty, "\(Server.object(missing))")
            let before = try await info()
            let mass = try await massExtend(["productId": "pro.yearly", "extendByDays": 3, "extendReasonCode": 0, "requestIdentifier": "mass-1"])
            #expect(Server.object(mass)["requestIdentifier"] as? String == "mass-1")
            let status = Server.object(try await client.execute(uri: "/inApps/v1/subscriptions/extend/mass/pro.yearly/mass-1", method: .get))
            #expect(status["complete"] as? Bool == true && status["succeededCount"] as? Int == 1 && status["failedCount"] as? Int == 0, "\(status)")
            let after = try await info()
            #expect(before.map { $0 + 3 * Self.day } == after, "\(String(describing: before)) → \(String(describing: after))")
            let refused = [
                try await client.execute(uri: "/inApps/v1/subscriptions/extend/mass/pro.yearly/mass-2", method: .get),
                try await massExtend(["productId": "pro.yearly", "extendByDays": 3, "extendReasonCode": 0, "requestIdentifier": "mass-3", "storefrontCountryCodes": []]),
                try await massExtend([
                    "productId": "pro.yearly", "extendByDays": 3, "extendReasonCode": 0, "requestIdentifier": "mass-4", "storefrontCountryCodes": ["us"],
                ]),
            ]
            #expect(Self.codes(refused) == [4_040_009, 4_000_027, 4_000_028], "\(refused.map(Server.object))")
            let v1 = try await client.execute(uri: "/inApps/v1/history/\(ids.productionTransaction)", method: .get)
            #expect(Server.transactions(v1).count == 1 && Server.object(v1)["environment"] as? String == "Production", "\(Server.object(v1))")
            // Apple's sandbox has no order lookup: 404, no body, so a client raises without a code.
            let sandbox = try await client.execute(uri: "/sandbox/inApps/v1/lookup/\(ids.productionOrder)", method: .get)
            #expect(sandbox.status == .notFound && sandbox.body.readableBytes == 0)
        }
    }
}
