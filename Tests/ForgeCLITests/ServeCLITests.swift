import Foundation
import ForgeTestSupport
import Testing
import ForgeSupport
import StoreModel

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `forge serve` over real sockets on 127.0.0.1: every status code, the server-side history, faults,
/// the control routes, the request log, HTTPS, the runner and a real Python `requests` client.
@Suite("forge serve", .timeLimit(.minutes(10)))
struct ServeCLITests {
    static let clock = "2025-04-01T00:00:00Z"
    static let scenarioJSON = """
        {"bundleId": "com.example.app", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-12-15T00:00:00Z", "period": "P1M"}],
         "timeline": [{"event": "renew", "count": 2}, {"event": "billing-retry", "at": "2025-03-15T00:00:00Z"},
                      {"event": "price-increase", "at": "2025-03-01T00:00:00Z", "consent": "accepted"}]}
        """

    /// A scratch directory with the receipts the tests send.
    struct Fixture {
        let directory: URL
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func base64(_ name: String) throws -> String { try Data(contentsOf: directory.appendingPathComponent(name)).base64EncodedString() }

        init() throws {
            directory = try temporaryDirectory()
            try ServeCLITests.scenarioJSON.write(to: directory.appendingPathComponent("history.json"), atomically: true, encoding: .utf8)
            let now = "2025-01-01T00:00:00Z"
            for (name, arguments) in [
                ("history.der", ["--spec", path("history.json")]),
                ("production-sub.der", ["--product", "pro.yearly", "--renewals", "1", "--period", "P1Y", "--now", now]),
                ("expired-sub.der", ["--product", "pro.weekly", "--expired", "--now", now]),
                ("sandbox-sub.der", ["--preset", "sandbox", "--product", "pro.monthly", "--renewals", "3", "--now", now]),
                ("production-nonconsumable.der", ["--product", "lifetime", "--type", "non-consumable", "--now", now]),
                ("foreign.der", ["--product", "lifetime", "--type", "non-consumable", "--now", now, "--certificates", path("other-ca")]),
            ] {
                if name == "foreign.der" { #expect(try forgeBlocking("ca", "init", "--out", path("other-ca")).status == 0) }
                let made = try forgeBlocking(arguments: ["make", "-q", "-o", path(name)] + arguments)
                #expect(made.status == 0, "\(name): \(made.stderr)")
            }
        }
    }

    static func start(_ arguments: [String]) throws -> BlockingServer {
        try BlockingServer(forgeBinary, ["serve", "--listen", "127.0.0.1:0", "--now", clock] + arguments)
    }

    /// POSTs `body`; the HTTP status and body, or nil when the transport failed.
    static func request(_ url: String, method: String = "POST", _ body: Data = Data()) async -> (status: Int, body: Data)? {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        if method != "GET" { request.httpBody = body }
        // JSON, as a control POST must say without a control token (verifyReceipt's bodies are JSON too).
        if method == "POST" { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        guard let (data, response) = try? await URLSession.shared.data(for: request), let http = response as? HTTPURLResponse else { return nil }
        return (http.statusCode, data)
    }

    /// verifyReceipt's answer as JSON (HTTP 200 required).
    static func verify(_ url: String, _ body: [String: Any]) async throws -> [String: Any] {
        let answer = try #require(await request(url, try JSONSerialization.data(withJSONObject: body)))
        #expect(answer.status == 200)
        return try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any], "\(String(decoding: answer.body, as: UTF8.self))")
    }

    static func status(_ json: [String: Any]) -> Int? { json["status"] as? Int }

    @Test("Every status code verifyReceipt answers from the request itself: 0, 21000, 21002, 21003, 21004, 21007, 21008, 21010; the sandbox's 21003 without a password")
    func statusCodes() async throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let deleted = fixture.path("deleted.json")
        try """
        {"bundleId": "com.example.gone", "now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "lifetime"}],
         "timeline": [{"event": "account-deleted", "at": "2025-02-01T00:00:00Z"}]}
        """.write(toFile: deleted, atomically: true, encoding: .utf8)
        #expect(try forgeBlocking("make", "-q", "--spec", deleted, "-o", fixture.path("deleted.der")).status == 0)
        let server = try Self.start(["--shared-secret", "s3cret", "--scenario", fixture.path("history.json"), "--scenario", deleted])
        defer { server.stop() }
        let production = server.url + "/verifyReceipt"
        let sandbox = server.url + "/sandbox/verifyReceipt"

