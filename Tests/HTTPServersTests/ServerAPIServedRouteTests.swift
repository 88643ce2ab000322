import _ForgeSupport
import Foundation
import Hummingbird
import NIOCore
import NIOPosix
import StoreForge
import StoreServer
import HTTPServers
import StoreModel
import Testing

/// Issue 22, in process: what `forge serve --scenario` of the examples answers Apple's clients — closed by default,
/// every call of Apple's Python client with its answer, local testing by path and by host name with production's rates,
/// Apple's 405 and HEAD, and an unreadable body in Apple's shape. These were proven over a socket
/// with a server per test; what stays on a socket (the same JWS as `forge jws make`, Apple's Python client end to end) is
/// in `Tests/ForgeCLITests/ServerAPITests.swift`.
@Suite("Server API in process: the examples as Apple's clients meet them", .timeLimit(.minutes(2)))
struct ServerAPIServedRouteTests {
    typealias Server = ExampleServer
    static let later = "2025-03-01T00:00:00Z"

    @Test("Without --no-auth or a key the /inApps routes answer 401 with an empty body; the request log names each endpoint with its 401")
    func closedByDefault() async throws {
        let server = try Server(access: .closed)
        try await server.application.test(.router) { client in
            for path in ["/inApps/v1/transactions/1", "/sandbox/inApps/v2/history/1", "/sandbox/inApps/v1/subscriptions/1"] {
                let answer = try await client.execute(uri: path, method: .get)
                #expect(answer.status == .unauthorized && answer.body.readableBytes == 0, "\(path)")
            }
        }
        #expect(server.entries.map { $0["endpoint"] as? String } == ["transactionInfo", "transactionHistory", "subscriptionStatuses"], "\(server.entries)")
        #expect(server.entries.allSatisfy { $0["httpStatus"] as? Int == 401 })
    }

