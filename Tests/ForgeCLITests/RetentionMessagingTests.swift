import Foundation
import ForgeTestSupport
import Testing

/// Issue 40, item 4: the Retention Messaging API of `forge serve` driven by Apple's own Python client (3.1.2, through
/// `examples/clients/server_api_client.py`) over a socket, every one of its 14 methods; the performance test's realtime
/// requests go to `examples/receivers/realtime_endpoint.py`, which verifies each with Apple's `SignedDataVerifier`
/// (`verify_and_decode_realtime_request`). The routes' limits and errors one by one are in
/// `Tests/HTTPServersTests/RetentionMessagingRouteTests.swift`.
@Suite("The Retention Messaging API, driven by Apple's Python client over a socket", .timeLimit(.minutes(2)), .requires(.appleLibrary))
struct RetentionMessagingTests {
    static let endpoint = Repository.file("examples/receivers/realtime_endpoint.py").path
    static let image = "11111111-1111-4111-8111-111111111111"
    static let bullet = "22222222-2222-4222-8222-222222222222"
    static let message = "aaaaaaaa-1111-4111-8111-111111111111"

    @Test(
        "All 14 methods of Apple's client: images, messages, default messages, realtime URL, and a performance test whose every realtime request Apple's verifier accepts; APIException.api_error for Apple's codes"
    )
    func appleClientEveryMethod() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("record.jsonl")
        let receiver = try await BackgroundServer.start(
            [Self.endpoint, "--root", ServerAPITests.jwsRoot, "--bundle-id", "com.example.api", "--record", record.path],
            executable: try Oracle.appleLibrary.required())
        defer { receiver.kill() }
        let original = try #require(try await ServerAPITests.made(ServerAPITests.sandbox).payload["originalTransactionId"] as? String)
        let server = try await ServerAPITests.start()
        defer { server.kill() }
        let target = receiver.url + "/retention"

        let results = try await ServerAPITests.drive(
            server.url,
            [
                ["call": "uploadImage", "imageIdentifier": Self.image],
                ["call": "uploadImage", "imageIdentifier": Self.bullet, "width": 64, "height": 64, "imageSize": "BULLET_POINT"],
                ["call": "uploadImage", "imageIdentifier": Self.image],
                ["call": "uploadImage", "imageIdentifier": "33333333-3333-4333-8333-333333333333", "alpha": true],
                ["call": "imageList"],
                [
                    "call": "uploadMessage", "messageIdentifier": Self.message, "header": "Stay a while", "body": "Your plan keeps every feature.",
                    "image": ["imageIdentifier": Self.image, "altText": "A banner"], "headerPosition": "ABOVE_IMAGE",
                    "bulletPoints": [["text": "Fast sync", "imageIdentifier": Self.bullet, "altText": "A bolt"]],
                ],
                ["call": "messageList"],
                ["call": "configureDefaultMessage", "productId": "pro.monthly", "locale": "en-US", "messageIdentifier": Self.message],
                ["call": "defaultMessage", "productId": "pro.monthly", "locale": "en-US"],
                ["call": "deleteDefaultMessage", "productId": "pro.monthly", "locale": "en-US"],
                ["call": "defaultMessage", "productId": "pro.monthly", "locale": "en-US"],
                ["call": "deleteImage", "imageIdentifier": Self.image],
                ["call": "realtimeURL"],
                ["call": "configureRealtimeURL", "realtimeURL": target],
                ["call": "realtimeURL"],
                ["call": "raw", "method": "PUT", "path": "/inApps/v1/messaging/message/\(Self.message)", "body": ["header": String(repeating: "h", count: 67), "body": "b"]],
                ["call": "initiatePerformanceTest", "originalTransactionId": original],
                ["call": "initiatePerformanceTest", "originalTransactionId": original],
                ["call": "performanceTestResults", "requestId": "99999999-9999-4999-8999-999999999999"],
            ])
        let ok = [0, 1, 5, 7, 9, 13]
        for index in ok { #expect(results[index]["ok"] as? Bool == true, "\(index): \(results[index])") }
        for (index, status, code) in [
            (2, 409, 4_090_000), (3, 400, 4_000_161), (10, 404, 4_040_020), (11, 403, 4_030_019), (12, 404, 4_040_021), (15, 400, 4_000_162), (17, 400, 4_000_213),
            (18, 404, 4_040_018),
        ] {
            #expect(results[index]["ok"] as? Bool == false && results[index]["httpStatus"] as? Int == status, "\(index): \(results[index])")
            #expect(results[index]["apiError"] as? Int == code, "\(index): \(results[index])")
        }
        #expect(
            results[4]["imageIdentifiers"] as? [[String: String]] == [
                ["imageIdentifier": Self.image, "imageState": "APPROVED", "imageSize": "FULL_SIZE"],
                ["imageIdentifier": Self.bullet, "imageState": "APPROVED", "imageSize": "BULLET_POINT"],
            ])
        #expect(results[6]["messageIdentifiers"] as? [[String: String]] == [["messageIdentifier": Self.message, "messageState": "APPROVED"]])
        #expect(results[8]["messageIdentifier"] as? String == Self.message)
        #expect(results[14]["realtimeURL"] as? String == target)
        let requestID = try #require(results[16]["requestId"] as? String, "\(results[16])")
        #expect((results[16]["config"] as? [String: Int])?["responseTimeThreshold"] == 700)

