import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 22: `forge serve`'s App Store Server API as a process — its start-up lines, its flags, one socket smoke test
/// (the served JWS is `forge jws make`'s), and Apple's Python `app-store-server-library`
/// (`examples/clients/server_api_client.py`) end to end over a real socket, every signed field verified by Apple's
/// `SignedDataVerifier` under the TEST JWS root. What each route answers is proven in process, through the
/// application builder: `ServerAPIRouteTests`, `ServerAPIServedRouteTests`, `ServerAPIStateRouteTests`.
@Suite("forge serve: the App Store Server API", .timeLimit(.minutes(2)))
struct ServerAPITests {
    static let clock = "2025-01-01T00:00:00Z"
    static let later = "2025-03-01T00:00:00Z"
    /// The two customers of `examples/server-api/`: a sandbox one with 24 monthly periods and a non-consumable by
    /// `now`, two renewals and a refund of the non-consumable later; a production one of another app.
    static let examples = Repository.file("examples/server-api")
    static let sandbox = examples.appendingPathComponent("sandbox-customer.json").path
    static let production = examples.appendingPathComponent("production-customer.json").path
    /// The Python of `.oracles/asl` (Apple's library, requests and httpx): ``Oracle/appleLibrary``.
    static let python = Repository.file(".oracles/asl/bin/python")
    static let client = Repository.file("examples/clients/server_api_client.py").path
    static let jwsRoot = Repository.certificate("jws/jws-root-g3.pem")

    /// `forge serve` of both example customers at `now`.
    static func start(_ extra: [String] = ["--no-auth"], now: String = clock) async throws -> BackgroundServer {
        try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--now", now, "--scenario", sandbox, "--scenario", production] + extra)
    }

    /// The payload of what `forge jws make KIND -q --spec SPEC` prints.
    static func made(_ spec: String, kind: String = "transaction") async throws -> (compact: String, payload: [String: Any]) {
        let made = try await forge("jws", "make", kind, "-q", "--spec", spec)
        #expect(made.status == 0, "\(made.stderr)")
        let compact = made.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return (compact, payload(compact))
    }

    /// The id of the sandbox customer's latest transaction, as `forge jws make transaction --spec` makes it.
    static func latestSandboxTransaction() async throws -> String {
        try #require(try await made(sandbox).payload["transactionId"] as? String)
    }

    static func get(_ url: String) async -> (status: Int, contentType: String?, body: Data)? {
        guard let answer = try? await request(url) else { return nil }
        return (answer.status, answer.header("Content-Type"), answer.body)
    }

    static func payload(_ compact: String) -> [String: Any] {
        let parts = compact.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    static func object(_ data: Data) -> [String: Any] { (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:] }

    /// The request log's entries (`GET /_forge/log`, JSON Lines).
    static func log(_ server: BackgroundServer) async throws -> [[String: Any]] {
        let log = try await request(server.url + "/_forge/log")
        return log.text.split(separator: "\n").map { object(Data($0.utf8)) }
    }

    /// Apple's Python client's answers to `calls` (`server_api_client.py BASE --bundle-id … ARGS`, the calls on stdin).
    static func drive(_ base: String, _ calls: [[String: Any]], bundle: String = "com.example.api", _ extra: [String] = []) async throws -> [[String: Any]] {
        let result = try await run(
            try Oracle.appleLibrary.required(), [client, base, "--bundle-id", bundle, "--root", jwsRoot] + extra,
            stdin: try JSONSerialization.data(withJSONObject: calls))
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result.stderr)")
    }

