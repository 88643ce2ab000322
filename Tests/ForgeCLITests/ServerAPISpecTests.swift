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
/// (`scripts/known-results.sh --install-only`, which `.ci/run` runs); without it the tests are skipped and say so.
/// Apple's 405 with `Allow`, HEAD, and an unreadable body in Apple's shape are proven in process
/// (`ServerAPIServedRouteTests`).
@Suite("The App Store Server API's OpenAPI document", .serialized, .timeLimit(.minutes(2)))
struct ServerAPISpecTests {
    static let document = Repository.file("Documentation/server-api.openapi.yaml")
    static let tools = Repository.file(".oracles/openapi/bin")
    static let validator = tools.appendingPathComponent("openapi-spec-validator")
    static let schemathesis = tools.appendingPathComponent("schemathesis")
    /// schemathesis and openapi-spec-validator, in the venv `.oracles/openapi`.
    static let openapi = Oracle.venv("openapi", "schemathesis and openapi-spec-validator")

    /// The checks of the fuzz run: what the document promises of every answer.
    static let checks = [
        "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_headers_conformance", "response_schema_conformance",
        "unsupported_method",
    ]
    /// Test cases per operation and phase: bounded so the run ends in well under a minute, with a fixed seed.
    static let maximumExamples = 25
    static let seed = 22

    /// The endpoints the document marks served, by the request log's names.
    static let servedEndpoints: Set<String> = Set([
        "transactionInfo", "transactionHistory", "transactionHistoryV1", "subscriptionStatuses", "refundHistory", "orderLookup", "appTransactionInfo",
        "consumptionV1", "consumptionV2", "finishTransaction", "setAppAccountToken", "extendRenewalDate", "massExtendRenewalDate", "massExtensionStatus",
        "requestTestNotification", "testNotificationStatus", "notificationHistory",
    ]).union(retentionMessaging)

    /// Served endpoints Apple has only in production: the sandbox answers them 404.
    static let productionOnly: Set<String> = ["orderLookup"]

    /// Served endpoints whose 2xx needs state a run does not build, so the run checks their answers conform but does not
    /// require a 2xx (either is fine): Delete Image needs an image uploaded under the identifier it names, and a PNG cannot
    /// be an example (the fuzzer's PNGs get identifiers of their own); in production (examples and links only) no Retention
    /// Messaging configuration is built first — its realtime URL even needs a passing sandbox test (4030026) and its
    /// performance test is sandbox-only (4000211). Apple's Python client reaches every one in `RetentionMessagingTests`.
    static let stateBound: Set<String> = ["deleteImage"]
    static let retentionMessaging: Set<String> = [
        "uploadImage", "deleteImage", "imageList", "uploadMessage", "deleteMessage", "messageList", "configureDefaultMessage", "deleteDefaultMessage",
        "defaultMessage", "configureRealtimeURL", "deleteRealtimeURL", "realtimeURL", "initiatePerformanceTest", "performanceTestResults",
    ]

    @Test(
        "openapi-spec-validator accepts the document, and refuses a copy with a dangling $ref; its served operations are servedEndpoints",
        .requires(openapi))
    func documentIsValid() async throws {
        let result = try await run(Self.validator, [Self.document.path], deadline: .seconds(60))
        #expect(result.status == 0, "\(result.text)\(result.stderr)")
        let scratch = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let broken = scratch.appendingPathComponent("broken.yaml")
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        // The operations marked served are the endpoints the fuzz run expects 2xx from.
        #expect(text.components(separatedBy: "x-forge-served: true").count - 1 == Self.servedEndpoints.count, "servedEndpoints is stale")
        try text.replacingOccurrences(of: "#/components/schemas/HistoryResponse", with: "#/components/schemas/NoSuchResponse")
            .write(to: broken, atomically: true, encoding: .utf8)
        let refused = try await run(Self.validator, [broken.path], deadline: .seconds(60))
        #expect(refused.status != 0, "the validator checks: \(refused.text)")
    }

