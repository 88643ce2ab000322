import Foundation
import ForgeTestSupport
import Testing
import ForgeSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 22: `forge serve`'s App Store Server API over a real socket, and driven end to end by Apple's Python
/// `app-store-server-library` (`examples/clients/server_api_client.py`), every signed field verified by Apple's
/// `SignedDataVerifier` under the TEST JWS root. The routes in process are in `ServerAPIRouteTests`.
@Suite("forge serve: the App Store Server API", .timeLimit(.minutes(10)))
struct ServerAPITests {
    static let clock = "2025-01-01T00:00:00Z"
    static let later = "2025-03-01T00:00:00Z"
    /// The two customers of `examples/server-api/`: a sandbox one with 24 monthly periods and a non-consumable by
    /// `now`, two renewals and a refund of the non-consumable later; a production one of another app.
    static let examples = repositoryRoot.appendingPathComponent("examples/server-api")
    static let python = repositoryRoot.appendingPathComponent(".oracles/asl/bin/python")
    static let client = repositoryRoot.appendingPathComponent("examples/clients/server_api_client.py").path
    static let jwsRoot = repositoryRoot.appendingPathComponent("Certificates/jws/jws-root-g3.pem").path

    struct Fixture {
        let directory: URL
        let sandbox = ServerAPITests.examples.appendingPathComponent("sandbox-customer.json").path
        let production = ServerAPITests.examples.appendingPathComponent("production-customer.json").path

        init() throws { directory = try temporaryDirectory() }

        /// The id of the sandbox customer's latest transaction, as `forge jws make transaction --spec` makes it.
        func latestSandboxTransaction() throws -> String {
            let made = try forgeBlocking("jws", "make", "transaction", "-q", "--spec", sandbox)
            return try #require(ServerAPITests.payload(made.text.trimmingCharacters(in: .whitespacesAndNewlines))["transactionId"] as? String)
        }
    }

    static func start(_ fixture: Fixture, _ extra: [String] = ["--no-auth"], now: String = clock) throws -> BlockingServer {
        try BlockingServer(forgeBinary, ["serve", "--listen", "127.0.0.1:0", "--now", now, "--scenario", fixture.sandbox, "--scenario", fixture.production] + extra)
    }

    static func get(_ url: String) async -> (status: Int, contentType: String?, body: Data)? {
        guard let url = URL(string: url), let (data, response) = try? await URLSession.shared.data(from: url), let http = response as? HTTPURLResponse else { return nil }
        return (http.statusCode, http.value(forHTTPHeaderField: "Content-Type"), data)
    }

    static func payload(_ compact: String) -> [String: Any] {
        let parts = compact.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    static func object(_ data: Data) -> [String: Any] { (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:] }

    @Test("`forge jws make transaction --spec` and `forge serve --scenario` of the same file: the served signedTransactionInfo is the same JWS, byte for byte")
    func sameJWSAsMake() async throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        for (file, prefix) in [(fixture.sandbox, "/sandbox"), (fixture.production, "")] {
            let made = try forgeBlocking("jws", "make", "transaction", "-q", "--spec", file)
            #expect(made.status == 0, "\(made.stderr)")
            let compact = made.text.trimmingCharacters(in: .whitespacesAndNewlines)
            let id = try #require(Self.payload(compact)["transactionId"] as? String)
            let server = try Self.start(fixture)
            defer { server.stop() }
            let answer = try #require(await Self.get("\(server.url)\(prefix)/inApps/v1/transactions/\(id)"))
            #expect(answer.status == 200 && answer.contentType == "application/json")
            let served = try #require(Self.object(answer.body)["signedTransactionInfo"] as? String)
            #expect(served.split(separator: ".")[1] == compact.split(separator: ".")[1], "payload bytes")
            #expect(served == compact)
        }
    }

