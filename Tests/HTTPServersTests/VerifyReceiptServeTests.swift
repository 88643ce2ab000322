import Foundation
import _ForgeSupport
import ForgeTestSupport
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import ReferenceValidation
import StoreModel
import Testing

/// `forge serve`'s verifyReceipt endpoints and control routes in process, put together as `forge serve` puts them
/// (one state and clock for both APIs, the scenarios' histories, the bundled TEST PKI, faults from flags and the
/// control route, the request log): every status code, Apple's decoded shape, a scenario's history, faults and their
/// seeded percentages, and the faults route's round trip. Moved from the socket tests (`ServeCLITests`,
/// `ServeBindErrorTests`), which keep the command's contract and one smoke test.
@Suite("forge serve's verifyReceipt in process (app.test(.router))", .timeLimit(.minutes(2)))
struct VerifyReceiptServeTests {
    /// The server's clock (`--now`).
    static let clock = "2025-04-01T00:00:00Z"
    static let token = "t0ken"
    static var control: HTTPFields { [.authorization: "Bearer " + token] }

    static let history = """
        {"bundleId": "com.example.app", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-12-15T00:00:00Z", "period": "P1M"}],
         "timeline": [{"event": "renew", "count": 2}, {"event": "billing-retry", "at": "2025-03-15T00:00:00Z"},
                      {"event": "price-increase", "at": "2025-03-01T00:00:00Z", "consent": "accepted"}]}
        """
    static let deleted = """
        {"bundleId": "com.example.gone", "now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "lifetime"}],
         "timeline": [{"event": "account-deleted", "at": "2025-02-01T00:00:00Z"}]}
        """

    /// The receipts the tests send, as `forge make` makes them from the same scenarios (its flags, as JSON).
    enum Receipt: String, CaseIterable {
        case productionSubscription = #"{"now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "pro.yearly", "renewals": 1, "period": "P1Y"}]}"#
        case expiredSubscription = #"{"now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "pro.weekly", "expired": true}]}"#
        case sandboxSubscription = #"{"preset": "sandbox", "now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "pro.monthly", "renewals": 3}]}"#
        case nonConsumable = #"{"now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "lifetime", "type": "non-consumable"}]}"#
    }

    static func scenario(_ json: String) throws -> Scenario { try Scenario.decode(json: Data(json.utf8)) }

    /// A receipt of `json`, made at its `now` by `pki` (the bundled TEST PKI by default), in base64.
    static func receipt(_ json: String, pki: CertificateSet<CertificateRole>? = nil) throws -> String {
        let scenario = try scenario(json)
        let made = try #require(scenario.now.flatMap(ReceiptDate.parse))
        return Data(try Forge(receiptPKI: try pki ?? .bundled()).make(scenario, now: made).bytes).base64EncodedString()
    }

    static func receipt(_ kind: Receipt) throws -> String { try receipt(kind.rawValue) }

