import Foundation
import Hummingbird
import NIOCore
import StoreServer
import HTTPServers
import Testing
import _ForgeSupport

/// The control routes (`/_forge/*`) obey the test that owns the server, never a web page a browser on the same machine
/// has open: over a real loopback socket (`.live`, so the peer is loopback), each request on its
/// own connection with the `Host`, `Origin` and `Content-Type` a browser would send. In process (`.router`) there is
/// no peer, so nothing is loopback: `InProcessServerTests.controlRoutesRefused`.
@Suite("The control routes refuse web pages: Host, Origin, Content-Type", .timeLimit(.minutes(2)))
struct ControlAccessTests {
    static let clock = "2025-01-01T00:00:00Z"
    static let page = "https://attacker.example"

    /// `forge serve --now 2025-01-01T00:00:00Z [--listen HOST:0] [--control-token TOKEN]`, its log kept for the test.
    static func application(token: String? = nil, listenHost: String = "127.0.0.1", log: RequestLog) throws -> ForgeApplication {
        try ForgeServers.buildServeApplication(
            ServerListener(host: listenHost, port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])),
            serverAPI: ServerAPIService(configuration: .init(now: ReceiptDate.parse(clock))), faults: try FaultPlan(), log: log, controlToken: token)
    }

    /// One request on a connection of its own (a refusal closes it), naming `host` in `Host` as a browser names the page's.
    static func send(
        _ port: Int, _ method: HTTPRequest.Method, _ uri: String, host: String = "127.0.0.1", headers: [(String, String)] = [], body: String? = nil
    ) async throws -> TestResponse {
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let name = HTTPFields.Element.Name(name) else { continue }
            fields.append(HTTPFields.Element(name: name, value: value))
        }
        // The suite's time limit bounds the test, not the machine's speed.
        return try await LiveClient(port: port, timeout: .seconds(100)).execute(
            uri: uri, method: method, authority: host, headers: fields, body: body.map { ByteBuffer(string: $0) })
    }

    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }

    static func error(_ response: TestResponse) -> String? {
        ((try? JSONSerialization.jsonObject(with: Data(text(response).utf8))) as? [String: Any])?["error"] as? String
    }

    /// The control routes' refusals in the request log, as `rule` names (read with a request that passes).
    static func refusedRules(_ port: Int) async throws -> [String] {
        let log = try await send(port, .get, "/_forge/log")
        return text(log).split(separator: "\n").compactMap { line in
            let entry = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            return entry?["endpoint"] as? String == "control" ? entry?["rule"] as? String : nil
        }
    }

    @Test(
        "Without a token, a web page's POST is refused — a foreign Origin (403), Origin null (403), text/plain, a form, multipart or no type (415) — the clock and the faults stay as they were, each refusal is logged; JSON from loopback moves the clock"
    )
    func pagePostsRefused() async throws {
        let log = try RequestLog(file: nil, capacity: 100)
        try await Self.application(log: log).test(.live) { client in
            let port = try #require(client.port)
            let json = ("Content-Type", "application/json")
            let refused: [(headers: [(String, String)], status: HTTPResponse.Status, error: String, rule: String)] = [
                ([("Origin", Self.page), ("Content-Type", "text/plain")], .forbidden, "controlForbidden", "origin"),
                ([("Origin", Self.page), json], .forbidden, "controlForbidden", "origin"),
                ([("Origin", "null"), json], .forbidden, "controlForbidden", "origin"),
                ([("Origin", "http://127.0.0.1.nip.io:\(port)"), json], .forbidden, "controlForbidden", "origin"),
                ([("Content-Type", "text/plain")], .unsupportedMediaType, "controlUnsupportedMediaType", "content-type"),
                ([("Content-Type", "application/x-www-form-urlencoded")], .unsupportedMediaType, "controlUnsupportedMediaType", "content-type"),
                ([("Content-Type", "multipart/form-data; boundary=x")], .unsupportedMediaType, "controlUnsupportedMediaType", "content-type"),
                ([], .unsupportedMediaType, "controlUnsupportedMediaType", "content-type"),
            ]
            for (uri, body) in [("/_forge/clock", #"{"advance":"P100Y"}"#), ("/_forge/faults", #""latency=600000""#)] {
                for attempt in refused {
                    let answer = try await Self.send(port, .post, uri, headers: attempt.headers, body: body)
                    #expect(answer.status == attempt.status && Self.error(answer) == attempt.error, "\(uri) \(attempt.headers): \(answer.status) \(Self.text(answer))")
                    #expect(answer.headers[.connection] == "close", "a refused body is not read on")
                }
            }
            let now = try await Self.send(port, .get, "/_forge/clock")
            #expect(Self.text(now) == #"{"now":"\#(Self.clock)"}"#, "the clock did not move")
            #expect(Self.text(try await Self.send(port, .get, "/_forge/faults")).isEmpty, "no fault was added")
            #expect(try await Self.refusedRules(port) == (refused + refused).map(\.rule))

            // The test that owns the server: JSON (with parameters), no Origin or a loopback one.
            let moved = try await Self.send(
                port, .post, "/_forge/clock", headers: [("Origin", "http://localhost:3000"), ("Content-Type", "application/json; charset=utf-8")],
                body: #"{"advance":"P1M"}"#)
            #expect(moved.status == .ok && Self.text(moved) == #"{"now":"2025-02-01T00:00:00Z"}"#, "\(Self.text(moved))")
            let added = try await Self.send(port, .post, "/_forge/faults", headers: [json], body: #""production:status=21005,count=1""#)
            #expect(added.status == .created && Self.text(added) == "production:status=21005,count=1\n", "a spec line as a JSON string")
        }
    }

    @Test(
        "Without a token, a Host that is neither loopback nor the listen host is refused, GETs included (DNS rebinding: attacker.example, 127.0.0.1.nip.io); localhost, 127.0.0.0/8, [::1] and the exact listen host are answered, with or without a port"
    )
    func rebindingHostRefused() async throws {
        let log = try RequestLog(file: nil, capacity: 100)
        try await Self.application(listenHost: "forge.test", log: log).test(.live) { client in
            let port = try #require(client.port)
            let foreign = [
                "attacker.example", "attacker.example:\(port)", "127.0.0.1.nip.io:\(port)", "localhost.attacker.example", "forge.test.attacker.example",
                "127.0.0.1:\(port)@attacker.example", "[::1]:\(port).attacker.example", "",
            ]
            for host in foreign {
                for uri in ["/_forge/log", "/_forge/scenarios", "/_forge/clock"] {
                    let answer = try await Self.send(port, .get, uri, host: host)
                    #expect(answer.status == .forbidden && Self.error(answer) == "controlForbidden", "Host \(host) \(uri): \(answer.status) \(Self.text(answer))")
                }
            }
            let refusedDelete = try await Self.send(port, .delete, "/_forge/log", host: "attacker.example:\(port)")
            #expect(refusedDelete.status == .forbidden)
            #expect(try await Self.refusedRules(port) == Array(repeating: "host", count: foreign.count * 3 + 1), "the DELETE emptied nothing")

            let own = [
                "localhost", "localhost:\(port)", "LOCALHOST:\(port)", "127.0.0.1:\(port)", "127.1.2.3", "[::1]", "[::1]:\(port)", "forge.test",
                "forge.test:\(port)", "FORGE.test:\(port)",
            ]
            for host in own {
                let answer = try await Self.send(port, .get, "/_forge/clock", host: host)
                #expect(answer.status == .ok, "Host \(host): \(answer.status) \(Self.text(answer))")
            }
        }
    }

    @Test("With --control-token the token decides: a foreign Origin, Host and text/plain pass with it, and nothing passes without it (401)")
    func tokenDecides() async throws {
        let log = try RequestLog(file: nil, capacity: 100)
        try await Self.application(token: "t0ken", log: log).test(.live) { client in
            let port = try #require(client.port)
            let page = [("Origin", Self.page), ("Content-Type", "text/plain")]
            let added = try await Self.send(
                port, .post, "/_forge/faults", host: "attacker.example", headers: page + [("Authorization", "Bearer t0ken")], body: "production:status=21005")
            #expect(added.status == .created, "\(Self.text(added))")
            let missing = try await Self.send(port, .post, "/_forge/clock", headers: [("Content-Type", "application/json")], body: #"{"advance":"P1M"}"#)
            #expect(missing.status == .unauthorized && Self.error(missing) == "controlUnauthorized")
            let wrong = try await Self.send(port, .post, "/_forge/clock", headers: page + [("Authorization", "Bearer other")], body: #"{"advance":"P1M"}"#)
            #expect(wrong.status == .unauthorized && wrong.headers[.wwwAuthenticate] == #"Bearer realm="forge""#)
            let now = try await Self.send(port, .get, "/_forge/clock", headers: [("Authorization", "Bearer t0ken")])
            #expect(Self.text(now) == #"{"now":"\#(Self.clock)"}"#)
            let faults = try await Self.send(port, .get, "/_forge/faults", headers: [("Authorization", "Bearer t0ken")])
            #expect(Self.text(faults) == #"{"endpoint":"production","status":21005}"# + "\n", "\(Self.text(faults))")
        }
    }
}
