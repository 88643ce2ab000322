import ReceiptCorpus
import _ForgeSupport

extension MarkdownReport {
    /// The disagreements section of a differential run: one row per vector, one column per target.
    public static func render(disagreements differential: DifferentialResults, sampleLimit: Int = 50) -> String {
        var out = "## Disagreements between targets\n\n"
        guard !differential.disagreements.isEmpty else {
            return out + "All \(differential.targets.count) targets agree on every vector they ran.\n"
        }
        out += "\(differential.disagreements.count) vector\(differential.disagreements.count == 1 ? "" : "s") on which the verdicts differ.\n\n"
        out += "| vector | expected | " + differential.targets.map { escape($0) }.joined(separator: " | ") + " |\n"
        out += "|---|---|" + String(repeating: "---|", count: differential.targets.count) + "\n"
        for disagreement in differential.disagreements.prefix(sampleLimit) {
            let answers = differential.targets.map { escape(disagreement.answers[$0] ?? Differential.notRun) }
            out += "| `\(disagreement.id)` | \(disagreement.expected.rawValue) | " + answers.joined(separator: " | ") + " |\n"
        }
        if differential.disagreements.count > sampleLimit {
            out += "\n… and \(differential.disagreements.count - sampleLimit) more (see results.json or the HTML report).\n"
        }
        return out
    }
}
