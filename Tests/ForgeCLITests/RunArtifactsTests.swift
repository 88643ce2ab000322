import Foundation
import ForgeTestSupport
import Testing

/// Issue 21, item 1: the artefact kind is a first-class selection (`--artifacts receipt|jws|all`, a hello's
/// `artifacts`), receipts by default, so a receipt validator is not charged with StoreKit 2 JWS and a JWS
/// verifier is not stopped by receipt canaries.
@Suite("forge run --artifacts: which artefacts a target is judged on", .timeLimit(.minutes(2)))
struct RunArtifactsTests {
    static let vectors = Repository.vectors.path

    /// An exit-code validator that only understands receipts: it accepts any DER (a receipt starts with a SEQUENCE,
    /// 0x30) and rejects everything else, a JWS included.
    static let receiptOnly = "exit:sh -c 'test \"$(head -c 1 | od -An -tx1 | tr -d \" \\n\")\" = 30'"

    /// An asl_jws.py-style verifier: JWS only; a receipt makes it fail as a harness (exit 2), as Apple's library
    /// would be called with a method for a kind it has not.
    static let jwsOnly = "exit:sh -c 'case \"$RF_ARTIFACT\" in jws-*) test \"$(head -c 3)\" = eyJ ;; *) echo \"no verifier for $RF_ARTIFACT\" >&2; exit 2 ;; esac'"

    /// Both valid families: receipt canaries and JWS canaries alike.
    static let bothValid = ["--run", "valid::*", "--run", "jws-valid::*"]

