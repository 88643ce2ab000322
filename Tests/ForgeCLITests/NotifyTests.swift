import Foundation
import ForgeTestSupport
import Testing

/// Issue 23, item 3: `forge notify` signs one notification, POSTs it as Apple does and names how the attempt ended
/// with Apple's `sendAttemptResult`. The webhook is `examples/receivers/notification_receiver.py`, which verifies
/// every payload and its nested JWS with Apple's `SignedDataVerifier` and answers by script.
@Suite(
    "forge notify: one notification to a webhook, Apple's attempt results", .timeLimit(.minutes(10)),
    .enabled(if: FileManager.default.isExecutableFile(atPath: ServerAPITests.python.path), "Apple's Python library is absent: .ci/run installs .oracles/asl")
)
struct NotifyTests {
    static let receiver = repositoryRoot.appendingPathComponent("examples/receivers/notification_receiver.py").path

    /// A receiver answering by `script`, recording into `record`.
    static func receiver(_ script: String, record: URL, bundle: String = "com.example.app", environment: String = "sandbox", app: Int? = nil) throws
        -> BlockingServer
    {
        var arguments = [Self.receiver, "--root", ServerAPITests.jwsRoot, "--bundle-id", bundle, "--environment", environment, "--script", script]
        arguments += ["--record", record.path] + (app.map { ["--app-apple-id", String($0)] } ?? [])
        return try BlockingServer(ServerAPITests.python, arguments)
    }

    static func records(_ file: URL) -> [[String: Any]] {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
    }

    static let notification = ["--notification-type", "DID_RENEW", "--product", "pro.monthly", "--renewals", "1", "--preset", "sandbox", "--now", "2025-01-01T00:00:00Z"]

    @Test("A notification Apple's verifier accepts, delivered: SUCCESS, exit 0; --save and --replay send the same bytes again (a duplicate delivery)")
    func deliveredAndReplayed() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("record.jsonl")
        let server = try Self.receiver("200", record: record)
        defer { server.stop() }
        let saved = directory.appendingPathComponent("n.json")
        let sent = try forgeBlocking(arguments: ["notify", server.url + "/apple"] + Self.notification + ["--save", saved.path, "--json"])
        #expect(sent.status == 0, "\(sent.stderr)")
        let attempt = try json(sent)
        #expect(attempt["sendAttemptResult"] as? String == "SUCCESS" && attempt["httpStatus"] as? Int == 200, "\(attempt)")
        #expect(attempt["notificationType"] as? String == "DID_RENEW" && attempt["attemptDate"] is Int)
        let replayed = try forgeBlocking("notify", server.url + "/apple", "--replay", saved.path)
        #expect(replayed.status == 0 && replayed.text.hasPrefix("SUCCESS  HTTP 200  "), "\(replayed.text) \(replayed.stderr)")
        let received = Self.records(record)
        #expect(received.count == 2 && received.allSatisfy { $0["verified"] as? Bool == true }, "\(received)")
        #expect(received.first?["notificationType"] as? String == "DID_RENEW" && received.first?["contentType"] as? String == "application/json")
        #expect(received.first?["members"] as? [String] == ["signedPayload"], "Apple's body holds signedPayload and nothing else")
        #expect(received[0]["sha256"] as? String == received[1]["sha256"] as? String, "the replay is byte for byte")
        #expect(received[0]["notificationUUID"] as? String == received[1]["notificationUUID"] as? String)
        let body = try Data(contentsOf: saved)
        #expect((try JSONSerialization.jsonObject(with: body) as? [String: Any])?.keys.sorted() == ["signedPayload"])
    }

    @Test(
        "Each way an attempt fails is Apple's sendAttemptResult, exit 1: UNSUCCESSFUL_HTTP_RESPONSE_CODE, TIMED_OUT, NO_RESPONSE, PREMATURE_CLOSE, INVALID_RESPONSE, CIRCULAR_REDIRECT, SOCKET_ISSUE, TLS_ISSUE",
        arguments: [
            ("500", "UNSUCCESSFUL_HTTP_RESPONSE_CODE"), ("hang", "TIMED_OUT"), ("reset", "NO_RESPONSE"), ("partial", "PREMATURE_CLOSE"),
            ("garbage", "INVALID_RESPONSE"), ("redirect", "CIRCULAR_REDIRECT"),
        ])
    func failedAttempts(script: String, result: String) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try Self.receiver(script, record: directory.appendingPathComponent("record.jsonl"))
        defer { server.stop() }
        let started = Date()
        let sent = try forgeBlocking(arguments: ["notify", server.url + "/apple"] + Self.notification + ["--timeout", "2", "--json"])
        #expect(sent.status == 1, "\(sent.text) \(sent.stderr)")
        let attempt = try json(sent)
        #expect(attempt["sendAttemptResult"] as? String == result, "\(script): \(attempt)")
        #expect(Date().timeIntervalSince(started) < 20, "the attempt has a deadline")
        if script == "500" { #expect(attempt["httpStatus"] as? Int == 500) }
    }

    @Test("A webhook that floods its answer (200, a gigabyte promised) is SUCCESS once its status is in: the first 64 KiB are read, the rest never")
    func floodedAnswer() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try Self.receiver("flood", record: directory.appendingPathComponent("record.jsonl"))
        defer { server.stop() }
        let sent = try forgeBlocking(arguments: ["notify", "http://127.0.0.1:\(server.port)/apple"] + Self.notification + ["--timeout", "30", "--json"])
        let answer = try json(sent)
        #expect(sent.status == 0 && answer["sendAttemptResult"] as? String == "SUCCESS", "\(sent.text)")
        #expect((answer["detail"] as? String)?.contains("not read to its end") == true, "\(sent.text)")
    }

    @Test("Nothing listening is SOCKET_ISSUE; https:// to a plain HTTP webhook is TLS_ISSUE; a URL that is not http(s) exits 64")
    func unreachable() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try Self.receiver("200", record: directory.appendingPathComponent("record.jsonl"))
        let port = server.port
        let tls = try forgeBlocking(arguments: ["notify", "https://127.0.0.1:\(port)/apple"] + Self.notification + ["--timeout", "5", "--json"])
        #expect(try json(tls)["sendAttemptResult"] as? String == "TLS_ISSUE", "\(tls.text)")
        server.stop()
        let closed = try forgeBlocking(arguments: ["notify", "http://127.0.0.1:\(port)/apple"] + Self.notification + ["--timeout", "5", "--json"])
        let refused = try json(closed)
        #expect(closed.status == 1 && refused["sendAttemptResult"] as? String == "SOCKET_ISSUE", "\(closed.text)")
        let bad = try forgeBlocking(arguments: ["notify", "ftp://example.test/"] + Self.notification)
        #expect(bad.status == 64 && bad.stderr.contains("not an http:// or https:// URL"), "\(bad.stderr)")
    }
}
