import Foundation
import ForgeTestSupport
import Testing
import ForgeSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 22, items 1, 3, 4 and 5: the endpoints that change or announce the store — Extend a Subscription
/// Renewal Date (one and mass, with status), Set App Account Token, Look Up Order ID, Request a Test
/// Notification and its status, Get Notification History, history v1 — driven by Apple's Python client over a
/// real socket, every signed field verified by `SignedDataVerifier`; and the server clock (`POST /_forge/clock`)
/// walking a timeline that those changes joined, verifyReceipt included.
@Suite(
    "forge serve: Server API state, extensions, tokens, notifications", .timeLimit(.minutes(10)),
    .enabled(if: FileManager.default.isExecutableFile(atPath: ServerAPITests.python.path), "Apple's Python library is absent: .ci/run installs .oracles/asl")
)
struct ServerAPIStateTests {
    /// 2025-01-01T00:00:00Z, the clock the server starts at; the sandbox customer's monthly period then runs to 2025-01-15.
    static let start: Int64 = 1_735_689_600_000
    static let day: Int64 = 86_400_000
    static let january15: Int64 = 1_736_899_200_000

    struct IDs {
        let original: String
        let latest: String
        let lifetime: String
        let productionOrder: String
        let productionTransaction: String
        /// Apple's verifier needs it in Production.
        let productionApp: Int
    }

    static func ids(_ fixture: ServerAPITests.Fixture) throws -> IDs {
        func made(_ spec: String, about: String? = nil) throws -> (payload: [String: Any], order: String?) {
            let result = try forgeBlocking(arguments: ["jws", "make", "transaction", "--spec", spec] + (about.map { ["--about", $0] } ?? []))
            #expect(result.status == 0, "\(result.stderr)")
            let order = result.stderr.split(separator: "\n").first { $0.hasPrefix("forge: order id: ") }.map { String($0.dropFirst("forge: order id: ".count)) }
            return (ServerAPITests.payload(result.text.trimmingCharacters(in: .whitespacesAndNewlines)), order)
        }
        let monthly = try made(fixture.sandbox).payload
        let lifetime = try made(fixture.sandbox, about: "lifetime").payload
        let production = try made(fixture.production)
        let app = try forgeBlocking("jws", "make", "app-transaction", "-q", "--spec", fixture.production)
        let appAppleID = try #require(ServerAPITests.payload(app.text.trimmingCharacters(in: .whitespacesAndNewlines))["appAppleId"] as? Int)
        return IDs(
            original: try #require(monthly["originalTransactionId"] as? String), latest: try #require(monthly["transactionId"] as? String),
            lifetime: try #require(lifetime["transactionId"] as? String), productionOrder: try #require(production.order),
            productionTransaction: try #require(production.payload["transactionId"] as? String), productionApp: appAppleID)
    }

    /// A `forge serve --no-auth` of both example customers at their `now`, and their ids.
    struct Session {
        let fixture: ServerAPITests.Fixture
        let ids: IDs
        let server: BlockingServer

        init(_ extra: [String] = ["--no-auth"]) throws {
            fixture = try ServerAPITests.Fixture()
            ids = try ServerAPIStateTests.ids(fixture)
            server = try ServerAPITests.start(fixture, extra)
        }

        func close() {
            server.stop()
            try? FileManager.default.removeItem(at: fixture.directory)
        }
    }

    static func drive(
        _ server: BlockingServer, _ calls: [[String: Any]], bundle: String = "com.example.api", environment: String = "sandbox", app: Int? = nil,
        asynchronous: Bool = false
    ) throws -> [[String: Any]] {
        let result = try runBlocking(
            ServerAPITests.python,
            [ServerAPITests.client, server.url, "--bundle-id", bundle, "--environment", environment, "--root", ServerAPITests.jwsRoot]
                + (app.map { ["--app-apple-id", String($0)] } ?? []) + (asynchronous ? ["--async"] : []),
            stdin: try JSONSerialization.data(withJSONObject: calls))
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result.stderr)")
    }

