import Foundation
import ForgeTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `forge serve` through the built binary over real sockets on 127.0.0.1: the command's contract (the URLs it prints,
/// bad flags and files, SIGTERM), one smoke test of both endpoints, the request log and the Server API, a real
/// Python `requests` client over HTTP and HTTPS, the runner over the whole corpus, and `--time-rate` against the wall
/// clock (the one test that reads it). What the server answers —
/// every status code, the decoded shape, histories, faults, the seeded percentages — is proven in process:
/// `VerifyReceiptServeTests`.
@Suite("forge serve", .timeLimit(.minutes(2)))
struct ServeCLITests {
    static let clock = "2025-04-01T00:00:00Z"

    /// A scratch directory with the receipts the tests send, made by `forge make`.
    struct Fixture {
        let directory: URL
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func base64(_ name: String) throws -> String { try Data(contentsOf: directory.appendingPathComponent(name)).base64EncodedString() }

        static func make() async throws -> Fixture {
            let fixture = Fixture(directory: try temporaryDirectory())
            let now = "2025-01-01T00:00:00Z"
            for (name, arguments) in [
                ("production-sub.der", ["--product", "pro.yearly", "--renewals", "1", "--period", "P1Y", "--now", now]),
                ("sandbox-sub.der", ["--preset", "sandbox", "--product", "pro.monthly", "--renewals", "3", "--now", now]),
                ("production-nonconsumable.der", ["--product", "lifetime", "--type", "non-consumable", "--now", now]),
            ] {
                let made = try await forge(arguments: ["make", "-q", "-o", fixture.path(name)] + arguments)
                #expect(made.status == 0, "\(name): \(made.stderr)")
            }
            return fixture
        }

        func close() { try? FileManager.default.removeItem(at: directory) }
    }

    static func start(_ arguments: [String]) async throws -> BackgroundServer {
        try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--now", clock] + arguments)
    }