    static func manifestVectors() throws -> [[String: Any]] {
        let data = try Data(contentsOf: Repository.file("Vectors/manifest.json"))
        return try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["vectors"] as? [[String: Any]])
    }

    static func isJWS(_ vector: [String: Any]) -> Bool {
        ((vector["context"] as? [String: Any])?["artifact"] as? String)?.hasPrefix("jws-") == true
    }

    /// `forge run … --results FILE`: the exit status, the output and the parsed results.json.
    static func runResults(_ arguments: [String]) async throws -> (RunResult, [String: Any]) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("results.json")
        let result = try await forge(arguments: ["run", "--vectors", vectors] + arguments + ["--results", file.path])
        let data = try Data(contentsOf: file)
        return (result, try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(result.stderr)"))
    }

    /// The console's text with its line wrapping undone (the summary wraps at 100 columns).
    static func unwrapped(_ text: String) -> String { text.replacingOccurrences(of: "\n  ", with: " ") }

    static func ids(_ results: [String: Any]) -> [String] {
        (results["results"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    @Test("An exit: target that declares nothing is given receipts only: no JWS vector is sent, none is a FALSE_REJECT")
    func receiptsByDefault() async throws {
        let (result, results) = try await Self.runResults(["--target", Self.receiptOnly] + Self.bothValid)
        #expect(result.status == 0, "exit \(result.status): \(result.text)\(result.stderr)")
        let ids = Self.ids(results)
        #expect(!ids.isEmpty && ids.allSatisfy { $0.hasPrefix("valid::") }, "\(ids.filter { !$0.hasPrefix("valid::") })")
        #expect(!result.text.contains("FALSE_REJECT"), "\(result.text)")
        let selection = try #require(results["artifacts"] as? [String: Any], "results.json records the selection")
        #expect(selection["artifacts"] as? [String] == ["receipt"] && selection["source"] as? String == "default")
        let jwsValid = try Self.manifestVectors().filter { ($0["id"] as? String)?.hasPrefix("jws-valid::") == true }.count
        #expect(selection["excluded"] as? Int == jwsValid, "the JWS vectors left out are counted: \(selection)")
        #expect(
            Self.unwrapped(result.text).contains(
                "artifacts: receipt (default: the target declares none; pass --artifacts all to include StoreKit 2 JWS and iOS 6 transaction receipts)"),
            "\(result.text)")
    }

    @Test("--artifacts all sends the JWS too, and says so")
    func allArtifacts() async throws {
        let (result, results) = try await Self.runResults(["--target", Self.receiptOnly, "--artifacts", "all"] + Self.bothValid)
        // The receipt-only validator rejects the JWS canaries: the run stops on them, as it should.
        #expect(result.status == 2, "exit \(result.status): \(result.text)")
        #expect(Self.ids(results).contains { $0.hasPrefix("jws-valid::") })
        #expect(Self.unwrapped(result.text).contains("artifacts: receipt, jws, transaction-receipt (--artifacts all)"), "\(result.text)")
    }

    @Test(
        "A JWS-only target passes its canaries with --artifacts jws, and with --features jws (an alias, said once on stderr)",
        arguments: [["--artifacts", "jws"], ["--features", "jws"]])
    func jwsOnlyTarget(_ selection: [String]) async throws {
        let (result, results) = try await Self.runResults(["--target", Self.jwsOnly, "--granularity", "none"] + selection + Self.bothValid)
        #expect(result.status == 0, "exit \(result.status): \(result.text)\(result.stderr)")
        let ids = Self.ids(results)
        #expect(!ids.isEmpty && ids.allSatisfy { $0.hasPrefix("jws-valid::") }, "\(ids)")
        let canaries = try Self.manifestVectors().filter { Self.isJWS($0) && $0["canary"] as? Bool == true }.compactMap { $0["id"] as? String }
        #expect(!canaries.isEmpty, "the corpus has JWS canaries")
        let passed = Set((results["results"] as? [[String: Any]] ?? []).filter { $0["outcome"] as? String == "PASS" }.compactMap { $0["id"] as? String })
        #expect(canaries.allSatisfy(passed.contains), "\(canaries)")
        let alias = result.stderr.components(separatedBy: "alias of --artifacts jws").count - 1
        #expect(alias == (selection[0] == "--features" ? 1 : 0), "\(result.stderr)")
    }

    @Test("A stdio harness's hello declares its artifacts; swift:reference declares every one", .requires(.python))
    func helloDeclares() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = directory.appendingPathComponent("harness.py")
        try """
        import json, sys
        for line in sys.stdin:
            message = json.loads(line)
            if message["type"] == "hello":
                print(json.dumps({"type": "hello", "protocol": 1, "implementation": "jws-only", "features": [], "artifacts": ["jws"],
                                  "errorGranularity": "none", "clockInjection": True, "maxConcurrency": 1}), flush=True)
            elif message["type"] == "validate":
                verdict = "accept" if message["context"].get("artifact", "").startswith("jws-") else "reject"
                print(json.dumps({"type": "result", "seq": message["seq"], "verdict": verdict}), flush=True)
            else:
                break
        """.write(to: harness, atomically: true, encoding: .utf8)
        let (stdio, declared) = try await Self.runResults(["--target", "stdio:\(try Oracle.python.required().path) \(harness.path)"] + Self.bothValid)
        #expect(stdio.status == 0, "exit \(stdio.status): \(stdio.text)\(stdio.stderr)")
        #expect(Self.ids(declared).allSatisfy { $0.hasPrefix("jws-valid::") })
        #expect((declared["artifacts"] as? [String: Any])?["source"] as? String == "hello")
        #expect(Self.unwrapped(stdio.text).contains("artifacts: jws (declared by the harness's hello)"), "\(stdio.text)")

        let (reference, all) = try await Self.runResults(["--target", "swift:reference"] + Self.bothValid)
        #expect(reference.status == 0, "\(reference.text)")
        let ids = Self.ids(all)
        #expect(ids.contains { $0.hasPrefix("jws-valid::") } && ids.contains { $0.hasPrefix("valid::") })
        #expect((all["artifacts"] as? [String: Any])?["artifacts"] as? [String] == ["receipt", "jws", "transaction-receipt"])
    }

    @Test("The corpus no longer asks for a `jws` feature: the artefact is the selection, and --features rejects no alias")
    func oneVocabulary() async throws {
        let vectors = try Self.manifestVectors()
        #expect(!vectors.contains { ($0["features"] as? [String])?.contains("jws") == true })
        let help = try await forge("run", "--help").text
        #expect(help.contains("--artifacts"))
        #expect(try await forge("run", "--target", "swift:reference", "--artifacts", "pdf").status == 64)
    }

    @Test("forge run merge keeps the selection: shards of a receipts-only run do not gain the JWS as SKIP; older results still merge")
    func mergeKeepsSelection() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [String] = []
        for shard in ["1/2", "2/2"] {
            let file = directory.appendingPathComponent("shard\(files.count).json").path
            let result = try await forge(arguments: [
                "run", "--vectors", Self.vectors, "--target", Self.receiptOnly, "--run", "valid::*", "--shard", shard, "--results", file, "-q",
            ])
            #expect(result.status == 0, "\(result.text)\(result.stderr)")
            files.append(file)
        }
        let merged = directory.appendingPathComponent("merged.json").path
        let result = try await forge(arguments: ["run", "merge"] + files + ["--vectors", Self.vectors, "--results", merged])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: merged))) as? [String: Any])
        #expect(!Self.ids(object).contains { $0.hasPrefix("jws-") }, "merge added the unselected JWS as SKIP")
        // Every vector of another artefact is left out: the JWS and the iOS 6 transaction receipts.
        let others = try Self.manifestVectors().filter { ($0["context"] as? [String: Any])?["artifact"] != nil }.count
        #expect((object["artifacts"] as? [String: Any])?["excluded"] as? Int == others)
        #expect(result.text.contains("artifacts: receipt"), "\(result.text)")

        // A results file written before artefacts were recorded judged every artefact: it merges, as all.
        var old = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: files[0]))) as? [String: Any])
        old["artifacts"] = nil
        old["corpus"] = nil
        let oldFile = directory.appendingPathComponent("old.json")
        try JSONSerialization.data(withJSONObject: old).write(to: oldFile)
        #expect(try await forge("run", "merge", oldFile.path, "--vectors", Self.vectors, "-q").status != 65)
        // Shards judging different artefacts are not one run.
        let mixed = try await forge("run", "merge", oldFile.path, files[1], "--vectors", Self.vectors)
        #expect(mixed.status == 65 && mixed.stderr.contains("artifacts"), "\(mixed.stderr)")
    }
}