    /// `forge serve --now CLOCK --control-token t0ken [--scenario …] [--shared-secret …] [--legacy-expired-status]
    /// [--fault …] [--seed …]`, as `Serve.run` builds it.
    static func application(
        scenarios: [String] = [], sharedSecret: String? = nil, legacyExpired: Bool = false, faults: [String] = [], seed: UInt64 = 0,
        log: RequestLog? = nil
    ) throws -> ForgeApplication {
        let pki = try CertificateSet<CertificateRole>.bundled()
        let forge = try Forge(receiptPKI: pki)
        let now = try #require(ReceiptDate.parse(clock))
        let state = try ServerState(scenarios: try scenarios.map(scenario), now: now)
        let serverAPI = try ServerAPIService(state: state, forge: forge, configuration: .init(now: now, access: .closed))
        let service = VerifyReceiptService(
            configuration: .init(trustedRoots: [pki.certificate(.root)], sharedSecret: sharedSecret, legacyExpiredStatus: legacyExpired, now: now),
            histories: try ServerHistories(state: state, forge: forge))
        return try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: service, serverAPI: serverAPI,
            faults: try FaultPlan(try faults.map { try Fault(parsing: $0) }, seed: seed), log: try log ?? RequestLog(file: nil, capacity: 1000),
            controlToken: token)
    }

    static func object(_ body: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(String(buffer: body).utf8))) as? [String: Any] ?? [:]
    }

    /// verifyReceipt's answer at the production endpoint to `body` as JSON (HTTP 200 required).
    static func verify(_ client: some TestClientProtocol, _ body: [String: Any]) async throws -> [String: Any] {
        try await verify(client, "/verifyReceipt", body)
    }

    /// verifyReceipt's answer at `uri` to `body` as JSON (HTTP 200 required).
    static func verify(_ client: some TestClientProtocol, _ uri: String, _ body: [String: Any]) async throws -> [String: Any] {
        let answer = try await client.execute(uri: uri, method: .post, body: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        #expect(answer.status == .ok)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: answer.body).utf8)) as? [String: Any], "\(String(buffer: answer.body))")
        return json
    }

    static func status(_ json: [String: Any]) -> Int? { json["status"] as? Int }

    @Test(
        "Every status code verifyReceipt answers from the request itself: 0, 21000, 21002, 21003, 21004, 21007, 21008, 21010; the sandbox's 21003 without a password"
    )
    func statusCodes() async throws {
        let nonConsumable = try Self.receipt(.nonConsumable), subscription = try Self.receipt(.productionSubscription)
        let sandboxSubscription = try Self.receipt(.sandboxSubscription)
        let foreign = try Self.receipt(Receipt.nonConsumable.rawValue, pki: try CertificateSet<CertificateRole>.generate())
        let deleted = try Self.receipt(Self.deleted)
        try await Self.application(scenarios: [Self.history, Self.deleted], sharedSecret: "s3cret").test(.router) { client in
            let sandbox = "/sandbox/verifyReceipt"
            #expect(Self.status(try await Self.verify(client, ["receipt-data": nonConsumable])) == 0)
            // 21000: not a POST; a body that is not a JSON object.
            let get = try await client.execute(uri: "/verifyReceipt", method: .get)
            #expect(String(buffer: get.body) == #"{"status":21000}"#)
            let garbage = try await client.execute(uri: "/verifyReceipt", method: .post, body: ByteBuffer(string: "receipt=abc"))
            #expect(String(buffer: garbage.body) == #"{"status":21000}"#)
            // 21002: receipt-data missing, not base64, not a receipt.
            #expect(Self.status(try await Self.verify(client, ["password": "s3cret"])) == 21002)
            #expect(Self.status(try await Self.verify(client, ["receipt-data": "%%%"])) == 21002)
            #expect(Self.status(try await Self.verify(client, ["receipt-data": Data("hello".utf8).base64EncodedString()])) == 21002)
            // 21003: the chain ends at a root the server does not trust.
            let untrusted = try await Self.verify(client, ["receipt-data": foreign])
            #expect(Self.status(untrusted) == 21003 && (untrusted["forge_error_class"] as? String)?.hasPrefix("chain") == true, "\(untrusted)")
            // 21004: a subscription with a wrong or missing secret; the sandbox says 21003 when it is missing.
            #expect(Self.status(try await Self.verify(client, ["receipt-data": subscription, "password": "wrong"])) == 21004)
            #expect(Self.status(try await Self.verify(client, ["receipt-data": subscription])) == 21004)
            #expect(Self.status(try await Self.verify(client, ["receipt-data": subscription, "password": "s3cret"])) == 0)
            #expect(Self.status(try await Self.verify(client, sandbox, ["receipt-data": sandboxSubscription])) == 21003)
            #expect(Self.status(try await Self.verify(client, sandbox, ["receipt-data": sandboxSubscription, "password": "s3cret"])) == 0)
            // 21007 / 21008: the wrong endpoint for the receipt's environment.
            #expect(Self.status(try await Self.verify(client, ["receipt-data": sandboxSubscription, "password": "s3cret"])) == 21007)
            #expect(Self.status(try await Self.verify(client, sandbox, ["receipt-data": subscription, "password": "s3cret"])) == 21008)
            // 21010: the scenario's account was deleted before the server's clock.
            #expect(Self.status(try await Self.verify(client, ["receipt-data": deleted])) == 21010)
        }
    }

    @Test(
        "A valid receipt is decoded in Apple's shape; the scenario's timeline shows in latest_receipt_info, pending_renewal_info and a re-issued latest_receipt"
    )
    func decodedShapeAndHistory() async throws {
        let history = try Self.receipt(Self.history), sandboxSubscription = try Self.receipt(.sandboxSubscription)
        try await Self.application(scenarios: [Self.history]).test(.router) { client in
            let answer = try await Self.verify(client, ["receipt-data": history, "password": "any"])
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
            // latest_receipt is a receipt of the current state, valid under the TEST root at the server's clock.
            let latestReceipt = try #require((answer["latest_receipt"] as? String).flatMap { Data(base64Encoded: $0) })
            let at = try #require(ReceiptDate.parse(Self.clock))
            let report = ReferenceValidator().validate(
                Array(latestReceipt), context: ValidationContext(trustedRoots: [try CertificateSet<CertificateRole>.bundled().certificate(.root)], chainTime: at, now: at))
            let inspected = Inspection(receipt: report, source: "latest_receipt", inputSize: latestReceipt.count, includeChecks: true).json()
            #expect(inspected["verdict"]?.stringValue == "valid", "\(inspected.serialized(pretty: false))")
            #expect(inspected["decoded"]?["in_app"]?.arrayValue?.count == 3)

            let excluded = try await Self.verify(client, ["receipt-data": history, "exclude-old-transactions": true])
            #expect((excluded["latest_receipt_info"] as? [[String: Any]])?.map { $0["expires_date"] as? String } == ["2025-03-15 00:00:00 Etc/GMT"])
            // Without a history, a sandbox receipt is answered from itself.
            let plain = try await Self.verify(client, "/sandbox/verifyReceipt", ["receipt-data": sandboxSubscription])
            #expect(plain["environment"] as? String == "Sandbox" && (plain["latest_receipt_info"] as? [Any])?.count == 4)
        }
    }

    @Test("Field by field, the documented shape (receipt-facts §b.7): known keys only, strings except the four numeric ids, date triplets complete")
    func documentedShape() async throws {
        let history = try Self.receipt(Self.history)
        let answer = try await Self.application(scenarios: [Self.history]).test(.router) { client in try await Self.verify(client, ["receipt-data": history]) }
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
        let expired = try Self.receipt(.expiredSubscription), nonConsumable = try Self.receipt(.nonConsumable)
        try await Self.application(legacyExpired: true).test(.router) { client in
            let answer = try await Self.verify(client, ["receipt-data": expired])
            #expect(Self.status(answer) == 21006 && answer["receipt"] != nil)
            #expect(Self.status(try await Self.verify(client, ["receipt-data": nonConsumable])) == 0)
        }
    }

    @Test(
        "Faults by flag and by control route: statuses with is-retryable, HTTP 500/503, a closed connection, not JSON, latency, counts; all logged, in memory and in the --log file",
        .timeLimit(.minutes(1)))
    func faults() async throws {
        let nonConsumable = try Self.receipt(.nonConsumable)
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let logFile = folder.appendingPathComponent("requests.jsonl")
        let requestLog = try RequestLog(file: logFile, capacity: 1000)
        let application = try Self.application(
            faults: ["production:status=21005,count=2", "sandbox:status=21199,retryable=false,count=1"], log: requestLog)
        // Over a socket: the `close` fault closes the connection mid-body.
        try await application.test(.live) { client in
            let body = ["receipt-data": nonConsumable]
            #expect(Self.status(try await Self.verify(client, body)) == 21005)
            #expect(Self.status(try await Self.verify(client, body)) == 21005)
            #expect(Self.status(try await Self.verify(client, body)) == 0)
            let internalError = try await Self.verify(client, "/sandbox/verifyReceipt", body)
            #expect(Self.status(internalError) == 21199 && internalError["is-retryable"] as? Bool == false)

            func add(_ fault: String) async throws {
                let added = try await client.execute(uri: "/_forge/faults", method: .post, headers: Self.control, body: ByteBuffer(string: fault))
                #expect(added.status == .created, "\(String(buffer: added.body))")
            }
            try await add(#"{"endpoint": "production", "http": 503, "count": 1}"#)
            try await add("production:http=500,count=1")
            try await add("production:close,count=1")
            try await add("production:not-json,count=1")
            try await add("any:latency=300,count=1")
            let listed = try await client.execute(uri: "/_forge/faults", method: .get, headers: Self.control)
            #expect(String(buffer: listed.body).split(separator: "\n").count == 5)
            let refused = try await client.execute(uri: "/_forge/faults", method: .post, headers: Self.control, body: ByteBuffer(string: "production:status=42"))
            #expect(refused.status == .badRequest)

            let encoded = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body))
            #expect(try await client.execute(uri: "/verifyReceipt", method: .post, body: encoded).status.code == 503)
            #expect(try await client.execute(uri: "/verifyReceipt", method: .post, body: encoded).status.code == 500)
            // The connection closes mid-body: the client sees a transport error or a truncated body, never valid JSON. Sent on
            // a connection of its own (the test client's one keep-alive connection would be closed under the next requests).
            let port = try #require(client.port)
            if let truncated = try? await request("http://127.0.0.1:\(port)/verifyReceipt", method: "POST", body: Data(encoded.readableBytesView)) {
                #expect((try? JSONSerialization.jsonObject(with: truncated.body)) == nil)
            }
            let page = try await client.execute(uri: "/verifyReceipt", method: .post, body: encoded)
            #expect(page.status == .ok && (try? JSONSerialization.jsonObject(with: Data(String(buffer: page.body).utf8))) == nil)
            // A lower bound only: a loaded machine can make the answer later, never earlier.
            let started = ContinuousClock.now
            #expect(Self.status(try await Self.verify(client, body)) == 0)
            #expect(ContinuousClock.now - started >= .milliseconds(300))
            #expect(try await client.execute(uri: "/_forge/faults", method: .delete, headers: Self.control).status == .ok)

            // The log: one line per request, statuses and faults as sent, never the password.
            let log = try await client.execute(uri: "/_forge/log", method: .get, headers: Self.control)
            let entries = String(buffer: log.body).split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(entries.count == 9)
            #expect(entries.map { $0["httpStatus"] as? Int } == [200, 200, 200, 200, 503, 500, 200, 200, 200])
            #expect(entries.map { $0["status"] as? Int } == [21005, 21005, 0, 21199, nil, nil, nil, nil, 0])
            #expect(entries.count == 9 && entries[6]["fault"] as? String == "production:close,count=1")
            #expect(entries.map { $0["seq"] as? Int } == Array(1...9))
        }
        // The file is written by a thread of its own; `finish` completes it, as `forge serve` does when it stops.
        await requestLog.finish()
        let file = try String(contentsOf: logFile, encoding: .utf8)
        #expect(file.split(separator: "\n").count == 9 && requestLog.dropped == 0)
    }

    @Test("percent= faults are drawn from the seed: two servers with the same seed fail the same requests")
    func seededPercent() async throws {
        let nonConsumable = try Self.receipt(.nonConsumable)
        var patterns: [[Int?]] = []
        for _ in 0..<2 {
            let pattern = try await Self.application(faults: ["status=21009,percent=40"], seed: 7).test(.router) { client in
                var pattern: [Int?] = []
                for _ in 0..<20 { pattern.append(Self.status(try await Self.verify(client, ["receipt-data": nonConsumable]))) }
                return pattern
            }
            patterns.append(pattern)
        }
        #expect(patterns[0] == patterns[1])
        let failures = patterns[0].filter { $0 == 21009 }.count
        #expect(failures > 0 && failures < 20)
    }

    @Test("GET /_forge/faults answers JSON Lines, each line the object POST /_forge/faults takes: a round trip")
    func faultsRoundTrip() async throws {
        try await Self.application().test(.router) { client in
            let sent = [
                #"{"endpoint":"production","status":21005,"count":2}"#, "sandbox:http=503,percent=25,latency=10", "any:close,count=1",
                #"{"endpoint":"any","status":21199,"retryable":false}"#, "production:not-json",
            ]
            for fault in sent {
                let added = try await client.execute(uri: "/_forge/faults", method: .post, headers: Self.control, body: ByteBuffer(string: fault))
                #expect(added.status == .created, "\(fault): \(String(buffer: added.body))")
            }
            let listed = try await client.execute(uri: "/_forge/faults", method: .get, headers: Self.control)
            #expect(listed.status == .ok && listed.headers[.contentType] == "application/x-ndjson", "\(listed.headers)")
            let lines = String(buffer: listed.body).split(separator: "\n").map(String.init)
            #expect(lines.count == sent.count, "\(lines)")
            let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(objects.count == sent.count, "every line is a JSON object: \(lines)")
            #expect(objects.first?["endpoint"] as? String == "production" && objects.first?["status"] as? Int == 21005 && objects.first?["count"] as? Int == 2)
            #expect(objects.dropFirst(3).first?["retryable"] as? Bool == false)

            // What GET lists, POSTed back after a DELETE, lists the same.
            #expect(try await client.execute(uri: "/_forge/faults", method: .delete, headers: Self.control).status == .ok)
            for line in lines {
                let again = try await client.execute(uri: "/_forge/faults", method: .post, headers: Self.control, body: ByteBuffer(string: line))
                #expect(again.status == .created, "\(line)")
            }
            let relisted = try await client.execute(uri: "/_forge/faults", method: .get, headers: Self.control)
            #expect(String(buffer: relisted.body).split(separator: "\n").map(String.init) == lines)
        }
    }
}