    /// verifyReceipt's answer as JSON (HTTP 200 required).
    static func verify(_ url: String, _ body: [String: Any]) async throws -> [String: Any] {
        let answer = try await post(url, json: String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self))
        #expect(answer.status == 200)
        return try answer.json()
    }

    @Test(
        "Smoke, over a socket: the first line names the production URL; a receipt is answered there and a sandbox one at /sandbox/verifyReceipt, a subscription with --shared-secret; the Server API answers; GET /_forge/log lists the requests"
    )
    func smoke() async throws {
        let fixture = try await Fixture.make()
        defer { fixture.close() }
        let server = try await Self.start(["--shared-secret", "s3cret", "--no-auth", "--scenario", Repository.file("examples/server-api/sandbox-customer.json").path])
        defer { server.kill() }
        let production = try #require(server.firstLine.firstMatch(of: /^production +(http:\/\/127\.0\.0\.1:\d+\/verifyReceipt)$/)?.1, "\(server.firstLine)")
        #expect(String(production) == server.url + "/verifyReceipt")
        let answer = try await Self.verify(String(production), ["receipt-data": try fixture.base64("production-nonconsumable.der")])
        #expect(answer["status"] as? Int == 0 && answer["environment"] as? String == "Production", "\(answer)")
        let subscription = try await Self.verify(String(production), ["receipt-data": try fixture.base64("production-sub.der"), "password": "s3cret"])
        #expect(subscription["status"] as? Int == 0, "\(subscription)")
        let sandbox = try await Self.verify(server.url + "/sandbox/verifyReceipt", ["receipt-data": try fixture.base64("sandbox-sub.der"), "password": "s3cret"])
        #expect(sandbox["status"] as? Int == 0 && sandbox["environment"] as? String == "Sandbox", "\(sandbox)")
        // 2025-03-05 to the server's clock: within the sandbox's 30 days.
        let history = try await post(server.url + "/sandbox/inApps/v1/notifications/history", json: #"{"startDate":1741132800000,"endDate":1743465600000}"#)
        let listed = try history.json()["notificationHistory"] as? [Any]
        #expect(history.status == 200 && listed != nil, "\(history.text)")
        let log = try await ForgeTestSupport.request(server.url + "/_forge/log")
        let entries = log.text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(entries.map { $0["endpoint"] as? String } == ["production", "production", "sandbox", "notificationHistory"], "\(log.text)")
        #expect(entries.prefix(3).map { $0["password"] as? String } == ["absent", "matches", "matches"], "never the secret itself")
    }

    @Test(
        "Python requests, calling as Apple says (production, then sandbox on 21007; retry when temporary), over HTTP and HTTPS with the TEST root trusted",
        .requires(.requests))
    func pythonClient() async throws {
        let python = try Oracle.requests.required()
        let fixture = try await Fixture.make()
        defer { fixture.close() }
        let client = Repository.file("examples/clients/verify_receipt_client.py").path
        func call(_ base: String, _ receipt: String, _ extra: [String] = []) async throws -> (Int32, [String: Any]) {
            let result = try await run(python, [client, base, fixture.path(receipt)] + extra)
            return (result.status, try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.stderr)"))
        }
        let server = try await Self.start(["--fault", "production:status=21005,count=1"])
        defer { server.kill() }
        let (retried, retriedResult) = try await call(server.url, "production-nonconsumable.der")
        #expect(retried == 0 && retriedResult["tried"] as? [String] == ["/verifyReceipt", "/verifyReceipt"])
        let (routed, routedResult) = try await call(server.url, "sandbox-sub.der")
        #expect(routed == 0 && routedResult["tried"] as? [String] == ["/verifyReceipt", "/sandbox/verifyReceipt"])
        for fault in ["production:http=503,count=1", "production:close,count=1", "production:not-json,count=1"] {
            #expect(try await post(server.url + "/_forge/faults", json: fault).status == 201, "\(fault)")
            let (failed, failedResult) = try await call(server.url, "production-nonconsumable.der")
            #expect(failed == 2 && failedResult["status"] is NSNull, "\(fault): \(failedResult)")
        }

        let secure = try await Self.start(["--tls"])
        defer { secure.kill() }
        let base = "https://127.0.0.1:\(secure.port)"
        let (trusted, trustedResult) = try await call(base, "production-nonconsumable.der", ["--ca", Repository.certificate("root.pem")])
        #expect(trusted == 0, "\(trustedResult)")
        let (untrusted, _) = try await call(base, "production-nonconsumable.der", ["--ca", Repository.certificate("foreign-root.pem")])
        #expect(untrusted == 2)
    }

    @Test("The runner's --mapping verifyreceipt over the whole corpus: forge serve judges every vector as the reference validator does")
    func runnerMapping() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0"])
        defer { server.kill() }
        try await withTemporaryDirectory { directory in
            let results = directory.appendingPathComponent("results.json")
            let outcome = try await run(
                Binaries.forge,
                [
                    "run", "--target", server.url + "/verifyReceipt", "--mapping", "verifyreceipt", "--profile", "apple-compatible", "--vectors", Repository.vectors.path,
                    "--results", results.path, "--quiet",
                ], deadline: .seconds(110))
            #expect(outcome.status == 0, "\(outcome.text)\(outcome.stderr)")
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])
            let rows = try #require(parsed["results"] as? [[String: Any]])
            // A mapping declares no artefacts: the receipts, all of them (verifyReceipt has no JWS).
            #expect(rows.count == corpusReceiptCount && rows.allSatisfy(agrees))
        }
    }

    /// The one test of `--time-rate` (every other test pins `--now` and moves the clock with `POST /_forge/clock`): the
    /// server clock is read twice, a second apart, and what it ran is checked against the bounds the test's own clock
    /// sets around the two readings. A slower machine (a late answer, a long sleep) only widens the bounds: it can make
    /// the test pass, never fail.
    @Test("--time-rate 3600: the server clock runs an hour for each second of the wall's, from --now")
    func timeRate() async throws {
        let rate = 3600.0
        let server = try await Self.start(["--time-rate", "3600"])
        defer { server.kill() }
        let parser = ISO8601DateFormatter()
        /// The server clock, and the wall clock just before the request and just after its answer.
        func reading() async throws -> (sent: Date, clock: Date, answered: Date) {
            let sent = Date()
            let answer = try await ForgeTestSupport.request(server.url + "/_forge/clock")
            let answered = Date()
            let now = try #require(try answer.json()["now"] as? String, "\(answer.text)")
            return (sent, try #require(parser.date(from: now), "\(now)"), answered)
        }
        let first = try await reading()
        // From --now on, never before it.
        #expect(first.clock >= (parser.date(from: Self.clock) ?? .distantFuture), "\(first.clock)")
        try await Task.sleep(for: .seconds(1))  // time passing is what is tested
        let second = try await reading()
        let ran = second.clock.timeIntervalSince(first.clock)
        // Each reading was taken between its `sent` and `answered`, and is whole seconds (a second either way).
        let least = second.sent.timeIntervalSince(first.answered) * rate - 1
        let most = second.answered.timeIntervalSince(first.sent) * rate + 1
        #expect(ran >= least && ran <= most, "the clock ran \(ran) s; at \(rate)× between readings it runs \(least)…\(most) s")
        #expect(ran >= 3600 - 1, "a second of sleep is at least an hour of the server's")
    }

    @Test("Bad flags and files are refused with Apple-free errors; SIGTERM stops the server cleanly (exit 0)")
    func lifecycle() async throws {
        try await withTemporaryDirectory { directory in
            let badFault = try await forge("serve", "--fault", "production:status=200")
            #expect(badFault.status == 64 && badFault.stderr.contains("status 200"), "\(badFault.stderr)")
            let spec = directory.appendingPathComponent("no-now.json")
            try #"{"purchases": [{"productId": "p", "period": "P1M"}]}"#.write(to: spec, atomically: true, encoding: .utf8)
            let noNow = try await run(Binaries.forge, ["serve", "--listen", "127.0.0.1:0", "--scenario", spec.path], killAfter: .seconds(30))
            #expect(noNow.exited && noNow.status == 65 && noNow.stderr.contains("needs 'now'"), "\(noNow.stderr)")
        }
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0"])
        defer { server.kill() }
        server.signal(SIGTERM)
        #expect(await server.waitForExit(within: .seconds(10)), "SIGTERM did not stop the server")
        #expect(server.exitedNormally() && server.status() == 0, "\(server.stderr)")
    }
}

