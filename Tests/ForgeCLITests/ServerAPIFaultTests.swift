import Foundation
import ForgeTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 22 item 6: faults on the App Store Server API over a real socket, as Apple's Python client
/// (`app-store-server-library`, sync and httpx) meets them, and `--fault`'s refusals. The faults themselves (each kind,
/// `percent=` seeded, after authentication and the rate limit) are proven in process in `ServerAPIFaultRouteTests`.
@Suite("forge serve: Server API faults", .timeLimit(.minutes(2)))
struct ServerAPIFaultTests {
    /// Runs steps through `examples/clients/server_api_client.py`'s `Driver` and reports what Apple's client raised:
    /// a step `{"fault": SPEC}` adds a fault through `POST /_forge/faults`; a call answers
    /// `{"kind": "ok"|"api"|"transport", "httpStatus", "rawApiError", "apiError" (the APIError's name), "type", "seconds"}`.
    static let driver = #"""
        import json, sys, time, urllib.request
        import httpx, requests
        sys.path.insert(0, sys.argv[1])
        from server_api_client import Driver
        from appstoreserverlibrary.api_client import APIException

        clients, base, bundle, root, mode = sys.argv[1:6]
        key = sys.argv[6:9] if len(sys.argv) > 6 else [None, "FORGETEST1", "00000000-0000-0000-0000-000000000000"]
        driver = Driver(base, bundle, "sandbox", None, root, key[0], key[1], key[2], mode == "async")
        results = []
        for step in json.load(sys.stdin):
            if "fault" in step:
                request = urllib.request.Request(base + "/_forge/faults", data=json.dumps(step["fault"]).encode(), method="POST",
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=10) as answer:
                    results.append({"added": answer.read().decode().strip()})
                continue
            started = time.monotonic()
            try:
                getattr(driver, step["call"])(step)
                result = {"kind": "ok"}
            except APIException as error:
                result = {"kind": "api", "httpStatus": error.http_status_code, "rawApiError": error.raw_api_error,
                          "apiError": error.api_error.name if error.api_error is not None else None}
            except (requests.exceptions.RequestException, httpx.TransportError) as error:
                result = {"kind": "transport", "type": type(error).__name__}
            result["seconds"] = time.monotonic() - started
            results.append(result)
        if mode == "async":
            driver.client.close()
        json.dump(results, sys.stdout)
        """#

    /// The driver's results for `steps` against `server`, as the sync or the async client meets them.
    static func drive(_ server: BackgroundServer, _ steps: [[String: Any]], async: Bool = false, key: [String] = []) async throws -> [[String: Any]] {
        let clients = Repository.file("examples/clients").path
        let result = try await run(
            try Oracle.appleLibrary.required(),
            ["-c", driver, clients, server.url, "com.example.api", ServerAPITests.jwsRoot, async ? "async" : "sync"] + key,
            stdin: try JSONSerialization.data(withJSONObject: steps))
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result.stderr)")
    }

    @Test(
        "Apple's Python client (sync and httpx): 5000001 is APIException GENERAL_INTERNAL_RETRYABLE once with count=1, http=503 and not-json APIException without a code, close a transport error, latency a late but correct answer",
        .requires(.appleLibrary))
    func pythonClientMeetsEachFault() async throws {
        let id = try await ServerAPITests.latestSandboxTransaction()
        let server = try await ServerAPITests.start()
        defer { server.kill() }
        let steps: [[String: Any]] = [
            ["fault": "sandbox/transactionInfo:status=5000001,count=1"], ["call": "info", "transactionId": id], ["call": "info", "transactionId": id],
            ["fault": "transactionHistory:http=503,count=1"], ["call": "history", "transactionId": id],
            ["fault": "sandbox/subscriptionStatuses:not-json,count=1"], ["call": "statuses", "transactionId": id],
            ["fault": "sandbox/appTransactionInfo:close,count=1"], ["call": "appTransaction", "transactionId": id],
            ["call": "appTransaction", "transactionId": id],
            ["fault": "sandbox/any:latency=1500,count=1"], ["call": "refunds", "transactionId": id],
        ]
        for asynchronous in [false, true] {
            let results = try await Self.drive(server, steps, async: asynchronous)
            let calls = results.filter { $0["added"] == nil }
            try #require(calls.count == 7, "\(results)")
            let retryable = calls[0]
            #expect(retryable["kind"] as? String == "api" && retryable["httpStatus"] as? Int == 500, "\(retryable)")
            #expect(retryable["rawApiError"] as? Int == 5_000_001 && retryable["apiError"] as? String == "GENERAL_INTERNAL_RETRYABLE", "\(retryable)")
            #expect(calls[1]["kind"] as? String == "ok", "count=1: the next call is answered")
            for (call, status) in [(calls[2], 503), (calls[3], 503)] {
                #expect(call["kind"] as? String == "api" && call["httpStatus"] as? Int == status && call["rawApiError"] is NSNull, "\(call)")
            }
            #expect(calls[4]["kind"] as? String == "transport", "close: \(calls[4])")
            #expect(calls[5]["kind"] as? String == "ok", "after close: \(calls[5])")
            // A lower bound only: a loaded machine makes the answer later, never earlier.
            #expect(calls[6]["kind"] as? String == "ok" && (calls[6]["seconds"] as? Double ?? 0) >= 1.5, "latency: \(calls[6])")
        }
        let faulted = try await ServerAPITests.log(server).compactMap { $0["fault"] as? String }
        let once = [
            "sandbox/transactionInfo:status=5000001,count=1", "transactionHistory:http=503,count=1", "sandbox/subscriptionStatuses:not-json,count=1",
            "sandbox/appTransactionInfo:close,count=1", "sandbox/any:latency=1500,count=1",
        ]
        #expect(faulted == once + once, "each fault applied once per client")
    }

    @Test("--fault …,percent=P with --seed: the flag reaches the server's generator, so the same seed fails the same requests over the socket")
    func percentIsSeeded() async throws {
        let id = try await ServerAPITests.latestSandboxTransaction()
        func pattern() async throws -> [Int] {
            let server = try await ServerAPITests.start(["--no-auth", "--fault", "sandbox/transactionInfo:status=5000001,percent=40", "--seed", "11"])
            defer { server.kill() }
            var statuses: [Int] = []
            for _ in 0..<20 { statuses.append(try await request("\(server.url)/sandbox/inApps/v1/transactions/\(id)").status) }
            return statuses
        }
        let first = try await pattern()
        #expect(Set(first) == [200, 500], "\(first)")
        #expect(try await pattern() == first)
    }

    @Test(
        "Behind an API key: a refused token is 401 and leaves the fault for the next accepted request; each log line names the endpoint, the accepted kid or the refused rule, httpStatus, errorCode and the fault, never the token",
        .requires(.appleLibrary))
    func loggedWithAuthentication() async throws {
        try await withTemporaryDirectory { folder in
            let (keyID, issuerID, keyFile) = try await ServerAPITests.apiKey(in: folder)
            let id = try await ServerAPITests.latestSandboxTransaction()
            let server = try await ServerAPITests.start(["--api-key", "\(keyID)=\(keyFile)", "--issuer-id", issuerID, "--fault", "any/any:status=5000001,count=1"])
            defer { server.kill() }
            let wrongIssuer = try await Self.drive(server, [["call": "info", "transactionId": id]], key: [keyFile, keyID, "00000000-0000-0000-0000-000000000000"])
            #expect(wrongIssuer.first?["httpStatus"] as? Int == 401, "\(wrongIssuer)")
            let accepted = try await Self.drive(server, [["call": "info", "transactionId": id], ["call": "info", "transactionId": id]], key: [keyFile, keyID, issuerID])
            #expect(accepted.map { $0["rawApiError"] as? Int } == [5_000_001, nil] && accepted.last?["kind"] as? String == "ok", "\(accepted)")
            let log = try await ServerAPITests.log(server)
            #expect(log.map { $0["endpoint"] as? String } == ["transactionInfo", "transactionInfo", "transactionInfo"])
            #expect(log.map { $0["auth"] as? String } == ["iss", nil, nil] && log.map { $0["kid"] as? String } == [nil, keyID, keyID], "\(log)")
            #expect(log.map { $0["httpStatus"] as? Int } == [401, 500, 200] && log.map { $0["errorCode"] as? Int } == [nil, 5_000_001, nil])
            #expect(log.map { $0["fault"] as? String } == [nil, "any/any:status=5000001,count=1", nil])
            let text = try await request(server.url + "/_forge/log").text
            #expect(!text.contains("eyJ") && !text.contains("Bearer"), "no token in the log")
        }
    }

    @Test("`forge serve --fault` refuses a spec that mixes the APIs or names no endpoint: exit 64 and the reason")
    func refusedFlags() async throws {
        for (spec, reason) in [
            ("sandbox/transactionInfo:status=21005", "21005 is a verifyReceipt status"), ("production:status=5000001", "5000001 is an App Store Server API error"),
            ("transactionInfos:close", "transactionInfo, transactionHistory"),
        ] {
            let result = try await forge("serve", "--listen", "127.0.0.1:0", "--no-auth", "--fault", spec)
            #expect(result.status == 64 && result.stderr.contains(reason), "\(spec): \(result.stderr)")
        }
    }
}
