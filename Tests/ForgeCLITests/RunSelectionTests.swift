import Foundation
import ForgeTestSupport
import Testing

/// Issue 21, items 2 and 3: a CI gate must not pass on a selection of nothing, and a missing baseline is a missing
/// input (66), found before the corpus runs.
@Suite("forge run: selections of nothing and missing baselines", .timeLimit(.minutes(2)))
struct RunSelectionTests {
    @Test(
        "--run/--skip patterns that select no vector exit 64 naming them, instead of a conformant run of 0 vectors",
        arguments: [["--run", "nothing::*"], ["--skip", "*"], ["--run", "valid::*", "--skip", "valid::*"]])
    func selectionOfNothing(_ selection: [String]) async throws {
        let result = try await forge(arguments: ["run", "--target", "swift:reference"] + selection)
        #expect(result.status == 64, "exit \(result.status): \(result.text)\(result.stderr)")
        #expect(result.stderr.contains("no vector of the corpus is selected") && result.stderr.contains(selection[1]), "\(result.stderr)")
        #expect(!result.text.contains("conformant"))
    }

    @Test("A --baseline that does not exist exits 66 before anything runs, and writes no report")
    func missingBaseline() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let results = directory.appendingPathComponent("results.json")
        let result = try await forge(arguments: [
            "run", "--target", "swift:reference", "--baseline", directory.appendingPathComponent("known.json").path, "--results", results.path,
        ])
        #expect(result.status == 66, "exit \(result.status): \(result.stderr)")
        #expect(result.stderr.contains("does not exist"))
        #expect(!FileManager.default.fileExists(atPath: results.path))
    }

    @Test("A selection that matches still runs")
    func selectionRuns() async throws {
        let result = try await forge(arguments: ["run", "--target", "swift:reference", "--run", "valid::*", "-q"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Issue 21, item 3: with every canary rejected, "which no accepted canary needs" reasoned from an empty set.
    @Test("The canary diagnosis never names a feature as the cause when no canary was accepted")
    func diagnosisNeedsAContrast() async throws {
        let result = try await forge(arguments: ["run", "--target", "exit:false", "--run", "xcode::*"])
        #expect(result.status == 2, "exit \(result.status): \(result.stderr)")
        #expect(result.text.contains("Canary diagnosis") || result.stderr.contains("Canary diagnosis"), "\(result.text)")
        #expect(!result.text.contains("no accepted canary") && !result.stderr.contains("no accepted canary"), "\(result.text)")
    }
}