extension ServeCLITests {
    @Test("--stop-at-stdin-eof: once stdin ends (a parent gone) the server stops as at SIGTERM and exits 0")
    func stopsAtEndOfStdin() async throws {
        let ran = try await run(Binaries.forgeHTTP, ["serve", "--listen", "127.0.0.1:0", "--now", Self.clock, "--stop-at-stdin-eof"], stdin: Data(), deadline: .seconds(60))
        #expect(ran.status == 0 && ran.exited, "exit \(ran.status): \(ran.stderr)")
        #expect(ran.text.hasPrefix("production  http://127.0.0.1:"), "\(ran.text)")
    }
}

extension ServeCLITests {
    /// Whether `pid` has ended: gone, or a zombie its new parent has not reaped yet (a container's init may never).
    static func ended(_ pid: pid_t) -> Bool {
        if kill(pid, 0) != 0 { return errno == ESRCH }
        #if os(Linux)
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        #else
            return false
        #endif
    }

    @Test("--exit-with-parent: a parent killed with SIGKILL (no cleanup, no pipe closed by hand) takes the server with it; it stops as at SIGTERM")
    func exitsWithParent() async throws {
        try await withTemporaryDirectory { directory in
            // The parent: a shell that starts the server in the background, waits for its first line and dies at once.
            let script =
                #"mkfifo "$1/ready"; "$0" serve --listen 127.0.0.1:0 --now "$2" --exit-with-parent >"$1/ready" 2>"$1/stderr" & echo $!; read line <"$1/ready"; echo "$line"; kill -9 $$"#
            let parent = try await run(URL(fileURLWithPath: "/bin/sh"), ["-c", script, Binaries.forge.path, directory.path, Self.clock], deadline: .seconds(60))
            let said = parent.text.split(separator: "\n")
            let pid = try #require(said.first.flatMap { pid_t($0) }, "\(parent.text) \(parent.stderr)")
            defer { if !Self.ended(pid) { kill(pid, SIGKILL) } }
            #expect(said.dropFirst().first?.hasPrefix("production  http://127.0.0.1:") == true, "\(parent.text)")
            try await eventually("forge serve \(pid) ended after its parent", within: .seconds(20)) { Self.ended(pid) }
            let stderr = (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
            #expect(!stderr.contains("error"), "\(stderr)")
        }
    }

    @Test(
        "--ready-json: the one stdout line is JSON naming the port, each environment's URLs, the control URL, the keys and, with --export-roots, the TEST roots written there; with --tls every URL is https and the TLS root is named"
    )
    func readyJSON() async throws {
        try await withTemporaryDirectory { directory in
            let keys = try await forge("ca", "api-key", "--out", directory.appendingPathComponent("keys").path, "--seed", "3", "--json")
            let key = try #require(try JSONSerialization.jsonObject(with: Data(keys.text.utf8)) as? [String: Any], "\(keys.text) \(keys.stderr)")
            let (keyID, keyPath, issuerID) = (key["keyId"] as? String ?? "", key["keyPath"] as? String ?? "", key["issuerId"] as? String ?? "")
            let roots = directory.appendingPathComponent("roots").path
            let server = try await Self.start(["--ready-json", "--export-roots", roots, "--api-key", "\(keyID)=\(keyPath)", "--issuer-id", issuerID])
            defer { server.kill() }
            let ready = try #require(try JSONSerialization.jsonObject(with: Data(server.firstLine.utf8)) as? [String: Any], "\(server.firstLine)")
            let base = "http://127.0.0.1:\(server.port)"
            #expect(ready["port"] as? Int == server.port && ready["baseUrl"] as? String == base && ready["pid"] is Int, "\(ready)")
            let environments = ready["environments"] as? [String: [String: String]] ?? [:]
            #expect(environments["production"] == ["verifyReceipt": base + "/verifyReceipt", "serverApi": base], "\(environments)")
            #expect(environments["sandbox"] == ["verifyReceipt": base + "/sandbox/verifyReceipt", "serverApi": base + "/sandbox"], "\(environments)")
            #expect(environments["localTesting"] == ["serverApi": base + "/local-testing"], "\(environments)")
            let auth = ready["auth"] as? [String: Any] ?? [:]
            #expect(auth["mode"] as? String == "keys" && auth["issuerId"] as? String == issuerID, "\(auth)")
            #expect((auth["keys"] as? [[String: String]]) == [["keyId": keyID, "keyPath": keyPath]], "\(auth)")
            #expect(ready["tls"] is NSNull, "\(ready)")
            let paths = ready["roots"] as? [String: String] ?? [:]
            #expect(Set(paths.keys) == ["receipt", "storekit", "jws", "jws-xcode", "transaction-receipt-v2", "transaction-receipt-v3"], "\(paths)")
            #expect(paths["jws"] == roots + "/jws-root-g3.pem" && paths["receipt"] == roots + "/root.pem")
            #expect(try String(contentsOfFile: paths["jws"] ?? "", encoding: .utf8).hasPrefix("-----BEGIN CERTIFICATE-----"))
            let control = ready["control"] as? [String: Any] ?? [:]
            let clock = try await request((control["url"] as? String ?? "") + "/clock")
            #expect(clock.status == 200 && clock.text.contains(Self.clock), "\(clock.text)")

            let secure = try await Self.start(["--ready-json", "--tls", "--no-auth", "--export-roots", roots])
            defer { secure.kill() }
            let tls = try #require(try JSONSerialization.jsonObject(with: Data(secure.firstLine.utf8)) as? [String: Any], "\(secure.firstLine)")
            #expect(tls["baseUrl"] as? String == "https://127.0.0.1:\(secure.port)" && (tls["auth"] as? [String: Any])?["mode"] as? String == "none", "\(tls)")
            #expect(tls["tls"] as? [String: String] == ["rootAnchor": "receipt", "rootPath": roots + "/root.pem"], "\(tls)")
        }
    }
}
