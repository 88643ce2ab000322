import Foundation
import ForgeTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 22 item 7: Apple's clients reach `forge serve --tls` without being patched. The serving certificate names
/// Apple's three Server API host names; Apple's Python client (sync on requests, async on httpx) is constructed
/// with `Environment.LOCAL_TESTING`, `SANDBOX` or `PRODUCTION` and nothing else, the host name resolved to the
/// server as an `/etc/hosts` line would (`server_api_client.py --resolve`, in the client's process: a test can
/// neither bind 443 nor edit `/etc/hosts`) and the TEST root trusted the way each HTTP stack reads it from the
/// environment (`REQUESTS_CA_BUNDLE`, `SSL_CERT_FILE`). TLS verification is never turned off: a foreign root fails.
@Suite("forge serve --tls: the Server API by Apple's host names, Apple's clients unpatched", .timeLimit(.minutes(10)))
struct ServerAPITLSTests {
    static let hosts = (production: "api.storekit.apple.com", sandbox: "api.storekit-sandbox.apple.com", localTesting: "local-testing-base-url")
    static let sandboxBundle = "com.example.api", productionBundle = "com.example.prod"

    struct Fixture {
        let directory: URL
        /// The two customers of `examples/server-api/` (`ServerAPITests`'s).
        let examples: ServerAPITests.Fixture
        let server: BlockingServer
        let log: URL
        /// `forge ca export`'s `root.pem`: the TEST root that issued the serving certificate.
        let root: URL
        let sandboxID: String
        let productionID: String

        /// `forge serve --tls` with both example customers (`--no-auth`, the request log in a file: the control
        /// routes are HTTPS too), and the TEST roots as `forge ca export` writes them.
        init(_ extra: [String] = []) throws {
            directory = try temporaryDirectory()
            log = directory.appendingPathComponent("requests.jsonl")
            let exported = try forgeBlocking("ca", "export", "--out", directory.appendingPathComponent("ca").path)
            #expect(exported.status == 0, "\(exported.stderr)")
            root = directory.appendingPathComponent("ca/root.pem")
            examples = try ServerAPITests.Fixture()
            sandboxID = try examples.latestSandboxTransaction()
            let made = try forgeBlocking("jws", "make", "transaction", "-q", "--spec", examples.production)
            productionID = try #require(ServerAPITests.payload(made.text.trimmingCharacters(in: .whitespacesAndNewlines))["transactionId"] as? String)
            server = try BlockingServer(
                forgeBinary,
                [
                    "serve", "--listen", "127.0.0.1:0", "--tls", "--now", ServerAPITests.clock, "--scenario", examples.sandbox, "--scenario", examples.production,
                    "--no-auth", "--log", log.path,
                ] + extra)
        }

        func close() {
            server.stop()
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: examples.directory)
        }

        /// The production customer's `appAppleId` (Apple's verifier needs it for Production), as `forge jws make` makes it.
        func appAppleID() throws -> String {
            let made = try forgeBlocking("jws", "make", "app-transaction", "-q", "--spec", examples.production)
            return String(try #require(ServerAPITests.payload(made.text.trimmingCharacters(in: .whitespacesAndNewlines))["appAppleId"] as? Int))
        }

        /// The request log's entries (JSON Lines of `--log`).
        func logged() -> [[String: Any]] {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map { ServerAPITests.object(Data($0.utf8)) }
        }

        /// Apple's Python client, constructed for `environment` with no base URL: `host` resolved to this server, and
        /// `trust` (nil: the stacks' own default, certifi) the only CA file each HTTP stack is told of.
        func drive(
            _ environment: String, host: String, trust: URL?, asynchronous: Bool, verifyAs: String? = nil, _ calls: [[String: Any]]
        ) throws -> RunResult {
            var arguments = [
                ServerAPITests.client, "--environment", environment, "--resolve", "\(host)=127.0.0.1:\(server.port)", "--root", ServerAPITests.jwsRoot,
            ]
            // The signed fields are verified for the store's environment, as the customer of that app.
            let verified = verifyAs ?? environment
            arguments += ["--verify-environment", verified, "--bundle-id", verified == "production" ? productionBundle : sandboxBundle]
            if verified == "production" { arguments += ["--app-apple-id", try appAppleID()] }
            if asynchronous { arguments.append("--async") }
            // No proxy may stand between the client and the name it resolved; the CA file is the only trust given.
            var variables = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
            for name in ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"] { variables[name] = nil }
            if let trust {
                variables["REQUESTS_CA_BUNDLE"] = trust.path  // requests (the sync client)
                variables["SSL_CERT_FILE"] = trust.path  // httpx 0.28 (the async client)
            }
            return try runBlocking(
                ServerAPITests.python, arguments, stdin: try JSONSerialization.data(withJSONObject: calls), environment: variables, killAfter: 120)
        }

        func results(_ result: RunResult) throws -> [[String: Any]] {
            #expect(result.status == 0, "\(result.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result.stderr)")
        }
    }

