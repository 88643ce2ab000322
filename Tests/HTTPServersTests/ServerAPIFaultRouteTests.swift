import Foundation
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import Testing
import ForgeTestSupport
import _ForgeSupport
import StoreModel

/// Issue 22 item 6: faults on the App Store Server API, in process through the application forge-http serves. One
/// fault vocabulary for both APIs: the control route takes the same specs as `--fault`. Apple's Python client against
/// them over a socket is in `Tests/ForgeCLITests/ServerAPIFaultTests.swift`.
@Suite("Server API faults in process (app.test(.router))", .timeLimit(.minutes(2)))
struct ServerAPIFaultRouteTests {
    static let token = "t0ken"

    static func application(
        access: ServerAPIService.Access = .open, rateLimits: ServerAPIRateLimits? = nil, seed: UInt64 = 0, log: RequestLog? = nil
    ) throws -> ForgeApplication {
        let service = try ServerAPIService(
            scenarios: try ServerAPIRouteTests.scenarios(), forge: try Forge.bundled(),
            configuration: .init(now: ReceiptDate.parse(ServerAPIRouteTests.clock), access: access, rateLimits: rateLimits))
        return try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), serverAPI: service,
            faults: try FaultPlan(seed: seed), log: try log ?? RequestLog(file: nil, capacity: 200), controlToken: token)
    }

    static var control: HTTPFields { [.authorization: "Bearer " + token] }

    /// `POST /_forge/faults` with a spec line: the HTTP status and the answer's text.
    static func add(_ spec: String, _ client: some TestClientProtocol) async throws -> (status: Int, text: String) {
        let response = try await client.execute(uri: "/_forge/faults", method: .post, headers: control, body: ByteBuffer(string: spec))
        return (response.status.code, String(buffer: response.body))
    }

    static func faults(_ client: some TestClientProtocol) async throws -> String {
        String(buffer: try await client.execute(uri: "/_forge/faults", method: .get, headers: control).body)
    }

    static func lines(_ log: RequestLog) -> [JSONValue] {
        log.jsonLines.split(separator: "\n").compactMap { try? JSONValue(parsing: Array($0.utf8)) }
    }

    static func sandboxID() throws -> String { try #require(try ServerAPIRouteTests.sandboxIDs()["pro.monthly"]?[3]) }

    @Test(
        "A 5000001 fault on sandbox/transactionInfo with count=1: Apple's error exactly, once; other endpoints and production untouched; listed in the form POST takes; logged with its spec"
    )
    func retryableOnce() async throws {
        let id = try Self.sandboxID()
        let log = try RequestLog(file: nil, capacity: 100)
        try await Self.application(log: log).test(.router) { client in
            let added = try await Self.add("sandbox/transactionInfo:status=5000001,count=1", client)
            #expect(added.status == 201 && added.text == "sandbox/transactionInfo:status=5000001,count=1\n", "\(added)")
            #expect(try await Self.faults(client) == #"{"endpoint":"sandbox/transactionInfo","status":5000001,"count":1}"# + "\n")
            #expect(try await client.execute(uri: "/sandbox/inApps/v2/history/\(id)", method: .get).status == .ok)
            ServerAPIRouteTests.expectError(try await client.execute(uri: "/inApps/v1/transactions/123456789", method: .get), .transactionIDNotFound)
            ServerAPIRouteTests.expectError(
                try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get), .generalInternalRetryable)
            #expect(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get).status == .ok, "count=1 is spent")
            #expect(try await Self.faults(client).isEmpty)
        }
        let lines = Self.lines(log)
        #expect(lines.count == 4)
        let faulted = try #require(lines.dropFirst(2).first)
        #expect(faulted["endpoint"]?.stringValue == "transactionInfo" && faulted["environment"]?.stringValue == "sandbox")
        #expect(faulted["httpStatus"]?.integerValue == 500 && faulted["errorCode"]?.integerValue == 5_000_001)
        #expect(faulted["fault"]?.stringValue == "sandbox/transactionInfo:status=5000001,count=1" && faulted["transactionId"]?.stringValue == id)
        #expect(lines.enumerated().allSatisfy { $0.offset == 2 || $0.element["fault"] == .null }, "every entry says whether a fault applied")
    }

    @Test(
        "http=N, not-json and latency on Server API endpoints; ENV/any and NAME in both environments; `any` reaches both APIs, a verifyReceipt status verifyReceipt only"
    )
    func actionsAndEndpoints() async throws {
        let id = try Self.sandboxID()
        let log = try RequestLog(file: nil, capacity: 100)
        try await Self.application(log: log).test(.router) { client in
            #expect(try await Self.add("sandbox/any:http=503,count=1", client).status == 201)
            #expect(try await client.execute(uri: "/inApps/v1/transactions/123456789", method: .get).status == .notFound, "production is not sandbox/any")
            let http = try await client.execute(uri: "/sandbox/inApps/v1/subscriptions/\(id)", method: .get)
            #expect(http.status == .serviceUnavailable && http.headers[.contentType] == "text/plain" && String(buffer: http.body).contains("http=503"))

            #expect(try await Self.add("transactionHistory:not-json,count=2", client).status == 201)
            for uri in ["/sandbox/inApps/v2/history/\(id)", "/inApps/v2/history/123456789"] {
                let page = try await client.execute(uri: uri, method: .get)
                #expect(page.status == .serviceUnavailable && page.headers[.contentType] == "text/html", "\(uri)")
                #expect(String(buffer: page.body).hasPrefix("<html>"), "\(uri)")
            }

            #expect(try await Self.add("production/any:latency=300,count=1", client).status == 201)
            let started = ContinuousClock.now
            ServerAPIRouteTests.expectError(try await client.execute(uri: "/inApps/v1/transactions/123456789", method: .get), .transactionIDNotFound)
            #expect(ContinuousClock.now - started >= .milliseconds(300), "latency alone: the endpoint's own answer, late")

            // No endpoint: both APIs; a verifyReceipt status, verifyReceipt's endpoints only.
            #expect(try await Self.add("status=21005", client).status == 201)
            #expect(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get).status == .ok)
            #expect(String(buffer: try await client.execute(uri: "/verifyReceipt", method: .get).body).contains("21005"))
            #expect(try await client.execute(uri: "/_forge/faults", method: .delete, headers: Self.control).status == .ok)
            #expect(try await Self.add("any:status=4290000,count=1", client).status == 201)
            #expect(String(buffer: try await client.execute(uri: "/verifyReceipt", method: .get).body) == #"{"status":21000}"#)
            ServerAPIRouteTests.expectError(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get), .rateLimitExceeded)
            #expect(try await Self.add("any:http=502,count=2", client).status == 201)
            #expect(try await client.execute(uri: "/verifyReceipt", method: .get).status == .badGateway)
            #expect(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get).status == .badGateway)
        }
        let faults = Self.lines(log).map { $0["fault"]?.stringValue }
        #expect(
            faults == [
                nil, "sandbox/any:http=503,count=1", "transactionHistory:not-json,count=2", "transactionHistory:not-json,count=1",
                "production/any:latency=300,count=1", nil, "any:status=21005", nil, "any:status=4290000,count=1", "any:http=502,count=2",
                "any:http=502,count=1",
            ], "\(faults)")
    }

    @Test("A Server API body counts against the body budget until its answer is made (as verifyReceipt's), not only while it is read")
    func bodyHeldUntilAnswered() async throws {
        try await Self.application().test(.router) { client in
            #expect(try await Self.add("sandbox/any:latency=100000,count=1", client).status == 201)
            let body = #"{"startDate":1735689600000,"endDate":1736294400000}"#
            let slow = Task {
                try await client.execute(uri: "/sandbox/inApps/v1/notifications/history", method: .post, body: ByteBuffer(string: body))
            }
            defer { slow.cancel() }
            func held() async throws -> String? {
                try await client.execute(uri: "/_forge/log", method: .get, headers: Self.control).headers[try #require(HTTPFields.Element.Name("X-Forge-Body-Bytes-Held"))]
            }
            // The server's own count, while the answer waits out its fault.
            try await eventually("the body is held while its answer waits", within: .seconds(60)) { try await held() == String(body.utf8.count) }
            slow.cancel()
            try await eventually("given back once the request ended", within: .seconds(60)) { try await held() == "0" }
        }
    }

    @Test("A fault that mixes the APIs, names no endpoint or no documented code is refused with the reason; nothing is added")
    func refusedSpecs() async throws {
        try await Self.application().test(.router) { client in
            for (spec, reason) in [
                ("sandbox/transactionInfo:status=21005", "21005 is a verifyReceipt status"),
                ("transactionHistory:status=21100,retryable=false", "21100 is a verifyReceipt status"),
                ("production:status=5000001", "5000001 is an App Store Server API error"),
                ("transactionInfo:status=4000099", "not an error Apple documents"),
                ("status=5000002", "not an error Apple documents"),
                ("transactionInfo:status=5000001,retryable=true", "retryable applies to verifyReceipt's statuses 21100–21199 only"),
                ("transactionInfos:http=500", "transactionInfo, transactionHistory"),
                ("staging/transactionInfo:http=500", "the environment before '/' is production, sandbox or any"),
                ("sandbox/:http=500", "transactionInfo, transactionHistory"),
            ] {
                let refused = try await Self.add(spec, client)
                #expect(refused.status == 400 && refused.text.contains(reason), "\(spec): \(refused.text)")
            }
            #expect(try await Self.faults(client).isEmpty)
        }
    }

    @Test(
        "Faults come after authentication and the rate limit: a closed API answers 401 and keeps the fault; a request over the rate is 429 and keeps it; the next admitted one gets it"
    )
    func afterAuthenticationAndRateLimit() async throws {
        let id = try Self.sandboxID()
        try await Self.application(access: .closed).test(.router) { client in
            #expect(try await Self.add("any:status=5000001,count=1", client).status == 201)
            let refused = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get)
            #expect(refused.status == .unauthorized && refused.body.readableBytes == 0)
            #expect(try await Self.faults(client).contains(#""count":1"#), "a 401 does not spend the fault")
        }
        let clock = ManualClock("2025-01-01T00:00:07Z")
        try await Self.application(rateLimits: clock.limits).test(.router) { client in
            for _ in 0..<5 { #expect(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get).status == .ok) }
            #expect(try await Self.add("sandbox/transactionInfo:status=5000001,count=1", client).status == 201)
            ServerAPIRouteTests.expectError(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get), .rateLimitExceeded)
            #expect(try await Self.faults(client).contains(#""count":1"#), "a 429 does not spend the fault")
            clock.advance(seconds: 1)
            ServerAPIRouteTests.expectError(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get), .generalInternalRetryable)
            #expect(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get).status == .ok)
        }
    }

    @Test("A faulted mutating endpoint does nothing: the consumption it was sent is not recorded; unfaulted, it is")
    func faultedMutationDoesNothing() async throws {
        let id = try Self.sandboxID()
        let log = try RequestLog(file: nil, capacity: 100)
        let body = ByteBuffer(string: #"{"customerConsented":true,"sampleContentProvided":false,"deliveryStatus":"DELIVERED"}"#)
        try await Self.application(log: log).test(.router) { client in
            #expect(try await Self.add("consumptionV2:status=5000000,count=1", client).status == 201)
            let uri = "/sandbox/inApps/v2/transactions/consumption/\(id)"
            ServerAPIRouteTests.expectError(try await client.execute(uri: uri, method: .put, body: body), .generalInternal)
            #expect(try await client.execute(uri: uri, method: .put, body: body).status == .accepted)
        }
        let lines = Self.lines(log)
        #expect(lines.count == 2 && lines.first?["consumption"] == nil && lines.first?["fault"]?.stringValue == "consumptionV2:status=5000000,count=1")
        #expect(lines.last?["consumption"]?["deliveryStatus"]?.stringValue == "DELIVERED")
    }

    @Test("percent=P draws from the server's seeded generator: the same seed fails the same requests, another seed others")
    func percentIsSeeded() async throws {
        let id = try Self.sandboxID()
        func pattern(seed: UInt64) async throws -> [Bool] {
            try await Self.application(seed: seed).test(.router) { client in
                #expect(try await Self.add("transactionInfo:status=5000001,percent=50", client).status == 201)
                var failed: [Bool] = []
                for _ in 0..<24 {
                    failed.append(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get).status.code == 500)
                }
                return failed
            }
        }
        let first = try await pattern(seed: 7)
        #expect(first.contains(true) && first.contains(false), "\(first)")
        #expect(try await pattern(seed: 7) == first)
        #expect(try await pattern(seed: 8) != first)
    }
}