    static func post(_ url: String, _ body: String) async -> (status: Int, body: String)? {
        guard let url = URL(string: url) else { return nil }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        // JSON, as a control POST must say without a control token.
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        guard let (data, response) = try? await URLSession.shared.data(for: request), let http = response as? HTTPURLResponse else { return nil }
        return (http.statusCode, String(decoding: data, as: UTF8.self))
    }

    static func apiError(_ result: [String: Any]) -> Int? { result["apiError"] as? Int }

    @Test(
        "Extend a Subscription Renewal Date moves expiresDate and renewalDate, a retried request identifier extends once, twice a year at most; 4000008/9/10/11, 4030004/5, 4040005"
    )
    func extendRenewalDate() throws {
        let session = try Session()
        defer { session.close() }
        let (ids, server) = (session.ids, session.server)
        let results = try Self.drive(
            server,
            [
                ["call": "extend", "transactionId": ids.original, "extendByDays": 10, "extendReasonCode": 1, "requestIdentifier": "first"],
                ["call": "extend", "transactionId": ids.original, "extendByDays": 10, "extendReasonCode": 1, "requestIdentifier": "first"],
                ["call": "info", "transactionId": ids.latest],
                ["call": "statuses", "transactionId": ids.latest],
                ["call": "extend", "transactionId": ids.original, "extendByDays": 5, "requestIdentifier": "second"],
                ["call": "extend", "transactionId": ids.original, "extendByDays": 5, "requestIdentifier": "third"],
                ["call": "extend", "transactionId": ids.original, "extendByDays": 91, "requestIdentifier": "long"],
                [
                    "call": "raw", "method": "PUT", "path": "/inApps/v1/subscriptions/extend/\(ids.original)",
                    "body": ["extendByDays": 1, "extendReasonCode": 7, "requestIdentifier": "why"],
                ],
                ["call": "raw", "method": "PUT", "path": "/inApps/v1/subscriptions/extend/\(ids.original)", "body": ["extendByDays": 1, "extendReasonCode": 0]],
                ["call": "extend", "transactionId": "12ab", "extendByDays": 1, "requestIdentifier": "bad-id"],
                ["call": "extend", "transactionId": "999999999", "extendByDays": 1, "requestIdentifier": "unknown"],
                ["call": "extend", "transactionId": ids.lifetime, "extendByDays": 1, "requestIdentifier": "not-a-subscription"],
            ])
        let extended = Self.january15 + 10 * Self.day
        #expect(results[0]["success"] as? Bool == true && results[0]["effectiveDate"] as? Int64 == extended, "\(results[0])")
        #expect(results[0]["originalTransactionId"] as? String == ids.original && results[0]["webOrderLineItemId"] is String)
        #expect(results[1]["effectiveDate"] as? Int64 == extended, "the retried request identifier answers as the first time")
        #expect((results[2]["signedTransactionInfo"] as? [String: Any])?["expiresDate"] as? Int64 == extended, "\(results[2])")
        let renewal = ((results[3]["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first?["signedRenewalInfo"] as? [String: Any]
        #expect(renewal?["renewalDate"] as? Int64 == extended, "\(results[3])")
        #expect(results[4]["effectiveDate"] as? Int64 == extended + 5 * Self.day, "a second extension adds to the first")
        #expect(results[5...].map(Self.apiError) == [4_030_005, 4_000_009, 4_000_010, 4_000_011, 4_000_008, 4_040_005, 4_030_004], "\(results[5...])")
        #expect(results[5...].map { $0["httpStatus"] as? Int } == [403, 400, 400, 400, 400, 404, 403])
    }

    @Test(
        "The clock walks the timeline the extension joined: POST /_forge/clock moves it, the next renewal starts at the extended date in the history, verifyReceipt's latest_receipt_info and the RENEWAL_EXTENDED notification show it"
    )
    func clockWalksTheTimeline() async throws {
        let session = try Session()
        defer { session.close() }
        let (fixture, ids, server) = (session.fixture, session.ids, session.server)
        let receipt = fixture.directory.appendingPathComponent("receipt.der")
        #expect(try forgeBlocking("make", "--spec", fixture.sandbox, "-o", receipt.path).status == 0)
        let first = try #require(try Self.drive(server, [["call": "history", "transactionId": ids.latest]]).first)
        #expect(first["hasMore"] as? Bool == true)
        // The client reads to the end, keeps the last revision, then the developer extends the subscription.
        let before = try Self.drive(
            server,
            [
                ["call": "history", "transactionId": ids.latest, "revision": first["revision"] ?? ""],
                ["call": "extend", "transactionId": ids.original, "extendByDays": 10, "requestIdentifier": "clock"],
                [
                    "call": "notificationHistory", "startDate": Self.start - Self.day, "endDate": Self.start + Self.day,
                    "notificationType": "RENEWAL_EXTENDED",
                ],
            ])
        #expect(before[0]["hasMore"] as? Bool == false)
        let revision = try #require(before[0]["revision"] as? String)
        let extensions = before[2]["notifications"] as? [[String: Any]] ?? []
        #expect(extensions.count == 1 && extensions.first?["signedDate"] as? Int64 == Self.start, "\(before[2])")
        let data = extensions.first?["data"] as? [String: Any]
        #expect((data?["signedTransactionInfo"] as? [String: Any])?["expiresDate"] as? Int64 == Self.january15 + 10 * Self.day, "\(before[2])")
        let backwards = try #require(await Self.post(server.url + "/_forge/clock", #"{"now":"2024-12-01T00:00:00Z"}"#))
        #expect(backwards.status == 400 && backwards.body.contains("only moves forward"), "\(backwards)")
        let unreadable = try #require(await Self.post(server.url + "/_forge/clock", "soon"))
        #expect(unreadable.status == 400, "\(unreadable)")
        let moved = try #require(await Self.post(server.url + "/_forge/clock", #"{"advance":"P1M"}"#))
        #expect(moved.status == 200 && moved.body == #"{"now":"2025-02-01T00:00:00Z"}"#, "\(moved)")
        let now = try #require(await ServerAPITests.get(server.url + "/_forge/clock"))
        #expect(String(decoding: now.body, as: UTF8.self) == #"{"now":"2025-02-01T00:00:00Z"}"#)
        let after = try Self.drive(server, [["call": "history", "transactionId": ids.latest, "revision": revision]])
        // The renewal that was due on January 15 starts on January 25: the extension moved the period it follows.
        let added = after[0]["signedTransactions"] as? [[String: Any]] ?? []
        #expect(added.map { $0["purchaseDate"] as? Int64 } == [Self.january15 + 10 * Self.day], "\(after[0])")

        // verifyReceipt answers from the same state on the same clock: the latest period is the one after the extension.
        let body = #"{"receipt-data":"\#(try Data(contentsOf: receipt).base64EncodedString())"}"#
        let answer = try #require(await Self.post(server.url + "/sandbox/verifyReceipt", body))
        let latest = (ServerAPITests.object(Data(answer.body.utf8))["latest_receipt_info"] as? [[String: Any]])?.filter { $0["product_id"] as? String == "pro.monthly" }
        let purchases = latest?.compactMap { ($0["purchase_date_ms"] as? String).flatMap { Int64($0) } }.sorted()
        #expect(purchases?.last == Self.january15 + 10 * Self.day, "\(answer.body.prefix(400))")
    }

    @Test(
        "GET /_forge/scenarios gives each customer as the server holds it (seed pinned, the API's changes in its timeline): `forge jws make --spec` of it is the served JWS, byte for byte"
    )
    func stateReplays() async throws {
        let session = try Session()
        defer { session.close() }
        let (fixture, ids, server) = (session.fixture, session.ids, session.server)
        let base = server.url + "/sandbox/inApps/v1"
        func put(_ url: String, _ body: String) async throws -> Int {
            var request = URLRequest(url: try #require(URL(string: url)))
            request.httpMethod = "PUT"
            request.httpBody = Data(body.utf8)
            let (_, response) = try await URLSession.shared.data(for: request)
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        }
        #expect(try await put(base + "/subscriptions/extend/\(ids.original)", #"{"extendByDays":10,"extendReasonCode":0,"requestIdentifier":"r"}"#) == 200)
        #expect(try await put(base + "/transactions/\(ids.original)/appAccountToken", #"{"appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138"}"#) == 200)
        let served = try #require(await ServerAPITests.get(base + "/transactions/\(ids.latest)"))
        let jws = try #require(ServerAPITests.object(served.body)["signedTransactionInfo"] as? String)
        let held = try #require(await ServerAPITests.get(server.url + "/_forge/scenarios"))
        let scenarios = try #require(try JSONSerialization.jsonObject(with: held.body) as? [[String: Any]])
        #expect(scenarios.count == 2)
        let events = (scenarios.first?["timeline"] as? [[String: Any]])?.compactMap { $0["event"] as? String }
        #expect(events == ["renew", "refund", "extend", "app-account-token"], "\(String(decoding: held.body, as: UTF8.self))")
        let file = fixture.directory.appendingPathComponent("held.json")
        try JSONSerialization.data(withJSONObject: scenarios[0]).write(to: file)
        let made = try forgeBlocking("jws", "make", "transaction", "-q", "--spec", file.path)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.text.trimmingCharacters(in: .whitespacesAndNewlines) == jws)
        #expect(ServerAPITests.payload(jws)["appAccountToken"] as? String == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
    }

    @Test("Set App Account Token: later JWS of the purchase carry the token; 4000183 not a UUID, 4000187 not the original id, 4040010 unknown")
    func appAccountToken() throws {
        let session = try Session()
        defer { session.close() }
        let (ids, server) = (session.ids, session.server)
        let token = "7E3FB20B-4CDB-47CC-936D-99D65F608138"
        for asynchronous in [false, true] {
            let results = try Self.drive(
                server,
                [
                    ["call": "info", "transactionId": ids.latest],
                    ["call": "setAppAccountToken", "transactionId": ids.original, "appAccountToken": token],
                    ["call": "info", "transactionId": ids.latest],
                    ["call": "statuses", "transactionId": ids.latest],
                    ["call": "setAppAccountToken", "transactionId": ids.original, "appAccountToken": "not-a-uuid"],
                    ["call": "setAppAccountToken", "transactionId": ids.latest, "appAccountToken": token],
                    ["call": "setAppAccountToken", "transactionId": "999999999", "appAccountToken": token],
                ], asynchronous: asynchronous)
            #expect(results[1]["ok"] as? Bool == true, "\(results[1])")
            #expect((results[2]["signedTransactionInfo"] as? [String: Any])?["appAccountToken"] as? String == token.lowercased(), "\(results[2])")
            let renewal = ((results[3]["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first?["signedRenewalInfo"] as? [String: Any]
            #expect(renewal?["appAccountToken"] as? String == token.lowercased())
            #expect(results[4...].map(Self.apiError) == [4_000_183, 4_000_187, 4_040_010], "\(results[4...])")
        }
        #expect(
            try Self.drive(server, [["call": "info", "transactionId": ids.lifetime]]).first.map { ($0["signedTransactionInfo"] as? [String: Any])?["appAccountToken"] == nil }
                == true, "another purchase keeps no token")
    }

    @Test(
        "Test notifications and Get Notification History: a TEST signedPayload Apple's verifier accepts, the history derived from the store (SUBSCRIBED, DID_RENEW, ONE_TIME_CHARGE, REFUND, TEST) in pages of 20 by paginationToken, the sandbox's 30-day window; 4000012/13/14/17/18/19/20, 4040007 (no webhook), 4040008"
    )
    func notifications() async throws {
        // A sandbox webhook that refuses every connection: the TEST is still sent (and fails), as Apple's would.
        let session = try Session(["--no-auth", "--notify-sandbox", "http://127.0.0.1:9/apple"])
        defer { session.close() }
        let (ids, server) = (session.ids, session.server)
        let production = try Self.drive(server, [["call": "requestTest"]], bundle: "com.example.prod", environment: "production", app: ids.productionApp)
        #expect(production.map(Self.apiError) == [4_040_007], "production has no webhook: \(production)")
        let month: [String: Any] = ["call": "notificationHistory", "startDate": Self.start - 29 * Self.day, "endDate": Self.start + Self.day]
        let first = try Self.drive(
            server, [["call": "requestTest"], month, ["call": "testStatus", "token": "00000000-0000-0000-0000-000000000000"], ["call": "testStatus", "token": "nope"]])
        let token = try #require(first[0]["testNotificationToken"] as? String)
        #expect(first[2...].map(Self.apiError) == [4_040_008, 4_000_020], "\(first)")
        let early = (first[1]["notifications"] as? [[String: Any]] ?? []).map { "\($0["notificationType"] ?? "")/\($0["subtype"] ?? "-")" }
        // December 15's renewal and the TEST just asked for: the 30-day sandbox window holds nothing older.
        #expect(early == ["DID_RENEW/-", "TEST/-"], "\(first[1])")

        let window: [String: Any] = ["call": "notificationHistory", "startDate": Self.start - Self.day, "endDate": Self.start + Self.day]
        var calls: [[String: Any]] = [["call": "testStatus", "token": token]]
        calls += Array(repeating: ["call": "requestTest"], count: 20)
        calls.append(window)
        let second = try Self.drive(server, calls)
        let status = second[0]["signedPayload"] as? [String: Any]
        #expect(status?["notificationType"] as? String == "TEST" && (status?["data"] as? [String: Any])?["bundleId"] as? String == "com.example.api", "\(second[0])")
        #expect((second[0]["sendAttempts"] as? Int).map { $0 <= 1 } == true, "the refused first attempt at most: the retry is an hour away on a pinned clock")
        let page = try #require(second.last)
        #expect((page["notifications"] as? [Any])?.count == 20 && page["hasMore"] as? Bool == true, "\(page)")
        let pagination = try #require(page["paginationToken"] as? String)
        var next = window
        next["paginationToken"] = pagination
        var other = window
        other["notificationType"] = "TEST"
        other["paginationToken"] = pagination
        let third = try Self.drive(
            server,
            [
                next, other,
                ["call": "notificationHistory", "startDate": Self.start - 31 * Self.day, "endDate": Self.start],
                ["call": "notificationHistory", "startDate": Self.start, "endDate": Self.start - Self.day],
                ["call": "notificationHistory", "startDate": Self.start - Self.day, "endDate": Self.start, "transactionId": ids.latest, "notificationType": "TEST"],
                [
                    "call": "raw", "method": "POST", "path": "/inApps/v1/notifications/history",
                    "body": ["startDate": Self.start - Self.day, "endDate": Self.start, "notificationSubtype": "UPGRADE"],
                ],
                ["call": "notificationHistory", "startDate": Self.start - Self.day, "endDate": Self.start, "notificationType": "TEST", "notificationSubtype": "UPGRADE"],
            ])
        let rest = third[0]["notifications"] as? [[String: Any]] ?? []
        #expect(rest.count == 1 && third[0]["hasMore"] as? Bool == false && third[0]["paginationToken"] is NSNull, "\(third[0])")
        let uuids = Set(((page["notifications"] as? [[String: Any]] ?? []) + rest).compactMap { $0["notificationUUID"] as? String })
        #expect(uuids.count == 21, "every notification has its own notificationUUID, and no page repeats one")
        #expect(third[1...].map(Self.apiError) == [4_000_014, 4_000_012, 4_000_013, 4_000_019, 4_000_018, 4_000_018], "\(third[1...])")

        // Two days on, the token has expired (its request is still in the window).
        #expect(await Self.post(server.url + "/_forge/clock", #"{"advance":172800}"#)?.status == 200)
        #expect(try Self.drive(server, [next]).first.flatMap(Self.apiError) == 4_000_017)

        // A customer's history by any of its transaction ids, once the clock has passed a renewal and a refund.
        #expect(await Self.post(server.url + "/_forge/clock", #"{"now":"2025-02-21T00:00:00Z"}"#)?.status == 200)
        let later = try Self.drive(
            server, [["call": "notificationHistory", "startDate": Self.start + 25 * Self.day, "endDate": Self.start + 60 * Self.day, "transactionId": ids.lifetime]])
        let kinds = (later[0]["notifications"] as? [[String: Any]] ?? []).map { "\($0["notificationType"] ?? "")/\($0["subtype"] ?? "-")" }
        #expect(kinds == ["DID_RENEW/-", "REFUND/-"], "\(later[0])")
    }

    @Test(
        "Look Up Order ID (production only) finds the order `forge jws make` names; mass extension and its status; history v1; 4000027/28, 4040009"
    )
    func orderLookupAndMassExtension() throws {
        let session = try Session()
        defer { session.close() }
        let (ids, server) = (session.ids, session.server)
        let production = try Self.drive(
            server,
            [
                ["call": "lookUpOrder", "orderId": ids.productionOrder],
                ["call": "lookUpOrder", "orderId": "NOSUCHORDR"],
                ["call": "info", "transactionId": ids.productionTransaction],
                ["call": "massExtend", "productId": "pro.yearly", "extendByDays": 3, "requestIdentifier": "mass-1"],
                ["call": "massExtensionStatus", "productId": "pro.yearly", "requestIdentifier": "mass-1"],
                ["call": "info", "transactionId": ids.productionTransaction],
                ["call": "massExtensionStatus", "productId": "pro.yearly", "requestIdentifier": "mass-2"],
                ["call": "massExtend", "productId": "pro.yearly", "extendByDays": 3, "requestIdentifier": "mass-3", "storefrontCountryCodes": []],
                ["call": "massExtend", "productId": "pro.yearly", "extendByDays": 3, "requestIdentifier": "mass-4", "storefrontCountryCodes": ["us"]],
                ["call": "history", "transactionId": ids.productionTransaction, "version": 1],
            ], bundle: "com.example.prod", environment: "production", app: ids.productionApp)
        #expect(production[0]["status"] as? Int == 0, "\(production[0])")
        #expect((production[0]["signedTransactions"] as? [[String: Any]])?.map { $0["transactionId"] as? String } == [ids.productionTransaction])
        #expect(production[1]["status"] as? Int == 1 && (production[1]["signedTransactions"] as? [Any])?.isEmpty == true, "\(production[1])")
        #expect(production[3]["requestIdentifier"] as? String == "mass-1")
        #expect(production[4]["complete"] as? Bool == true && production[4]["succeededCount"] as? Int == 1 && production[4]["failedCount"] as? Int == 0, "\(production[4])")
        let before = (production[2]["signedTransactionInfo"] as? [String: Any])?["expiresDate"] as? Int64
        let after = (production[5]["signedTransactionInfo"] as? [String: Any])?["expiresDate"] as? Int64
        #expect(before.map { $0 + 3 * Self.day } == after, "\(String(describing: before)) → \(String(describing: after))")
        #expect(production[6...8].map(Self.apiError) == [4_040_009, 4_000_027, 4_000_028], "\(production[6...8])")
        #expect((production[9]["signedTransactions"] as? [Any])?.count == 1 && production[9]["environment"] as? String == "Production", "\(production[9])")
        // Apple's sandbox has no order lookup: 404, no body, so the client raises without a code.
        let sandbox = try Self.drive(server, [["call": "lookUpOrder", "orderId": ids.productionOrder]])
        #expect(sandbox.first?["httpStatus"] as? Int == 404 && sandbox.first?["apiError"] is NSNull, "\(sandbox)")
    }
}
