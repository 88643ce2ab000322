import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptConformance
import ReceiptCorpus
import ReferenceValidation
import _ForgeSupport
import StoreModel

/// `forge bench runner`: vectors/s through a transport, the runner's whole path included (reading
/// the vector, encoding the request, the transport, decoding the reply, classifying).
struct BenchRunner: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runner",
        abstract: "Measure vectors/s through each --target (the whole corpus, over and over), median of --rounds.",
        discussion: """
            swift:no-op is a validator that answers at once: it measures the runner alone (reading vectors, building requests, classifying). The harness is started once and kept: this measures the transport and the validator, not process start-up (except for exec: and exit:, which start a process per vector by design). Compare an HTTP target with a load generator on the same endpoint, e.g. scripts/bench-runner.sh, which runs every transport and wrk. Use a release build: swift build -c release.
            """)

    @Option(help: ArgumentHelp("Target to measure (repeatable), as for `forge run`.", valueName: "target"))
    var target: [String] = ["swift:reference"]
    @Option(help: ArgumentHelp("For http(s) targets: 'verifyreceipt' or a mapping file.", valueName: "mapping"))
    var mapping: String?
    @OptionGroup var location: VectorsCommand.Location
    @Option(help: ArgumentHelp("Only vectors whose id matches (repeatable, * wildcard), e.g. 'jws-*' for StoreKit 2 alone.", valueName: "pattern"))
    var run: [String] = []
    @Option(help: ArgumentHelp("Leave out vectors whose id matches (repeatable).", valueName: "pattern"))
    var skip: [String] = []
    @Option(help: "Vectors in flight at once.")
    var parallel: Int = ProcessInfo.processInfo.activeProcessorCount * 4
    @Option(help: "Seconds per target.")
    var seconds: Double = 5
    @Option(help: "Rounds per target; the median is reported.")
    var rounds: Int = 5
    @Flag(help: "Print the figures as JSON.")
    var json = false

    func validate() throws {
        guard (1...256).contains(parallel) else { throw ValidationError("--parallel must be between 1 and 256") }
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be in (0, 600]") }
        guard (1...100).contains(rounds) else { throw ValidationError("--rounds must be between 1 and 100") }
    }

    private func parsed(_ text: String) throws -> Target {
        do { return try Target(text) } catch { throw fail(error.message, Exit.usage) }
    }

    /// The vectors measured: `--run` and `--skip` as `forge run` reads them.
    private var selection: @Sendable (Vector) -> Bool {
        let run = self.run, skip = self.skip
        return { vector in
            (run.isEmpty || run.contains { IDPattern.matches(vector.id.text, $0) }) && !skip.contains { IDPattern.matches(vector.id.text, $0) }
        }
    }

    /// A validator that answers every vector at once: what the runner alone costs per vector.
    static let noOp = "swift:no-op"

    /// Vectors/s of whole runs against `validator`, median of `rounds`, after one warm-up run.
    private func measure(_ validator: some ReceiptValidator, _ runner: ConformanceRunner) async throws -> (Double, [String: Int]) {
        let include = selection
        _ = try await runner.run(validator, selecting: include)  // warm-up: connections, caches, the harness's first hello
        var rates: [Double] = []
        var counts: [String: Int] = [:]
        let clock = ContinuousClock()
        for _ in 0..<rounds {
            let start = clock.now
            var vectors = 0
            while start.duration(to: clock.now) < .milliseconds(Int64(seconds * 1000 / Double(rounds))) {
                let results = try await runner.run(validator, selecting: include)
                vectors += results.results.count
                counts = results.counts
            }
            let elapsed = start.duration(to: clock.now)
            rates.append(Double(vectors) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
        }
        return (rates.sorted()[rates.count / 2], counts)
    }

    func run() async throws {
        for text in target where text != Self.noOp {
            if try parsed(text).kind == .http { _ = try Network.required(for: "--target \(text)") }
        }
        let (manifest, directory) = try location.manifest()
        let selected = manifest.vectors.filter(selection).count
        guard selected > 0 else {
            throw fail(
                "no vector of the corpus is selected by \((run.map { "--run '\($0)'" } + skip.map { "--skip '\($0)'" }).joined(separator: " ")) (forge vectors list shows the ids)",
                Exit.usage)
        }
        var plan = TargetPlan(manifest: manifest, vectorsDirectory: directory)
        plan.timeout = 10
        plan.connections = parallel
        plan.mapping = try mapping.map(TargetPlan.loadMapping)
        let runner = ConformanceRunner(manifest: manifest, vectorsDirectory: directory, profile: ProfileID.appleCompatible, parallelism: parallel)
        var rows: [(String, Double, [String: Int])] = []
        for uri in target {
            let (rate, counts) =
                if uri == Self.noOp {
                    try await measure(NoOpValidator(features: Array(manifest.features.keys)), runner)
                } else {
                    try await Network.targetProviders.withValidator(try parsed(uri), plan: plan) { try await measure($0, runner) }
                }
            rows.append((uri, rate, counts))
        }
        if json {
            let entries = rows.map { #"{"target":"\#($0.0.replacing("\"", with: "\\\""))","vectorsPerSecond":\#(Int($0.1))}"# }
            print("[\(entries.joined(separator: ","))]")
            return
        }
        print("forge bench runner — \(selected) vectors per pass, --parallel \(parallel), median of \(rounds) rounds in \(seconds)s per target")
        for (uri, rate, counts) in rows {
            let outcome = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            print("\(String(Int(rate)).leftPad(8)) vectors/s  \(uri)  [\(outcome)]")
        }
    }
}

/// Accepts everything instantly (`forge bench runner --target swift:no-op`).
private struct NoOpValidator: ReceiptValidator {
    let features: [String]
    func hello() async -> HarnessHello { HarnessHello(implementation: "no-op", features: features, errorGranularity: .none, maxConcurrency: 256) }
    /// In process like `swift:reference`, so the two differ by the validator alone.
    var readsBytes: Bool { true }
    func validate(_ request: ValidateRequest) async -> HarnessReply {
        .result(seq: request.seq, verdict: .accept, errorClass: nil, message: nil, decoded: nil)
    }
}
