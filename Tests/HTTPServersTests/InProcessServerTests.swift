import Foundation
import Hummingbird
import NIOCore
import StoreServer
import HTTPServers
import ReferenceValidation
import ReceiptValidationServer
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport

/// Both servers in process: the application `forge-http` serves, built by the same `build…Application`,
/// driven through the router client (`.test(.router)`, ApplicationTesting) (no socket, no peer address). The socket tests
/// (`Tests/ForgeCLITests/ServeCLITests.swift`, `ServeRobustnessTests.swift`, `HTTPCLITests.swift`) prove
/// what only a socket shows: read deadlines, connection closes, signals.
@Suite("The servers in process (app.test(.router))", .timeLimit(.minutes(2)))
struct InProcessServerTests {
    /// The committed corpus: receipts and the TEST root they chain to.
    static let vectors = Repository.vectors
    /// The clock of the binding vectors' context.
    static let now = "2025-06-15T12:00:00Z"
    static let listener = ServerListener(host: "127.0.0.1", port: 0)

    static func base64(_ vector: String) throws -> String {
        try Data(contentsOf: vectors.appendingPathComponent(vector)).base64EncodedString()
    }

    /// `forge serve` at the vectors' clock under their TEST root: what `forge serve --now …` builds.
    static func verifyReceiptApplication(controlToken: String? = nil, logCapacity: Int = 100) throws -> ForgeApplication {
        let harness = try ReferenceHarness(vectorsDirectory: vectors)
        let service = VerifyReceiptService(
            configuration: .init(trustedRoots: Array(harness.anchors.values), now: ISO8601DateFormatter().date(from: now)))
        return try ForgeServers.buildServeApplication(
            listener, service: service, faults: try FaultPlan(), log: try RequestLog(file: nil, capacity: logCapacity), controlToken: controlToken)
    }

