import Foundation
import ForgeTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The system's Python, for test webhooks written into a test's folder.
let systemPython = URL(fileURLWithPath: "/usr/bin/python3")

/// Issue 36, item 2: a port outside 1-65535 trapped in NIO (SIGILL). A webhook answering `307 Location:
/// http://127.0.0.1:70000/x` killed `forge serve`, and with `--state` the pending delivery killed every restart;
/// `forge notify`, `forge bench realtime` and `forge run --target` trapped on such a URL given to them. Every URL a
/// user or a peer gives is now checked where it is read. Item 16: a webhook off this machine is warned about.
@Suite(
    "A port outside 1-65535, from the command line or a webhook's redirect, is refused, never a trap", .timeLimit(.minutes(2)),
    .enabled(if: FileManager.default.isExecutableFile(atPath: systemPython.path), "python3 is absent: the test webhook is a Python script")
)
struct WebhookPortTests {
    static let python = systemPython

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

    @Test("A webhook redirecting to port 70000: the attempt fails (OTHER) and forge serve stays up; restarted on the same --state, it serves and retries")
    func redirectToBadPort() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("hook.py"), scenario = directory.appendingPathComponent("customer.json")
        try Data(Self.redirectingWebhook.utf8).write(to: script)
        try Data(Self.customer.utf8).write(to: scenario)
        let hook = try await Spawned(Self.python, [script.path, "http://127.0.0.1:70000/x"], stderr: directory.appendingPathComponent("hook.err"))
        defer { hook.kill() }
        let arguments = [
            "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-14T00:00:00Z", "--scenario", scenario.path, "--notify",
            "http://127.0.0.1:\(hook.port)/apple", "--state", directory.appendingPathComponent("state.db").path,
        ]
        let first = try await Spawned(forgeBinary, arguments, stderr: directory.appendingPathComponent("serve1.err"))
        defer { first.kill() }
        _ = try await Self.post(first.url + "/_forge/clock", #"{"now":"2025-01-16T00:00:00Z"}"#)
        let attempts = await Self.attempts(first.url, count: 1)
        #expect(attempts == ["OTHER"], "the redirect is a failed attempt: \(attempts); forge serve: \(first.stderr)")
        #expect(first.isRunning, "forge serve is up: \(first.stderr)")
        #expect(try await Self.get(first.url + "/_forge/clock") == 200, "and answers")
        await first.stop()

        // The delivery is pending in the file; the retry comes an hour after the first attempt.
        let second = try await Spawned(forgeBinary, arguments, stderr: directory.appendingPathComponent("serve2.err"))
        defer { second.kill() }
        _ = try await Self.post(second.url + "/_forge/clock", #"{"advance":7200}"#)
        let retried = await Self.attempts(second.url, count: 2)
        #expect(retried == ["OTHER", "OTHER"], "the retry fails the same way: \(retried); forge serve: \(second.stderr)")
        #expect(second.isRunning, "the restarted server is up: \(second.stderr)")
        #expect(try await Self.get(second.url + "/_forge/clock") == 200, "and answers")
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
    func commandLinePorts(arguments: [String], port: String) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A server that took the URL would run on: killed, it fails the test rather than holding it.
        let result = try runBlocking(forgeBinary, arguments, in: directory, killAfter: 30)
        #expect(result.exited && result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").first?.contains("the port must be from 1 to 65535, not \(port)") == true, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing written")
    }

    @Test("A webhook off this machine is warned about at start, as --listen off loopback is; a loopback one is not")
    func nonLoopbackWebhookWarned() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // No customer: nothing is due, so nothing is sent to 192.0.2.1 (TEST-NET-1, never routed).
        let server = try await Spawned(
            forgeBinary, ["serve", "--listen", "127.0.0.1:0", "--no-auth", "--notify", "http://localhost:9/p", "--notify-sandbox", "http://192.0.2.1:9/s"],
            stderr: directory.appendingPathComponent("serve.err"))
        defer { server.kill() }
        let deadline = ContinuousClock.now + .seconds(20)
        while !server.stderr.contains("--notify-sandbox"), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let warnings = server.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(
            warnings == [
                "forge: warning: --notify-sandbox http://192.0.2.1:9/s is not loopback: every notification, signed by the TEST PKI, is sent off this machine to whoever answers there"
            ], "\(server.stderr)")
    }

