public import ReceiptCorpus
import _ForgeSupport

/// One vector on which the targets of a differential run reached different verdicts.
///
/// Frankencert and Bowtie find their bugs this way: where validators disagree at least one is wrong,
/// even for `acceptable` vectors and mutants that have no oracle of their own.
public struct Disagreement: Codable, Sendable, Hashable {
    public var id: String
    /// What the corpus expects, under the profile of the first run that holds the vector.
    public var expected: Verdict
    /// Target name → its answer: "accept", "reject chain.x", or the outcome ("SKIP", "ERROR", …) when it
    /// gave no verdict, or "NOT RUN" when its run does not hold the vector.
    public var answers: [String: String]

    public init(id: String, expected: Verdict, answers: [String: String]) {
        self.id = id
        self.expected = expected
        self.answers = answers
    }
}

/// Several targets run on the same corpus (`--target A --target B`): what `results.json` holds in
/// differential mode.
public struct DifferentialResults: Codable, Sendable {
    /// One distinct name per run, in run order (see `Differential.targetNames`).
    public var targets: [String]
    public var disagreements: [Disagreement]
    public var runs: [RunResults]

    public init(runs: [RunResults]) {
        self.targets = Differential.targetNames(runs)
        self.disagreements = Differential.disagreements(runs)
        self.runs = runs
    }

    /// The worst run decides: infrastructure failure (2) over conformance failure (1) over conformant (0).
    /// Disagreements alone do not fail the run: they are leads, and the runs already gate on the corpus.
    public var exitCode: Int32 { runs.map(\.exitCode).max() ?? 0 }
}

/// Differential mode: compares the verdicts of several runs vector by vector.
public enum Differential {
    /// Answer used when a run does not hold a vector at all (a narrower `--run` filter, another shard).
    public static let notRun = "NOT RUN"

    /// Every vector on which two targets gave different verdicts, sorted by id.
    ///
    /// Only the verdict (accept or reject) is compared: error class vocabularies differ between
    /// validators, so they are shown in `answers` but would make every vector a disagreement. A target
    /// that skipped or errored has no verdict, so it cannot disagree by itself, but its answer is listed.
    public static func disagreements(_ runs: [RunResults]) -> [Disagreement] {
        let names = targetNames(runs)
        let byID = runs.map { run in Dictionary(run.results.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
        let ids = Set(runs.flatMap { $0.results.map(\.id) }).sorted()
        var found: [Disagreement] = []
        for id in ids {
            let results = byID.map { $0[id] }
            let verdicts = Set(results.compactMap { $0.flatMap(comparableVerdict) })
            guard verdicts.count > 1, let expected = results.lazy.compactMap({ $0?.expected }).first else { continue }
            var answers: [String: String] = [:]
            for (name, result) in zip(names, results) { answers[name] = result.map(answer) ?? notRun }
            found.append(Disagreement(id: id, expected: expected, answers: answers))
        }
        return found
    }

    /// One distinct, deterministic name per run: its `--label`, else the implementation name; where several
    /// runs share it, followed by the target (`name [stdio:./harness]`); where that is not enough either,
    /// "#2", "#3", … on later runs, so answers and matrix columns never collide.
    public static func targetNames(_ runs: [RunResults]) -> [String] {
        let shared = Dictionary(grouping: runs, by: \.name).filter { $0.value.count > 1 }
        var used = Set<String>()
        var names: [String] = []
        for run in runs {
            let base = if shared[run.name] != nil, let target = run.target { "\(run.name) [\(target)]" } else { run.name }
            var name = base
            var suffix = 2
            while used.contains(name) {
                name = "\(base)#\(suffix)"
                suffix += 1
            }
            used.insert(name)
            names.append(name)
        }
        return names
    }

    /// The verdict that takes part in the comparison: none when the target skipped or failed, since an
    /// infrastructure failure may carry a reply that answered another request.
    public static func comparableVerdict(_ result: VectorResult) -> HarnessReply.Verdict? {
        guard result.outcome != .skip, !result.outcome.isInfrastructureFailure else { return nil }
        return result.verdict
    }

    /// A target's answer as shown to people: "accept", "reject chain.x", or the outcome when no verdict counts.
    public static func answer(_ result: VectorResult) -> String {
        guard let verdict = comparableVerdict(result) else { return result.outcome.rawValue }
        switch verdict {
        case .accept: return "accept"
        case .reject: return result.errorClass.map { "reject \($0)" } ?? "reject"
        }
    }
}
