import Foundation
import ForgeTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The control routes through the built binary on a real socket: what a web page open in a browser on the same machine
/// can send to `forge serve` (every rule in process: `ControlAccessTests`).
@Suite("forge serve: a web page cannot drive the control routes", .timeLimit(.minutes(2)))
struct ControlRouteSocketTests {
    /// A POST to the server's clock with `headers`: its status and body.
    static func post(_ url: String, _ body: String, headers: [String: String]) async throws -> (status: Int, body: String) {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = "POST"
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = Data(body.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test("Without --control-token, a page's text/plain POST with a foreign Origin is refused (403) and the clock does not move; the test's JSON POST moves it")
    func foreignOriginRefused() async throws {
        let server = try BlockingServer(forgeBinary, ["serve", "--listen", "127.0.0.1:0", "--now", "2025-01-01T00:00:00Z"])
        defer { server.stop() }
        let page = try await Self.post(
            server.url + "/_forge/clock", #"{"advance":"P100Y"}"#, headers: ["Origin": "https://attacker.example", "Content-Type": "text/plain"])
        #expect(page.status == 403 && page.body.contains("controlForbidden") && page.body.contains("Origin"), "\(page.status) \(page.body)")
        let clock = try #require(await ServerAPITests.get(server.url + "/_forge/clock"))
        #expect(String(decoding: clock.body, as: UTF8.self) == #"{"now":"2025-01-01T00:00:00Z"}"#, "the clock did not move")

        let test = try await Self.post(server.url + "/_forge/clock", #"{"advance":"P1M"}"#, headers: ["Content-Type": "application/json"])
        #expect(test.status == 200 && test.body == #"{"now":"2025-02-01T00:00:00Z"}"#, "\(test.status) \(test.body)")
    }
}