    /// A `forge serve --no-auth` of both example customers (`examples/server-api/`, whose ids the document's
    /// `examples` name) at their `now`, logging every request to `log`; with `open` false, no `--no-auth` and no
    /// API key, so every route answers 401. Both environments have a webhook (a closed port: each attempt fails
    /// at once), so Request a Test Notification answers 200, not 4040007.
    static func server(log: URL, open: Bool = true) async throws -> BackgroundServer {
        let examples = ServerAPITests.examples
        return try await BackgroundServer.start(
            [
                "serve", "--listen", "127.0.0.1:0", "--now", "2025-01-01T00:00:00Z", "--log", log.path,
                "--scenario", examples.appendingPathComponent("sandbox-customer.json").path,
                "--scenario", examples.appendingPathComponent("production-customer.json").path,
                "--notify", "http://127.0.0.1:9/apple", "--notify-sandbox", "http://127.0.0.1:9/apple",
            ] + (open ? ["--no-auth"] : []))
    }

    /// `schemathesis run` of the document's served operations at `base`, the fixed seed and bounded examples.
    static func schemathesisRun(_ base: String, phases: String, in directory: URL) async throws -> RunResult {
        try await run(
            schemathesis,
            [
                "run", document.path, "--url", base, "--checks", checks.joined(separator: ","), "--exclude-by", "/x-forge-served == false",
                "--seed", String(seed), "--max-examples", String(maximumExamples), "--phases", phases, "--generation-database", "none",
                "--workers", "1", "--request-timeout", "20", "--no-color",
            ],
            in: directory, deadline: .seconds(100))
    }

    /// The request log's lines, once the server says the file holds every request it answered.
    static func logLines(_ log: URL, of server: BackgroundServer) async throws -> [[String: Any]] {
        try await logFileWritten(server.url)
        return try String(contentsOf: log, encoding: .utf8).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    @Test(
        "schemathesis against forge serve: every answer of every served operation conforms and none is a 5xx (the sandbox fuzzed, production by the examples and links), and each served endpoint answered 2xx in each environment that has it",
        .requires(openapi), arguments: ["sandbox", "production"])
    func servedAPIConforms(environment: String) async throws {
        let scratch = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let log = scratch.appendingPathComponent("log.jsonl")
        let server = try await Self.server(log: log)
        defer { server.kill() }
        // The sandbox through every phase (stateful: the document's links, e.g. a page's revision to the next page);
        // production through the examples, which reach its customer, and the links. Each on a server of its own.
        let sandbox = environment == "sandbox"
        let base = sandbox ? server.url + "/sandbox" : server.url
        let result = try await Self.schemathesisRun(base, phases: sandbox ? "examples,coverage,fuzzing,stateful" : "examples,stateful", in: scratch)
        #expect(result.status == 0 && result.exited, "schemathesis at \(base), exit \(result.status):\n\(result.text)\n\(result.stderr)")
        // The fuzz reached real data, not only errors: each served endpoint answered 2xx in this environment.
        let lines = try await Self.logLines(log, of: server)
        var succeeded = Set<String>()
        for line in lines {
            guard let endpoint = line["endpoint"] as? String, let status = line["httpStatus"] as? Int else { continue }
            #expect(line["environment"] as? String == environment && status < 500, "\(line)")
            if (200..<300).contains(status) { succeeded.insert(endpoint) }
        }
        let optional = sandbox ? Self.stateBound : Self.stateBound.union(Self.retentionMessaging)
        let expected = (sandbox ? Self.servedEndpoints.subtracting(Self.productionOnly) : Self.servedEndpoints).subtracting(optional)
        #expect(succeeded.subtracting(optional) == expected, "never answered 2xx: \(expected.subtracting(succeeded).sorted()); \(lines.count) requests")
    }

    @Test("schemathesis against forge serve without --no-auth or a key: every served operation answers the documented 401, no body", .requires(openapi))
    func closedServerConforms() async throws {
        let scratch = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let log = scratch.appendingPathComponent("log.jsonl")
        let server = try await Self.server(log: log, open: false)
        defer { server.kill() }
        let result = try await Self.schemathesisRun(server.url + "/sandbox", phases: "examples", in: scratch)
        #expect(result.status == 0 && result.exited, "exit \(result.status):\n\(result.text)\n\(result.stderr)")
        let statuses = try await Self.logLines(log, of: server).compactMap { $0["httpStatus"] as? Int }
        #expect(!statuses.isEmpty && statuses.allSatisfy { $0 == 401 }, "\(statuses)")
    }
}
