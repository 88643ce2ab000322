import Foundation
import ForgeTestSupport
import Testing

/// Issue 23, item 3: `forge notify` signs one notification, POSTs it as Apple does and names how the attempt ended
/// with Apple's `sendAttemptResult`. The webhook is `examples/receivers/notification_receiver.py`, which verifies
/// every payload and its nested JWS with Apple's `SignedDataVerifier` and answers by script.
@Suite("forge notify: one notification to a webhook, Apple's attempt results", .timeLimit(.minutes(2)), .requires(.appleLibrary))
struct NotifyTests {
    static let receiver = Repository.file("examples/receivers/notification_receiver.py").path

    /// A receiver answering by `script`, recording into `record`, under Apple's Python library; ready once it says
    /// where it listens.
    static func receiver(answering script: String, record: URL, bundle: String = "com.example.app", environment: String = "sandbox", app: Int? = nil) async throws
        -> BackgroundServer
    {
        var arguments = [Self.receiver, "--root", JWSCLITests.root, "--bundle-id", bundle, "--environment", environment, "--script", script]
        arguments += ["--record", record.path] + (app.map { ["--app-apple-id", String($0)] } ?? [])
        return try await BackgroundServer.start(arguments, executable: try Oracle.appleLibrary.required())
    }

    static func records(_ file: URL) -> [[String: Any]] {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
    }

    static let notification = ["--notification-type", "DID_RENEW", "--product", "pro.monthly", "--renewals", "1", "--preset", "sandbox", "--now", "2025-01-01T00:00:00Z"]

    @Test("A notification Apple's verifier accepts, delivered: SUCCESS, exit 0; --save and --replay send the same bytes again (a duplicate delivery)")
    func deliveredAndReplayed() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("record.jsonl")
        let server = try await Self.receiver(answering: "200", record: record)
        defer { server.kill() }
        let saved = directory.appendingPathComponent("n.json")
        let sent = try await forge(arguments: ["notify", server.url + "/apple"] + Self.notification + ["--save", saved.path, "--json"])
        #expect(sent.status == 0, "\(sent.stderr)")
        let attempt = try json(sent)
        #expect(attempt["sendAttemptResult"] as? String == "SUCCESS" && attempt["httpStatus"] as? Int == 200, "\(attempt)")
        #expect(attempt["notificationType"] as? String == "DID_RENEW" && attempt["attemptDate"] is Int)
        let replayed = try await forge("notify", server.url + "/apple", "--replay", saved.path)
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

    @Test("A consent-revoked timeline event, sent with --event: RESCIND_CONSENT whose appData's AppTransaction Apple's verifier accepts (issue 40)")
    func consentRevokedDelivered() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = directory.appendingPathComponent("spec.json")
        try Data(
            #"""
            {"preset": "sandbox", "bundleId": "com.example.app", "now": "2025-01-01T00:00:00Z",
             "purchases": [{"productId": "pro.monthly", "purchaseDate": "2025-01-01T00:00:00Z", "period": "P1M"}],
             "timeline": [{"event": "consent-revoked", "at": "2025-01-10T00:00:00Z"}]}
            """#.utf8
        ).write(to: spec)
        let record = directory.appendingPathComponent("record.jsonl")
        let server = try await Self.receiver(answering: "200", record: record)
        defer { server.kill() }
        let sent = try await forge("notify", server.url + "/apple", "--spec", spec.path, "--event", "1", "--json")
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(try json(sent)["notificationType"] as? String == "RESCIND_CONSENT")
        let received = Self.records(record)
        #expect(received.count == 1 && received.first?["verified"] as? Bool == true, "\(received)")
        #expect(received.first?["notificationType"] as? String == "RESCIND_CONSENT" && received.first?["appTransactionVerified"] as? Bool == true, "\(received)")
    }

    @Test(
        "Each way an attempt fails is Apple's sendAttemptResult, exit 1: UNSUCCESSFUL_HTTP_RESPONSE_CODE, TIMED_OUT, NO_RESPONSE, PREMATURE_CLOSE, INVALID_RESPONSE, CIRCULAR_REDIRECT, SOCKET_ISSUE, TLS_ISSUE",
        arguments: [
            ("500", "UNSUCCESSFUL_HTTP_RESPONSE_CODE"), ("hang", "TIMED_OUT"), ("reset", "NO_RESPONSE"), ("partial", "PREMATURE_CLOSE"),
            ("garbage", "INVALID_RESPONSE"), ("redirect", "CIRCULAR_REDIRECT"),
        ])
    func failedAttempts(script: String, result: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await Self.receiver(answering: script, record: directory.appendingPathComponent("record.jsonl"))
        defer { server.kill() }
        // Only the webhook that never answers waits out --timeout: every other answer comes at once, and a loaded
        // machine must not turn it into TIMED_OUT.
        let timeout = script == "hang" ? "2" : "60"
        let sent = try await forge(arguments: ["notify", server.url + "/apple"] + Self.notification + ["--timeout", timeout, "--json"])
        #expect(sent.status == 1, "\(sent.text) \(sent.stderr)")
        let attempt = try json(sent)
        #expect(attempt["sendAttemptResult"] as? String == result, "\(script): \(attempt)")
        if script == "hang" {
            // The attempt has a deadline, and it is --timeout's (not the default 30 s): it waited that long, and says so.
            #expect((attempt["latencyMilliseconds"] as? Int ?? 0) >= 2000, "\(attempt)")
            #expect(attempt["detail"] as? String == "no complete answer within 2 s", "\(attempt)")
        }
        if script == "500" { #expect(attempt["httpStatus"] as? Int == 500) }
    }

    @Test("A webhook that floods its answer (200, a gigabyte promised) is SUCCESS once its status is in: the first 64 KiB are read, the rest never")
    func floodedAnswer() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await Self.receiver(answering: "flood", record: directory.appendingPathComponent("record.jsonl"))
        defer { server.kill() }
        let sent = try await forge(arguments: ["notify", "http://127.0.0.1:\(server.port)/apple"] + Self.notification + ["--timeout", "30", "--json"])
        let answer = try json(sent)
        #expect(sent.status == 0 && answer["sendAttemptResult"] as? String == "SUCCESS", "\(sent.text)")
        #expect((answer["detail"] as? String)?.contains("not read to its end") == true, "\(sent.text)")
    }

    @Test("Nothing listening is SOCKET_ISSUE; https:// to a plain HTTP webhook is TLS_ISSUE; a URL that is not http(s) exits 64")
    func unreachable() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await Self.receiver(answering: "200", record: directory.appendingPathComponent("record.jsonl"))
        defer { server.kill() }
        let port = server.port
        let tls = try await forge(arguments: ["notify", "https://127.0.0.1:\(port)/apple"] + Self.notification + ["--timeout", "60", "--json"])
        #expect(try json(tls)["sendAttemptResult"] as? String == "TLS_ISSUE", "\(tls.text)")
        await server.stop()
        let closed = try await forge(arguments: ["notify", "http://127.0.0.1:\(port)/apple"] + Self.notification + ["--timeout", "60", "--json"])
        let refused = try json(closed)
        #expect(closed.status == 1 && refused["sendAttemptResult"] as? String == "SOCKET_ISSUE", "\(closed.text)")
        let bad = try await forge(arguments: ["notify", "ftp://example.test/"] + Self.notification)
        #expect(bad.status == 64 && bad.stderr.contains("not an http:// or https:// URL"), "\(bad.stderr)")
    }
}
