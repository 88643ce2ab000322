import Foundation
import ForgeTestSupport
import Testing

/// Issue 23, item 4: `forge bench realtime`, Apple's Retention Messaging performance test run locally. The endpoint
/// is `examples/receivers/realtime_endpoint.py`, which verifies every request with Apple's `SignedDataVerifier`
/// (`verify_and_decode_realtime_request`) and answers as told.
@Suite(
    "forge bench realtime: a Retention Messaging endpoint under load, PASS or FAIL", .timeLimit(.minutes(10)),
    .enabled(if: FileManager.default.isExecutableFile(atPath: ServerAPITests.python.path), "Apple's Python library is absent: .ci/run installs .oracles/asl")
)
struct BenchRealtimeTests {
    static let endpoint = repositoryRoot.appendingPathComponent("examples/receivers/realtime_endpoint.py").path

    static func run(answer: String, _ extra: [String] = []) throws -> (result: RunResult, summary: [String: Any], records: [[String: Any]]) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("record.jsonl")
        let server = try BlockingServer(
            ServerAPITests.python,
            [Self.endpoint, "--root", ServerAPITests.jwsRoot, "--bundle-id", "com.example.app", "--answer", answer, "--record", record.path])
        defer { server.stop() }
        let result = try forgeBlocking(
            arguments: [
                "bench", "realtime", server.url + "/retention", "--product", "pro.monthly", "--type", "auto-renewable", "--preset", "sandbox",
                "--requests", "20", "--concurrency", "4", "--json",
            ] + extra)
        let summary = (try? JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]) ?? [:]
        let text = (try? String(contentsOf: record, encoding: .utf8)) ?? ""
        let records = text.split(separator: "\n").map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
        return (result, summary, records)
    }

    @Test("An endpoint that answers a message in time passes: every request verified by Apple's library, each its own requestIdentifier")
    func passes() throws {
        // A generous threshold: the Python endpoint verifies each request, and CI's machine is shared.
        let (result, summary, records) = try Self.run(answer: "message", ["--threshold-ms", "5000"])
        #expect(result.status == 0, "\(result.text) \(result.stderr)")
        #expect(summary["result"] as? String == "PASS" && summary["succeeded"] as? Int == 20 && summary["responseTimeThreshold"] as? Int == 5000, "\(summary)")
        #expect(summary["p99"] is Int && (summary["failures"] as? [String: Any])?.isEmpty == true)
        #expect(records.count == 20 && records.allSatisfy { $0["verified"] as? Bool == true }, "\(records.prefix(2))")
        #expect(Set(records.compactMap { $0["requestIdentifier"] as? String }).count == 20)
    }

    @Test(
        "It fails, exit 1, naming why: two answers at once are not a RealtimeResponseBody (INVALID_RESPONSE), an answer over the threshold is TIMED_OUT, HTTP 500 UNSUCCESSFUL_HTTP_RESPONSE_CODE",
        arguments: [
            ("both", [String](), "INVALID_RESPONSE"), ("slow:300", ["--threshold-ms", "100"], "TIMED_OUT"), ("500", [], "UNSUCCESSFUL_HTTP_RESPONSE_CODE"),
        ])
    func fails(answer: String, extra: [String], reason: String) throws {
        let (result, summary, _) = try Self.run(answer: answer, extra)
        #expect(result.status == 1, "\(result.text) \(result.stderr)")
        #expect(summary["result"] as? String == "FAIL" && summary["succeeded"] as? Int == 0, "\(summary)")
        if extra.isEmpty { #expect(summary["responseTimeThreshold"] as? Int == 700, "Apple's threshold by default") }
        #expect((summary["failures"] as? [String: Any])?[reason] as? Int == 20, "\(summary)")
    }
}
