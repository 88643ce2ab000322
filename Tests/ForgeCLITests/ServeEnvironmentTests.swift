import ArgumentParser
import Foundation
import ForgeTestSupport
import Testing

@testable import ForgeCLI

/// `forge serve` configured without a command line: FORGE_SERVE_* variables stand for the flags the command line
/// lacks, and `--scenario` takes a folder, which is how the container image's default command is configured
/// (Documentation/container.md).
@Suite("forge serve from the environment", .timeLimit(.minutes(2)))
struct ServeEnvironmentTests {
    static let now = "2025-01-01T00:00:00Z"

    @Test("FORGE_SERVE_* variables give forge serve the flags its command line lacks; the command line's own win, other commands ignore them")
    func variablesAsFlags() throws {
        let environment = [
            "FORGE_SERVE_LISTEN": "0.0.0.0:8080", "FORGE_SERVE_NOW": Self.now, "FORGE_SERVE_NO_AUTH": "1", "FORGE_SERVE_TLS": "0",
            "FORGE_SERVE_SCENARIO": "/config/a.json /config/b", "FORGE_SERVE_STATE": "", "FORGE_SERVE_NOTIFY": "http://127.0.0.1:9/hook",
        ]
        let arguments = try ServeEnvironment.arguments(["serve", "--now", "2026-01-01T00:00:00Z", "--log=/tmp/log"], environment: environment)
        #expect(
            arguments == [
                "serve", "--listen", "0.0.0.0:8080", "--scenario", "/config/a.json", "--scenario", "/config/b", "--no-auth", "--notify", "http://127.0.0.1:9/hook",
                "--now", "2026-01-01T00:00:00Z", "--log=/tmp/log",
            ])
        let parsed = try #require(try ForgeCommand.parseAsRoot(arguments) as? Serve)
        #expect(parsed.listen == "0.0.0.0:8080" && parsed.now == "2026-01-01T00:00:00Z" && parsed.noAuth && !parsed.tls && parsed.state == nil)
        #expect(parsed.scenario == ["/config/a.json", "/config/b"] && parsed.notify == "http://127.0.0.1:9/hook")
        #expect(try ServeEnvironment.arguments(["make", "-o", "r.der"], environment: environment) == ["make", "-o", "r.der"])
        #expect(try ServeEnvironment.arguments(["serve", "--", "--now"], environment: ["FORGE_SERVE_NOW": Self.now]) == ["serve", "--now", Self.now, "--", "--now"])
    }

    @Test("Every variable names a flag forge serve has: all of them set parse as one command line")
    func everyVariableIsAFlag() throws {
        var environment: [String: String] = [:]
        for (name, kind) in ServeEnvironment.flags {
            environment[ServeEnvironment.variable(name)] = kind == .flag ? "true" : "x"
        }
        let values = [
            "listen": "127.0.0.1:0", "now": Self.now, "time-rate": "3600", "rate-limits": "apple", "fault": "production:status=21005", "notify": "http://127.0.0.1:9/",
            "notify-sandbox": "http://127.0.0.1:9/", "api-key": "KEY=key.p8", "control-token": "token", "no-auth": "0",
        ]
        for (name, value) in values { environment[ServeEnvironment.variable(name)] = value }
        let arguments = try ServeEnvironment.arguments(["serve"], environment: environment)
        #expect(arguments.count == 1 + ServeEnvironment.flags.reduce(0) { $0 + ($1.kind == .flag ? 1 : 2) } - 1, "\(arguments)")
        let parsed = try #require(try ForgeCommand.parseAsRoot(arguments) as? Serve)
        #expect(parsed.tls && parsed.ocsp && !parsed.noAuth && parsed.apiKey == ["KEY=key.p8"] && parsed.issuerId == "x")
    }

    @Test("A variable of a flag without a value takes 1 or 0 (true or false), anything else is refused by its name")
    func flagValues() throws {
        #expect(try ServeEnvironment.arguments(["serve"], environment: ["FORGE_SERVE_TLS": "TRUE"]) == ["serve", "--tls"])
        #expect(try ServeEnvironment.arguments(["serve"], environment: ["FORGE_SERVE_TLS": "false"]) == ["serve"])
        let error = #expect(throws: ValidationError.self) { try ServeEnvironment.arguments(["serve"], environment: ["FORGE_SERVE_TLS": "yes please"]) }
        #expect(error?.message == "FORGE_SERVE_TLS must be 1 or 0 (true or false), not 'yes please'")
    }

    @Test("--scenario FOLDER stands for its .json files in name order; a folder without one is refused")
    func scenarioFolder() async throws {
        try await withTemporaryDirectory { folder in
            for name in ["b.json", "a.json", "notes.txt", ".hidden.json"] { try Data("{}".utf8).write(to: folder.appendingPathComponent(name)) }
            let empty = folder.appendingPathComponent("empty")
            try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
            #expect(try Serve.scenarioFiles([folder.path, "/x/c.json"]) == [folder.path + "/a.json", folder.path + "/b.json", "/x/c.json"])
            #expect(throws: (any Error).self) { try Serve.scenarioFiles([empty.path]) }
        }
    }

    @Test("forge reads the variables: a bad FORGE_SERVE_NOW or FORGE_SERVE_TLS exits 64 before any server starts, and serve --help lists them")
    func binaryReadsTheEnvironment() async throws {
        let now = try await forge(arguments: ["serve", "--listen", "127.0.0.1:0"], environment: ["FORGE_SERVE_NOW": "yesterday"])
        #expect(now.status == 64 && now.stderr.contains("--now 'yesterday' is not a date"), "\(now.stderr)")
        let tls = try await forge(arguments: ["serve", "--listen", "127.0.0.1:0"], environment: ["FORGE_SERVE_TLS": "on"])
        #expect(tls.status == 64 && tls.stderr.contains("FORGE_SERVE_TLS must be 1 or 0"), "\(tls.stderr)")
        let help = try await forge("serve", "--help")
        #expect(help.text.contains("FORGE_SERVE_NOW") && help.text.contains("FORGE_SERVE_SCENARIO"))
    }
}
