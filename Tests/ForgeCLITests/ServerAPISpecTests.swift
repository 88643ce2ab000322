import Foundation
import ForgeTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 22, item 8: `Documentation/server-api.openapi.yaml`, the App Store Server API as `forge serve` answers it
/// (no public OpenAPI document of Apple's API exists). `openapi-spec-validator` checks the document, and
/// `schemathesis` fuzzes a real `forge serve --no-auth` over a socket against it: every answer conforms (status,
/// content type, headers, body schema) and none is a 5xx. Both tools live in `.oracles/openapi`
/// (`scripts/known-results.sh --install-only`, which `.ci/run` runs); without it the tests are skipped.
@Suite("The App Store Server API's OpenAPI document", .serialized, .timeLimit(.minutes(10)))
struct ServerAPISpecTests {
    static let document = repositoryRoot.appendingPathComponent("Documentation/server-api.openapi.yaml")
    static let tools = repositoryRoot.appendingPathComponent(".oracles/openapi/bin")
    static let validator = tools.appendingPathComponent("openapi-spec-validator")
    static let schemathesis = tools.appendingPathComponent("schemathesis")
    static let installed = FileManager.default.isExecutableFile(atPath: schemathesis.path) && FileManager.default.isExecutableFile(atPath: validator.path)
    static let missing: Comment = "\(tools.path) is absent: run scripts/known-results.sh --install-only --only openapi .oracles"

    /// The checks of the fuzz run: what the document promises of every answer.
    static let checks = [
        "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_headers_conformance", "response_schema_conformance",
        "unsupported_method",
    ]
    /// Test cases per operation and phase: bounded so the run ends in well under a minute, with a fixed seed.
    static let maximumExamples = 25
    static let seed = 22

    /// The endpoints the document marks served, by the request log's names.
    static let servedEndpoints: Set<String> = [
        "transactionInfo", "transactionHistory", "transactionHistoryV1", "subscriptionStatuses", "refundHistory", "orderLookup", "appTransactionInfo",
        "consumptionV1", "consumptionV2", "finishTransaction", "setAppAccountToken", "extendRenewalDate", "massExtendRenewalDate", "massExtensionStatus",
        "requestTestNotification", "testNotificationStatus", "notificationHistory",
    ]

    /// Served endpoints Apple has only in production: the sandbox answers them 404.
    static let productionOnly: Set<String> = ["orderLookup"]

    @Test(
        "openapi-spec-validator accepts the document, and refuses a copy with a dangling $ref; its served operations are servedEndpoints",
        .enabled(if: installed, missing))
    func documentIsValid() throws {
        let result = try runBlocking(Self.validator, [Self.document.path], killAfter: 60)
        #expect(result.status == 0, "\(result.text)\(result.stderr)")
        let scratch = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let broken = scratch.appendingPathComponent("broken.yaml")
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        // The operations marked served are the endpoints the fuzz run expects 2xx from.
        #expect(text.components(separatedBy: "x-forge-served: true").count - 1 == Self.servedEndpoints.count, "servedEndpoints is stale")
        try text.replacingOccurrences(of: "#/components/schemas/HistoryResponse", with: "#/components/schemas/NoSuchResponse")
            .write(to: broken, atomically: true, encoding: .utf8)
        let refused = try runBlocking(Self.validator, [broken.path], killAfter: 60)
        #expect(refused.status != 0, "the validator checks: \(refused.text)")
    }

    /// A `forge serve --no-auth` of both example customers (`examples/server-api/`, whose ids the document's
    /// `examples` name) at their `now`, logging every request to `log`; with `open` false, no `--no-auth` and no
    /// API key, so every route answers 401. Both environments have a webhook (a closed port: each attempt fails
    /// at once), so Request a Test Notification answers 200, not 4040007.
    static func server(log: URL, open: Bool = true) throws -> BlockingServer {
        let examples = repositoryRoot.appendingPathComponent("examples/server-api")
        return try BlockingServer(
            forgeBinary,
            [
                "serve", "--listen", "127.0.0.1:0", "--now", "2025-01-01T00:00:00Z", "--log", log.path,
                "--scenario", examples.appendingPathComponent("sandbox-customer.json").path,
                "--scenario", examples.appendingPathComponent("production-customer.json").path,
                "--notify", "http://127.0.0.1:9/apple", "--notify-sandbox", "http://127.0.0.1:9/apple",
            ] + (open ? ["--no-auth"] : []))
    }

    /// `schemathesis run` of the document's served operations at `base`, the fixed seed and bounded examples.
    static func schemathesisRun(_ base: String, phases: String, in directory: URL) throws -> RunResult {
        try runBlocking(
            schemathesis,
            [
                "run", document.path, "--url", base, "--checks", checks.joined(separator: ","), "--exclude-by", "/x-forge-served == false",
                "--seed", String(seed), "--max-examples", String(maximumExamples), "--phases", phases, "--generation-database", "none",
                "--workers", "1", "--request-timeout", "20", "--no-color",
            ],
            in: directory, killAfter: 150)
    }

