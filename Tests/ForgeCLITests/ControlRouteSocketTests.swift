import Foundation
import ForgeTestSupport
import Testing

/// The control routes through the built binary on a real socket: what a web page open in a browser on the same machine
/// can send to `forge serve` (every rule in process: `ControlAccessTests`).
@Suite("forge serve: a web page cannot drive the control routes", .timeLimit(.minutes(2)))
struct ControlRouteSocketTests {
    @Test("Without --control-token, a page's text/plain POST with a foreign Origin is refused (403) and the clock does not move; the test's JSON POST moves it")
    func foreignOriginRefused() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--now", "2025-01-01T00:00:00Z"])
        defer { server.kill() }
        let page = try await request(
            server.url + "/_forge/clock", method: "POST", headers: ["Origin": "https://attacker.example", "Content-Type": "text/plain"],
            body: Data(#"{"advance":"P100Y"}"#.utf8))
        #expect(page.status == 403 && page.text.contains("controlForbidden") && page.text.contains("Origin"), "\(page.status) \(page.text)")
        let clock = try await request(server.url + "/_forge/clock")
        #expect(clock.text == #"{"now":"2025-01-01T00:00:00Z"}"#, "the clock did not move")

        let test = try await post(server.url + "/_forge/clock", json: #"{"advance":"P1M"}"#)
        #expect(test.status == 200 && test.text == #"{"now":"2025-02-01T00:00:00Z"}"#, "\(test.status) \(test.text)")
    }
}
