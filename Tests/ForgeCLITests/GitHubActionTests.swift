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
        let read = Self.stepInputs(text)
        #expect(read.count == 10, "\(read)")
        for (variable, input) in read {
            #expect(declared.contains(input), "\(input) is not declared")
            #expect(variable == "INPUT_" + input.uppercased().replacingOccurrences(of: "-", with: "_"))
        }
        let scripts = text.matches(of: /\$GITHUB_ACTION_PATH\/(scripts\/action\/[a-z-]+\.sh)/).map { String($0.1) }
        #expect(scripts == ["scripts/action/install.sh", "scripts/action/run.sh"])
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
}
