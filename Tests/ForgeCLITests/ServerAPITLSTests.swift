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
/// Local testing over plain HTTP (by path, by Host, production's rates) is proven in process in
/// `ServerAPIServedRouteTests.localTesting`.
@Suite("forge serve --tls: the Server API by Apple's host names, Apple's clients unpatched", .timeLimit(.minutes(2)))
struct ServerAPITLSTests {
    static let hosts = (production: "api.storekit.apple.com", sandbox: "api.storekit-sandbox.apple.com", localTesting: "local-testing-base-url")
    static let sandboxBundle = "com.example.api", productionBundle = "com.example.prod"

    struct Fixture {
        let directory: URL
        let server: BackgroundServer
        let log: URL
        /// `forge ca export`'s `root.pem`: the TEST root that issued the serving certificate.
        let root: URL
        let sandboxID: String
        let productionID: String
        /// The production customer's `appAppleId` (Apple's verifier needs it for Production), as `forge jws make` makes it.
        let appAppleID: String

        /// `forge serve --tls` with both example customers (`--no-auth`, the request log in a file: the control
        /// routes are HTTPS too), and the TEST roots as `forge ca export` writes them.
        static func start(_ extra: [String] = []) async throws -> Fixture {
            let directory = try temporaryDirectory()
            let log = directory.appendingPathComponent("requests.jsonl")
            let exported = try await forge("ca", "export", "--out", directory.appendingPathComponent("ca").path)
            #expect(exported.status == 0, "\(exported.stderr)")
            let sandboxID = try await ServerAPITests.latestSandboxTransaction()
            let productionID = try #require(try await ServerAPITests.made(ServerAPITests.production).payload["transactionId"] as? String)
            let appAppleID = try #require(try await ServerAPITests.made(ServerAPITests.production, kind: "app-transaction").payload["appAppleId"] as? Int)
            let server = try await BackgroundServer.start(
                [
                    "serve", "--listen", "127.0.0.1:0", "--tls", "--now", ServerAPITests.clock, "--scenario", ServerAPITests.sandbox, "--scenario",
                    ServerAPITests.production, "--no-auth", "--log", log.path,
                ] + extra)
            return Fixture(
                directory: directory, server: server, log: log, root: directory.appendingPathComponent("ca/root.pem"), sandboxID: sandboxID, productionID: productionID,
                appAppleID: String(appAppleID))
        }

        /// Ends the server and removes the folder (for a `defer`).
        func kill() {
            server.kill()
            try? FileManager.default.removeItem(at: directory)
        }

        /// The request log's entries (JSON Lines of `--log`), once the server says the file holds every request it
        /// answered: `GET /_forge/log` over TLS (the TEST root trusted) until `X-Forge-Log-Written` reaches its last `seq`.
        func logged() async throws -> [[String: Any]] {
            try await eventually("the --log file written (X-Forge-Log-Written)") {
                let answer = try await run(
                    try Oracle.appleLibrary.required(), ["-c", Self.logProbe, String(server.port), root.path], deadline: .seconds(30))
                let (written, body) = (answer.text.prefix { $0 != "\n" }, answer.text.drop { $0 != "\n" }.dropFirst())
                return answer.status == 0 && logFileComplete(written: String(written), lines: Data(body.utf8))
            }
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map { ServerAPITests.object(Data($0.utf8)) }
        }

        /// `GET /_forge/log` over TLS to 127.0.0.1:PORT as `localhost`, the root ROOT trusted: `X-Forge-Log-Written`
        /// on the first line, the body after it.
        static let logProbe = """
            import http.client, socket, ssl, sys
            port, root = int(sys.argv[1]), sys.argv[2]
            context = ssl.create_default_context(cafile=root)
            connection = http.client.HTTPSConnection("localhost", port, context=context, timeout=20)
            connection.sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=20), server_hostname="localhost")
            connection.request("GET", "/_forge/log")
            answer = connection.getresponse()
            sys.stdout.write((answer.getheader("X-Forge-Log-Written") or "") + "\\n" + answer.read().decode())
            """

