import Foundation
import ForgeTestSupport
import Testing

/// Issue 36, item 2: a port outside 1-65535 trapped in NIO (SIGILL). A webhook answering `307 Location:
/// http://127.0.0.1:70000/x` killed `forge serve`, and with `--state` the pending delivery killed every restart;
/// `forge notify`, `forge bench realtime` and `forge run --target` trapped on such a URL given to them. Every URL a
/// user or a peer gives is now checked where it is read. Item 16: a webhook off this machine is warned about.
@Suite("A port outside 1-65535, from the command line or a webhook's redirect, is refused, never a trap", .timeLimit(.minutes(2)))
struct WebhookPortTests {
    /// A webhook that answers every POST with a redirect to `location`, and says where it listens on its first line.
    static let redirectingWebhook = #"""
        import http.server, sys
        class Hook(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(307)
                self.send_header("Location", sys.argv[1])
                self.send_header("Content-Length", "0")
                self.end_headers()
            def log_message(self, *arguments):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
        print(f"listening http://127.0.0.1:{server.server_address[1]}/", flush=True)
        server.serve_forever()
        """#

    /// A notification `forge notify` can sign: what it would send, were the URL good.
    static let notification = ["--notification-type", "DID_RENEW", "--product", "pro.monthly", "--renewals", "1", "--preset", "sandbox", "--now", "2025-01-01T00:00:00Z"]

    /// A production customer whose monthly subscription renews once, on 2025-01-15T00:00:00Z.
    static let customer = #"""
        {"bundleId": "com.example.prod", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-12-15T00:00:00Z", "period": "P1M"}],
         "timeline": [{"event": "renew", "productId": "pro.monthly", "count": 1}]}
        """#

    @Test(
        "A webhook redirecting to port 70000: the attempt fails (OTHER) and forge serve stays up; restarted on the same --state, it serves and retries",
        .requires(.python))
    func redirectToBadPort() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("hook.py"), scenario = directory.appendingPathComponent("customer.json")
        try Data(Self.redirectingWebhook.utf8).write(to: script)
        try Data(Self.customer.utf8).write(to: scenario)
        let hook = try await BackgroundServer.start([script.path, "http://127.0.0.1:70000/x"], executable: try Oracle.python.required())
        defer { hook.kill() }
        let arguments = [
            "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-14T00:00:00Z", "--scenario", scenario.path, "--notify",
            "http://127.0.0.1:\(hook.port)/apple", "--state", directory.appendingPathComponent("state.db").path,
        ]
        let first = try await BackgroundServer.start(arguments)
        defer { first.kill() }
        #expect(try await post(first.url + "/_forge/clock", json: #"{"now":"2025-01-16T00:00:00Z"}"#).status == 200)
        let attempts = try await Self.attempts(first.url, count: 1)
        #expect(attempts == ["OTHER"], "the redirect is a failed attempt: \(attempts); forge serve: \(first.stderr)")
        #expect(await !first.waitForExit(within: .zero), "forge serve is up: \(first.stderr)")
        #expect(try await request(first.url + "/_forge/clock").status == 200, "and answers")
        await first.stop()

        // The delivery is pending in the file; the retry comes an hour after the first attempt.
        let second = try await BackgroundServer.start(arguments)
        defer { second.kill() }
        #expect(try await post(second.url + "/_forge/clock", json: #"{"advance":7200}"#).status == 200)
        let retried = try await Self.attempts(second.url, count: 2)
        #expect(retried == ["OTHER", "OTHER"], "the retry fails the same way: \(retried); forge serve: \(second.stderr)")
        #expect(await !second.waitForExit(within: .zero), "the restarted server is up: \(second.stderr)")
        #expect(try await request(second.url + "/_forge/clock").status == 200, "and answers")
    }

    @Test(
        "A port outside 1-65535 on the command line exits 64 with one line naming it: notify, bench realtime, run --target, serve --notify, ca init --ocsp-url",
        arguments: [
            (["notify", "http://127.0.0.1:65536/x"] + WebhookPortTests.notification, "65536"),
            (["bench", "realtime", "http://127.0.0.1:65536/r", "--product", "pro.monthly", "--type", "auto-renewable", "--preset", "sandbox"], "65536"),
            (["run", "--target", "http://127.0.0.1:65536"], "65536"), (["serve", "--listen", "127.0.0.1:0", "--notify", "http://127.0.0.1:70000/x"], "70000"),
            (["serve", "--listen", "127.0.0.1:0", "--notify-sandbox", "http://127.0.0.1:0/x"], "0"),
            (["notify", "http://127.0.0.1:99999999999999999999/x"] + WebhookPortTests.notification, "99999999999999999999"),
            (["ca", "init", "--jws", "--ocsp-url", "http://127.0.0.1:65536/ocsp", "--out", "pki"], "65536"),
        ])
    func commandLinePorts(arguments: [String], port: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A server that took the URL would run on: killed, it fails the test rather than holding it.
        let result = try await run(Binaries.forge, arguments, in: directory, killAfter: .seconds(30))
        #expect(result.exited && result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").first?.contains("the port must be from 1 to 65535, not \(port)") == true, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing written")
    }

    @Test("A webhook off this machine is warned about at start, as --listen off loopback is; a loopback one is not")
    func nonLoopbackWebhookWarned() async throws {
        // No customer: nothing is due, so nothing is sent to 192.0.2.1 (TEST-NET-1, never routed).
        let server = try await BackgroundServer.start([
            "serve", "--listen", "127.0.0.1:0", "--no-auth", "--notify", "http://localhost:9/p", "--notify-sandbox", "http://192.0.2.1:9/s",
        ])
        defer { server.kill() }
        // The warnings are said once, production's before the sandbox's: once the sandbox's is in, any about --notify would be too.
        try await eventually("the warning about --notify-sandbox", within: .seconds(30)) { server.stderr.contains("--notify-sandbox") }
        let warnings = server.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(
            warnings == [
                "forge: warning: --notify-sandbox http://192.0.2.1:9/s is not loopback: every notification, signed by the TEST PKI, is sent off this machine to whoever answers there"
            ], "\(server.stderr)")
    }

    // MARK: - Support

    /// The renewal's `sendAttemptResult`s in Get Notification History, once there are `count`: the server's own record.
    static func attempts(_ base: String, count: Int) async throws -> [String] {
        var results: [String] = []
        try await eventually("\(count) send attempt(s) in the notification history", within: .seconds(60), every: .milliseconds(50)) {
            let history = try await post(base + "/inApps/v1/notifications/history", json: #"{"startDate":1736812800000,"endDate":1737158400000}"#).json()
            let items = history["notificationHistory"] as? [[String: Any]] ?? []
            results = (items.first?["sendAttempts"] as? [[String: Any]] ?? []).compactMap { $0["sendAttemptResult"] as? String }
            return results.count >= count
        }
        return results
    }
}