    /// What `forge ARGUMENTS` (a server) writes on stdout at start-up, through the line that begins with `marker`: the
    /// server runs under `sh -c '… | tee FILE'`, so its first line still reaches ``BackgroundServer`` as the readiness
    /// signal while the file keeps every line, read until the marker's line is there.
    static func startupLines(_ arguments: [String], through marker: String) async throws -> [String] {
        try await withTemporaryDirectory { folder in
            let copy = folder.appendingPathComponent("stdout")
            let server = try await BackgroundServer.start(
                ["-c", #""$0" "$@" | tee '\#(copy.path)'"#, Binaries.forge.path] + arguments, executable: URL(fileURLWithPath: "/bin/sh"))
            defer { server.kill() }
            var lines: [String] = []
            try await eventually("the start-up lines through '\(marker)'", within: .seconds(30)) {
                lines = ((try? String(contentsOf: copy, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
                return lines.contains { $0.hasPrefix(marker) }
            }
            await server.stop()
            return lines
        }
    }

    @Test(
        "Socket smoke test: `forge jws make transaction --spec` and `forge serve --scenario` of the same file: the served signedTransactionInfo is the same JWS, byte for byte (sandbox and production)"
    )
    func sameJWSAsMake() async throws {
        let server = try await Self.start()
        defer { server.kill() }
        for (file, prefix) in [(Self.sandbox, "/sandbox"), (Self.production, "")] {
            let (compact, payload) = try await Self.made(file)
            let id = try #require(payload["transactionId"] as? String)
            let answer = try await request("\(server.url)\(prefix)/inApps/v1/transactions/\(id)")
            #expect(answer.status == 200 && answer.header("Content-Type") == "application/json")
            let served = try #require(try answer.json()["signedTransactionInfo"] as? String)
            #expect(served.split(separator: ".")[1] == compact.split(separator: ".")[1], "payload bytes")
            #expect(served == compact)
        }
    }

    @Test("Start-up names the Server API base URLs next to verifyReceipt's, and says how the API is opened")
    func startupLines() async throws {
        let open = try await Self.startupLines(["serve", "--listen", "127.0.0.1:0", "--now", Self.clock, "--scenario", Self.sandbox, "--no-auth"], through: "control")
        let base = try #require(open.first?.firstMatch(of: /(http:\/\/127\.0\.0\.1:\d+)/).map { String($0.1) })
        #expect(open.contains { $0 == "server api  \(base)/inApps (production)  \(base)/sandbox/inApps (sandbox)  --no-auth" }, "\(open)")
        let closed = try await Self.startupLines(["serve", "--listen", "127.0.0.1:0"], through: "control")
        #expect(closed.contains { $0.hasPrefix("server api ") && $0.hasSuffix("(401 until --api-key or --no-auth)") }, "\(closed)")
    }

    @Test(
        "Over the socket, Apple's sandbox host name in Host reaches the sandbox at the root, production's does not find a sandbox id (Python's requests sends Host as given)",
        .requires(.requests))
    func appleHostNameOverTheSocket() async throws {
        let id = try await Self.latestSandboxTransaction()
        let server = try await Self.start()
        defer { server.kill() }
        let script = """
            import requests, sys
            for host in ["api.storekit-sandbox.apple.com", "api.storekit.apple.com"]:
                print(requests.get(sys.argv[1], headers={"Host": host}, timeout=10).status_code)
            """
        let result = try await run(try Oracle.requests.required(), ["-c", script, "\(server.url)/inApps/v1/transactions/\(id)"])
        #expect(result.text.split(separator: "\n") == ["200", "404"], "\(result.stderr)")
    }

    @Test(
        "Apple's Python client end to end over a socket: transaction info, history v2 pages and filters, all subscription statuses, refund history (the refund once the clock passed it), app transaction info, consumption v1 and v2, finish transaction, production with its appAppleId, every JWS verified; APIException.api_error for each error; the async client (httpx) gets the same answers as the sync one",
        .requires(.appleLibrary))
    func appleClientEndToEnd() async throws {
        let latest = try await Self.latestSandboxTransaction()
        let productionID = try #require(try await Self.made(Self.production).payload["transactionId"] as? String)
        let server = try await Self.start()
        defer { server.kill() }

        let consumptionV1: [String: Any] = [
            "customerConsented": true, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": false, "deliveryStatus": 0,
            "appAccountToken": "", "accountTenure": 3, "playTime": 2, "lifetimeDollarsRefunded": 0, "lifetimeDollarsPurchased": 4, "userStatus": 1,
        ]
        let first = try await Self.drive(server.url, [["call": "history", "transactionId": latest]])[0]
        let revision = try #require(first["revision"] as? String)
        let results = try await Self.drive(
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

        // The async client (httpx) against the sync one: the same answers, errors as APIException too.
        let both: [[String: Any]] = [
            ["call": "info", "transactionId": latest], ["call": "history", "transactionId": latest], ["call": "statuses", "transactionId": latest],
            ["call": "refunds", "transactionId": latest], ["call": "appTransaction", "transactionId": latest], ["call": "finish", "transactionId": latest],
            ["call": "info", "transactionId": "12ab"], ["call": "info", "transactionId": "123456789"],
        ]
        let sync = try await Self.drive(server.url, both), asynchronous = try await Self.drive(server.url, both, ["--async"])
        #expect(asynchronous.prefix(6).allSatisfy { $0["ok"] as? Bool == true }, "\(asynchronous)")
        #expect(asynchronous.suffix(2).map { $0["apiError"] as? Int } == [4_000_006, 4_040_010])
        #expect(try JSONSerialization.data(withJSONObject: asynchronous, options: .sortedKeys) == JSONSerialization.data(withJSONObject: sync, options: .sortedKeys))

        // Production: the other customer at the root, verified with its appAppleId (Production requires it).
        let raw = try await request("\(server.url)/inApps/v2/history/\(productionID)")
        let appAppleID = try #require(try raw.json()["appAppleId"] as? Int)
        let production = try await Self.drive(
            server.url, [["call": "info", "transactionId": productionID], ["call": "statuses", "transactionId": productionID], ["call": "info", "transactionId": latest]],
            bundle: "com.example.prod", ["--environment", "production", "--app-apple-id", String(appAppleID)])
        #expect((production[0]["signedTransactionInfo"] as? [String: Any])?["environment"] as? String == "Production")
        #expect(production[1]["appAppleId"] as? Int == appAppleID)
        #expect(production[2]["apiError"] as? Int == 4_040_010, "a sandbox id is not found in production")

        // Later (the server's clock moved, as `POST /_forge/clock` moves it): the refund past the revision kept.
        #expect(try await post(server.url + "/_forge/clock", json: #"{"now":"\#(Self.later)"}"#).status == 200)
        let refunds = try await Self.drive(server.url, [["call": "refunds", "transactionId": latest, "revision": try #require(results[15]["revision"] as? String)]])
        #expect(((refunds[0]["signedTransactions"] as? [[String: Any]])?.map { $0["productId"] as? String }) == ["lifetime"])
    }

    /// `forge ca api-key --out DIR --seed 22`'s key id, issuer id and key file.
    static func apiKey(in folder: URL) async throws -> (keyID: String, issuerID: String, keyFile: String) {
        let made = try await forge("ca", "api-key", "--out", folder.appendingPathComponent("keys").path, "--seed", "22")
        #expect(made.status == 0, "\(made.stderr)")
        func value(_ label: String) throws -> String {
            try #require(
                made.text.split(separator: "\n").first { $0.hasPrefix(label + " ") }.map { String($0.dropFirst(label.count)).trimmingCharacters(in: .whitespaces) })
        }
        return (try value("key id"), try value("issuer id"), try value("key file"))
    }

    @Test("`forge serve --no-auth --api-key …` is a usage error: exit 64 naming the conflict")
    func noAuthConflictsWithAPIKey() async throws {
        try await withTemporaryDirectory { folder in
            let key = try await Self.apiKey(in: folder)
            let both = try await forge("serve", "--listen", "127.0.0.1:0", "--no-auth", "--api-key", "\(key.keyID)=\(key.keyFile)", "--issuer-id", key.issuerID)
            #expect(both.status == 64 && both.stderr.contains("--no-auth conflicts with --api-key"), "\(both.stderr)")
        }
    }

    @Test(
        "With a key from `forge ca api-key`, Apple's Python client's own tokens are accepted and answers are scoped to the token's app; a wrong issuer or an unknown key is 401 with an empty body, the log naming the rule, never the token",
        .requires(.appleLibrary))
    func apiKeyEndToEnd() async throws {
        try await withTemporaryDirectory { folder in
            let (keyID, issuerID, keyFile) = try await Self.apiKey(in: folder)
            let latest = try await Self.latestSandboxTransaction()
            let server = try await Self.start(["--api-key", "\(keyID)=\(keyFile)", "--issuer-id", issuerID])
            defer { server.kill() }
            func drive(bundle: String, key: String = keyID, issuer: String = issuerID) async throws -> [[String: Any]] {
                try await Self.drive(
                    server.url, [["call": "info", "transactionId": latest]], bundle: bundle,
                    ["--environment", "sandbox", "--key", keyFile, "--key-id", key, "--issuer-id", issuer])
            }
            let accepted = try await drive(bundle: "com.example.api")
            #expect(accepted.first?["ok"] as? Bool == true, "\(accepted)")
            // The production app's token does not see the sandbox app's customer: Apple scopes answers to `bid`.
            let otherApp = try await drive(bundle: "com.example.prod")
            #expect(otherApp.first?["apiError"] as? Int == 4_040_010, "\(otherApp)")
            let wrongIssuer = try await drive(bundle: "com.example.api", issuer: "00000000-0000-0000-0000-000000000000")
            #expect(wrongIssuer.first?["httpStatus"] as? Int == 401 && wrongIssuer.first?["apiError"] is NSNull, "\(wrongIssuer)")
            let unknownKey = try await drive(bundle: "com.example.api", key: "NOSUCHKEY1")
            #expect(unknownKey.first?["httpStatus"] as? Int == 401, "\(unknownKey)")
            let text = try await request(server.url + "/_forge/log").text
            let lines = text.split(separator: "\n").map { Self.object(Data($0.utf8)) }
            #expect(lines.map { $0["auth"] as? String } == [nil, nil, "iss", "kid"], "\(text)")
            #expect(lines.first?["kid"] as? String == keyID)
            #expect(!text.contains("Bearer") && !text.contains("eyJ"), "the log holds no token")
        }
    }
}