        /// Apple's Python client, constructed for `environment` with no base URL: `host` resolved to this server, and
        /// `trust` (nil: the stacks' own default, certifi) the only CA file each HTTP stack is told of.
        func drive(
            _ environment: String, host: String, trust: URL?, asynchronous: Bool, verifyAs: String? = nil, _ calls: [[String: Any]]
        ) async throws -> RunResult {
            var arguments = [
                ServerAPITests.client, "--environment", environment, "--resolve", "\(host)=127.0.0.1:\(server.port)", "--root", ServerAPITests.jwsRoot,
            ]
            // The signed fields are verified for the store's environment, as the customer of that app.
            let verified = verifyAs ?? environment
            arguments += ["--verify-environment", verified, "--bundle-id", verified == "production" ? productionBundle : sandboxBundle]
            if verified == "production" { arguments += ["--app-apple-id", appAppleID] }
            if asynchronous { arguments.append("--async") }
            // No proxy may stand between the client and the name it resolved; the CA file is the only trust given.
            var variables = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
            for name in ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"] { variables[name] = nil }
            if let trust {
                variables["REQUESTS_CA_BUNDLE"] = trust.path  // requests (the sync client)
                variables["SSL_CERT_FILE"] = trust.path  // httpx 0.28 (the async client)
            }
            return try await run(
                try Oracle.appleLibrary.required(), arguments, stdin: try JSONSerialization.data(withJSONObject: calls), environment: variables,
                deadline: .seconds(100))
        }

        func results(_ result: RunResult) throws -> [[String: Any]] {
            #expect(result.status == 0, "\(result.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result.stderr)")
        }
    }

    static func transactionID(_ result: [String: Any]) -> String? { (result["signedTransactionInfo"] as? [String: Any])?["transactionId"] as? String }

