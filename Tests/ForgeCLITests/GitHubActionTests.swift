import Foundation
import ForgeTestSupport
import Testing

/// Issue 24, item 2: the composite action at the repository root (`action.yml`). Its run step is executed as
/// GitHub runs it: the inputs as `INPUT_*`, `$GITHUB_ACTION_PATH` the checkout, a temporary `$GITHUB_STEP_SUMMARY`
/// and `$GITHUB_OUTPUT`, `forge` on `PATH`, against the openssl example harness (`openssl` is the independent
/// validator under test).
@Suite("GitHub Action: action.yml's steps run as GitHub runs them", .timeLimit(.minutes(2)))
struct GitHubActionTests {
    static let action = Repository.file("action.yml")

    /// Each `INPUT_NAME: ${{ inputs.name }}` the action's steps set, as (variable, input).
    static func stepInputs(_ text: String) -> [(variable: String, input: String)] {
        text.matches(of: /(INPUT_[A-Z_]+): \$\{\{ inputs\.([a-z-]+) \}\}/).map { (String($0.1), String($0.2)) }
    }

    @Test("action.yml: every input a step reads is declared and named as GitHub names it; every script it runs exists and is executable")
    func wellFormed() async throws {
        let text = try String(contentsOf: Self.action, encoding: .utf8)
        let declared = Set(text.matches(of: /\n  ([a-z][a-z-]*):\n    description:/).map { String($0.1) })
        #expect(declared.isSuperset(of: ["target", "profile", "features", "artifacts", "baseline", "shard", "junit", "html", "results", "forge-version"]))
        #expect(declared.isSuperset(of: ["command", "scenarios", "storekit", "now", "notify", "state", "tls", "api-key", "issuer-id", "listen", "timeout"]))
        let read = Self.stepInputs(text)
        #expect(read.count == 21, "\(read)")
        for (variable, input) in read {
            #expect(declared.contains(input), "\(input) is not declared")
            #expect(variable == "INPUT_" + input.uppercased().replacingOccurrences(of: "-", with: "_"))
        }
        let scripts = text.matches(of: /\$GITHUB_ACTION_PATH\/(scripts\/action\/[a-z-]+\.sh)/).map { String($0.1) }
        #expect(scripts == ["scripts/action/install.sh", "scripts/action/run.sh", "scripts/action/serve.sh"])
        for script in scripts { #expect(FileManager.default.isExecutableFile(atPath: Repository.file(script).path), "\(script)") }
    }

    /// The run step in `directory`, with `inputs` as INPUT_* and GitHub's files there; returns its result, the
    /// summary and the outputs file.
    static func runStep(_ inputs: [String: String], in directory: URL) async throws -> (result: RunResult, summary: String, output: String) {
        let summary = directory.appendingPathComponent("summary.md"), output = directory.appendingPathComponent("output.txt")
        // GitHub gives each step fresh files; the summary already holds an earlier step's part.
        try Data("## an earlier step\n".utf8).write(to: summary)
        try? FileManager.default.removeItem(at: output)
        var environment = [
            "PATH": Binaries.forge.deletingLastPathComponent().path + ":/usr/local/bin:/usr/bin:/bin", "GITHUB_ACTION_PATH": Repository.root.path,
            "GITHUB_STEP_SUMMARY": summary.path, "GITHUB_OUTPUT": output.path, "GITHUB_WORKSPACE": directory.path,
        ]
        for (name, value) in inputs { environment["INPUT_" + name.uppercased().replacingOccurrences(of: "-", with: "_")] = value }
        let result = try await run(URL(fileURLWithPath: "/bin/bash"), [Repository.file("scripts/action/run.sh").path], in: directory, environment: environment)
        return (result, try String(contentsOf: summary, encoding: .utf8), (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    @Test(
        "The run step gates the job with forge run's exit code: the openssl harness's false accepts fail it (1), with the Markdown report appended to the job summary, JUnit, HTML and results.json written; its own baseline makes it pass (0)",
        .requires(.openssl))
    func runStepGates() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = "exit:" + Repository.file("examples/openssl-harness.sh").path
        let inputs = [
            "target": harness, "profile": "apple-compatible", "features": "xcode,sha1,robustness,large", "shard": "1/3", "junit": "junit.xml",
            "html": "report.html", "results": "results.json",
        ]
        let failing = try await Self.runStep(inputs, in: directory)
        // The same run, straight: the step's status is forge run's.
        let direct = try await forge(
            arguments: [
                "run", "--vectors", Repository.vectors.path, "--target", harness, "--profile", "apple-compatible", "--features",
                "xcode,sha1,robustness,large", "--shard", "1/3", "--write-baseline", directory.appendingPathComponent("baseline.json").path,
            ], in: directory)
        #expect(direct.status == 1, "\(direct.text)")
        #expect(failing.result.status == direct.status, "\(failing.result.text)\(failing.result.stderr)")
        #expect(failing.result.text.contains("::error::receipt-forge: the validator fails the corpus (exit 1)"))
        #expect(failing.summary.hasPrefix("## an earlier step\n## Receipt conformance: "), "appended to the summary: \(failing.summary.prefix(300))")
        #expect(failing.summary.contains("FALSE_ACCEPT") && failing.summary.contains("Conformance failure"))
        #expect(failing.output == "exit-code=1\n")
        for file in ["junit.xml", "report.html", "results.json"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(file).path)[.size] as? Int) ?? 0
            #expect(size > 0, "\(file) written")
        }
        let junit = try String(contentsOf: directory.appendingPathComponent("junit.xml"), encoding: .utf8)
        #expect(junit.contains("<testsuite"))

        var tolerated = inputs
        tolerated["baseline"] = "baseline.json"
        let passing = try await Self.runStep(tolerated, in: directory)
        #expect(passing.result.status == 0, "\(passing.result.text)\(passing.result.stderr)")
        #expect(passing.output == "exit-code=0\n" && !passing.result.text.contains("::error::"))
        #expect(passing.summary.contains("XFAIL"), "\(passing.summary.prefix(600))")
    }

    @Test("Without a target the step stops before running anything, and a forge-version that is neither `source` nor a release is refused (64)")
    func refusals() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = try await Self.runStep([:], in: directory)
        #expect(missing.result.status != 0 && missing.result.stderr.contains("the target input is required"), "\(missing.result.stderr)")
        let install = try await run(
            URL(fileURLWithPath: "/bin/bash"), [Repository.file("scripts/action/install.sh").path],
            environment: [
                "PATH": "/usr/bin:/bin", "GITHUB_ACTION_PATH": Repository.root.path, "GITHUB_PATH": directory.appendingPathComponent("path").path,
                "INPUT_FORGE_VERSION": "latest",
            ])
        #expect(install.status == 64 && install.text.contains("::error::forge-version must be 'source' or a release"), "\(install.text)")
    }

