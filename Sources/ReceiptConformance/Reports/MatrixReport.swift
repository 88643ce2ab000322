import ReceiptCorpus

/// A known-results matrix: several validators' runs over the same corpus, side by side in Markdown
/// (`forge run matrix a.json b.json`, the README's known-results section).
///
/// One row per validator with its outcome counts and time, then one row per family with each
/// validator's PASS / FALSE_ACCEPT / FALSE_REJECT / WRONG_REASON / SKIP, so a reader sees at once
/// where a validator is weak.
public enum MatrixReport {
    /// The outcomes the per-family cells show, in this order.
    public static let familyColumns: [Outcome] = [.pass, .falseAccept, .falseReject, .wrongReason, .skip]

    public static func render(_ runs: [RunResults]) -> String {
        let names = Differential.targetNames(runs)
        var out = ""
        let profiles = Set(runs.map { $0.profile ?? "none" }).sorted()
        let suites = Set(runs.map(\.suite)).sorted()
        out += "Suite \(suites.joined(separator: ", ")), profile \(profiles.joined(separator: ", ")).\n\n"

        let main: [Outcome] = [.pass, .falseAccept, .falseReject, .wrongReason, .acceptable, .skip]
        out += "| validator | " + main.map(\.rawValue).joined(separator: " | ") + " | other | time |\n"
        out += "|---|" + String(repeating: "---:|", count: main.count + 2) + "\n"
        for (name, run) in zip(names, runs) {
            let counts = ReportText.counts(run)
            let other = counts.filter { !main.contains($0.key) }.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
            out +=
                "| \(MarkdownReport.escape(name)) | " + main.map { String(counts[$0, default: 0]) }.joined(separator: " | ")
                + " | \(other.isEmpty ? "" : other) | \(run.durationDescription) |\n"
        }
        let stopped = zip(names, runs).compactMap { name, run in
            run.canaryDiagnosis.map { "- **\(MarkdownReport.escape(name))** stopped at the canaries: \(MarkdownReport.escape($0))" }
        }
        if !stopped.isEmpty { out += "\n" + stopped.joined(separator: "\n") + "\n" }

        out += "\nPer family: " + familyColumns.map(\.rawValue).joined(separator: " / ") + " (the rest of a family is ACCEPTABLE, or an outcome of the \"other\" column)\n\n"
        out += "| family | " + names.map { MarkdownReport.escape($0) }.joined(separator: " | ") + " |\n"
        out += "|---|" + String(repeating: "---|", count: names.count) + "\n"
        let families = Set(runs.flatMap { $0.results.map { VectorID($0.id).family } }).sorted()
        for family in families {
            let cells = runs.map { run in
                let counts = Dictionary(grouping: run.results.filter { VectorID($0.id).family == family }, by: \.outcome).mapValues(\.count)
                return familyColumns.map { String(counts[$0, default: 0]) }.joined(separator: " / ")
            }
            let size = runs.map { run in run.results.count { VectorID($0.id).family == family } }.max() ?? 0
            out += "| \(MarkdownReport.escape(family)) (\(size)) | " + cells.joined(separator: " | ") + " |\n"
        }
        return out
    }
}
