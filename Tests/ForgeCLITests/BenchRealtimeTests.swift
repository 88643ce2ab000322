import Foundation
import ForgeTestSupport
import Testing

/// Issue 23, item 4: `forge bench realtime`, Apple's Retention Messaging performance test run locally. The endpoint
/// is `examples/receivers/realtime_endpoint.py`, which verifies every request with Apple's `SignedDataVerifier`
/// (`verify_and_decode_realtime_request`) and answers as told. Every outcome but TIMED_OUT is judged under
/// thresholds no loaded machine reaches, so only the endpoint's answer decides it.
@Suite("forge bench realtime: a Retention Messaging endpoint under load, PASS or FAIL", .timeLimit(.minutes(2)), .requires(.appleLibrary))
struct BenchRealtimeTests {
    static let endpoint = Repository.file("examples/receivers/realtime_endpoint.py").path

    /// 20 requests, 4 at a time, to an endpoint answering `answer`: forge's result, its summary and the endpoint's records.
    static func bench(answer: String, _ extra: [String] = []) async throws -> (result: RunResult, summary: [String: Any], records: [[String: Any]]) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("record.jsonl")
        let server = try await BackgroundServer.start(
            [Self.endpoint, "--root", JWSCLITests.root, "--bundle-id", "com.example.app", "--answer", answer, "--record", record.path],
            executable: try Oracle.appleLibrary.required())
        defer { server.kill() }
        let result = try await forge(
            arguments: [
                "bench", "realtime", server.url + "/retention", "--product", "pro.monthly", "--type", "auto-renewable", "--preset", "sandbox",
                "--requests", "20", "--concurrency", "4", "--json",
            ] + extra)
        let summary = (try? JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]) ?? [:]
        // The endpoint records each request before it answers: every record is in once forge has its answers.
        let text = (try? String(contentsOf: record, encoding: .utf8)) ?? ""
        let records = text.split(separator: "\n").map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
        return (result, summary, records)
    }

    /// A threshold and a request timeout of a minute: the Python endpoint verifies each request, and CI's machine is shared.
    static let patient = ["--threshold-ms", "60000", "--timeout", "60"]

    @Test("An endpoint that answers a message in time passes: every request verified by Apple's library, each its own requestIdentifier")
    func passes() async throws {
        let (result, summary, records) = try await Self.bench(answer: "message", Self.patient)
        #expect(result.status == 0, "\(result.text) \(result.stderr)")
        #expect(summary["result"] as? String == "PASS" && summary["succeeded"] as? Int == 20 && summary["responseTimeThreshold"] as? Int == 60000, "\(summary)")
        #expect(summary["p99"] is Int && (summary["failures"] as? [String: Any])?.isEmpty == true)
        #expect(records.count == 20 && records.allSatisfy { $0["verified"] as? Bool == true }, "\(records.prefix(2))")
        #expect(Set(records.compactMap { $0["requestIdentifier"] as? String }).count == 20)
    }

    /// An answer later than the threshold is TIMED_OUT before its body is judged, so INVALID_RESPONSE is asked of a
    /// patient bench; the endpoint's 300 ms sleep is always over a 100 ms threshold, however fast the machine.
    @Test(
        "It fails, exit 1, naming why: two answers at once are not a RealtimeResponseBody (INVALID_RESPONSE), an answer over the threshold is TIMED_OUT, HTTP 500 UNSUCCESSFUL_HTTP_RESPONSE_CODE",
        arguments: [
            ("both", BenchRealtimeTests.patient, "INVALID_RESPONSE"), ("slow:300", ["--threshold-ms", "100"], "TIMED_OUT"),
            ("500", ["--timeout", "60"], "UNSUCCESSFUL_HTTP_RESPONSE_CODE"),
        ])
    func fails(answer: String, extra: [String], reason: String) async throws {
        let (result, summary, _) = try await Self.bench(answer: answer, extra)
        #expect(result.status == 1, "\(result.text) \(result.stderr)")
        #expect(summary["result"] as? String == "FAIL" && summary["succeeded"] as? Int == 0, "\(summary)")
        if !extra.contains("--threshold-ms") { #expect(summary["responseTimeThreshold"] as? Int == 700, "Apple's threshold by default") }
        #expect((summary["failures"] as? [String: Any])?[reason] as? Int == 20, "\(summary)")
    }
}