    static var pythonReady: Bool {
        FileManager.default.isExecutableFile(atPath: ServerAPITests.python.path)
            && (try? runBlocking(ServerAPITests.python, ["-c", "import httpx, requests"]).status) == 0
    }

    static func transactionID(_ result: [String: Any]) -> String? { (result["signedTransactionInfo"] as? [String: Any])?["transactionId"] as? String }

    @Test("The --tls certificate is issued by the TEST root for Apple's three Server API host names (OpenSSL verifies each); under a foreign root it fails")
    func certificateNamesAppleHosts() throws {
        let fixture = try Fixture()
        defer { fixture.close() }
        func verify(_ host: String, root: String) throws -> RunResult {
            try opensslBlocking([
                "s_client", "-connect", "127.0.0.1:\(fixture.server.port)", "-servername", host, "-verify_hostname", host, "-CAfile", root,
                "-verify_return_error", "-brief",
            ])
        }
        for host in [Self.hosts.production, Self.hosts.sandbox, Self.hosts.localTesting, "localhost"] {
            let trusted = try verify(host, root: fixture.root.path)
            #expect(trusted.status == 0 && trusted.stderr.contains("Verification: OK"), "\(host): \(trusted.stderr)")
            let foreign = try verify(host, root: certificate("foreign-root.pem"))
            #expect(foreign.status != 0 && !foreign.stderr.contains("Verification: OK"), "\(host): \(foreign.stderr)")
        }
        let other = try verify("api.example.com", root: fixture.root.path)
        #expect(other.status != 0, "a name the certificate does not hold fails: \(other.stderr)")
    }

    @Test(
        "Environment.LOCAL_TESTING, unpatched (sync and async): local-testing-base-url over TLS serves every store, the sandbox and the production customer, every JWS verified; the log says local-testing"
    )
    func localTesting() throws {
        guard Self.pythonReady else { return }  // .ci/run installs them
        let fixture = try Fixture()
        defer { fixture.close() }
        for asynchronous in [false, true] {
            let sandbox = try fixture.results(
                fixture.drive(
                    "local-testing", host: Self.hosts.localTesting, trust: fixture.root, asynchronous: asynchronous, verifyAs: "sandbox",
                    [
                        ["call": "info", "transactionId": fixture.sandboxID], ["call": "history", "transactionId": fixture.sandboxID],
                        ["call": "statuses", "transactionId": fixture.sandboxID], ["call": "info", "transactionId": "123456789"],
                    ]))
            #expect(Self.transactionID(sandbox[0]) == fixture.sandboxID, "\(sandbox)")
            #expect(sandbox[1]["environment"] as? String == "Sandbox" && (sandbox[1]["signedTransactions"] as? [Any])?.count == 20, "\(sandbox[1])")
            #expect(sandbox[2]["ok"] as? Bool == true, "\(sandbox[2])")
            #expect(sandbox[3]["apiError"] as? Int == 4_040_010 && sandbox[3]["httpStatus"] as? Int == 404, "Apple's errors as APIException: \(sandbox[3])")
            let production = try fixture.results(
                fixture.drive(
                    "local-testing", host: Self.hosts.localTesting, trust: fixture.root, asynchronous: asynchronous, verifyAs: "production",
                    [["call": "info", "transactionId": fixture.productionID], ["call": "appTransaction", "transactionId": fixture.productionID]]))
            #expect(Self.transactionID(production[0]) == fixture.productionID, "\(production)")
            #expect((production[1]["signedAppTransactionInfo"] as? [String: Any])?["receiptType"] as? String == "Production", "\(production)")
        }
        let entries = fixture.logged().filter { $0["api"] as? String == "server" }
        #expect(entries.count == 12 && entries.allSatisfy { $0["environment"] as? String == "local-testing" }, "\(entries)")
        #expect(entries.allSatisfy { ($0["path"] as? String)?.hasPrefix("/inApps/") == true }, "Apple's paths, at the root")
    }

    @Test(
        "Environment.SANDBOX and PRODUCTION, unpatched (sync and async): Apple's host names over TLS reach their own stores only, every JWS verified"
    )
    func sandboxAndProduction() throws {
        guard Self.pythonReady else { return }  // .ci/run installs them
        let fixture = try Fixture()
        defer { fixture.close() }
        for asynchronous in [false, true] {
            let sandbox = try fixture.results(
                fixture.drive(
                    "sandbox", host: Self.hosts.sandbox, trust: fixture.root, asynchronous: asynchronous,
                    [
                        ["call": "info", "transactionId": fixture.sandboxID], ["call": "refunds", "transactionId": fixture.sandboxID],
                        ["call": "info", "transactionId": fixture.productionID],
                    ]))
            #expect(Self.transactionID(sandbox[0]) == fixture.sandboxID && sandbox[1]["ok"] as? Bool == true, "\(sandbox)")
            #expect(sandbox[2]["apiError"] as? Int == 4_040_010, "a production id is not found in the sandbox: \(sandbox[2])")
            let production = try fixture.results(
                fixture.drive(
                    "production", host: Self.hosts.production, trust: fixture.root, asynchronous: asynchronous,
                    [["call": "info", "transactionId": fixture.productionID], ["call": "info", "transactionId": fixture.sandboxID]]))
            #expect(Self.transactionID(production[0]) == fixture.productionID, "\(production)")
            #expect(production[1]["apiError"] as? Int == 4_040_010, "a sandbox id is not found in production: \(production[1])")
        }
        let environments = fixture.logged().filter { $0["api"] as? String == "server" }.map { $0["environment"] as? String ?? "" }
        #expect(environments == Array(repeating: ["sandbox", "sandbox", "sandbox", "production", "production"], count: 2).flatMap { $0 }, "\(environments)")
    }