    /// The serve step in `directory` as GitHub runs it (fresh output and environment files, `$RUNNER_TEMP`), with
    /// `inputs` as INPUT_*; returns its result and what it wrote to `$GITHUB_OUTPUT` and `$GITHUB_ENV`, as pairs.
    static func serveStep(_ inputs: [String: String], in directory: URL) async throws -> (
        result: RunResult, output: [String: String], environment: [String: String]
    ) {
        let output = directory.appendingPathComponent("output.txt"), environmentFile = directory.appendingPathComponent("env.txt")
        let runnerTemp = directory.appendingPathComponent("runner-temp")
        try FileManager.default.createDirectory(at: runnerTemp, withIntermediateDirectories: true)
        var environment = [
            "PATH": Binaries.forge.deletingLastPathComponent().path + ":/usr/local/bin:/usr/bin:/bin", "GITHUB_ACTION_PATH": Repository.root.path,
            "GITHUB_OUTPUT": output.path, "GITHUB_ENV": environmentFile.path, "RUNNER_TEMP": runnerTemp.path, "GITHUB_WORKSPACE": directory.path,
        ]
        for (name, value) in inputs { environment["INPUT_" + name.uppercased().replacingOccurrences(of: "-", with: "_")] = value }
        let result = try await run(URL(fileURLWithPath: "/bin/bash"), [Repository.file("scripts/action/serve.sh").path], in: directory, environment: environment)
        func pairs(_ file: URL) -> [String: String] {
            let lines = ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n")
            return Dictionary(lines.compactMap { line in line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) } }) { $1 }
        }
        return (result, pairs(output), pairs(environmentFile))
    }

    /// Waits for a process this test did not start (the serve step's server, whose parent has exited) to end.
    static func ended(_ pid: pid_t) async throws {
        try await eventually("process \(pid) ended", within: .seconds(20)) { kill(pid, 0) != 0 && errno == ESRCH }
    }

    @Test(
        "The serve step starts forge serve for later steps: it returns once the server answers, with its URL, a generated API key, the TEST roots, its pid and log as outputs and as RECEIPT_FORGE_* variables; the Server API asks for that key, and the server outlives the step until it is stopped"
    )
    func serveStepServes() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputs = ["scenarios": Repository.file("examples/serve-history.json").path, "now": "2025-06-01T00:00:00Z", "api-key": "generate"]
        let (result, output, environment) = try await Self.serveStep(inputs, in: directory)
        try #require(result.status == 0, "\(result.text)\(result.stderr)")
        let url = try #require(output["url"]), pid = try #require(output["pid"].flatMap { pid_t($0) })
        defer { _ = kill(pid, SIGKILL) }
        #expect(url.hasPrefix("http://127.0.0.1:"))
        for (name, variable) in [
            ("url", "URL"), ("key-id", "KEY_ID"), ("issuer-id", "ISSUER_ID"), ("key-path", "KEY_PATH"), ("roots", "ROOTS"), ("pid", "PID"), ("log", "LOG"),
        ] {
            #expect(output[name].map { !$0.isEmpty } == true, "output \(name)")
            #expect(environment["RECEIPT_FORGE_" + variable] == output[name], "RECEIPT_FORGE_\(variable)")
        }
        let keyID = try #require(output["key-id"]), keyPath = try #require(output["key-path"])
        #expect(keyPath.hasSuffix("/AuthKey_\(keyID).p8") && FileManager.default.fileExists(atPath: keyPath))
        #expect(FileManager.default.fileExists(atPath: (output["roots"] ?? "") + "/root.pem"))

        // The step has ended; the server has not.
        let ids = try await request(url + "/_forge/ids")
        #expect(ids.status == 200, "\(ids.text)")
        #expect(ids.text.contains("originalTransactionId"), "\(ids.text.prefix(300))")
        let unauthenticated = try await request(url + "/inApps/v1/transactions/1")
        #expect(unauthenticated.status == 401, "the generated key is required: \(unauthenticated.status)")

        #expect(kill(pid, SIGTERM) == 0)
        try await Self.ended(pid)
        let log = try String(contentsOf: URL(fileURLWithPath: output["log"] ?? ""), encoding: .utf8)
        #expect(log.contains("\"path\":\"/inApps/v1/transactions/1\"") && log.contains("\"httpStatus\":401"), "the request log: \(log.suffix(500))")
    }

    @Test(
        "A scenario forge serve refuses fails the serve step with forge's own message and exit code, and leaves no server; so do a bad tls or api-key input (64)"
    )
    func serveStepRefusals() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = directory.appendingPathComponent("broken.json")
        try Data("{ not json".utf8).write(to: broken)
        let refused = try await Self.serveStep(["scenarios": broken.path], in: directory)
        #expect(refused.result.status == 65, "\(refused.result.text)\(refused.result.stderr)")
        #expect(refused.result.text.contains("::error::forge serve exited 65 before it listened: ") && refused.result.text.contains("broken.json"), "\(refused.result.text)")
        #expect(refused.output["url"] == nil && refused.environment.isEmpty)

        let tls = try await Self.serveStep(["tls": "yes"], in: directory)
        #expect(tls.result.status == 64 && tls.result.text.contains("::error::tls must be true or false"), "\(tls.result.text)")
        let key = try await Self.serveStep(["api-key": "K1=/nonexistent.p8"], in: directory)
        #expect(key.result.status == 64 && key.result.text.contains("needs issuer-id"), "\(key.result.text)")
    }
}
