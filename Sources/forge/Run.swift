import ArgumentParser
import Foundation
import ReceiptConformance
import ReceiptCorpus
import ReceiptModel
import ReceiptValidation

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the corpus against a validator and judge it.",
        discussion: """
        Targets:
          swift:reference     the reference validator, in process
          exec:CMD            one process per vector; the validate message (JSON) on stdin, one reply (JSON) on stdout
          stdio:CMD           one persistent process speaking NDJSON (hello, then validate/result by seq); restarted after a timeout or crash
          exit:CMD            one process per vector; receipt bytes on stdin, context in RF_* environment variables (RF_ID, RF_NOW, RF_TRUST_ANCHOR = anchor DER path, RF_BUNDLE_ID, RF_APP_VERSION, RF_DEVICE_ID, RF_ENVIRONMENT); exit 0 accept, 1 reject (first stdout line: error class), other = error

        Canaries run first: if a valid canary is rejected the run stops (exit 2) with a diagnosis.
        Exit codes: 0 conformant, 1 conformance failure (false accept/reject, wrong reason), 2 infrastructure failure (canaries, harness errors, timeouts, crashes), 64 usage, 65 bad corpus data.
        """)

    @Option(help: ArgumentHelp("The validator under test: swift:reference, exec:CMD, exit:CMD or stdio:CMD.", valueName: "target"))
    var target: String
    @OptionGroup var location: VectorsCommand.Location
    @Option(help: "How acceptable vectors are judged: strict, apple-compatible or lenient. Default: not judged (ACCEPTABLE).")
    var profile: String?
    @Option(help: ArgumentHelp("Only vectors whose id matches (repeatable, * wildcard).", valueName: "pattern"))
    var run: [String] = []
    @Option(help: ArgumentHelp("Leave out vectors whose id matches (repeatable).", valueName: "pattern"))
    var skip: [String] = []
    @Option(help: "Vectors in flight at once.")
    var parallel: Int = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "Seconds per vector for exec, exit and stdio targets.")
    var timeout: Double = 5
    @Option(help: "What an exec/exit target's error classes mean: none, coarse or fine.")
    var granularity: String = "none"
    @Option(help: ArgumentHelp("Features an exec/exit target supports (comma-separated); others are skipped. Default: all.", valueName: "list"))
    var features: String?
    @Option(help: ArgumentHelp("Write results.json here.", valueName: "file"))
    var results: String?
    @Option(help: ArgumentHelp("Write JUnit XML here.", valueName: "file"))
    var junit: String?
    @Option(help: ArgumentHelp("Known failures to tolerate (XFAIL); a vector that now passes (XPASS), fails differently (CHANGED_FAILURE) or an expired entry fails the run.", valueName: "file"))
    var baseline: String?
    @Option(help: ArgumentHelp("Write a baseline tolerating this run's failures, keeping reasons, issues and expiry dates of the file already there.", valueName: "file"))
    var writeBaseline: String?

    func validate() throws {
        guard (1...256).contains(parallel) else { throw ValidationError("--parallel must be between 1 and 256") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        guard HarnessHello.Granularity(rawValue: granularity) != nil else { throw ValidationError("--granularity must be none, coarse or fine") }
        guard target == "swift:reference" || ["exec:", "exit:", "stdio:"].contains(where: target.hasPrefix) else {
            throw ValidationError("--target must be swift:reference, exec:CMD, exit:CMD or stdio:CMD, not '\(target)'")
        }
    }

    func run() async throws {
        let (manifest, directory) = try location.manifest()
        if let profile, manifest.profiles[profile] == nil {
            throw fail("unknown profile '\(profile)'; the corpus defines \(manifest.profiles.keys.sorted().joined(separator: ", "))", Exit.usage)
        }
        let runner = ConformanceRunner(manifest: manifest, vectorsDirectory: directory, profile: profile, parallelism: parallel)
        let include: (Vector) -> Bool = { vector in
            (run.isEmpty || run.contains { matches(vector.id, $0) }) && !skip.contains { matches(vector.id, $0) }
        }
        var outcome: RunResults
        do {
            if target == "swift:reference" {
                outcome = try await runner.run(try ReferenceHarness(vectorsDirectory: directory), selecting: include)
            } else if target.hasPrefix("stdio:") {
                let validator = StdioValidator(command: String(target.dropFirst(6)).split(separator: " ").map(String.init),
                                               timeout: .milliseconds(Int64(timeout * 1000)))
                outcome = try await runner.run(validator, selecting: include)
                await validator.stop()
            } else {
                let command = String(target.dropFirst(5)).split(separator: " ").map(String.init)
                let anchors = manifest.trustAnchors.mapValues { directory.appendingPathComponent($0.file).path }
                let validator = ExecValidator(command: command, mode: target.hasPrefix("exec:") ? .protocol : .exitCode,
                                              timeout: .milliseconds(Int64(timeout * 1000)),
                                              features: features.map { $0.split(separator: ",").map(String.init) } ?? Array(manifest.features.keys),
                                              granularity: HarnessHello.Granularity(rawValue: granularity)!, anchorFiles: anchors)
                outcome = try await runner.run(validator, selecting: include)
            }
        } catch let error as CorpusError {
            throw fail(error.message, Exit.dataError)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let known = try baseline.map { try loadBaseline($0) }
        if let known {
            let today = String(ReceiptDateText.today().prefix(10))
            for entry in known.apply(to: &outcome, today: today) {
                print("EXPIRED BASELINE ENTRY \(entry.id ?? entry.pattern ?? "?") (expired \(entry.expires ?? "")): triage it again — \(entry.reason)")
            }
        }
        if let writeBaseline {
            let existing = FileManager.default.fileExists(atPath: writeBaseline) ? try loadBaseline(writeBaseline) : known
            try writeOutput(try encoder.encode(Baseline.written(from: outcome, keeping: existing)), to: writeBaseline)
        }
        if let results { try writeOutput(try encoder.encode(outcome), to: results) }
        if let junit { try writeOutput(Data(JUnitReport.xml(outcome).utf8), to: junit) }
        for result in outcome.results where result.outcome.isConformanceFailure || result.outcome.isInfrastructureFailure {
            print("\(result.outcome.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)) \(result.id): expected \(result.expected.rawValue)\(result.expectedErrorClasses.isEmpty ? "" : " [\(result.expectedErrorClasses.joined(separator: "|"))]"), got \(result.verdict?.rawValue ?? "nothing")\(result.errorClass.map { " \($0)" } ?? "")\(result.message.map { " — \($0)" } ?? "")")
        }
        if let diagnosis = outcome.canaryDiagnosis { print("CANARIES FAILED: \(diagnosis)") }
        let counts = outcome.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("\(outcome.results.count) vectors in \(outcome.durationMilliseconds) ms: \(counts)")
        let code = outcome.exitCode
        if code != 0 { throw ExitCode(code) }
    }

    private func loadBaseline(_ path: String) throws -> Baseline {
        let data = Data(try readInput(path).bytes)
        do { return try JSONDecoder().decode(Baseline.self, from: data) } catch {
            throw fail("\(path) is not a baseline file: \(error)", Exit.dataError)
        }
    }
}

/// Today's UTC date for baseline expiry: the only wall-clock use of the runner.
enum ReceiptDateText {
    static func today() -> String {
        let seconds = Int(Date().timeIntervalSince1970)
        return ReceiptDate.format(Date(timeIntervalSince1970: Double(seconds)))
    }
}