    @Test(
        "The calls Apple's Python client makes, answered: transaction info, history v2 pages and filters, all subscription statuses, refund history (the refund later by X-Forge-Now), app transaction info, consumption v1 and v2, finish transaction; Apple's error for each bad call; production at the root with its appAppleId"
    )
    func clientCalls() async throws {
        let ids = try ExampleIDs()
        let latest = ids.latest
        try await Server().application.test(.router) { client in
            func get(_ uri: String, headers: HTTPFields = [:]) async throws -> TestResponse { try await client.execute(uri: uri, method: .get, headers: headers) }
            let history = "/sandbox/inApps/v2/history/\(latest)"
            let first = try await get(history)
            let page1 = Server.object(first)
            #expect(Server.transactions(first).count == 20 && page1["hasMore"] as? Bool == true)
            #expect(page1["environment"] as? String == "Sandbox" && page1["bundleId"] as? String == "com.example.api")
            let revision = try #require(page1["revision"] as? String)
            let info = try await get("/sandbox/inApps/v1/transactions/\(latest)")
            #expect(Server.payload(Server.object(info)["signedTransactionInfo"])["transactionId"] as? String == latest)
            let second = try await get(history + "?revision=\(revision)")
            #expect(Server.transactions(second).count == 5 && Server.object(second)["hasMore"] as? Bool == false)
            let lifetime = try await get(history + "?productId=lifetime&sort=DESCENDING")
            #expect(Server.transactions(lifetime).map { $0["productId"] as? String } == ["lifetime"])
            // 2024-01-01 ≤ purchaseDate < 2024-07-01: six monthly periods.
            #expect(Server.transactions(try await get(history + "?productType=AUTO_RENEWABLE&startDate=1704067200000&endDate=1719792000000")).count == 6)
            #expect(Server.transactions(try await get(history + "?revoked=false&inAppOwnershipType=PURCHASED")).count == 20)
            let statuses = Server.object(try await get("/sandbox/inApps/v1/subscriptions/\(latest)"))
            let last = ((statuses["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first
            #expect(last?["status"] as? Int == 1 && Server.payload(last?["signedTransactionInfo"])["transactionId"] as? String == latest)
            #expect(Server.payload(last?["signedRenewalInfo"])["autoRenewStatus"] as? Int == 1)
            #expect((Server.object(try await get("/sandbox/inApps/v1/subscriptions/\(latest)?status=2"))["data"] as? [Any])?.isEmpty == true)

            let refunds = try await get("/sandbox/inApps/v2/refund/lookup/\(latest)")
            #expect(Server.transactions(refunds).isEmpty && Server.object(refunds)["hasMore"] as? Bool == false)
            let refundRevision = try #require(Server.object(refunds)["revision"] as? String)
            let app = Server.payload(Server.object(try await get("/sandbox/inApps/v1/transactions/appTransactions/\(latest)"))["signedAppTransactionInfo"])
            #expect(app["bundleId"] as? String == "com.example.api")
            let consumption = try await client.execute(
                uri: "/sandbox/inApps/v2/transactions/consumption/\(latest)", method: .put,
                body: try Server.body(["customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "DELIVERED", "refundPreference": "DECLINE"]))
            #expect(consumption.status == .accepted, "consumption accepted: \(String(buffer: consumption.body))")
            #expect(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(latest)/finish", method: .post).status == .ok, "transaction finished")
            let consumptionV1: [String: Any] = [
                "customerConsented": true, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": false, "deliveryStatus": 0,
                "appAccountToken": "", "accountTenure": 3, "playTime": 2, "lifetimeDollarsRefunded": 0, "lifetimeDollarsPurchased": 4, "userStatus": 1,
            ]
            let v1 = try await client.execute(uri: "/sandbox/inApps/v1/transactions/consumption/\(latest)", method: .put, body: try Server.body(consumptionV1))
            #expect(v1.status == .accepted, "consumption v1 accepted: \(String(buffer: v1.body))")

            let errors: [(TestResponse, Int, Int)] = [
                (try await get("/sandbox/inApps/v1/transactions/12ab"), 400, 4_000_006),
                (try await get("/sandbox/inApps/v1/transactions/123456789"), 404, 4_040_010),
                (try await get(history + "?revision=not-a-revision"), 400, 4_000_005),
                (try await get(history + "?startDate=1719792000000&endDate=1704067200000"), 400, 4_000_013),
                (try await get(history + "?sort=UPWARDS"), 400, 4_000_021), (try await get(history + "?productType=SUBSCRIPTION"), 400, 4_000_022),
                (try await get(history + "?revoked=perhaps"), 400, 4_000_030), (try await get("/sandbox/inApps/v1/subscriptions/\(latest)?status=9"), 400, 4_000_031),
                (try await get("/sandbox/inApps/v2/refund/lookup/\(latest)?revision=%25%25"), 400, 4_000_005),
                (
                    try await client.execute(
                        uri: "/sandbox/inApps/v2/transactions/consumption/\(latest)", method: .put,
                        body: try Server.body(["customerConsented": false, "sampleContentProvided": false, "deliveryStatus": "DELIVERED"])), 400, 4_000_035
                ),
                (try await client.execute(uri: "/sandbox/inApps/v1/transactions/999999999/finish", method: .post), 404, 4_040_010),
                (
                    try await client.execute(
                        uri: "/sandbox/inApps/v1/transactions/consumption/\(latest)", method: .put,
                        body: try Server.body(consumptionV1.merging(["appAccountToken": "not-a-uuid"]) { $1 })), 400, 4_000_033
                ),
            ]
            for (index, (response, status, code)) in errors.enumerated() {
                #expect(response.status.code == status && Server.errorCode(response) == code, "\(index): \(response.status) \(String(buffer: response.body))")
                #expect(response.headers[.contentType] == "application/json", "\(index)")
            }

            // Later (X-Forge-Now is the server's clock for one request): the refund, past the revision kept.
            let refunded = try await get("/sandbox/inApps/v2/refund/lookup/\(latest)?revision=\(refundRevision)", headers: try Server.header("X-Forge-Now", Self.later))
            #expect(Server.transactions(refunded).map { $0["productId"] as? String } == ["lifetime"])

            // Production: the other customer at the root, with its appAppleId.
            let raw = Server.object(try await get("/inApps/v2/history/\(ids.productionTransaction)"))
            let appAppleID = try #require(raw["appAppleId"] as? Int)
            let production = Server.payload(Server.object(try await get("/inApps/v1/transactions/\(ids.productionTransaction)"))["signedTransactionInfo"])
            #expect(production["environment"] as? String == "Production")
            #expect(Server.object(try await get("/inApps/v1/subscriptions/\(ids.productionTransaction)"))["appAppleId"] as? Int == appAppleID)
            #expect(Server.errorCode(try await get("/inApps/v1/transactions/\(latest)")) == 4_040_010, "a sandbox id is not found in production")
        }
    }

    @Test(
        "Local testing by path (/local-testing/inApps) and by Host (local-testing-base-url, any case and port, at the root) serves both stores; with Apple's rate limits it has production's rates: refund history 10 a second where the sandbox allows 1"
    )
    func localTesting() async throws {
        let ids = try ExampleIDs()
        // The limiter counts seconds on a clock the test holds still: every request below falls in one second.
        let clock = ManualClock("2025-01-01T00:00:07Z")
        try await Server(rateLimits: clock.limits).application.test(.router) { client in
            for id in [ids.latest, ids.productionTransaction] {
                let answer = try await client.execute(uri: "/local-testing/inApps/v1/transactions/\(id)", method: .get)
                #expect(answer.status == .ok && Server.object(answer)["signedTransactionInfo"] is String, "\(id): \(answer.status)")
            }
            func refunds(_ prefix: String, _ count: Int) async throws -> [Int] {
                var statuses: [Int] = []
                for _ in 0..<count {
                    statuses.append(try await client.execute(uri: "\(prefix)/inApps/v2/refund/lookup/\(ids.latest)", method: .get).status.code)
                }
                return statuses
            }
            #expect(try await refunds("/sandbox", 3) == [200, 429, 429])
            #expect(try await refunds("/local-testing", 3) == [200, 200, 200])
            #expect(try await refunds("/local-testing", 8) == Array(repeating: 200, count: 7) + [429], "production's 10 a second")
            for (host, status) in [("local-testing-base-url", 200), ("LOCAL-TESTING-BASE-URL:443", 200), ("api.storekit.apple.com", 404)] {
                // In process the Host field stands for the authority HTTP/1.1's Host header becomes on a socket.
                let answer = try await client.execute(uri: "/inApps/v1/transactions/\(ids.latest)", method: .get, headers: try Server.header("Host", host))
                #expect(answer.status.code == status, "\(host)")
            }
        }
    }

    @Test(
        "A served path asked with another method (PATCH, OPTIONS too) answers 405 with `Allow` naming every method it takes; HEAD is GET without the body (RFC 9110; schemathesis's unsupported_method)"
    )
    func methodNotAllowedNamesTheMethod() async throws {
        let ids = try ExampleIDs()
        try await Server().application.test(.router) { client in
            for (method, path, allowed) in [
                (HTTPRequest.Method.put, "/sandbox/inApps/v1/transactions/\(ids.latest)", "GET"), (.get, "/inApps/v2/transactions/consumption/1", "PUT"),
                (.delete, "/inApps/v1/transactions/1/finish", "POST"), (.patch, "/inApps/v1/transactions/1", "GET"),
                (.options, "/sandbox/inApps/v1/notifications/history", "POST"), (.put, "/inApps/v1/subscriptions/extend/mass", "POST"),
                // Two templates fit; the router's rule picks one, a literal segment before a parameter, left to right.
                (.get, "/inApps/v1/transactions/consumption/finish", "PUT"),
                // A method of IANA's registry beyond RFC 9110's (schemathesis sends QUERY).
                (try #require(HTTPRequest.Method("QUERY")), "/sandbox/inApps/v1/notifications/history", "POST"),
            ] {
                let answer = try await client.execute(uri: path, method: method)
                #expect(answer.status == .methodNotAllowed && answer.body.readableBytes == 0, "\(method) \(path)")
                #expect(answer.headers[.allow] == allowed, "\(method) \(path): \(answer.headers)")
            }
            let path = "/sandbox/inApps/v1/transactions/\(ids.latest)"
            let get = try await client.execute(uri: path, method: .get)
            let head = try await client.execute(uri: path, method: .head)
            #expect(get.status == .ok && get.body.readableBytes > 0)
            #expect(head.status == .ok && head.body.readableBytes == 0 && head.headers[.contentType] == "application/json", "\(head.headers)")
        }
    }

    @Test(
        "A body the server cannot read is answered in Apple's shape, so a client keeps the code: broken chunked framing is 400 with 4000000 (over loopback: the framing is the socket's)"
    )
    func unreadableBodyIsApplesError() async throws {
        try await Server().application.test(.live) { client in
            let port = try #require(client.port)
            let answer = try await RawExchange.send(
                "PUT /sandbox/inApps/v2/transactions/consumption/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n", port: port)
            #expect(answer.status == 400 && answer.headers["content-type"] == "application/json", "\(answer.status) \(answer.headers)")
            #expect(answer.body == #"{"errorCode":4000000,"errorMessage":"Bad request."}"#, "\(answer.body)")
        }
    }
}

/// Bytes sent as they are over one loopback connection, for what an HTTP client will not send (broken framing), and
/// the answer read to the connection's end, within a deadline.
enum RawExchange {
    struct Answer {
        let status: Int
        /// Names in lower case.
        let headers: [String: String]
        let body: String
    }

    static func send(_ request: String, port: Int, within deadline: Duration = .seconds(20)) async throws -> Answer {
        let connection = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
        // At the deadline the connection is closed, which ends the read below with what came.
        let watchdog = Task {
            try await Task.sleep(for: deadline)
            try await connection.channel.close()
        }
        defer { watchdog.cancel() }
        let text = try await connection.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            var received = ""
            for try await chunk in inbound { received += String(buffer: chunk) }
            return received
        }
        guard let end = text.range(of: "\r\n\r\n") else { return Answer(status: 0, headers: [:], body: text) }
        let lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let status = lines.first?.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return Answer(status: status, headers: headers, body: String(text[end.upperBound...]))
    }
}