    /// The request log's lines.
    static func logLines(_ log: URL) throws -> [[String: Any]] {
        try String(contentsOf: log, encoding: .utf8).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    @Test(
        "schemathesis against forge serve: every answer of every served operation conforms and none is a 5xx (sandbox fuzzed, production by the examples and links), and each served endpoint answered 2xx in each environment that has it",
        .enabled(if: installed, missing))
    func servedAPIConforms() async throws {
        let scratch = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let log = scratch.appendingPathComponent("log.jsonl")
        let server = try Self.server(log: log)
        defer { server.stop() }
        // The sandbox through every phase (stateful: the document's links, e.g. a page's revision to the next page);
        // production through the examples, which reach its customer, and the links.
        for (base, phases) in [(server.url + "/sandbox", "examples,coverage,fuzzing,stateful"), (server.url, "examples,stateful")] {
            let result = try Self.schemathesisRun(base, phases: phases, in: scratch)
            #expect(result.status == 0 && result.exited, "schemathesis at \(base), exit \(result.status):\n\(result.text)\n\(result.stderr)")
        }
        // The fuzz reached real data, not only errors: each served endpoint answered 2xx in each environment.
        let lines = try Self.logLines(log)
        var succeeded = Set<String>()
        for line in lines {
            guard let endpoint = line["endpoint"] as? String, let environment = line["environment"] as? String, let status = line["httpStatus"] as? Int
            else { continue }
            #expect(status < 500, "\(line)")
            if (200..<300).contains(status) { succeeded.insert("\(environment) \(endpoint)") }
        }
        let expected = Set(Self.servedEndpoints.map { "production \($0)" } + Self.servedEndpoints.subtracting(Self.productionOnly).map { "sandbox \($0)" })
        #expect(succeeded == expected, "never answered 2xx: \(expected.subtracting(succeeded).sorted()); \(lines.count) requests")
    }

    @Test(
        "A served path asked with another method (PATCH, OPTIONS and TRACE too) answers 405 with `Allow` naming every method it takes; HEAD is GET without the body (RFC 9110; schemathesis's unsupported_method)"
    )
    func methodNotAllowedNamesTheMethod() async throws {
        let scratch = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let server = try Self.server(log: scratch.appendingPathComponent("log.jsonl"))
        defer { server.stop() }
        for (method, path, allowed) in [
            ("PUT", "/sandbox/inApps/v1/transactions/522388475367682", "GET"), ("GET", "/inApps/v2/transactions/consumption/1", "PUT"),
            ("DELETE", "/inApps/v1/transactions/1/finish", "POST"), ("PATCH", "/inApps/v1/transactions/1", "GET"),
            ("OPTIONS", "/sandbox/inApps/v1/notifications/history", "POST"), ("PUT", "/inApps/v1/subscriptions/extend/mass", "POST"),
            ("GET", "/inApps/v1/transactions/consumption/finish", "PUT, POST"),
        ] {
            var request = URLRequest(url: try #require(URL(string: server.url + path)))
            request.httpMethod = method
            let (body, response) = try await URLSession.shared.data(for: request)
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 405 && body.isEmpty, "\(method) \(path)")
            #expect(http.value(forHTTPHeaderField: "Allow") == allowed, "\(method) \(path): \(http.allHeaderFields)")
        }
        let path = "/sandbox/inApps/v1/transactions/522388475367682"
        let get = try #require(HTTPExchange.send(port: server.port, method: "GET", path: path))
        let head = try #require(HTTPExchange.send(port: server.port, method: "HEAD", path: path))
        #expect(get.status == 200 && head.status == 200 && head.body.isEmpty && head.headers["content-type"] == "application/json", "\(head.headers)")
    }

    @Test("A body the server cannot read is answered in Apple's shape, so a client keeps the code: broken chunked framing is 400 with 4000000")
    func unreadableBodyIsApplesError() throws {
        let scratch = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let server = try Self.server(log: scratch.appendingPathComponent("log.jsonl"))
        defer { server.stop() }
        let connection = try Connection(port: server.port)
        defer { connection.close() }
        try connection.send(
            Array(
                ("PUT /sandbox/inApps/v2/transactions/consumption/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n").utf8))
        let answer = try #require(connection.readToEnd(within: 20).flatMap(HTTPAnswer.init))
        #expect(answer.status == 400 && answer.headers["content-type"] == "application/json", "\(answer.status) \(answer.headers)")
        #expect(answer.text == #"{"errorCode":4000000,"errorMessage":"Bad request."}"#, "\(answer.text)")
    }

    @Test("schemathesis against forge serve without --no-auth or a key: every served operation answers the documented 401, no body", .enabled(if: installed, missing))
    func closedServerConforms() async throws {
        let scratch = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let log = scratch.appendingPathComponent("log.jsonl")
        let server = try Self.server(log: log, open: false)
        defer { server.stop() }
        let result = try Self.schemathesisRun(server.url + "/sandbox", phases: "examples", in: scratch)
        #expect(result.status == 0 && result.exited, "exit \(result.status):\n\(result.text)\n\(result.stderr)")
        let statuses = try Self.logLines(log).compactMap { $0["httpStatus"] as? Int }
        #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == 401 }, "\(statuses)")
    }
}
