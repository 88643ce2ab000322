import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

@Suite("forge run through the binary, against real second processes", .timeLimit(.minutes(2)))
struct RunCLITests {
    @Test("swift:reference is conformant; results.json and JUnit name every vector")
    func reference() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let results = directory.appendingPathComponent("results.json"), junit = directory.appendingPathComponent("junit.xml")
        let run = try await forge(
            "run", "--target", "swift:reference", "--profile", "apple-compatible", "--vectors", Repository.vectors.path,
            "--results", results.path, "--junit", junit.path)
        #expect(run.status == 0, "\(run.text)\(run.stderr)")
        #expect(run.text.contains("\(corpusCount) vectors") && run.text.contains("conformant (exit 0)"))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])
        #expect((parsed["results"] as? [Any])?.count == corpusCount)
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.components(separatedBy: "<testcase ").count - 1 == corpusCount)
        #expect(xml.contains(#"name="chain::foreign-root""#))
    }

    @Test("exit: the openssl harness passes signature checks, and its false accepts are reported with exit 1", .requires(.openssl))
    func opensslHarness() async throws {
        let run = try await forge(
            "run", "--target", "exit:\(Repository.file("examples/openssl-harness.sh").path)", "--run", "signature::*",
            "--run", "valid::appstore-no-purchases", "--vectors", Repository.vectors.path, "--profile", "apple-compatible")
        #expect(run.status == 1, "\(run.text)\(run.stderr)")
        for id in ["signature::md5", "signature::two-signer-infos", "signature::sha1-with-rsa-signer-oid-sha256-digest"] {
            #expect(run.text.contains("FALSE_ACCEPT     \(id)"), "\(id)")
        }
        #expect(!run.text.contains("FALSE_ACCEPT     signature::appstore-payload-bit-flip"))
    }

    @Test("A harness that rejects everything stops at the canaries with exit 2 and a diagnosis")
    func canaries() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("reject.sh")
        try "#!/bin/sh\ncat > /dev/null\necho chain.untrusted\nexit 1\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let run = try await forge("run", "--target", "exit:\(script.path)", "--vectors", Repository.vectors.path)
        #expect(run.status == 2)
        #expect(run.text.contains("CANARIES FAILED") && run.text.contains("trust anchor"))
    }

    @Test("A target's command is split like shell words: paths with spaces work when quoted")
    func quotedCommand() async throws {
        let directory = try temporaryDirectory().appendingPathComponent("my harnesses")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let script = directory.appendingPathComponent("accept all.sh")
        // Accepts, and says which arguments it got, one per line, on stderr (the reject message).
        try "#!/bin/sh\ncat > /dev/null\n[ \"$1\" = 'two words' ] && [ \"$2\" = \"it's\" ] || { echo \"args: $*\" >&2; exit 3; }\nexit 0\n"
            .write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let run = try await forge(
            "run", "--target", #"exit:'\#(script.path)' "two words" it\'s"#, "--run", "valid::appstore-no-purchases",
            "--vectors", Repository.vectors.path, "-q")
        #expect(run.status == 0, "\(run.text)\(run.stderr)")
        #expect(run.text.contains("PASS 1"))
    }

    @Test(
        "The runner page's GitHub Actions workflow uses the action with inputs action.yml declares, and merges the shards with options forge run takes, from the release tarball scripts/release.sh names"
    )
    func workflowExample() async throws {
        let page = try String(contentsOf: Repository.file("Documentation/runner.md"), encoding: .utf8)
        let workflow = try #require(page.components(separatedBy: "```yaml\n").dropFirst().first?.components(separatedBy: "```").first)
        let action = try String(contentsOf: Repository.file("action.yml"), encoding: .utf8)
        let declared = Set(action.matches(of: /\n  ([a-z][a-z-]*):\n    description:/).map { String($0.1) })
        let step = try #require(workflow.components(separatedBy: "uses: your-org/receipt-forge@").dropFirst().first)
        let inputs = (step.components(separatedBy: "\n      - ").first ?? "").matches(of: /\n          ([a-z-]+):/).map { String($0.1) }
        #expect(Set(inputs) == ["forge-version", "target", "baseline", "shard", "results"], "\(inputs)")
        for input in inputs { #expect(declared.contains(input), "action.yml declares \(input)") }
        // The report job unpacks the release the action installs: named as scripts/release.sh names it.
        let version = try await forge("--version").text.trimmingCharacters(in: .whitespacesAndNewlines)
        let release = "receipt-forge-\(version)-linux-x86_64"
        #expect(workflow.contains("forge-version: \(version)\n") && workflow.contains("releases/download/v\(version)/\(release).tar.xz | tar -xJ"))
        #expect(workflow.contains("- run: \(release)/bin/forge run merge ") && workflow.contains("--vectors \(release)/Vectors"))
        let help = try await forge("run", "--help").text
        let options = Set(workflow.matches(of: /--[a-z][a-z-]+/).map { String($0.output) })
        #expect(options.isSuperset(of: ["--vectors", "--junit", "--markdown"]))
        for option in options { #expect(help.contains(option), "forge run knows \(option)") }
    }

    @Test("Bad arguments exit 64")
    func usage() async throws {
        #expect(try await forge("run", "--target", "ftp://nowhere").status == 64)
        let help = try await forge("run", "--help").text
        for taught in ["swift:reference", "exec:CMD", "exit:CMD", "stdio:CMD", "--mapping verifyreceipt", "EXIT CODES", "65  bad data", "EXAMPLES"] {
            #expect(help.contains(taught), "forge run --help teaches \(taught)")
        }
        let unterminated = try await forge("run", "--target", "exec:'./harness --flag")
        #expect(unterminated.status == 64 && unterminated.stderr.contains("unterminated"), "\(unterminated.stderr)")
        #expect(try await forge("run", "--target", "swift:reference", "--profile", "nope", "--vectors", Repository.vectors.path).status == 64)
    }
}
