import Foundation
import Hummingbird
import NIOCore
import StoreServer
import HTTPServers
import Synchronization
import Testing
import _ForgeSupport
import ForgeTestSupport

/// Issue 40, item 4: the Retention Messaging API of `forge serve` in process, through the same application builder as
/// forge-http, beside the App Store Server API (its mounts, errors and state). Apple's Python client drives every method
/// over a socket in `Tests/ForgeCLITests/RetentionMessagingTests.swift`.
@Suite("The Retention Messaging API in process (app.test(.router))", .timeLimit(.minutes(2)))
struct RetentionMessagingRouteTests {
    static let image = "11111111-1111-4111-8111-111111111111"
    static let bullet = "22222222-2222-4222-8222-222222222222"
    static let message = "aaaaaaaa-1111-4111-8111-111111111111"
    static let base = "/sandbox/inApps/v1/messaging"

    /// A PNG as far as Upload Image reads one: signature, `IHDR` (RGB, or RGBA with `alpha`), an `IDAT`, `IEND`.
    static func png(width: UInt32 = 3840, height: UInt32 = 160, alpha: Bool = false, transparencyChunk: Bool = false) -> ByteBuffer {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let length = UInt32(data.count)
            return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + Array(type.utf8) + data + [0, 0, 0, 0]
        }
        func word(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += chunk("IHDR", word(width) + word(height) + [8, alpha ? 6 : 2, 0, 0, 0])
        if transparencyChunk { bytes += chunk("tRNS", [0, 0, 0, 0, 0, 0]) }
        bytes += chunk("IDAT", [0x78, 0x9C, 0x03, 0x00]) + chunk("IEND", [])
        return ByteBuffer(bytes: bytes)
    }