    @Test(
        "The --tls certificate is issued by the TEST root for Apple's three Server API host names (OpenSSL verifies each); under a foreign root it fails",
        .requires(.openssl))
    func certificateNamesAppleHosts() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.kill() }
        func verify(_ host: String, root: String) async throws -> RunResult {
            try await openssl([
                "s_client", "-connect", "127.0.0.1:\(fixture.server.port)", "-servername", host, "-verify_hostname", host, "-CAfile", root,
                "-verify_return_error", "-brief",
            ])
        }
        for host in [Self.hosts.production, Self.hosts.sandbox, Self.hosts.localTesting, "localhost"] {
            let trusted = try await verify(host, root: fixture.root.path)
            #expect(trusted.status == 0 && trusted.stderr.contains("Verification: OK"), "\(host): \(trusted.stderr)")
            let foreign = try await verify(host, root: Repository.certificate("foreign-root.pem"))
            #expect(foreign.status != 0 && !foreign.stderr.contains("Verification: OK"), "\(host): \(foreign.stderr)")
        }
        let other = try await verify("api.example.com", root: fixture.root.path)
        #expect(other.status != 0, "a name the certificate does not hold fails: \(other.stderr)")
    }

    @Test(
        "Environment.LOCAL_TESTING, unpatched (sync and async): local-testing-base-url over TLS serves every store, the sandbox and the production customer, every JWS verified; the log says local-testing",
        .requires(.appleLibrary))
    func localTesting() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.kill() }
        for asynchronous in [false, true] {
            let sandbox = try fixture.results(
                await fixture.drive(
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
                await fixture.drive(
                    "local-testing", host: Self.hosts.localTesting, trust: fixture.root, asynchronous: asynchronous, verifyAs: "production",
                    [["call": "info", "transactionId": fixture.productionID], ["call": "appTransaction", "transactionId": fixture.productionID]]))
            #expect(Self.transactionID(production[0]) == fixture.productionID, "\(production)")
            #expect((production[1]["signedAppTransactionInfo"] as? [String: Any])?["receiptType"] as? String == "Production", "\(production)")
        }
        let entries = try await fixture.logged().filter { $0["api"] as? String == "server" }
        #expect(entries.count == 12 && entries.allSatisfy { $0["environment"] as? String == "local-testing" }, "\(entries)")
        #expect(entries.allSatisfy { ($0["path"] as? String)?.hasPrefix("/inApps/") == true }, "Apple's paths, at the root")
    }

    @Test(
        "Environment.SANDBOX and PRODUCTION, unpatched (sync and async): Apple's host names over TLS reach their own stores only, every JWS verified",
        .requires(.appleLibrary))
    func sandboxAndProduction() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.kill() }
        for asynchronous in [false, true] {
            let sandbox = try fixture.results(
                await fixture.drive(
                    "sandbox", host: Self.hosts.sandbox, trust: fixture.root, asynchronous: asynchronous,
                    [
                        ["call": "info", "transactionId": fixture.sandboxID], ["call": "refunds", "transactionId": fixture.sandboxID],
                        ["call": "info", "transactionId": fixture.productionID],
                    ]))
            #expect(Self.transactionID(sandbox[0]) == fixture.sandboxID && sandbox[1]["ok"] as? Bool == true, "\(sandbox)")
            #expect(sandbox[2]["apiError"] as? Int == 4_040_010, "a production id is not found in the sandbox: \(sandbox[2])")
            let production = try fixture.results(
                await fixture.drive(
                    "production", host: Self.hosts.production, trust: fixture.root, asynchronous: asynchronous,
                    [["call": "info", "transactionId": fixture.productionID], ["call": "info", "transactionId": fixture.sandboxID]]))
            #expect(Self.transactionID(production[0]) == fixture.productionID, "\(production)")
            #expect(production[1]["apiError"] as? Int == 4_040_010, "a sandbox id is not found in production: \(production[1])")
        }
        let environments = try await fixture.logged().filter { $0["api"] as? String == "server" }.map { $0["environment"] as? String ?? "" }
        #expect(environments == Array(repeating: ["sandbox", "sandbox", "sandbox", "production", "production"], count: 2).flatMap { $0 }, "\(environments)")
    }

    @Test(
        "A wrong trust anchor fails TLS for both clients: the foreign root, or the stacks' own default (certifi); no request reaches the API",
        .requires(.appleLibrary))
    func wrongTrustAnchorFails() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.kill() }
        for trust in [URL(fileURLWithPath: Repository.certificate("foreign-root.pem")), nil] {
            for asynchronous in [false, true] {
                let result = try await fixture.drive(
                    "local-testing", host: Self.hosts.localTesting, trust: trust, asynchronous: asynchronous, verifyAs: "sandbox",
                    [["call": "info", "transactionId": fixture.sandboxID]])
                #expect(result.status != 0 && result.stderr.contains("CERTIFICATE_VERIFY_FAILED"), "\(trust?.lastPathComponent ?? "certifi"): \(result.stderr)")
            }
        }
        #expect(try await fixture.logged().filter { $0["api"] as? String == "server" }.isEmpty)
    }

    @Test("With --tls the start-up lines and --help name Apple's Server API host names the certificate holds")
    func startupLinesAndHelp() async throws {
        let lines = try await ServerAPITests.startupLines(["serve", "--listen", "127.0.0.1:0", "--tls", "--no-auth"], through: "hosts ")
        let hosts = try #require(lines.first { $0.hasPrefix("hosts ") }, "\(lines)")
        for host in [Self.hosts.production, Self.hosts.sandbox, Self.hosts.localTesting] { #expect(hosts.contains(host), "\(hosts)") }
        #expect(lines.contains { $0.hasPrefix("trust ") }, "\(lines)")
        let help = try await forge("serve", "--help")
        let flat = help.text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for host in [Self.hosts.production, Self.hosts.sandbox, Self.hosts.localTesting] { #expect(flat.contains(host), "--help names \(host)") }
        #expect(flat.contains("LOCAL_TESTING"))
    }
}