    // MARK: - Support

    static func post(_ url: String, _ body: String) async throws -> [String: Any] {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    static func get(_ url: String) async throws -> Int {
        let (_, response) = try await URLSession.shared.data(from: try #require(URL(string: url)))
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// The renewal's `sendAttemptResult`s in Get Notification History, once there are `count` (or after 30 s).
    static func attempts(_ base: String, count: Int) async -> [String] {
        let deadline = ContinuousClock.now + .seconds(30)
        var results: [String] = []
        while ContinuousClock.now < deadline {
            let history = try? await post(base + "/inApps/v1/notifications/history", #"{"startDate":1736812800000,"endDate":1737158400000}"#)
            let items = history?["notificationHistory"] as? [[String: Any]] ?? []
            results = (items.first?["sendAttempts"] as? [[String: Any]] ?? []).compactMap { $0["sendAttemptResult"] as? String }
            if results.count >= count { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return results
    }
}

/// A child process for a test: its port from the first stdout line that names one, its stderr in a file of the
/// test's folder, and its end awaited without blocking a thread.
final class Spawned: @unchecked Sendable {
    private let process = Process()
    let port: Int
    private let stderrFile: URL
    private let ending = Waiters()

    init(_ executable: URL, _ arguments: [String], stderr: URL) async throws {
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        FileManager.default.createFile(atPath: stderr.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: stderr)
        let ending = ending
        process.terminationHandler = { _ in ending.finish() }
        try process.run()
        stderrFile = stderr
        let line = await Self.firstLine(output.fileHandleForReading, within: .seconds(30))
        guard let match = line.firstMatch(of: /:(\d+)/), let port = Int(match.1) else {
            process.terminate()
            throw BlockingServer.ServerDidNotStart(firstLine: line)
        }
        self.port = port
    }

    var url: String { "http://127.0.0.1:\(port)" }
    var isRunning: Bool { !ending.isDone }
    var stderr: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// SIGKILL, not awaited (for `defer`).
    func kill() { if isRunning { Foundation.kill(process.processIdentifier, SIGKILL) } }

    /// SIGKILL, and its end.
    func stop() async {
        kill()
        await ending.wait()
    }

    /// Continuations resumed once something is done: at once for those that come later.
    final class Waiters: Sendable {
        private let state = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        var isDone: Bool { state.withLock { $0.done } }

        func finish() {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.done = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        func wait() async {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state -> Bool in
                    if !state.done { state.waiters.append(continuation) }
                    return state.done
                }
                if done { continuation.resume() }
            }
        }
    }

    /// What `handle` gives up to its first line end, or up to its close or `limit`.
    final class LineReader: Sendable {
        private let state = Mutex<(bytes: [UInt8], continuation: CheckedContinuation<String, Never>?)>(([], nil))

        func start(_ continuation: CheckedContinuation<String, Never>) { state.withLock { $0.continuation = continuation } }

        /// Adds `data` (empty: the end); true once the line is complete.
        func add(_ data: Data) -> Bool {
            state.withLock { state in
                state.bytes += data
                return data.isEmpty || state.bytes.contains(0x0A)
            }
        }

        func finish() {
            let resumed = state.withLock { state -> (CheckedContinuation<String, Never>, String)? in
                guard let continuation = state.continuation else { return nil }
                state.continuation = nil
                return (continuation, String(decoding: state.bytes.prefix { $0 != 0x0A }, as: UTF8.self))
            }
            if let (continuation, line) = resumed { continuation.resume(returning: line) }
        }
    }

    private static func firstLine(_ handle: FileHandle, within limit: Duration) async -> String {
        let reader = LineReader()
        let line = await withCheckedContinuation { continuation in
            reader.start(continuation)
            handle.readabilityHandler = { handle in
                if reader.add(handle.availableData) { reader.finish() }
            }
            Task {
                try? await Task.sleep(for: limit)
                reader.finish()
            }
        }
        handle.readabilityHandler = nil
        return line
    }
}