    @Test("Start-up names the Server API base URLs next to verifyReceipt's; Apple's sandbox host name in Host reaches the sandbox at the root")
    func startupLinesAndHostName() async throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let process = Process()
        process.executableURL = forgeBinary
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--now", Self.clock, "--scenario", fixture.sandbox, "--no-auth"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        var text = Data()
        while !text.contains(Data("control".utf8)) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text.append(chunk)
        }
        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n")
        let base = try #require(lines.first?.firstMatch(of: /(http:\/\/127\.0\.0\.1:\d+)/).map { String($0.1) })
        #expect(lines.contains { $0 == "server api  \(base)/inApps (production)  \(base)/sandbox/inApps (sandbox)  --no-auth" }, "\(lines)")
        // Over the socket, Host: api.storekit-sandbox.apple.com at the root is the sandbox (Python's requests sends it as given).
        guard FileManager.default.isExecutableFile(atPath: Self.python.path) else { return }  // .ci/run installs it
        let id = try fixture.latestSandboxTransaction()
        let script = """
            import requests, sys
            for host in ["api.storekit-sandbox.apple.com", "api.storekit.apple.com"]:
                print(requests.get(sys.argv[1], headers={"Host": host}, timeout=10).status_code)
            """
        let result = try runBlocking(Self.python, ["-c", script, "\(base)/inApps/v1/transactions/\(id)"])
        #expect(result.text.split(separator: "\n") == ["200", "404"], "\(result.stderr)")
    }

    @Test("Apple's async Python client (httpx) gets the same answers as the sync one, signed fields verified, errors as APIException")
    func asyncPythonClient() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python.path),
            (try? runBlocking(Self.python, ["-c", "import httpx"]).status) == 0
        else { return }  // .ci/run installs both
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let latest = try fixture.latestSandboxTransaction()
        let server = try Self.start(fixture)
        defer { server.stop() }
        let calls: [[String: Any]] = [
            ["call": "info", "transactionId": latest], ["call": "history", "transactionId": latest], ["call": "statuses", "transactionId": latest],
            ["call": "refunds", "transactionId": latest], ["call": "appTransaction", "transactionId": latest], ["call": "finish", "transactionId": latest],
            ["call": "info", "transactionId": "12ab"], ["call": "info", "transactionId": "123456789"],
        ]
        func drive(_ extra: [String]) throws -> Data {
            let result = try runBlocking(
                Self.python, [Self.client, server.url, "--bundle-id", "com.example.api", "--root", Self.jwsRoot] + extra, stdin: try JSONSerialization.data(withJSONObject: calls))
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout
        }
        let sync = try drive([]), asynchronous = try drive(["--async"])
        let results = try #require(try JSONSerialization.jsonObject(with: asynchronous) as? [[String: Any]])
        #expect(results.prefix(6).allSatisfy { $0["ok"] as? Bool == true }, "\(results)")
        #expect(results.suffix(2).map { $0["apiError"] as? Int } == [4_000_006, 4_040_010])
        #expect(String(decoding: asynchronous, as: UTF8.self) == String(decoding: sync, as: UTF8.self))
        let log = try #require(await Self.get(server.url + "/_forge/log"))
        #expect(String(decoding: log.body, as: UTF8.self).split(separator: "\n").count == 2 * calls.count, "both clients reached the server")
    }

    @Test(
        "With a key from `forge ca api-key`, Apple's Python client's own tokens are accepted and answers are scoped to the token's app; a wrong issuer or an unknown key is 401 with an empty body, the log naming the rule, never the token"
    )
    func apiKeyEndToEnd() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python.path) else { return }  // .ci/run installs it
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let keys = fixture.directory.appendingPathComponent("keys").path
        let made = try forgeBlocking("ca", "api-key", "--out", keys, "--seed", "22")
        #expect(made.status == 0, "\(made.stderr)")
        func value(_ label: String) -> String? {
            made.text.split(separator: "\n").first { $0.hasPrefix(label + " ") }.map { String($0.dropFirst(label.count)).trimmingCharacters(in: .whitespaces) }
        }
        let keyID = try #require(value("key id")), issuerID = try #require(value("issuer id")), keyFile = try #require(value("key file"))
        let both = try forgeBlocking("serve", "--listen", "127.0.0.1:0", "--no-auth", "--api-key", "\(keyID)=\(keyFile)", "--issuer-id", issuerID)
        #expect(both.status == 64 && both.stderr.contains("--no-auth conflicts with --api-key"), "\(both.stderr)")
        let server = try Self.start(fixture, ["--api-key", "\(keyID)=\(keyFile)", "--issuer-id", issuerID])
        defer { server.stop() }
        func drive(bundle: String, environment: String = "sandbox", key: String = keyID, issuer: String = issuerID, _ calls: [[String: Any]]) throws -> [[String: Any]] {
            let result = try runBlocking(
                Self.python,
                [Self.client, server.url, "--bundle-id", bundle, "--environment", environment, "--root", Self.jwsRoot, "--key", keyFile, "--key-id", key, "--issuer-id", issuer],
                stdin: try JSONSerialization.data(withJSONObject: calls))
            #expect(result.status == 0, "\(result.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result.stderr)")
        }
        let latest = try fixture.latestSandboxTransaction()
        let accepted = try drive(bundle: "com.example.api", [["call": "info", "transactionId": latest]])
        #expect(accepted.first?["ok"] as? Bool == true, "\(accepted)")
        // The production app's token does not see the sandbox app's customer: Apple scopes answers to `bid`.
        let otherApp = try drive(bundle: "com.example.prod", [["call": "info", "transactionId": latest]])
        #expect(otherApp.first?["apiError"] as? Int == 4_040_010, "\(otherApp)")
        let wrongIssuer = try drive(bundle: "com.example.api", issuer: "00000000-0000-0000-0000-000000000000", [["call": "info", "transactionId": latest]])
        #expect(wrongIssuer.first?["httpStatus"] as? Int == 401 && wrongIssuer.first?["apiError"] is NSNull, "\(wrongIssuer)")
        let unknownKey = try drive(bundle: "com.example.api", key: "NOSUCHKEY1", [["call": "info", "transactionId": latest]])
        #expect(unknownKey.first?["httpStatus"] as? Int == 401, "\(unknownKey)")
        let log = try #require(await Self.get(server.url + "/_forge/log"))
        let text = String(decoding: log.body, as: UTF8.self)
        let lines = text.split(separator: "\n").map { Self.object(Data($0.utf8)) }
        #expect(lines.map { $0["auth"] as? String } == [nil, nil, "iss", "kid"], "\(text)")
        #expect(lines.first?["kid"] as? String == keyID)
        #expect(!text.contains("Bearer") && !text.contains("eyJ"), "the log holds no token")
    }

    @Test("Without --no-auth the /inApps routes answer 401 with an empty body over the socket; the request log names the endpoint")
    func closedByDefault() async throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let server = try Self.start(fixture, [])
        defer { server.stop() }
        for path in ["/inApps/v1/transactions/1", "/sandbox/inApps/v2/history/1", "/sandbox/inApps/v1/subscriptions/1"] {
            let answer = try #require(await Self.get(server.url + path))
            #expect(answer.status == 401 && answer.body.isEmpty, "\(path)")
        }
        let log = try #require(await Self.get(server.url + "/_forge/log"))
        let lines = String(decoding: log.body, as: UTF8.self).split(separator: "\n").map { Self.object(Data($0.utf8)) }
        #expect(lines.map { $0["endpoint"] as? String } == ["transactionInfo", "transactionHistory", "subscriptionStatuses"])
        #expect(lines.allSatisfy { $0["httpStatus"] as? Int == 401 })
    }

    @Test(
        "Apple's Python client end to end: transaction info, history v2 pages and filters, all subscription statuses, refund history, app transaction info, consumption v1 and v2, finish transaction, every JWS verified; APIException.api_error for each error"
    )
    func pythonClient() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python.path) else { return }  // .ci/run installs it
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        func drive(_ base: String, _ calls: [[String: Any]], bundle: String = "com.example.api", _ extra: [String] = []) throws -> [[String: Any]] {
            let result = try runBlocking(
                Self.python, [Self.client, base, "--bundle-id", bundle, "--root", Self.jwsRoot] + extra,
                stdin: try JSONSerialization.data(withJSONObject: calls))
            #expect(result.status == 0, "\(result.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result.stderr)")
        }
        let latest = try fixture.latestSandboxTransaction()
        let server = try Self.start(fixture)
        defer { server.stop() }

        let consumptionV1: [String: Any] = [
            "customerConsented": true, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": false, "deliveryStatus": 0,
            "appAccountToken": "", "accountTenure": 3, "playTime": 2, "lifetimeDollarsRefunded": 0, "lifetimeDollarsPurchased": 4, "userStatus": 1,
        ]
        let first = try drive(server.url, [["call": "history", "transactionId": latest]])[0]
        let revision = try #require(first["revision"] as? String)
        let results = try drive(
            server.url,
            [
                ["call": "info", "transactionId": latest],
                ["call": "history", "transactionId": latest, "revision": revision],
                ["call": "history", "transactionId": latest, "productIds": ["lifetime"], "sort": "DESCENDING"],
                ["call": "history", "transactionId": latest, "productTypes": ["AUTO_RENEWABLE"], "startDate": 1_704_067_200_000, "endDate": 1_719_792_000_000],
                ["call": "history", "transactionId": latest, "revoked": false, "inAppOwnershipType": "PURCHASED"],
                ["call": "statuses", "transactionId": latest],
                ["call": "statuses", "transactionId": latest, "status": [2]],
                ["call": "info", "transactionId": "12ab"],
                ["call": "info", "transactionId": "123456789"],
                ["call": "history", "transactionId": latest, "revision": "not-a-revision"],
                ["call": "history", "transactionId": latest, "startDate": 1_719_792_000_000, "endDate": 1_704_067_200_000],
                ["call": "raw", "path": "/inApps/v2/history/\(latest)", "query": ["sort": ["UPWARDS"]]],
                ["call": "raw", "path": "/inApps/v2/history/\(latest)", "query": ["productType": ["SUBSCRIPTION"]]],
                ["call": "raw", "path": "/inApps/v2/history/\(latest)", "query": ["revoked": ["perhaps"]]],
                ["call": "raw", "path": "/inApps/v1/subscriptions/\(latest)", "query": ["status": ["9"]]],
                ["call": "refunds", "transactionId": latest],
                ["call": "appTransaction", "transactionId": latest],
                ["call": "refunds", "transactionId": latest, "revision": "%%"],
                [
                    "call": "consumption", "transactionId": latest,
                    "request": ["customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "DELIVERED", "refundPreference": "DECLINE"],
                ],
                [
                    "call": "consumption", "transactionId": latest,
                    "request": ["customerConsented": false, "sampleContentProvided": false, "deliveryStatus": "DELIVERED"],
                ],
                ["call": "finish", "transactionId": latest],
                ["call": "finish", "transactionId": "999999999"],
                ["call": "consumptionV1", "transactionId": latest, "request": consumptionV1],
                ["call": "consumptionV1", "transactionId": latest, "request": consumptionV1.merging(["appAccountToken": "not-a-uuid"]) { $1 }],
            ])
        #expect((results[0]["signedTransactionInfo"] as? [String: Any])?["transactionId"] as? String == latest)
        #expect((first["signedTransactions"] as? [Any])?.count == 20 && first["hasMore"] as? Bool == true)
        #expect((results[1]["signedTransactions"] as? [Any])?.count == 5 && results[1]["hasMore"] as? Bool == false)
        #expect(first["environment"] as? String == "Sandbox" && first["bundleId"] as? String == "com.example.api")
        #expect(((results[2]["signedTransactions"] as? [[String: Any]])?.map { $0["productId"] as? String }) == ["lifetime"])
        #expect((results[3]["signedTransactions"] as? [Any])?.count == 6)
        #expect((results[4]["signedTransactions"] as? [Any])?.count == 20)
        let group = (results[5]["data"] as? [[String: Any]])?.first
        let last = (group?["lastTransactions"] as? [[String: Any]])?.first
        #expect(last?["status"] as? Int == 1 && (last?["signedTransactionInfo"] as? [String: Any])?["transactionId"] as? String == latest)
        #expect((last?["signedRenewalInfo"] as? [String: Any])?["autoRenewStatus"] as? Int == 1)
        #expect((results[6]["data"] as? [Any])?.isEmpty == true)
        for (index, status, code) in [
            (7, 400, 4_000_006), (8, 404, 4_040_010), (9, 400, 4_000_005), (10, 400, 4_000_013), (11, 400, 4_000_021), (12, 400, 4_000_022),
            (13, 400, 4_000_030), (14, 400, 4_000_031), (17, 400, 4_000_005), (19, 400, 4_000_035), (21, 404, 4_040_010), (23, 400, 4_000_033),
        ] {
            #expect(results[index]["ok"] as? Bool == false && results[index]["httpStatus"] as? Int == status, "\(index): \(results[index])")
            #expect(results[index]["apiError"] as? Int == code, "\(index): \(results[index])")
        }
        #expect((results[15]["signedTransactions"] as? [Any])?.isEmpty == true && results[15]["hasMore"] as? Bool == false)
        #expect((results[16]["signedAppTransactionInfo"] as? [String: Any])?["bundleId"] as? String == "com.example.api")
        #expect(results[18]["ok"] as? Bool == true, "consumption accepted (202): \(results[18])")
        #expect(results[20]["ok"] as? Bool == true, "transaction finished: \(results[20])")
        #expect(results[22]["ok"] as? Bool == true, "consumption v1 accepted (202): \(results[22])")

        // Later (X-Forge-Now is the server's clock per request; here a second server at the later clock): the refund.
        let laterServer = try Self.start(fixture, now: Self.later)
        defer { laterServer.stop() }
        let refunds = try drive(laterServer.url, [["call": "refunds", "transactionId": latest, "revision": try #require(results[15]["revision"] as? String)]])
        #expect(((refunds[0]["signedTransactions"] as? [[String: Any]])?.map { $0["productId"] as? String }) == ["lifetime"])

        // Production: the other customer at the root, verified with its appAppleId (Production requires it).
        let madeProduction = try forgeBlocking("jws", "make", "transaction", "-q", "--spec", fixture.production)
        let productionID = try #require(Self.payload(madeProduction.text.trimmingCharacters(in: .whitespacesAndNewlines))["transactionId"] as? String)
        let raw = try #require(await Self.get("\(server.url)/inApps/v2/history/\(productionID)"))
        let appAppleID = try #require(Self.object(raw.body)["appAppleId"] as? Int)
        let production = try drive(
            server.url, [["call": "info", "transactionId": productionID], ["call": "statuses", "transactionId": productionID], ["call": "info", "transactionId": latest]],
            bundle: "com.example.prod", ["--environment", "production", "--app-apple-id", String(appAppleID)])
        #expect((production[0]["signedTransactionInfo"] as? [String: Any])?["environment"] as? String == "Production")
        #expect(production[1]["appAppleId"] as? Int == appAppleID)
        #expect(production[2]["apiError"] as? Int == 4_040_010, "a sandbox id is not found in production")
    }
}
