import Foundation
import ForgeTestSupport
import Testing

/// ForgeTestSupport's processes and servers, which every other test relies on: what they capture, and that every
/// wait ends at its deadline (a hung program, a grandchild holding a pipe, a server that never says where it is).
@Suite("Test support: processes and servers run asynchronously, each wait with a deadline", .timeLimit(.minutes(1)))
struct TestSupportTests {
    static let shell = URL(fileURLWithPath: "/bin/sh")

    @Test("run: standard output and error, the exit status, stdin, the environment given, the working folder")
    func captures() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await run(
            Self.shell, ["-c", #"cat; echo "[$GREETING]"; pwd; echo oops >&2; exit 7"#], stdin: Data("input\n".utf8), in: folder,
            environment: ["GREETING": "hello", "PATH": "/usr/bin:/bin"])
        #expect(result.status == 7 && result.exited)
        #expect(result.text == "input\n[hello]\n\(folder.resolvingSymlinksInPath().path)\n")
        #expect(result.stderr == "oops\n")
        let inherited = try await run(Self.shell, ["-c", "echo ${HOME:+set}"])
        #expect(inherited.text == "set\n", "without an environment, the test's own")
    }

    @Test("run: killAfter kills the program's whole group at the deadline and says it did not exit; a deadline throws")
    func deadlines() async throws {
        let killed = try await run(Self.shell, ["-c", "sleep 60 & sleep 60"], killAfter: .seconds(1))
        #expect(!killed.exited)
        await #expect(throws: DeadlineExceeded.self) { try await run(Self.shell, ["-c", "sleep 60"], deadline: .seconds(1)) }
    }

    @Test("run: a grandchild that keeps the output pipe open does not hold the test once the program has ended")
    func grandchildHoldsThePipe() async throws {
        let result = try await run(Self.shell, ["-c", "sleep 60 & echo started"], deadline: .seconds(30))
        #expect(result.status == 0 && result.text.hasPrefix("started"))
    }

    @Test("run: a signal that ends the program is its status, not an exit")
    func signalled() async throws {
        let result = try await run(Self.shell, ["-c", "kill -TERM $$"])
        #expect(!result.exited && result.status == SIGTERM)
    }

    @Test("BackgroundServer: ready on its first line naming a port; stop() ends it and returns its stderr; a server that never says where it listens is DidNotStart")
    func servers() async throws {
        let server = try await BackgroundServer.start(
            ["-c", "echo 'listening on http://127.0.0.1:4321/'; echo said >&2; exec sleep 60"], executable: Self.shell)
        #expect(server.port == 4321 && server.firstLine.contains("4321"))
        try await eventually("stderr arrives") { server.stderr == "said\n" }
        #expect(await !server.waitForExit(within: .milliseconds(100)))
        #expect(await server.stop() == "said\n")
        #expect(await server.waitForExit(within: .seconds(10)))

        await #expect(throws: BackgroundServer.DidNotStart.self) {
            _ = try await BackgroundServer.start(["-c", "echo no port here; echo why >&2; exit 3"], executable: Self.shell)
        }
        await #expect(throws: BackgroundServer.DidNotStart.self) {
            _ = try await BackgroundServer.start(["-c", "exec sleep 60"], executable: Self.shell, within: .seconds(1))
        }
    }

    @Test("BackgroundServer: forge serve on port 0 is reached at the port it names; a signal reaches it and its exit status is read")
    func forgeServe() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0"])
        let answer = try await request(server.url + "/_forge/clock")
        #expect(answer.status == 200)
        server.signal(SIGTERM)
        #expect(await server.waitForExit(within: .seconds(30)))
        #expect(server.status() == 0 && server.exitedNormally())
    }

    @Test("eventually: returns once the condition holds, throws at its deadline")
    func waits() async throws {
        var looks = 0
        try await eventually("the third look") {
            looks += 1
            return looks == 3
        }
        await #expect(throws: ConditionNotMet.self) { try await eventually("never", within: .milliseconds(200)) { false } }
    }

    @Test("An absent oracle is a skip that names what installs it, never a pass", .requires(Oracle.tool("no-such-tool-anywhere", installedBy: "nothing")))
    func absentOracleSkips() {
        Issue.record("this test must never run")
    }
}