        #expect(Self.status(try await Self.verify(production, ["receipt-data": try fixture.base64("production-nonconsumable.der")])) == 0)
        // 21000: not a POST; a body that is not a JSON object.
        let get = try #require(await Self.request(production, method: "GET"))
        #expect(String(decoding: get.body, as: UTF8.self) == #"{"status":21000}"#)
        let garbage = try #require(await Self.request(production, Data("receipt=abc".utf8)))
        #expect(String(decoding: garbage.body, as: UTF8.self) == #"{"status":21000}"#)
        // 21002: receipt-data missing, not base64, not a receipt.
        #expect(Self.status(try await Self.verify(production, ["password": "s3cret"])) == 21002)
        #expect(Self.status(try await Self.verify(production, ["receipt-data": "%%%"])) == 21002)
        #expect(Self.status(try await Self.verify(production, ["receipt-data": Data("hello".utf8).base64EncodedString()])) == 21002)
        // 21003: the chain ends at a root the server does not trust.
        let foreign = try await Self.verify(production, ["receipt-data": try fixture.base64("foreign.der")])
        #expect(Self.status(foreign) == 21003 && (foreign["forge_error_class"] as? String)?.hasPrefix("chain") == true)
        // 21004: a subscription with a wrong or missing secret; the sandbox says 21003 when it is missing.
        #expect(Self.status(try await Self.verify(production, ["receipt-data": try fixture.base64("production-sub.der"), "password": "wrong"])) == 21004)
        #expect(Self.status(try await Self.verify(production, ["receipt-data": try fixture.base64("production-sub.der")])) == 21004)
        #expect(Self.status(try await Self.verify(production, ["receipt-data": try fixture.base64("production-sub.der"), "password": "s3cret"])) == 0)
        #expect(Self.status(try await Self.verify(sandbox, ["receipt-data": try fixture.base64("sandbox-sub.der")])) == 21003)
        #expect(Self.status(try await Self.verify(sandbox, ["receipt-data": try fixture.base64("sandbox-sub.der"), "password": "s3cret"])) == 0)
        // 21007 / 21008: the wrong endpoint for the receipt's environment.
        #expect(Self.status(try await Self.verify(production, ["receipt-data": try fixture.base64("sandbox-sub.der"), "password": "s3cret"])) == 21007)
        #expect(Self.status(try await Self.verify(sandbox, ["receipt-data": try fixture.base64("production-sub.der"), "password": "s3cret"])) == 21008)
        // 21010: the scenario's account was deleted before the server's clock.
        #expect(Self.status(try await Self.verify(production, ["receipt-data": try fixture.base64("deleted.der")])) == 21010)
    }

    @Test("A valid receipt is decoded in Apple's shape; the scenario's timeline shows in latest_receipt_info, pending_renewal_info and a re-issued latest_receipt")
    func decodedShapeAndHistory() async throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let server = try Self.start(["--scenario", fixture.path("history.json")])
        defer { server.stop() }
        let answer = try await Self.verify(server.url + "/verifyReceipt", ["receipt-data": try fixture.base64("history.der"), "password": "any"])
        #expect(Self.status(answer) == 0 && answer["environment"] as? String == "Production")
        let receipt = try #require(answer["receipt"] as? [String: Any])
        #expect(receipt["adam_id"] is Int && receipt["download_id"] is Int && receipt["bundle_id"] as? String == "com.example.app")
        #expect(receipt["request_date_ms"] as? String == "1743465600000")
        #expect((receipt["request_date_pst"] as? String) == "2025-03-31 17:00:00 America/Los_Angeles")
        let inApp = try #require(receipt["in_app"] as? [[String: Any]])
        #expect(inApp.count == 1)  // the device's receipt predates the renewals
        let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
        #expect(latest.count == 3)
        #expect(latest.map { $0["expires_date"] as? String } == ["2025-03-15 00:00:00 Etc/GMT", "2025-02-15 00:00:00 Etc/GMT", "2025-01-15 00:00:00 Etc/GMT"])
        #expect(latest.allSatisfy { $0["quantity"] as? String == "1" && $0["is_trial_period"] as? String == "false" && $0["purchase_date_ms"] is String })
        #expect(Set(latest.compactMap { $0["original_transaction_id"] as? String }) == [inApp[0]["transaction_id"] as? String])
        let pending = try #require((answer["pending_renewal_info"] as? [[String: Any]])?.first)
        #expect(pending["auto_renew_status"] as? String == "1" && pending["expiration_intent"] as? String == "2")
        #expect(pending["is_in_billing_retry_period"] as? String == "1" && pending["price_consent_status"] as? String == "1")
        // latest_receipt is a receipt of the current state, valid under the TEST root.
        let reissued = fixture.path("latest.der")
        let latestReceipt = try #require(answer["latest_receipt"] as? String)
        try #require(Data(base64Encoded: latestReceipt)).write(to: URL(fileURLWithPath: reissued))
        let inspected = try json(try forgeBlocking("inspect", reissued, "--json", "--root", certificate("root.pem"), "--at", Self.clock))
        #expect(inspected["verdict"] as? String == "valid")
        #expect(((inspected["decoded"] as? [String: Any])?["in_app"] as? [Any])?.count == 3)

        let excluded = try await Self.verify(server.url + "/verifyReceipt", ["receipt-data": try fixture.base64("history.der"), "exclude-old-transactions": true])
        #expect((excluded["latest_receipt_info"] as? [[String: Any]])?.map { $0["expires_date"] as? String } == ["2025-03-15 00:00:00 Etc/GMT"])
        // Without a history, a sandbox receipt is answered from itself.
        let plain = try await Self.verify(server.url + "/sandbox/verifyReceipt", ["receipt-data": try fixture.base64("sandbox-sub.der")])
        #expect(plain["environment"] as? String == "Sandbox" && (plain["latest_receipt_info"] as? [Any])?.count == 4)
    }

    @Test("Field by field, the documented shape (receipt-facts §b.7): known keys only, strings except the four numeric ids, date triplets complete")
    func documentedShape() async throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let server = try Self.start(["--scenario", fixture.path("history.json")])
        defer { server.stop() }
        let answer = try await Self.verify(server.url + "/verifyReceipt", ["receipt-data": try fixture.base64("history.der")])
        let top: Set<String> = ["status", "environment", "is-retryable", "receipt", "latest_receipt", "latest_receipt_info", "pending_renewal_info"]
        #expect(Set(answer.keys).isSubset(of: top))
        func withTriplets(_ names: [String]) -> Set<String> { Set(names.flatMap { [$0, $0 + "_ms", $0 + "_pst"] }) }
        let receiptKeys: Set<String> = Set([
            "receipt_type", "adam_id", "app_item_id", "bundle_id", "application_version", "download_id", "version_external_identifier",
            "original_application_version", "in_app",
        ]).union(withTriplets(["receipt_creation_date", "request_date", "original_purchase_date", "expiration_date", "preorder_date"]))
        let transactionKeys: Set<String> = Set([
            "quantity", "product_id", "transaction_id", "original_transaction_id", "web_order_line_item_id", "cancellation_reason", "is_trial_period",
            "is_in_intro_offer_period", "is_upgraded", "promotional_offer_id", "offer_code_ref_name", "subscription_group_identifier",
            "in_app_ownership_type", "app_account_token",
        ]).union(withTriplets(["purchase_date", "original_purchase_date", "expires_date", "cancellation_date"]))
        let pendingKeys: Set<String> = Set([
            "auto_renew_product_id", "auto_renew_status", "expiration_intent", "is_in_billing_retry_period", "offer_code_ref_name",
            "original_transaction_id", "price_consent_status", "price_increase_status", "product_id", "promotional_offer_id",
        ]).union(withTriplets(["grace_period_expires_date"]))
        let receipt = try #require(answer["receipt"] as? [String: Any])
        #expect(Set(receipt.keys).isSubset(of: receiptKeys), "\(Set(receipt.keys).subtracting(receiptKeys))")
        let numeric: Set<String> = ["adam_id", "app_item_id", "download_id", "version_external_identifier"]
        for (key, value) in receipt where key != "in_app" { #expect(numeric.contains(key) ? value is Int : value is String, "receipt.\(key)") }
        let transactions = (receipt["in_app"] as? [[String: Any]] ?? []) + (answer["latest_receipt_info"] as? [[String: Any]] ?? [])
        let pending = answer["pending_renewal_info"] as? [[String: Any]] ?? []
        #expect(!transactions.isEmpty && !pending.isEmpty)
        for (objects, keys) in [(transactions, transactionKeys), (pending, pendingKeys)] {
            for object in objects {
                #expect(Set(object.keys).isSubset(of: keys), "\(Set(object.keys).subtracting(keys))")
                #expect(object.values.allSatisfy { $0 is String })
                for key in object.keys where key.hasSuffix("_ms") {
                    let base = String(key.dropLast(3))
                    #expect(object[base] as? String != nil && (object[base + "_pst"] as? String)?.hasSuffix(" America/Los_Angeles") == true)
                    #expect((object[base] as? String)?.hasSuffix(" Etc/GMT") == true && Int64(object[key] as? String ?? "x") != nil)
                }
            }
        }
    }

    @Test("--legacy-expired-status answers 21006 with the decoded receipt when every subscription has expired")
    func legacyExpired() async throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let server = try Self.start(["--legacy-expired-status"])
        defer { server.stop() }
        let expired = try await Self.verify(server.url + "/verifyReceipt", ["receipt-data": try fixture.base64("expired-sub.der")])
        #expect(Self.status(expired) == 21006 && expired["receipt"] != nil)
        let active = try await Self.verify(server.url + "/verifyReceipt", ["receipt-data": try fixture.base64("production-nonconsumable.der")])
        #expect(Self.status(active) == 0)
    }

    @Test("Faults by flag and by control route: statuses with is-retryable, HTTP 500/503, a closed connection, not JSON, latency, counts and seeded percentages; all logged")
    func faults() async throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let logFile = fixture.path("requests.jsonl")
        let server = try Self.start(["--fault", "production:status=21005,count=2", "--fault", "sandbox:status=21199,retryable=false,count=1", "--log", logFile])
        defer { server.stop() }
        let production = server.url + "/verifyReceipt"
        let sandbox = server.url + "/sandbox/verifyReceipt"
        let body = ["receipt-data": try fixture.base64("production-nonconsumable.der")]
        #expect(Self.status(try await Self.verify(production, body)) == 21005)
        #expect(Self.status(try await Self.verify(production, body)) == 21005)
        #expect(Self.status(try await Self.verify(production, body)) == 0)
        let internalError = try await Self.verify(sandbox, body)
        #expect(Self.status(internalError) == 21199 && internalError["is-retryable"] as? Bool == false)

        func add(_ fault: String) async throws {
            let added = try #require(await Self.request(server.url + "/_forge/faults", Data(fault.utf8)))
            #expect(added.status == 201, "\(String(decoding: added.body, as: UTF8.self))")
        }
        try await add(#"{"endpoint": "production", "http": 503, "count": 1}"#)
        try await add("production:http=500,count=1")
        try await add("production:close,count=1")
        try await add("production:not-json,count=1")
        try await add("any:latency=300,count=1")
        let listed = try #require(await Self.request(server.url + "/_forge/faults", method: "GET"))
        #expect(String(decoding: listed.body, as: UTF8.self).split(separator: "\n").count == 5)
        let refused = try #require(await Self.request(server.url + "/_forge/faults", Data("production:status=42".utf8)))
        #expect(refused.status == 400)

        let encoded = try JSONSerialization.data(withJSONObject: body)
        #expect(await Self.request(production, encoded)?.status == 503)
        #expect(await Self.request(production, encoded)?.status == 500)
        // The connection closes mid-body: the client sees a transport error or a truncated body, never valid JSON.
        if let truncated = await Self.request(production, encoded) {
            #expect((try? JSONSerialization.jsonObject(with: truncated.body)) == nil)
        }
        let page = try #require(await Self.request(production, encoded))
        #expect(page.status == 200 && (try? JSONSerialization.jsonObject(with: page.body)) == nil)
        let started = Date()
        #expect(Self.status(try await Self.verify(production, body)) == 0)
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(await Self.request(server.url + "/_forge/faults", method: "DELETE")?.status == 200)

        // The log: one line per request, statuses and faults as sent, never the password.
        let log = try #require(await Self.request(server.url + "/_forge/log", method: "GET"))
        let entries = String(decoding: log.body, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(entries.count == 9)
        #expect(entries.map { $0["httpStatus"] as? Int } == [200, 200, 200, 200, 503, 500, 200, 200, 200])
        #expect(entries.map { $0["status"] as? Int } == [21005, 21005, 0, 21199, nil, nil, nil, nil, 0])
        #expect(entries[6]["fault"] as? String == "production:close,count=1")
        #expect(entries.map { $0["seq"] as? Int } == Array(1...9))
        let file = try String(contentsOfFile: logFile, encoding: .utf8)
        #expect(file.split(separator: "\n").count == 9)
    }

    @Test("percent= faults are drawn from the seed: two servers with the same seed fail the same requests")
    func seededPercent() async throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        var patterns: [[Int?]] = []
        for _ in 0..<2 {
            let server = try Self.start(["--fault", "status=21009,percent=40", "--seed", "7"])
            defer { server.stop() }
            var pattern: [Int?] = []
            for _ in 0..<20 {
                pattern.append(Self.status(try await Self.verify(server.url + "/verifyReceipt", ["receipt-data": try fixture.base64("production-nonconsumable.der")])))
            }
            patterns.append(pattern)
        }
        #expect(patterns[0] == patterns[1])
        let failures = patterns[0].filter { $0 == 21009 }.count
        #expect(failures > 0 && failures < 20)
    }

    @Test("Python requests, calling as Apple says (production, then sandbox on 21007; retry when temporary), over HTTP and HTTPS with the TEST root trusted")
    func pythonClient() async throws {
        let python = repositoryRoot.appendingPathComponent(".oracles/requests/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else { return }  // .ci/run installs it
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let client = repositoryRoot.appendingPathComponent("examples/clients/verify_receipt_client.py").path
        func call(_ base: String, _ receipt: String, _ extra: [String] = []) throws -> (Int32, [String: Any]) {
            let result = try runBlocking(python, [client, base, fixture.path(receipt)] + extra)
            return (result.status, try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.stderr)"))
        }
        let server = try Self.start(["--fault", "production:status=21005,count=1"])
        defer { server.stop() }
        let (retried, retriedResult) = try call(server.url, "production-nonconsumable.der")
        #expect(retried == 0 && retriedResult["tried"] as? [String] == ["/verifyReceipt", "/verifyReceipt"])
        let (routed, routedResult) = try call(server.url, "sandbox-sub.der")
        #expect(routed == 0 && routedResult["tried"] as? [String] == ["/verifyReceipt", "/sandbox/verifyReceipt"])
        for fault in ["production:http=503,count=1", "production:close,count=1", "production:not-json,count=1"] {
            _ = await Self.requestBlocking(server.url + "/_forge/faults", Data(fault.utf8))
            let (failed, failedResult) = try call(server.url, "production-nonconsumable.der")
            #expect(failed == 2 && failedResult["status"] is NSNull, "\(fault): \(failedResult)")
        }

        let secure = try Self.start(["--tls"])
        defer { secure.stop() }
        let base = "https://127.0.0.1:\(secure.port)"
        let (trusted, trustedResult) = try call(base, "production-nonconsumable.der", ["--ca", certificate("root.pem")])
        #expect(trusted == 0, "\(trustedResult)")
        let (untrusted, _) = try call(base, "production-nonconsumable.der", ["--ca", certificate("foreign-root.pem")])
        #expect(untrusted == 2)
    }

    /// For the synchronous Python test: one request, waited for.
    static func requestBlocking(_ url: String, _ body: Data) async -> Int? { await request(url, body)?.status }

    @Test("The runner's --mapping verifyreceipt over the whole corpus: forge serve judges every vector as the reference validator does")
    func runnerMapping() throws {
        let server = try BlockingServer(forgeBinary, ["serve", "--listen", "127.0.0.1:0"])
        defer { server.stop() }
        let results = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: results) }
        let outcome = try forgeBlocking(
            "run", "--target", server.url + "/verifyReceipt", "--mapping", "verifyreceipt", "--profile", "apple-compatible",
            "--vectors", repositoryRoot.appendingPathComponent("Vectors").path, "--results", results.path, "--quiet")
        #expect(outcome.status == 0, "\(outcome.text)\(outcome.stderr)")
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])
        let rows = try #require(parsed["results"] as? [[String: Any]])
        // A mapping declares no artefacts: the receipts, all of them (verifyReceipt has no JWS).
        #expect(rows.count == corpusReceiptCount && rows.allSatisfy(agrees))
    }

    @Test("Bad flags and files are refused with Apple-free errors; SIGTERM stops the server cleanly")
    func lifecycle() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let badFault = try forgeBlocking("serve", "--fault", "production:status=200")
        #expect(badFault.status == 64 && badFault.stderr.contains("status 200"))
        let spec = directory.appendingPathComponent("no-now.json")
        try #"{"purchases": [{"productId": "p", "period": "P1M"}]}"#.write(to: spec, atomically: true, encoding: .utf8)
        let noNow = try forgeBlocking("serve", "--listen", "127.0.0.1:0", "--scenario", spec.path)
        #expect(noNow.status == 65 && noNow.stderr.contains("needs 'now'"))

        let server = try BlockingServer(forgeBinary, ["serve", "--listen", "127.0.0.1:0"])
        kill(server.process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while server.process.isRunning, Date() < deadline { usleep(50_000) }
        #expect(!server.process.isRunning)
        server.stop()
        #expect(server.process.terminationStatus == 0)
    }
}