    @Test("A wrong trust anchor fails TLS for both clients: the foreign root, or the stacks' own default (certifi); no request reaches the API")
    func wrongTrustAnchorFails() throws {
        guard Self.pythonReady else { return }  // .ci/run installs them
        let fixture = try Fixture()
        defer { fixture.close() }
        for trust in [URL(fileURLWithPath: certificate("foreign-root.pem")), nil] {
            for asynchronous in [false, true] {
                let result = try fixture.drive(
                    "local-testing", host: Self.hosts.localTesting, trust: trust, asynchronous: asynchronous, verifyAs: "sandbox",
                    [["call": "info", "transactionId": fixture.sandboxID]])
                #expect(result.status != 0 && result.stderr.contains("CERTIFICATE_VERIFY_FAILED"), "\(trust?.lastPathComponent ?? "certifi"): \(result.stderr)")
            }
        }
        #expect(fixture.logged().filter { $0["api"] as? String == "server" }.isEmpty)
    }

    @Test("With --tls the start-up lines and --help name Apple's Server API host names the certificate holds")
    func startupLinesAndHelp() throws {
        let process = Process()
        process.executableURL = forgeBinary
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--tls", "--no-auth"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        var text = Data()
        // The start-up lines come in one write; the trust line is among them.
        while !text.contains(Data("trust".utf8)) || text.last != 0x0A {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text.append(chunk)
        }
        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init)
        let hosts = try #require(lines.first { $0.hasPrefix("hosts ") }, "\(lines)")
        for host in [Self.hosts.production, Self.hosts.sandbox, Self.hosts.localTesting] { #expect(hosts.contains(host), "\(hosts)") }
        let help = try forgeBlocking("serve", "--help")
        let flat = help.text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for host in [Self.hosts.production, Self.hosts.sandbox, Self.hosts.localTesting] { #expect(flat.contains(host), "--help names \(host)") }
        #expect(flat.contains("LOCAL_TESTING"))
    }

    @Test(
        "Over plain HTTP too: /local-testing/inApps and Host: local-testing-base-url at the root serve both stores; --rate-limits apple gives local testing production's rates"
    )
    func localTestingOverHTTP() async throws {
        let plain = try ServerAPITests.Fixture()
        defer { try? FileManager.default.removeItem(at: plain.directory) }
        let server = try ServerAPITests.start(plain, ["--no-auth", "--rate-limits", "apple"])
        defer { server.stop() }
        let sandboxID = try plain.latestSandboxTransaction()
        let answer = try #require(await ServerAPITests.get("\(server.url)/local-testing/inApps/v1/transactions/\(sandboxID)"))
        #expect(answer.status == 200 && ServerAPITests.object(answer.body)["signedTransactionInfo"] is String)
        // Refund history: 10 a second in production, 1 in the sandbox, counted on the wall clock (never X-Forge-Now): three
        // requests in under a second meet at most one second's turn, so one at least is over the sandbox's rate.
        func thrice(_ prefix: String) async -> [Int] {
            var statuses: [Int] = []
            for _ in 0..<3 {
                guard let url = URL(string: "\(server.url)\(prefix)/inApps/v2/refund/lookup/\(sandboxID)") else { return [] }
                let response = try? await URLSession.shared.data(for: URLRequest(url: url)).1 as? HTTPURLResponse
                statuses.append(response?.statusCode ?? 0)
            }
            return statuses
        }
        let started = Date()
        let sandbox = await thrice("/sandbox")
        if Date().timeIntervalSince(started) < 1 { #expect(sandbox.first == 200 && sandbox.contains(429), "\(sandbox)") }
        #expect(await thrice("/local-testing") == [200, 200, 200])
        guard FileManager.default.isExecutableFile(atPath: ServerAPITests.python.path) else { return }  // .ci/run installs it
        let script = """
            import requests, sys
            for host in ["local-testing-base-url", "LOCAL-TESTING-BASE-URL:443", "api.storekit.apple.com"]:
                print(requests.get(sys.argv[1], headers={"Host": host}, timeout=10).status_code)
            """
        let result = try runBlocking(ServerAPITests.python, ["-c", script, "\(server.url)/inApps/v1/transactions/\(sandboxID)"])
        #expect(result.text.split(separator: "\n") == ["200", "200", "404"], "\(result.stderr)")
    }
}