    static func body(_ json: [String: String]) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))
    }

    /// The body's JSON object; empty when it is not one.
    static func object(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8))) as? [String: Any] ?? [:]
    }

    static func status(_ response: TestResponse) -> Int? { object(response)["status"] as? Int }

    static func bearer(_ token: String) -> HTTPFields { [.authorization: "Bearer " + token] }

    @Test("verifyReceipt: 0 at both endpoints for a receipt of theirs, 21007 for a sandbox receipt at production, 21002 for garbage, 21000 for a GET")
    func verifyReceiptStatuses() async throws {
        let production = try Self.base64("binding/production-matches.der")
        let sandbox = try Self.base64("binding/sandbox-in-production.der")
        try await Self.verifyReceiptApplication().test(.router) { client in
            let valid = try await client.execute(uri: "/verifyReceipt", method: .post, body: try Self.body(["receipt-data": production]))
            #expect(valid.status == .ok && Self.status(valid) == 0 && Self.object(valid)["environment"] as? String == "Production")
            let fromSandbox = try await client.execute(uri: "/sandbox/verifyReceipt", method: .post, body: try Self.body(["receipt-data": sandbox]))
            #expect(Self.status(fromSandbox) == 0 && Self.object(fromSandbox)["environment"] as? String == "Sandbox")
            let wrongEndpoint = try await client.execute(uri: "/verifyReceipt", method: .post, body: try Self.body(["receipt-data": sandbox]))
            #expect(Self.status(wrongEndpoint) == 21007)
            let garbage = try await client.execute(
                uri: "/verifyReceipt", method: .post, body: try Self.body(["receipt-data": Data("hello".utf8).base64EncodedString()]))
            #expect(Self.status(garbage) == 21002)
            let get = try await client.execute(uri: "/verifyReceipt", method: .get)
            #expect(get.status == .ok && String(buffer: get.body) == #"{"status":21000}"#)
        }
    }

    @Test("A fault added through POST /_forge/faults is applied, then spent; GET /_forge/log says what it holds and what it evicted")
    func faultsAndLog() async throws {
        let production = try Self.base64("binding/production-matches.der")
        try await Self.verifyReceiptApplication(controlToken: "t0ken", logCapacity: 1).test(.router) { client in
            let added = try await client.execute(
                uri: "/_forge/faults", method: .post, headers: Self.bearer("t0ken"),
                body: ByteBuffer(string: #"{"endpoint":"production","status":21005,"count":1}"#))
            #expect(added.status == .created && String(buffer: added.body) == "production:status=21005,count=1\n")
            let listed = try await client.execute(uri: "/_forge/faults", method: .get, headers: Self.bearer("t0ken"))
            #expect(String(buffer: listed.body) == #"{"endpoint":"production","status":21005,"count":1}"# + "\n", "GET lists what POST takes")
            let faulted = try await client.execute(uri: "/verifyReceipt", method: .post, body: try Self.body(["receipt-data": production]))
            #expect(Self.status(faulted) == 21005)
            let spent = try await client.execute(uri: "/verifyReceipt", method: .post, body: try Self.body(["receipt-data": production]))
            #expect(Self.status(spent) == 0)

            let log = try await client.execute(uri: "/_forge/log", method: .get, headers: Self.bearer("t0ken"))
            #expect(log.status == .ok && log.headers[.contentType] == "application/x-ndjson")
            let dropped = try #require(HTTPFields.Element.Name("X-Forge-Log-Dropped")), evicted = try #require(HTTPFields.Element.Name("X-Forge-Log-Evicted"))
            #expect(log.headers[dropped] == "0" && log.headers[evicted] == "1", "a log of capacity 1 keeps the second request only")
            let lines = String(buffer: log.body).split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains(#""fault":null"#) && lines[0].contains(#""status":0"#), "\(lines)")

            #expect(try await client.execute(uri: "/_forge/log", method: .delete, headers: Self.bearer("t0ken")).status == .ok)
            #expect(try await client.execute(uri: "/_forge/faults", method: .delete, headers: Self.bearer("t0ken")).status == .ok)
            let cleared = try await client.execute(uri: "/_forge/log", method: .get, headers: Self.bearer("t0ken"))
            #expect(String(buffer: cleared.body).isEmpty && cleared.headers[evicted] == "1")
        }
    }

    /// In process there is no peer address, so nothing is loopback: without a control token the control
    /// routes refuse every request (production keeps its only trust, a loopback peer or the token); with
    /// one, they need it.
    @Test("The control routes refuse a client they cannot place on loopback without a token, and a missing or wrong token with one")
    func controlRoutesRefused() async throws {
        try await Self.verifyReceiptApplication().test(.router) { client in
            for (method, uri) in [(HTTPRequest.Method.get, "/_forge/log"), (.get, "/_forge/faults"), (.delete, "/_forge/log")] {
                let refused = try await client.execute(uri: uri, method: method)
                #expect(refused.status == .forbidden, "\(method) \(uri)")
                #expect(Self.object(refused)["error"] as? String == "controlForbidden")
            }
            let add = try await client.execute(uri: "/_forge/faults", method: .post, body: ByteBuffer(string: "production:status=21005"))
            #expect(add.status == .forbidden)
            // The refused fault was not added: verifyReceipt still answers.
            let answer = try await client.execute(uri: "/verifyReceipt", method: .post, body: try Self.body(["receipt-data": "%%%"]))
            #expect(Self.status(answer) == 21002)
        }
        try await Self.verifyReceiptApplication(controlToken: "t0ken").test(.router) { client in
            let missing = try await client.execute(uri: "/_forge/log", method: .get)
            #expect(missing.status == .unauthorized && missing.headers[.wwwAuthenticate] == #"Bearer realm="forge""#)
            let wrong = try await client.execute(uri: "/_forge/faults", method: .post, headers: Self.bearer("other"), body: ByteBuffer(string: "close"))
            #expect(wrong.status == .unauthorized && Self.object(wrong)["error"] as? String == "controlUnauthorized")
            #expect(try await client.execute(uri: "/_forge/faults", method: .get, headers: Self.bearer("t0ken")).status == .ok)
        }
    }

    @Test("forge validate --listen: GET /hello, POST /validate and /verifyReceipt, and the harness's own 404 and 405")
    func harnessServer() async throws {
        let harness = try ReferenceHarness(vectorsDirectory: Self.vectors)
        let application = try ForgeServers.buildHarnessApplication(Self.listener, routes: HarnessRoutes(harness: harness))
        let receipt = try Self.base64("binding/production-matches.der")
        try await application.test(.router) { client in
            let hello = try await client.execute(uri: "/hello", method: .get)
            #expect(hello.status == .ok && Self.object(hello)["type"] as? String == "hello" && Self.object(hello)["protocol"] as? Int == 1)

            let message = """
                {"type":"validate","seq":7,"id":"binding::production-matches","input":{"encoding":"base64","data":"\(receipt)"},\
                "context":{"now":"\(Self.now)","trustAnchor":"forge-root","bundleId":"com.example.app","environment":"Production"}}
                """
            let validated = try await client.execute(uri: "/validate", method: .post, body: ByteBuffer(string: message))
            let reply = Self.object(validated)
            #expect(validated.status == .ok && reply["type"] as? String == "result" && reply["seq"] as? Int == 7 && reply["verdict"] as? String == "accept", "\(reply)")
            let bad = try await client.execute(uri: "/validate", method: .post, body: ByteBuffer(string: #"{"type":"validate","seq":8}"#))
            #expect(bad.status == .badRequest && Self.object(bad)["type"] as? String == "errored" && Self.object(bad)["seq"] as? Int == 8)

            let verify = try await client.execute(uri: "/verifyReceipt", method: .post, body: ByteBuffer(string: "not json"))
            #expect(verify.status == .ok && String(buffer: verify.body) == #"{"status":21000}"#)

            let wrongMethod = try await client.execute(uri: "/validate", method: .get)
            #expect(wrongMethod.status == .methodNotAllowed && String(buffer: wrongMethod.body) == "method GET is not allowed on /validate\n")
            let unknown = try await client.execute(uri: "/nope", method: .post, body: ByteBuffer(string: "{}"))
            #expect(unknown.status == .notFound && String(buffer: unknown.body) == "no route /nope: GET /hello, POST /validate, POST /verifyReceipt\n")
        }
    }
}
