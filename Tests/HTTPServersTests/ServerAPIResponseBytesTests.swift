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

/// Issue 38, item 3: every Server API answer with a body, byte for byte as `Fixtures/server-api-answers.txt` holds it
/// (captured before the answers had types of their own): member order, absent versus null, numbers, escapes, and the
/// request log's `count`. Each compact JWS in a body stands there as what it signs (`transaction:<transactionId>`,
/// `renewal:…`, `appTransaction:…`, `notification:<type>/<subtype>:<notificationUUID>`): the envelope is this layer's,
/// the JWS bytes the renderer's (``ServerAPIRenderTests``), so a change to what a transaction carries leaves this fixture
/// as it is, while a JWS in the wrong member or order does not. A pagination token stands without its MAC, whose key
/// is drawn once a process.
@Suite("Server API answers keep their bytes", .timeLimit(.minutes(2)))
struct ServerAPIResponseBytesTests {
    typealias Server = ExampleServer
    static let fixture = Repository.file("Tests/HTTPServersTests/Fixtures/server-api-answers.txt")

    /// A sandbox daily subscription beside the examples' customers: over 20 notifications in the sandbox's 30-day
    /// window, so the notification history has a second page.
    static let daily = #"""
        {"preset": "sandbox", "bundleId": "com.example.daily", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.daily", "purchaseDate": "2024-12-05T00:00:00Z", "period": "P1D", "renewals": 40}]}
        """#

    /// What a compact JWS in a body signs, named by the ids that tell it apart; nil when `compact` is not a JWS.
    static func name(ofJWS compact: Substring) -> String? {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]), let payload = try? JSONValue(parsing: bytes) else { return nil }
        func text(_ key: String) -> String { payload[key]?.scalarText ?? "-" }
        if payload["notificationType"] != nil { return "notification:\(text("notificationType"))/\(text("subtype")):\(text("notificationUUID"))" }
        if payload["transactionId"] != nil { return "transaction:\(text("transactionId"))" }
        if payload["autoRenewStatus"] != nil { return "renewal:\(text("originalTransactionId")):\(text("renewalDate"))" }
        if payload["appTransactionId"] != nil { return "appTransaction:\(text("appTransactionId"))" }
        return nil
    }

    /// `body` with its `paginationToken`'s MAC left out (`…+MAC`): the signed text is the same in every run, the MAC's
    /// key is not (``PaginationToken``).
    static func withoutMAC(_ body: String) -> String {
        body.replacing(/"paginationToken":"([A-Za-z0-9_-]+)"/) { match in
            guard let bytes = Base64URL.decode(match.output.1), bytes.count > 32 else { return String(match.output.0) }
            return #""paginationToken":"\#(Base64URL.encode(Array(bytes.dropLast(32))))+MAC""#
        }
    }

    /// `body` with every JSON string that is a compact JWS replaced by its name and the pagination token's MAC left out;
    /// every other byte as it was.
    static func envelope(_ body: String) -> String {
        let jws = /"(eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)"/
        return withoutMAC(body).replacing(jws) { match in "\"" + (name(ofJWS: match.output.1) ?? String(match.output.1)) + "\"" }
    }

    @Test(
        "Every endpoint that answers with a body (transaction info, histories v1 and v2 with pages and filters, statuses, refunds, order lookup, app transaction, extensions one and mass, test notifications, notification history with pages) answers the captured bytes"
    )
    func answersKeepTheirBytes() async throws {
        let ids = try ExampleIDs()
        let scenarios = try Server.scenarios() + [try Scenario.decode(json: Data(Self.daily.utf8))]
        // A sandbox webhook that refuses every connection: the TEST's one attempt (the retry is an hour away on the
        // pinned clock) shows in its status and in the history.
        let server = try Server(webhooks: [.sandbox: try HTTPURL("http://127.0.0.1:9/apple")], scenarios: scenarios)
        let lines = try await server.application.test(.router) { client in
            var lines: [String] = []
            /// The answer, its line, and a check that it is exactly `Answer` (Apple's model): read back by `JSONDecoder`
            /// and written again, it is the same bytes.
            func call<Answer: Codable>(
                _ name: String, _ answer: Answer.Type, _ method: HTTPRequest.Method, _ uri: String, body: String? = nil, now: String? = nil
            ) async throws -> TestResponse {
                let headers = try now.map { try ServerAPIRouteTests.clockHeader($0) } ?? [:]
                let response = try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
                let text = String(buffer: response.body)
                let count = (server.entries.last?["count"] as? Int).map(String.init) ?? "-"
                lines.append("\(name) \(response.status.code) \(count) \(Self.envelope(text))")
                let decoded = try JSONDecoder().decode(Answer.self, from: Data(text.utf8))
                #expect(try JSONValue(encoding: decoded).serialized(pretty: false) == text, "\(name) as \(Answer.self)")
                return response
            }
            func member(_ response: TestResponse, _ key: String) throws -> String {
                try #require(Server.object(response)[key] as? String, "\(key) in \(String(buffer: response.body))")
            }
            let sandbox = "/sandbox/inApps"
            _ = try await call("transactionInfo", TransactionInfoResponse.self, .get, "\(sandbox)/v1/transactions/\(ids.latest)")
            _ = try await call("transactionInfo.production", TransactionInfoResponse.self, .get, "/inApps/v1/transactions/\(ids.productionTransaction)")

            let first = try await call("history", HistoryResponse.self, .get, "\(sandbox)/v2/history/\(ids.latest)")
            _ = try await call("history.page2", HistoryResponse.self, .get, "\(sandbox)/v2/history/\(ids.latest)?revision=\(try member(first, "revision"))")
            _ = try await call("history.filtered", HistoryResponse.self, .get, "\(sandbox)/v2/history/\(ids.latest)?productId=lifetime&sort=DESCENDING")
            _ = try await call("history.empty", HistoryResponse.self, .get, "\(sandbox)/v2/history/\(ids.latest)?productType=CONSUMABLE")
            _ = try await call("history.v1", HistoryResponse.self, .get, "\(sandbox)/v1/history/\(ids.latest)?productType=NON_CONSUMABLE")
            _ = try await call("history.production", HistoryResponse.self, .get, "/inApps/v2/history/\(ids.productionTransaction)")

            _ = try await call("statuses", StatusResponse.self, .get, "\(sandbox)/v1/subscriptions/\(ids.latest)")
            _ = try await call("statuses.none", StatusResponse.self, .get, "\(sandbox)/v1/subscriptions/\(ids.latest)?status=2")
            _ = try await call("statuses.production", StatusResponse.self, .get, "/inApps/v1/subscriptions/\(ids.productionTransaction)")

            _ = try await call("refunds.none", RefundHistoryResponse.self, .get, "\(sandbox)/v2/refund/lookup/\(ids.latest)")
            _ = try await call("refunds.later", RefundHistoryResponse.self, .get, "\(sandbox)/v2/refund/lookup/\(ids.latest)", now: "2025-03-01T00:00:00Z")

            _ = try await call("orderLookup", OrderLookupResponse.self, .get, "/inApps/v1/lookup/\(ids.productionOrder)")
            _ = try await call("orderLookup.unknown", OrderLookupResponse.self, .get, "/inApps/v1/lookup/NOSUCHORDER")

            _ = try await call("appTransactionInfo", AppTransactionInfoResponse.self, .get, "\(sandbox)/v1/transactions/appTransactions/\(ids.latest)")

            let extend = #"{"extendByDays":10,"extendReasonCode":1,"requestIdentifier":"bytes-1"}"#
            _ = try await call("extendRenewalDate", ExtendRenewalDateResponse.self, .put, "\(sandbox)/v1/subscriptions/extend/\(ids.original)", body: extend)
            _ = try await call("extendRenewalDate.retried", ExtendRenewalDateResponse.self, .put, "\(sandbox)/v1/subscriptions/extend/\(ids.original)", body: extend)
            let mass = #"{"extendByDays":3,"extendReasonCode":0,"requestIdentifier":"mass-1","productId":"pro.daily","storefrontCountryCodes":["USA"]}"#
            _ = try await call("massExtendRenewalDate", MassExtendRenewalDateResponse.self, .post, "\(sandbox)/v1/subscriptions/extend/mass", body: mass)
            _ = try await call("massExtendRenewalDate.retried", MassExtendRenewalDateResponse.self, .post, "\(sandbox)/v1/subscriptions/extend/mass", body: mass)
            _ = try await call("massExtensionStatus", MassExtendRenewalDateStatusResponse.self, .get, "\(sandbox)/v1/subscriptions/extend/mass/pro.daily/mass-1")

            let requested = try await call("requestTestNotification", SendTestNotificationResponse.self, .post, "\(sandbox)/v1/notifications/test")
            let token = try member(requested, "testNotificationToken")
            try await eventually("the TEST's first attempt is recorded", within: .seconds(30)) {
                let status = try await client.execute(uri: "\(sandbox)/v1/notifications/test/\(token)", method: .get)
                return (Server.object(status)["sendAttempts"] as? [Any])?.count == 1
            }
            _ = try await call("testNotificationStatus", CheckTestNotificationResponse.self, .get, "\(sandbox)/v1/notifications/test/\(token)")

            let window = #"{"startDate":\#(Server.start - 29 * Server.day),"endDate":\#(Server.start + Server.day)}"#
            let page = try await call("notificationHistory", NotificationHistoryResponse.self, .post, "\(sandbox)/v1/notifications/history", body: window)
            let pagination = try #require(try member(page, "paginationToken").addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            _ = try await call(
                "notificationHistory.page2", NotificationHistoryResponse.self, .post, "\(sandbox)/v1/notifications/history?paginationToken=\(pagination)", body: window)
            let onlyTest = #"{"startDate":\#(Server.start - Server.day),"endDate":\#(Server.start + Server.day),"notificationType":"TEST"}"#
            _ = try await call("notificationHistory.test", NotificationHistoryResponse.self, .post, "\(sandbox)/v1/notifications/history", body: onlyTest)
            let byTransaction = #"{"startDate":\#(Server.start - 29 * Server.day),"endDate":\#(Server.start + Server.day),"transactionId":"\#(ids.latest)"}"#
            _ = try await call("notificationHistory.transaction", NotificationHistoryResponse.self, .post, "\(sandbox)/v1/notifications/history", body: byTransaction)
            return lines
        }
        let expected = try String(contentsOf: Self.fixture, encoding: .utf8).split(separator: "\n").map(String.init)
        let actual = lines.joined(separator: "\n") + "\n"
        for (index, line) in lines.enumerated() {
            let name = line.prefix { $0 != " " }
            let captured = expected.first { $0.prefix { $0 != " " } == name }
            #expect(line == captured, "answer \(index), \(name)")
        }
        #expect(lines.count == expected.count)
        if lines != expected {
            // What the answers are now, to compare with the fixture (and to copy over it when a change is meant).
            let folder = try temporaryDirectory()
            try Data(actual.utf8).write(to: folder.appendingPathComponent("server-api-answers.txt"))
            Issue.record("the answers as they are now: \(folder.path)/server-api-answers.txt")
        }
    }
}