    static func json(_ object: Any) throws -> ByteBuffer { ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object)) }

    static func expectOK(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .ok && response.body.readableBytes == 0, "\(response.status) \(String(buffer: response.body))", sourceLocation: sourceLocation)
    }

    @Test(
        "Images, messages, default messages and the realtime URL: Apple's paths and methods, its limits and error codes (4000161-4000224, 4030019, 4030026, 4040014-4040021, 4090000/1), approved at upload"
    )
    func configuration() async throws {
        try await ServerAPIRouteTests.application().test(.router) { client in
            func put(_ path: String, _ body: ByteBuffer) async throws -> TestResponse { try await client.execute(uri: Self.base + path, method: .put, body: body) }
            func get(_ path: String) async throws -> TestResponse { try await client.execute(uri: Self.base + path, method: .get) }
            func delete(_ path: String) async throws -> TestResponse { try await client.execute(uri: Self.base + path, method: .delete) }
            let expectError = { (response: TestResponse, error: ServerAPIError) in ServerAPIRouteTests.expectError(response, error) }

            // Images: a full-size PNG without transparency, Apple's size; a bullet point of any size.
            Self.expectOK(try await put("/image/\(Self.image)", Self.png()))
            expectError(try await put("/image/\(Self.image)", Self.png()), .imageAlreadyExists)
            expectError(try await put("/image/33333333-3333-4333-8333-333333333333", Self.png(alpha: true)), .invalidImage)
            expectError(try await put("/image/33333333-3333-4333-8333-333333333333", Self.png(transparencyChunk: true)), .invalidImage)
            expectError(try await put("/image/33333333-3333-4333-8333-333333333333", ByteBuffer(string: "GIF89a")), .invalidImage)
            expectError(try await put("/image/33333333-3333-4333-8333-333333333333", Self.png(height: 159)), .badRequestImageSize)
            expectError(try await put("/image/33333333-3333-4333-8333-333333333333", Self.png(width: 1920, height: 1080)), .badRequestImageSize)
            expectError(try await put("/image/33333333-3333-4333-8333-333333333333?imageSize=HUGE", Self.png()), .badRequestImageSize)
            expectError(try await put("/image/not-a-uuid", Self.png()), .generalBadRequest)
            Self.expectOK(try await put("/image/\(Self.bullet.uppercased())?imageSize=BULLET_POINT", Self.png(width: 64, height: 64)))
            let images = ServerAPIRouteTests.object(try await get("/image/list"))["imageIdentifiers"] as? [[String: String]]
            #expect(
                images == [
                    ["imageIdentifier": Self.image, "imageState": "APPROVED", "imageSize": "FULL_SIZE"],
                    ["imageIdentifier": Self.bullet, "imageState": "APPROVED", "imageSize": "BULLET_POINT"],
                ])

            // Messages: Apple's lengths (in characters), bullet points, the images they name.
            let valid: [String: Any] = [
                "header": String(repeating: "é", count: 66), "body": String(repeating: "b", count: 144), "headerPosition": "ABOVE_IMAGE",
                "image": ["imageIdentifier": Self.image, "altText": String(repeating: "a", count: 150)],
                "bulletPoints": [["text": "Fast", "imageIdentifier": Self.bullet, "altText": "bolt"]],
            ]
            let other = "/message/bbbbbbbb-1111-4111-8111-111111111111"
            for (change, error) in [
                (["header": String(repeating: "h", count: 67)], ServerAPIError.headerTooLong), (["body": String(repeating: "b", count: 145)], .bodyTooLong),
                (["image": ["imageIdentifier": Self.image, "altText": String(repeating: "a", count: 151)]], .altTextTooLong),
                (["bulletPoints": Array(repeating: ["text": "t", "imageIdentifier": Self.bullet, "altText": "a"], count: 6)], .tooManyBulletPoints),
                (["bulletPoints": [["text": String(repeating: "t", count: 67), "imageIdentifier": Self.bullet, "altText": "a"]]], .bulletPointTextTooLong),
                (["image": NSNull()], .aboveImageRequiresAnImage),
                (["image": ["imageIdentifier": "99999999-9999-4999-8999-999999999999", "altText": "a"]], .imageNotFound),
                (["bulletPoints": [["text": "t", "imageIdentifier": Self.image, "altText": "a"]]], .badRequestImageSize),
                (["headerPosition": "BELOW"], .generalBadRequest),
            ] as [([String: Any], ServerAPIError)] {
                expectError(try await put(other, try Self.json(valid.merging(change) { $1 })), error)
            }
            Self.expectOK(try await put("/message/\(Self.message)", try Self.json(valid)))
            expectError(try await put("/message/\(Self.message)", try Self.json(valid)), .messageAlreadyExists)
            #expect(
                ServerAPIRouteTests.object(try await get("/message/list"))["messageIdentifiers"] as? [[String: String]] == [
                    ["messageIdentifier": Self.message, "messageState": "APPROVED"]
                ])
            expectError(try await delete("/image/\(Self.bullet)"), .imageInUse)

            // Default messages, by product and locale.
            let configure = try Self.json(["messageIdentifier": Self.message])
            expectError(try await get("/default/pro.monthly/en-US"), .defaultMessageNotFound)
            expectError(try await put("/default/pro.monthly/english!", configure), .invalidLocale)
            expectError(try await put("/default/pro.monthly/en-US", try Self.json(["messageIdentifier": "99999999-9999-4999-8999-999999999999"])), .messageNotFound)
            Self.expectOK(try await put("/default/pro.monthly/en-US", configure))
            #expect(ServerAPIRouteTests.object(try await get("/default/pro.monthly/en-US"))["messageIdentifier"] as? String == Self.message)
            Self.expectOK(try await delete("/default/pro.monthly/en-US"))
            expectError(try await delete("/default/pro.monthly/en-US"), .defaultMessageNotFound)

            // The realtime URL: per environment; production's only after a passing performance test.
            expectError(try await get("/realtime/url"), .realtimeURLNotFound)
            expectError(try await put("/realtime/url", try Self.json(["realtimeURL": "ftp://example.com/"])), .badRequestRealtimeURL)
            let long = "https://example.com/" + String(repeating: "a", count: 237)
            expectError(try await put("/realtime/url", try Self.json(["realtimeURL": long])), .badRequestRealtimeURL)
            Self.expectOK(try await put("/realtime/url", try Self.json(["realtimeURL": "https://example.com/retention"])))
            #expect(ServerAPIRouteTests.object(try await get("/realtime/url"))["realtimeURL"] as? String == "https://example.com/retention")
            expectError(try await client.execute(uri: "/inApps/v1/messaging/realtime/url", method: .get), .realtimeURLNotFound)
            let production = try await client.execute(
                uri: "/inApps/v1/messaging/realtime/url", method: .put, body: try Self.json(["realtimeURL": "https://example.com/retention"]))
            expectError(production, .forbiddenNoPassingTest)
            Self.expectOK(try await delete("/realtime/url"))
            expectError(try await delete("/realtime/url"), .realtimeURLNotFound)

            // A deleted message frees its images.
            Self.expectOK(try await delete("/message/\(Self.message)"))
            expectError(try await delete("/message/\(Self.message)"), .messageNotFound)
            Self.expectOK(try await delete("/image/\(Self.bullet)"))
            expectError(try await delete("/image/\(Self.bullet)"), .imageNotFound)
            // Another method on a path is a 405, as on every Server API path.
            #expect(try await client.execute(uri: Self.base + "/image/list", method: .post).status == .methodNotAllowed)
        }
    }

    @Test("Apple's 2000 images an app (4030014) and forge's 2000 messages (4030016): the next upload is refused until one is deleted; each environment counts its own")
    func countsAreBounded() async throws {
        try await ServerAPIRouteTests.application().test(.router) { client in
            func id(_ index: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", index) }
            let bullet = Self.png(width: 8, height: 8)
            let text = try Self.json(["header": "h", "body": "b"])
            for index in 0..<RetentionMessagingState.maximumImages {
                let image = try await client.execute(uri: Self.base + "/image/\(id(index))?imageSize=BULLET_POINT", method: .put, body: bullet)
                let message = try await client.execute(uri: Self.base + "/message/\(id(index))", method: .put, body: text)
                guard image.status == .ok, message.status == .ok else {
                    Issue.record("upload \(index): \(image.status) \(message.status)")
                    return
                }
            }
            let over = id(RetentionMessagingState.maximumImages)
            ServerAPIRouteTests.expectError(
                try await client.execute(uri: Self.base + "/image/\(over)?imageSize=BULLET_POINT", method: .put, body: bullet), .maximumNumberOfImagesReached)
            ServerAPIRouteTests.expectError(try await client.execute(uri: Self.base + "/message/\(over)", method: .put, body: text), .maximumNumberOfMessagesReached)
            // Production's account is another.
            Self.expectOK(try await client.execute(uri: "/inApps/v1/messaging/message/\(over)", method: .put, body: text))
            Self.expectOK(try await client.execute(uri: Self.base + "/message/\(id(0))", method: .delete))
            Self.expectOK(try await client.execute(uri: Self.base + "/message/\(over)", method: .put, body: text))
            Self.expectOK(try await client.execute(uri: Self.base + "/image/\(id(0))", method: .delete))
            Self.expectOK(try await client.execute(uri: Self.base + "/image/\(over)?imageSize=BULLET_POINT", method: .put, body: bullet))
        }
    }

    /// What a receiver was sent: each realtime request's `signedPayload`.
    final class Received: Sendable {
        private let signed = Mutex<[String]>([])
        func append(_ compact: String) { signed.withLock { $0.append(compact) } }
        /// The payloads, decoded (not verified: Apple's verifier does that over the socket).
        var payloads: [[String: Any]] { signed.withLock { $0 }.map(ServerAPIRouteTests.payload) }
    }

    /// A Get Retention Message endpoint on loopback: answers each realtime request with `status` and a message, and keeps
    /// what it was sent.
    static func receiver(status: HTTPResponse.Status, received: Received) -> some ApplicationProtocol {
        let router = Router()
        router.post("retention") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 64 << 10)
            let signed = (try? JSONSerialization.jsonObject(with: Data(String(buffer: body).utf8)) as? [String: Any])?["signedPayload"]
            received.append(signed as? String ?? "")
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(
                status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: #"{"message":{"messageIdentifier":"\#(Self.message)"}}"#)))
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    /// The sandbox customer's subscription: its original transaction id, active at the clock.
    static func subscription() throws -> String { try #require(try ServerAPIRouteTests.sandboxIDs()["pro.monthly"]?.first) }

    @Test(
        "Initiate Performance Test sends 50 signed realtime requests to the sandbox's realtime URL (each its own requestIdentifier, signedDate the server clock), Get Performance Test Results reports PASS in Apple's shape, and production's realtime URL opens"
    )
    func performanceTestPasses() async throws {
        let received = Received()
        let original = try Self.subscription()
        let lifetime = try #require(try ServerAPIRouteTests.sandboxIDs()["lifetime"]?.first)
        try await Self.receiver(status: .ok, received: received).test(.live) { endpoint in
            let target = "http://127.0.0.1:\(try #require(endpoint.port))/retention"
            try await ServerAPIRouteTests.application().test(.router) { client in
                let expectError = { (response: TestResponse, error: ServerAPIError) in ServerAPIRouteTests.expectError(response, error) }
                func initiate(_ id: String, at base: String = Self.base) async throws -> TestResponse {
                    try await client.execute(uri: base + "/performanceTest", method: .post, body: try Self.json(["originalTransactionId": id]))
                }
                expectError(try await initiate(original), .realtimeURLNotFound)
                Self.expectOK(try await client.execute(uri: Self.base + "/realtime/url", method: .put, body: try Self.json(["realtimeURL": target])))
                expectError(try await initiate(lifetime), .invalidPerformanceTestRequest)
                expectError(try await initiate("999999999"), .transactionIDNotFound)
                expectError(try await initiate(original, at: "/inApps/v1/messaging"), .invalidPerformanceTestRequest)
                expectError(try await client.execute(uri: Self.base + "/performanceTest", method: .post, body: ByteBuffer(string: "{}")), .invalidPerformanceTestRequest)
                let started = try await initiate(original)
                #expect(started.status == .ok)
                let answer = ServerAPIRouteTests.object(started)
                let requestID = try #require(answer["requestId"] as? String)
                #expect(
                    answer["config"] as? [String: Int] == [
                        "maxConcurrentRequests": 5, "totalRequests": 50, "totalDuration": 50_000, "responseTimeThreshold": 700, "successRateThreshold": 95,
                    ])
                // Deterministic: the first test of a server is always this id.
                #expect(requestID == "85d216b9-e49e-4951-a1f1-f052834f1301")
                expectError(try await initiate(original), .existingPerformanceTestRun)
                expectError(try await client.execute(uri: Self.base + "/performanceTest/result/nope", method: .get), .invalidRequestID)
                expectError(
                    try await client.execute(uri: Self.base + "/performanceTest/result/99999999-9999-4999-8999-999999999999", method: .get),
                    .performanceTestRunNotFound)
                var results: [String: Any] = [:]
                try await eventually("the performance test completed", within: .seconds(60)) {
                    results = ServerAPIRouteTests.object(try await client.execute(uri: Self.base + "/performanceTest/result/\(requestID)", method: .get))
                    return results["result"] as? String != "PENDING"
                }
                #expect(results["result"] as? String == "PASS" && results["successRate"] as? Int == 100 && results["numPending"] as? Int == 0, "\(results)")
                #expect(results["target"] as? String == target && (results["failures"] as? [String: Any])?.isEmpty == true)
                let times = results["responseTimes"] as? [String: Int] ?? [:]
                #expect(Set(times.keys) == ["average", "p50", "p90", "p95", "p99"] && (times["p50"] ?? -1) <= (times["p99"] ?? -1), "\(times)")
                // The test passed in the sandbox: production's realtime URL may now be set.
                let production = try await client.execute(
                    uri: "/inApps/v1/messaging/realtime/url", method: .put, body: try Self.json(["realtimeURL": target]))
                Self.expectOK(production)
            }
        }
        let sent = received.payloads
        #expect(sent.count == 50)
        #expect(Set(sent.compactMap { $0["requestIdentifier"] as? String }).count == 50)
        let clock = try #require(ReceiptDate.parse(ServerAPIRouteTests.clock))
        #expect(sent.allSatisfy { $0["originalTransactionId"] as? String == original && $0["environment"] as? String == "Sandbox" && $0["productId"] as? String == "pro.monthly" })
        #expect(sent.allSatisfy { ($0["signedDate"] as? NSNumber)?.int64Value == ReceiptDate.milliseconds(clock) }, "\(sent.first ?? [:])")
    }

    @Test("A realtime URL that answers HTTP 500 fails the performance test: every request UNSUCCESSFUL_HTTP_RESPONSE_CODE, production's URL stays closed")
    func performanceTestFails() async throws {
        let received = Received()
        let original = try Self.subscription()
        try await Self.receiver(status: .internalServerError, received: received).test(.live) { endpoint in
            let target = "http://127.0.0.1:\(try #require(endpoint.port))/retention"
            try await ServerAPIRouteTests.application().test(.router) { client in
                Self.expectOK(try await client.execute(uri: Self.base + "/realtime/url", method: .put, body: try Self.json(["realtimeURL": target])))
                let started = try await client.execute(uri: Self.base + "/performanceTest", method: .post, body: try Self.json(["originalTransactionId": original]))
                let requestID = try #require(ServerAPIRouteTests.object(started)["requestId"] as? String)
                var results: [String: Any] = [:]
                try await eventually("the performance test completed", within: .seconds(60)) {
                    results = ServerAPIRouteTests.object(try await client.execute(uri: Self.base + "/performanceTest/result/\(requestID)", method: .get))
                    return results["result"] as? String != "PENDING"
                }
                #expect(results["result"] as? String == "FAIL" && results["successRate"] as? Int == 0, "\(results)")
                #expect(results["failures"] as? [String: Int] == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE": 50])
                let production = try await client.execute(
                    uri: "/inApps/v1/messaging/realtime/url", method: .put, body: try Self.json(["realtimeURL": target]))
                ServerAPIRouteTests.expectError(production, .forbiddenNoPassingTest)
            }
        }
    }
}
