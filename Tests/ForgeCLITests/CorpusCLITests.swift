import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

@Suite("forge vectors, seeds and mutate through the binary", .timeLimit(.minutes(2)))
struct CorpusCLITests {
    static let vectors = Repository.vectors.path

    @Test("generate into a fresh directory reproduces the committed corpus; lint passes there and fails on a tampered copy")
    func generateAndLint() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("v")
        let generated = try await forge("vectors", "generate", "--out", out.path)
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(generated.text.contains("wrote \(corpusCount) vectors") || generated.text.contains("vectors to"))
        for name in ["manifest.json", "chain/foreign-root.der", "schema/manifest.schema.json", "anchors/forge-root.der"] {
            #expect(try Data(contentsOf: out.appendingPathComponent(name)) == Data(contentsOf: URL(fileURLWithPath: Self.vectors).appendingPathComponent(name)), "\(name)")
        }
        #expect(try await forge("vectors", "lint", "--vectors", out.path).status == 0)
        var bytes = try Data(contentsOf: out.appendingPathComponent("chain/foreign-root.der"))
        bytes[100] ^= 1
        try bytes.write(to: out.appendingPathComponent("chain/foreign-root.der"))
        let lint = try await forge("vectors", "lint", "--vectors", out.path)
        #expect(lint.status == 1)
        #expect(lint.text.contains("chain::foreign-root") && lint.text.contains("sha256"))
        let missing = try await forge("vectors", "lint", "--vectors", directory.appendingPathComponent("nope").path)
        #expect(missing.status == 66)
    }

    @Test("list filters by pattern and show explains one vector with its inspect view")
    func listAndShow() async throws {
        let list = try await forge("vectors", "list", "chain::*", "--vectors", Self.vectors)
        #expect(list.status == 0)
        let lines = list.text.split(separator: "\n")
        #expect(lines.count == 21 && lines.allSatisfy { $0.hasPrefix("chain::") })
        let show = try await forge("vectors", "show", "chain::leaf-missing-marker", "--vectors", Self.vectors)
        #expect(show.status == 0, "\(show.stderr)")
        for part in [
            "expected: invalid with chain.leaf-marker-missing", "recipe: preset appstore + reissue-leaf variant=no-marker", "certificates   3, order leaf-first", "payload:",
        ] {
            #expect(show.text.contains(part), "show lacks '\(part)'")
        }
        // A chain vector shows the certificate properties it exercises: criticality, key usage, EKU.
        let critical = try await forge("vectors", "show", "chain::leaf-marker-critical", "--vectors", Self.vectors)
        for part in [
            "expected: acceptable (apple-compatible: invalid, lenient: either, strict: invalid)",
            "keyUsage CRITICAL (digitalSignature); receipt-signing marker CRITICAL", "keyUsage CRITICAL (keyCertSign, cRLSign); WWDR marker",
            "basicConstraints CRITICAL CA pathlen 0",
        ] {
            #expect(critical.text.contains(part), "show lacks '\(part)': \(critical.text)")
        }
        let keyUsage = try await forge("vectors", "show", "chain::leaf-without-digital-signature", "--vectors", Self.vectors)
        #expect(keyUsage.text.contains("keyUsage CRITICAL (keyEncipherment)"), "\(keyUsage.text)")
        let xcode = try await forge("vectors", "show", "xcode::2023-empty", "--vectors", Self.vectors)
        #expect(xcode.text.contains("extKeyUsage CRITICAL (codeSigning)"), "\(xcode.text)")
        let unknown = try await forge("vectors", "show", "chain::no-such-vector", "--vectors", Self.vectors)
        #expect(unknown.status == 64)
        #expect(try await forge("vectors", "list", "zzz::*", "--vectors", Self.vectors).status == 64)
    }

    @Test("seeds writes one file per vector named by sha256, an index and a dictionary")
    func seeds() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await forge("seeds", "--out", directory.path, "--vectors", Self.vectors)
        #expect(result.status == 0, "\(result.stderr)")
        let index = try String(contentsOf: directory.appendingPathComponent("index.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(index.count == corpusCount)
        let first = try #require(try JSONSerialization.jsonObject(with: Data(index[0].utf8)) as? [String: String])
        let seed = try Data(contentsOf: directory.appendingPathComponent(try #require(first["sha256"])))
        #expect(seed == (try Data(contentsOf: Repository.vectors.appendingPathComponent(try #require(first["file"])))))
        let dictionary = try String(contentsOf: directory.appendingPathComponent("receipt.dict"), encoding: .utf8)
        #expect(dictionary.contains(#"oid_signed_data="\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x07\x02""#))
        #expect(dictionary.contains(#"attr_type_17="\x02\x01\x11""#))
    }

    @Test("mutate writes mutants with recipes; --replay rebuilds each byte for byte; the same seed gives the same mutants")
    func mutate() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("a"), second = directory.appendingPathComponent("b")
        #expect(try await forge("mutate", "--from", "valid::*", "--seed", "3", "--count", "12", "--out", first.path).status == 0)
        #expect(try await forge("mutate", "--from", "valid::*", "--seed", "3", "--count", "12", "--out", second.path).status == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: first.path).sorted()
        #expect(names == (try FileManager.default.contentsOfDirectory(atPath: second.path).sorted()))
        let recipes = names.filter { $0.hasSuffix(".recipe.json") }
        #expect(!recipes.isEmpty)
        for recipe in recipes.prefix(5) {
            let replayed = try await forge("mutate", "--replay", first.appendingPathComponent(recipe).path)
            #expect(replayed.status == 0, "\(replayed.stderr)")
            let mutant = first.appendingPathComponent(recipe.replacingOccurrences(of: ".recipe.json", with: ".der"))
            #expect(replayed.stdout == (try Data(contentsOf: mutant)), "\(recipe)")
            // Mutants that changed signed bytes must be rejected by the reference validator.
            let text = try String(contentsOf: first.appendingPathComponent(recipe), encoding: .utf8)
            if text.contains("must-reject") {
                #expect(try await forge("validate", mutant.path).status != 0, "\(recipe) must be rejected")
            }
        }
        #expect(try await forge("mutate", "--count", "3").status == 64)
    }

    @Test("--replay of an impossible or out-of-range recipe exits 65 naming the step and parameter, never a crash")
    func replayRefusesBadRecipes() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(steps: String, says: [String])] = [
            // The crash reported in issue 10: no SignerInfo left for the second step.
            (
                #"[{"mutation":"signer-count","parameters":{"count":"0"}},{"mutation":"signer-serial","parameters":{}}]"#,
                ["recipe step 2 (signer-serial)", "no SignerInfo"]
            ),
            (#"[{"mutation":"signer-count","parameters":{"count":"0"}},{"mutation":"empty-signature","parameters":{}}]"#, ["recipe step 2 (empty-signature)"]),
            (#"[{"mutation":"trailing-bytes","parameters":{"count":"-5"}}]"#, ["recipe step 1 (trailing-bytes)", "'count' must be between 0 and"]),
            (#"[{"mutation":"truncate","parameters":{"length":"-9223372036854775808"}}]"#, ["recipe step 1 (truncate)", "'length'"]),
            (#"[{"mutation":"nested-sequences","parameters":{"depth":"-3"}}]"#, ["'depth'"]),
            (#"[{"mutation":"no-such-mutation","parameters":{}}]"#, ["recipe step 1", "unknown mutation"]),
        ]
        for (index, item) in cases.enumerated() {
            let recipe = directory.appendingPathComponent("r\(index).json")
            try Data(#"{"base":"valid::appstore-subscription","oracle":"must-reject","steps":"#.utf8 + Data(item.steps.utf8) + Data("}".utf8)).write(to: recipe)
            let output = directory.appendingPathComponent("r\(index).der")
            let replayed = try await forge("mutate", "--replay", recipe.path, "-o", output.path)
            #expect(replayed.status == 65, "\(item.steps): \(replayed.stderr)")
            for part in item.says { #expect(replayed.stderr.contains(part), "\(replayed.stderr) lacks '\(part)'") }
            #expect(!FileManager.default.fileExists(atPath: output.path), "no partial output")
        }
    }
}
