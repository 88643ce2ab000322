import Foundation
import ForgeTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 23, items 1 and 2: `forge serve --notify URL` delivers each notification to the webhook as the server
/// clock passes it, retried on Apple's schedule, the attempts in Get Notification History. The clock runs at
/// `--time-rate 7200` (two hours a second), so Apple's retries at 1 and 12 hours come within seconds. The webhooks
/// are `examples/receivers/notification_receiver.py`, verifying every payload with Apple's `SignedDataVerifier`.
@Suite(
    "forge serve --notify: notifications delivered as the clock passes them, retried on Apple's schedule", .timeLimit(.minutes(10)),
    .enabled(if: FileManager.default.isExecutableFile(atPath: ServerAPITests.python.path), "Apple's Python library is absent: .ci/run installs .oracles/asl")
)
struct NotificationDeliveryTests {
    static let hour: Int64 = 3_600_000
    /// A production customer whose monthly subscription renews on 2025-01-15T00:00:00Z, a minute after the server starts.
    static let production = #"""
        {"bundleId": "com.example.prod", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-12-15T00:00:00Z", "period": "P1M"}],
         "timeline": [{"event": "renew", "productId": "pro.monthly", "count": 3}]}
        """#

    /// A folder with the production customer's scenario, its app's Apple id (which Apple's verifier needs in
    /// Production), and where the two webhooks record what they receive.
    struct Setup {
        let directory: URL
        let scenario: URL
        let app: Int
        var productionRecord: URL { directory.appendingPathComponent("production.jsonl") }
        var sandboxRecord: URL { directory.appendingPathComponent("sandbox.jsonl") }

        init() throws {
            directory = try temporaryDirectory()
            scenario = directory.appendingPathComponent("production.json")
            try Data(NotificationDeliveryTests.production.utf8).write(to: scenario)
            let made = try forgeBlocking("jws", "make", "app-transaction", "-q", "--spec", scenario.path)
            app = try #require(ServerAPITests.payload(made.text.trimmingCharacters(in: .whitespacesAndNewlines))["appAppleId"] as? Int)
        }

        func close() { try? FileManager.default.removeItem(at: directory) }
    }

    static func post(_ url: String, _ body: String) async throws -> [String: Any] {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// Polls `condition` until it holds or `seconds` pass, sleeping without holding a test thread.
    static func waitFor(_ seconds: Double, _ condition: () -> Bool) async {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition(), Date() < deadline { try? await Task.sleep(for: .milliseconds(50)) }
    }

    @Test(
        "A renewal the clock passes is delivered, retried 1 and 12 hours after a failed first attempt until the webhook answers 200 (production), given up after one retry in the sandbox; the same signed bytes each time, every attempt in the history"
    )
    func deliveredAndRetried() async throws {
        let setup = try Setup()
        defer { setup.close() }
        let (scenario, app) = (setup.scenario, setup.app)
        let (productionRecord, sandboxRecord) = (setup.productionRecord, setup.sandboxRecord)
        let productionHook = try NotifyTests.receiver("500,500,200", record: productionRecord, bundle: "com.example.prod", environment: "production", app: app)
        defer { productionHook.stop() }
        let sandboxHook = try NotifyTests.receiver("500", record: sandboxRecord, bundle: "com.example.api", environment: "sandbox")
        defer { sandboxHook.stop() }
        let server = try BlockingServer(
            forgeBinary,
            [
                "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-14T23:59:00Z", "--time-rate", "7200", "--scenario", scenario.path,
                "--scenario", ServerAPITests.examples.appendingPathComponent("sandbox-customer.json").path, "--notify", productionHook.url + "/apple",
                "--notify-sandbox", sandboxHook.url + "/apple",
            ])
        defer { server.stop() }
        // The attempts of each webhook's first notification: at 7200× the next month's renewals come 372 s after the
        // start, which a test queued behind the whole suite on a loaded machine can reach, and they are not this test's.
        func first(_ records: [[String: Any]]) -> [[String: Any]] {
            guard let digest = records.first?["sha256"] as? String else { return [] }
            return records.filter { $0["sha256"] as? String == digest }
        }
        await Self.waitFor(30) { first(NotifyTests.records(productionRecord)).count >= 3 && first(NotifyTests.records(sandboxRecord)).count >= 2 }
        let production = first(NotifyTests.records(productionRecord)), sandbox = first(NotifyTests.records(sandboxRecord))
        #expect(production.count == 3 && production.allSatisfy { $0["verified"] as? Bool == true }, "\(production.first ?? [:])")
        #expect(production.map { $0["notificationType"] as? String } == ["DID_RENEW", "DID_RENEW", "DID_RENEW"])
        #expect(production.compactMap { $0["sha256"] as? String }.count == 3, "a retry sends the same notification")
        #expect(sandbox.count == 2 && sandbox.allSatisfy { $0["verified"] as? Bool == true }, "\(sandbox)")
        // Apple's one sandbox retry is the last: no third attempt, however long the clock runs.
        try await Task.sleep(for: .milliseconds(1500))
        #expect(first(NotifyTests.records(sandboxRecord)).count == 2)
        #expect(first(NotifyTests.records(productionRecord)).count == 3, "a delivered notification is not sent again")

        let start = ReceiptDateMillis.january14, end = start + 10 * 24 * Self.hour
        let history = try await Self.post(server.url + "/inApps/v1/notifications/history", #"{"startDate":\#(start),"endDate":\#(end)}"#)
        let items = history["notificationHistory"] as? [[String: Any]] ?? []
        let attempts = items.first?["sendAttempts"] as? [[String: Any]] ?? []
        #expect(attempts.map { $0["sendAttemptResult"] as? String } == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"], "\(history)")
        let dates = attempts.compactMap { $0["attemptDate"] as? Int64 }
        if dates.count == 3 {
            // Not before Apple's offsets, and before the next one (a loaded machine may run a retry late, never early).
            #expect((Self.hour..<12 * Self.hour).contains(dates[1] - dates[0]), "the first retry an hour after the first attempt: \(dates)")
            #expect((12 * Self.hour..<24 * Self.hour).contains(dates[2] - dates[0]), "the second twelve hours after it: \(dates)")
        }
        let failures = try await Self.post(server.url + "/sandbox/inApps/v1/notifications/history", #"{"startDate":\#(start),"endDate":\#(end),"onlyFailures":true}"#)
        #expect((failures["notificationHistory"] as? [Any])?.count == 1, "\(failures)")
    }

    @Test("A webhook that hangs does not delay the other environment's: the sandbox's renewal arrives while the production attempt waits out its 600 s timeout")
    func hangingWebhookDelaysOnlyItself() async throws {
        let setup = try Setup()
        defer { setup.close() }
        let (scenario, app) = (setup.scenario, setup.app)
        let (productionRecord, sandboxRecord) = (setup.productionRecord, setup.sandboxRecord)
        let productionHook = try NotifyTests.receiver("hang", record: productionRecord, bundle: "com.example.prod", environment: "production", app: app)
        defer { productionHook.stop() }
        let sandboxHook = try NotifyTests.receiver("200", record: sandboxRecord, bundle: "com.example.api", environment: "sandbox")
        defer { sandboxHook.stop() }
        let server = try BlockingServer(
            forgeBinary,
            [
                "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-14T23:59:00Z", "--time-rate", "600", "--notify-timeout", "600",
                "--scenario", scenario.path, "--scenario", ServerAPITests.examples.appendingPathComponent("sandbox-customer.json").path,
                "--notify", productionHook.url + "/apple", "--notify-sandbox", sandboxHook.url + "/apple",
            ])
        defer { server.stop() }
        await Self.waitFor(30) { !NotifyTests.records(productionRecord).isEmpty && !NotifyTests.records(sandboxRecord).isEmpty }
        #expect(NotifyTests.records(productionRecord).count == 1, "the production webhook holds its first attempt")
        #expect(NotifyTests.records(sandboxRecord).map { $0["notificationType"] as? String } == ["DID_RENEW"], "the sandbox's arrived meanwhile")
    }

    @Test("Request a Test Notification delivers a TEST to the environment's webhook; its status lists the attempt")
    func testNotificationDelivered() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("sandbox.jsonl")
        let hook = try NotifyTests.receiver("200", record: record, bundle: "com.example.api", environment: "sandbox")
        defer { hook.stop() }
        let server = try BlockingServer(
            forgeBinary,
            [
                "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-01T00:00:00Z", "--scenario",
                ServerAPITests.examples.appendingPathComponent("sandbox-customer.json").path, "--notify-sandbox", hook.url + "/apple",
            ])
        defer { server.stop() }
        let token = try #require(try await Self.post(server.url + "/sandbox/inApps/v1/notifications/test", "")["testNotificationToken"] as? String)
        await Self.waitFor(20) { !NotifyTests.records(record).isEmpty }
        #expect(NotifyTests.records(record).map { $0["notificationType"] as? String } == ["TEST"])
        // The attempt is recorded once the webhook's answer is in: ask until it is.
        var attempts: [[String: Any]] = []
        for _ in 0..<100 where attempts.isEmpty {
            let status = try #require(await ServerAPITests.get(server.url + "/sandbox/inApps/v1/notifications/test/\(token)"))
            attempts = ServerAPITests.object(status.body)["sendAttempts"] as? [[String: Any]] ?? []
            if attempts.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(attempts.map { $0["sendAttemptResult"] as? String } == ["SUCCESS"], "\(attempts)")
    }
}

extension NotificationDeliveryTests {
    /// A private CA and a certificate it issued for 127.0.0.1, made by `openssl` (an independent issuer).
    static func privateCA(in directory: URL) throws -> (ca: URL, certificate: URL, key: URL) {
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
            let made = try runBlocking(opensslBinary, step)
            try #require(made.status == 0, "openssl \(step.joined(separator: " ")): \(made.stderr)")
        }
        return (path("ca.pem"), path("leaf.pem"), path("leaf.key"))
    }

    @Test(
        "An https:// webhook whose certificate chains to --notify-ca gets the renewal, verified; without --notify-ca the same webhook is TLS_ISSUE"
    )
    func httpsWebhookWithPrivateCA() async throws {
        let setup = try Setup()
        defer { setup.close() }
        let pki = try Self.privateCA(in: setup.directory)
        let record = setup.productionRecord
        var arguments = [NotifyTests.receiver, "--root", ServerAPITests.jwsRoot, "--bundle-id", "com.example.prod", "--environment", "production"]
        arguments += ["--app-apple-id", String(setup.app), "--script", "200", "--record", record.path, "--tls-cert", pki.certificate.path, "--tls-key", pki.key.path]
        let hook = try BlockingServer(ServerAPITests.python, arguments)
        defer { hook.stop() }
        let url = "https://127.0.0.1:\(hook.port)/apple"
        let untrusted = try forgeBlocking(arguments: ["notify", url] + NotifyTests.notification + ["--timeout", "5", "--json"])
        #expect(untrusted.status == 1 && (try? json(untrusted))?["sendAttemptResult"] as? String == "TLS_ISSUE", "\(untrusted.text)")
        let server = try BlockingServer(
            forgeBinary,
            [
                "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-14T23:59:00Z", "--time-rate", "7200", "--scenario", setup.scenario.path,
                "--notify", url, "--notify-ca", pki.ca.path,
            ])
        defer { server.stop() }
        await Self.waitFor(30) { !NotifyTests.records(record).isEmpty }
        let records = NotifyTests.records(record)
        #expect(records.first?["verified"] as? Bool == true && records.first?["notificationType"] as? String == "DID_RENEW", "\(records)")
    }
}

/// 2025-01-14T00:00:00Z in milliseconds.
enum ReceiptDateMillis {
    static let january14: Int64 = 1_736_812_800_000
}