        // Apple's client polls while PENDING (the test runs in the background); then the outcome in Apple's shape.
        let outcome = try await ServerAPITests.drive(server.url, [["call": "performanceTestResults", "requestId": requestID, "waitSeconds": 90]])[0]
        #expect(outcome["numPending"] as? Int == 0 && outcome["target"] as? String == target, "\(outcome)")
        let times = try #require(outcome["responseTimes"] as? [String: Int], "\(outcome)")
        #expect(Set(times.keys) == ["average", "p50", "p90", "p95", "p99"])
        // Only an answer over Apple's 700 ms (a loaded machine) may fail it: the receiver answers every request.
        let failures = outcome["failures"] as? [String: Int] ?? [:]
        #expect(Set(failures.keys).isSubset(of: ["TIMED_OUT"]), "\(outcome)")
        let passed = outcome["result"] as? String == "PASS"
        #expect(passed || outcome["result"] as? String == "FAIL")
        let records = ((try? String(contentsOf: record, encoding: .utf8)) ?? "").split(separator: "\n").map {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
        }
        #expect(records.count == 50 && records.allSatisfy { $0["verified"] as? Bool == true }, "\(records.prefix(2))")
        #expect(Set(records.compactMap { $0["requestIdentifier"] as? String }).count == 50)

        // Production: its realtime URL opens once the sandbox's test passed (4030026 before), and the rest of the methods.
        let production = try await ServerAPITests.drive(
            server.url,
            [
                ["call": "configureRealtimeURL", "realtimeURL": target], ["call": "realtimeURL"], ["call": "deleteRealtimeURL"],
                ["call": "deleteRealtimeURL"],
            ], bundle: "com.example.prod", ["--environment", "production", "--app-apple-id", "1"])
        if passed {
            #expect(production[0]["ok"] as? Bool == true && production[1]["realtimeURL"] as? String == target, "\(production)")
            #expect(production[2]["ok"] as? Bool == true && production[3]["apiError"] as? Int == 4_040_021, "\(production)")
        } else {
            #expect(production[0]["apiError"] as? Int == 4_030_026, "\(production)")
        }
        let sandbox = try await ServerAPITests.drive(
            server.url,
            [
                ["call": "deleteMessage", "messageIdentifier": Self.message], ["call": "deleteMessage", "messageIdentifier": Self.message],
                ["call": "deleteImage", "imageIdentifier": Self.image], ["call": "deleteRealtimeURL"], ["call": "messageList"],
            ])
        #expect(sandbox.map { $0["ok"] as? Bool } == [true, false, true, true, true], "\(sandbox)")
        #expect(sandbox[1]["apiError"] as? Int == 4_040_015 && (sandbox[4]["messageIdentifiers"] as? [Any])?.isEmpty == true)
    }
}
