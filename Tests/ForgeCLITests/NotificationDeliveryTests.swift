import Foundation
import _ForgeSupport
import ForgeTestSupport
import Testing

/// Issue 23, items 1 and 2, through the built binary and real sockets: `forge serve --notify URL` delivers each
/// notification to the webhook as the server clock passes it, retried on Apple's schedule, the attempts in Get
/// Notification History. The clock is pinned (`--now`) and moved only by `POST /_forge/clock`, and each step waits for
/// the server's own record of the one before (the history), so no wall time is raced. The webhooks are
/// `examples/receivers/notification_receiver.py`, verifying every payload with Apple's `SignedDataVerifier`.
@Suite(
    "forge serve --notify: notifications delivered as the clock passes them, retried on Apple's schedule", .timeLimit(.minutes(2)),
    .requires(.appleLibrary))
struct NotificationDeliveryTests {
    static let hour: Int64 = 3_600_000
    /// A production customer whose monthly subscription renews on 2025-01-15T00:00:00Z, a minute after the server starts.
    static let production = #"""
        {"bundleId": "com.example.prod", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-12-15T00:00:00Z", "period": "P1M"}],
         "timeline": [{"event": "renew", "productId": "pro.monthly", "count": 3}]}
        """#
    /// `examples/server-api/sandbox-customer.json`: a sandbox customer (com.example.api) whose subscription renews on
    /// 2025-01-15T00:00:00Z too.
    static let sandboxCustomer = Repository.file("examples/server-api/sandbox-customer.json")
    static let jwsRoot = Repository.certificate("jws/jws-root-g3.pem")

    /// A folder with the production customer's scenario, its app's Apple id (which Apple's verifier needs in
    /// Production), and where the webhooks record what they receive.
    struct Setup {
        let directory: URL
        let scenario: URL
        let app: Int
        var productionRecord: URL { directory.appendingPathComponent("production.jsonl") }
        var sandboxRecord: URL { directory.appendingPathComponent("sandbox.jsonl") }

        static func make() async throws -> Setup {
            let directory = try temporaryDirectory()
            let scenario = directory.appendingPathComponent("production.json")
            try Data(NotificationDeliveryTests.production.utf8).write(to: scenario)
            let made = try await forge("jws", "make", "app-transaction", "-q", "--spec", scenario.path)
            let app = try #require(NotificationDeliveryTests.payload(made.text.trimmingCharacters(in: .whitespacesAndNewlines))["appAppleId"] as? Int, "\(made.stderr)")
            return Setup(directory: directory, scenario: scenario, app: app)
        }

        func close() { try? FileManager.default.removeItem(at: directory) }
    }

    /// `examples/receivers/notification_receiver.py`: verifies every payload with Apple's `SignedDataVerifier` for
    /// `bundle` in `environment`, records each delivery in `record`, answers as `script` says (`200,500,hang`, the last
    /// step repeating); HTTPS with `tls`.
    static func receiver(
        _ script: String, record: URL, bundle: String, environment: String, app: Int? = nil, tls: (certificate: URL, key: URL)? = nil
    ) async throws -> BackgroundServer {
        var arguments = [Repository.file("examples/receivers/notification_receiver.py").path, "--root", jwsRoot, "--bundle-id", bundle]
        arguments += ["--environment", environment, "--script", script, "--record", record.path] + (app.map { ["--app-apple-id", String($0)] } ?? [])
        if let tls { arguments += ["--tls-cert", tls.certificate.path, "--tls-key", tls.key.path] }
        return try await BackgroundServer.start(arguments, executable: try Oracle.appleLibrary.required())
    }

    /// What a receiver has recorded, one object per delivery.
    static func records(_ file: URL) -> [[String: Any]] {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
    }

    /// The payload of a compact JWS.
    static func payload(_ compact: String) -> [String: Any] {
        let parts = compact.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    /// Get Notification History from `days` days after 2025-01-14 back to it, at `base` (`/inApps` or `/sandbox/inApps`).
    static func history(_ url: String, days: Int64 = 10, onlyFailures: Bool = false) async throws -> [[String: Any]] {
        let start = ReceiptDateMillis.january14, end = start + days * 24 * hour
        let answer = try await post(url + "/v1/notifications/history", json: #"{"startDate":\#(start),"endDate":\#(end)\#(onlyFailures ? #","onlyFailures":true"# : "")}"#)
        return try answer.json()["notificationHistory"] as? [[String: Any]] ?? []
    }

    /// Each history item's attempt results.
    static func results(_ items: [[String: Any]]) -> [[String]] {
        items.map { ($0["sendAttempts"] as? [[String: Any]] ?? []).compactMap { $0["sendAttemptResult"] as? String } }
    }

    /// A private CA and a certificate it issued for 127.0.0.1, made by `openssl` (an independent issuer).
    static func privateCA(in directory: URL) async throws -> (ca: URL, certificate: URL, key: URL) {
        let path = { (name: String) in directory.appendingPathComponent(name) }
        let extensions = path("leaf.ext")
        try Data("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=critical,CA:FALSE\n".utf8).write(to: extensions)
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("ca.key").path, "-out", path("ca.pem").path,
                "-days", "30", "-subj", "/CN=Webhook Test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
            ],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("leaf.key").path, "-out", path("leaf.csr").path, "-subj", "/CN=127.0.0.1"],
            [
                "x509", "-req", "-in", path("leaf.csr").path, "-CA", path("ca.pem").path, "-CAkey", path("ca.key").path, "-CAcreateserial", "-out",
                path("leaf.pem").path, "-days", "30", "-extfile", extensions.path,
            ],
        ]
        for step in steps {
            let made = try await openssl(step)
            try #require(made.status == 0, "openssl \(step.joined(separator: " ")): \(made.stderr)")
        }
        return (path("ca.pem"), path("leaf.pem"), path("leaf.key"))
    }

    /// `forge notify`'s arguments for one sandbox renewal.
    static let notification = ["--notification-type", "DID_RENEW", "--product", "pro.monthly", "--renewals", "1", "--preset", "sandbox", "--now", "2025-01-01T00:00:00Z"]

    /// `forge serve` a minute before both customers' renewals of 2025-01-15T00:00:00Z, its clock pinned there (only
    /// `POST /_forge/clock` moves it), delivering to `production` and `sandbox`.
    static func server(_ setup: Setup, production: String, sandbox: String, _ extra: [String] = []) async throws -> BackgroundServer {
        try await BackgroundServer.start(
            [
                "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-14T23:59:00Z", "--scenario", setup.scenario.path, "--scenario",
                sandboxCustomer.path, "--notify", production, "--notify-sandbox", sandbox,
            ] + extra)
    }

    /// Moves the server clock (`{"now":…}` or `{"advance":…}`).
    static func moveClock(_ server: BackgroundServer, _ json: String) async throws {
        let moved = try await post(server.url + "/_forge/clock", json: json)
        try #require(moved.status == 200, "\(json): \(moved.text)")
    }

    /// The attempt results of each notification of the history at `base` that has any.
    static func attempts(_ base: String) async throws -> [[String]] { try await results(history(base)).filter { !$0.isEmpty } }

    /// The records of one type.
    static func records(_ file: URL, type: String) -> [[String: Any]] { records(file).filter { $0["notificationType"] as? String == type } }

    @Test(
        "A renewal the clock passes is delivered, retried 1 and 12 hours after a failed first attempt until the webhook answers 200 (production), given up after one retry in the sandbox; the same signed bytes each time, every attempt in the history"
    )
    func deliveredAndRetried() async throws {
        let setup = try await Setup.make()
        defer { setup.close() }
        let (productionRecord, sandboxRecord) = (setup.productionRecord, setup.sandboxRecord)
        let productionHook = try await Self.receiver("500,500,200", record: productionRecord, bundle: "com.example.prod", environment: "production", app: setup.app)
        defer { productionHook.kill() }
        let sandboxHook = try await Self.receiver("500", record: sandboxRecord, bundle: "com.example.api", environment: "sandbox")
        defer { sandboxHook.kill() }
        let server = try await Self.server(setup, production: productionHook.url + "/apple", sandbox: sandboxHook.url + "/apple")
        defer { server.kill() }
        let production = server.url + "/inApps", sandbox = server.url + "/sandbox/inApps"
        let failed = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"

        // Each step moves the clock once the server has recorded the attempts before it (their dates are the clock's).
        try await Self.moveClock(server, #"{"now":"2025-01-15T00:00:30Z"}"#)
        try await eventually("the first attempts are in both histories") {
            let (ours, theirs) = (try await Self.attempts(production), try await Self.attempts(sandbox))
            return ours == [[failed]] && theirs == [[failed]]
        }
        try await Self.moveClock(server, #"{"advance":3600}"#)
        try await eventually("the retries an hour later are in both histories") {
            let (ours, theirs) = (try await Self.attempts(production), try await Self.attempts(sandbox))
            return ours == [[failed, failed]] && theirs == [[failed, failed]]
        }
        try await Self.moveClock(server, #"{"advance":39600}"#)
        try await eventually("the production retry twelve hours after the first attempt is in its history") {
            try await Self.attempts(production) == [[failed, failed, "SUCCESS"]]
        }

        let renewals = Self.records(productionRecord, type: "DID_RENEW"), sandboxRenewals = Self.records(sandboxRecord, type: "DID_RENEW")
        #expect(renewals.count == 3 && renewals.allSatisfy { $0["verified"] as? Bool == true }, "\(renewals)")
        #expect(Set(renewals.compactMap { $0["sha256"] as? String }).count == 1, "a retry sends the same notification")
        #expect(sandboxRenewals.count == 2 && sandboxRenewals.allSatisfy { $0["verified"] as? Bool == true }, "\(sandboxRenewals)")
        #expect(Set(sandboxRenewals.compactMap { $0["sha256"] as? String }).count == 1, "a retry sends the same notification")
        let items = try await Self.history(production)
        let dates = (items.first { !($0["sendAttempts"] as? [Any] ?? []).isEmpty }?["sendAttempts"] as? [[String: Any]] ?? []).compactMap { $0["attemptDate"] as? Int64 }
        // The clock only moves when the test moves it: each attempt is dated exactly at Apple's offset.
        let first = ReceiptDateMillis.january14 + 24 * Self.hour + 30_000
        #expect(dates == [first, first + Self.hour, first + 12 * Self.hour], "\(dates)")
        #expect(try await Self.history(sandbox, onlyFailures: true).count == 1)

        // Past every offset Apple retries at (72 hours in production), then a TEST to each webhook, due after anything
        // else: once both have arrived, any other attempt due would have come before them.
        try await Self.moveClock(server, #"{"advance":"P3D"}"#)
        for base in [production, sandbox] {
            let asked = try await post(base + "/v1/notifications/test", json: "")
            try #require(asked.status == 200, "\(base): \(asked.text)")
        }
        try await eventually("both webhooks receive their TEST") {
            !Self.records(productionRecord, type: "TEST").isEmpty && !Self.records(sandboxRecord, type: "TEST").isEmpty
        }
        #expect(Self.records(productionRecord, type: "DID_RENEW").count == 3, "a delivered notification is not sent again")
        #expect(Self.records(sandboxRecord, type: "DID_RENEW").count == 2, "Apple's one sandbox retry is the last")
    }

    @Test("A webhook that hangs does not delay the other environment's: the sandbox's renewal arrives while the production attempt waits out its 600 s timeout")
    func hangingWebhookDelaysOnlyItself() async throws {
        let setup = try await Setup.make()
        defer { setup.close() }
        let (productionRecord, sandboxRecord) = (setup.productionRecord, setup.sandboxRecord)
        let productionHook = try await Self.receiver("hang", record: productionRecord, bundle: "com.example.prod", environment: "production", app: setup.app)
        defer { productionHook.kill() }
        let sandboxHook = try await Self.receiver("200", record: sandboxRecord, bundle: "com.example.api", environment: "sandbox")
        defer { sandboxHook.kill() }
        let server = try await Self.server(setup, production: productionHook.url + "/apple", sandbox: sandboxHook.url + "/apple", ["--notify-timeout", "600"])
        defer { server.kill() }
        try await Self.moveClock(server, #"{"now":"2025-01-15T00:00:30Z"}"#)
        try await eventually("the production webhook holds its attempt") { !Self.records(productionRecord).isEmpty }
        // The sandbox's attempt is made, and answered, while the production one is held.
        try await eventually("the sandbox's attempt is in its history") { try await Self.attempts(server.url + "/sandbox/inApps") == [["SUCCESS"]] }
        #expect(Self.records(sandboxRecord).map { $0["notificationType"] as? String } == ["DID_RENEW"], "the sandbox's arrived meanwhile")
        #expect(Self.records(productionRecord).count == 1, "the production webhook holds its first attempt")
        #expect(try await Self.attempts(server.url + "/inApps").isEmpty, "the held attempt has no result yet")
    }

    @Test("Request a Test Notification delivers a TEST to the environment's webhook; its status lists the attempt")
    func testNotificationDelivered() async throws {
        try await withTemporaryDirectory { directory in
            let record = directory.appendingPathComponent("sandbox.jsonl")
            let hook = try await Self.receiver("200", record: record, bundle: "com.example.api", environment: "sandbox")
            defer { hook.kill() }
            let server = try await BackgroundServer.start([
                "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-01T00:00:00Z", "--scenario", Self.sandboxCustomer.path, "--notify-sandbox",
                hook.url + "/apple",
            ])
            defer { server.kill() }
            let asked = try await post(server.url + "/sandbox/inApps/v1/notifications/test", json: "")
            let token = try #require(try asked.json()["testNotificationToken"] as? String, "\(asked.text)")
            try await eventually("the webhook receives the TEST") { !Self.records(record).isEmpty }
            #expect(Self.records(record).map { $0["notificationType"] as? String } == ["TEST"])
            // The attempt is recorded once the webhook's answer is in: asked until it is.
            var attempts: [[String: Any]] = []
            try await eventually("the TEST's status lists its attempt") {
                let status = try await request(server.url + "/sandbox/inApps/v1/notifications/test/\(token)")
                attempts = try status.json()["sendAttempts"] as? [[String: Any]] ?? []
                return !attempts.isEmpty
            }
            #expect(attempts.map { $0["sendAttemptResult"] as? String } == ["SUCCESS"], "\(attempts)")
        }
    }

    @Test(
        "An https:// webhook whose certificate chains to --notify-ca gets the renewal the clock passes, verified, SUCCESS in the history; without --notify-ca the same webhook is TLS_ISSUE",
        .requires(.openssl))
    func httpsWebhookWithPrivateCA() async throws {
        let setup = try await Setup.make()
        defer { setup.close() }
        let pki = try await Self.privateCA(in: setup.directory)
        let record = setup.productionRecord
        let hook = try await Self.receiver("200", record: record, bundle: "com.example.prod", environment: "production", app: setup.app, tls: (pki.certificate, pki.key))
        defer { hook.kill() }
        let url = "https://127.0.0.1:\(hook.port)/apple"
        let untrusted = try await forge(arguments: ["notify", url] + Self.notification + ["--timeout", "5", "--json"])
        #expect(untrusted.status == 1 && (try? json(untrusted))?["sendAttemptResult"] as? String == "TLS_ISSUE", "\(untrusted.text)")

        let server = try await BackgroundServer.start([
            "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-14T23:59:00Z", "--scenario", setup.scenario.path, "--notify", url, "--notify-ca",
            pki.ca.path,
        ])
        defer { server.kill() }
        try await Self.moveClock(server, #"{"now":"2025-01-15T00:00:30Z"}"#)
        // The server records the attempt once the webhook has answered: its own record, asked until it is there.
        try await eventually("the attempt is in the history") { try await Self.attempts(server.url + "/inApps") == [["SUCCESS"]] }
        let records = Self.records(record)
        #expect(records.count == 1 && records.first?["verified"] as? Bool == true && records.first?["notificationType"] as? String == "DID_RENEW", "\(records)")
    }
}

/// 2025-01-14T00:00:00Z in milliseconds.
enum ReceiptDateMillis {
    static let january14: Int64 = 1_736_812_800_000
}
