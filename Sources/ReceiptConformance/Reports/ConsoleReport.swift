import ReceiptCorpus
import _ForgeSupport

/// Plain-text output for a terminal or a CI log: a progress line while running, a summary at the end.
///
/// Lines stay within 100 characters so CI log viewers do not wrap them, and ANSI colour is opt-in
/// because logs captured to files show escape codes as noise.
public enum ConsoleReport {
    /// The longest line `summary` writes.
    public static let maximumLineLength = 100

    /// `[ 57/160] [#######-------------]  PASS 50  FALSE_ACCEPT 3`: position, a bar when there is room,
    /// and the non-zero counts (PASS first, then failures first). Never wider than `width` visible
    /// characters; counts that do not fit are cut with "…".
    public static func progressLine(done: Int, total: Int, counts: [Outcome: Int], width: Int = 80, color: Bool = false) -> String {
        let digits = String(max(total, 0)).count
        let position = "[" + pad(String(done), digits) + "/\(total)]"
        let order = [Outcome.pass] + Outcome.reportOrder.filter { $0 != .pass }
        let items = order.compactMap { outcome in counts[outcome].flatMap { $0 > 0 ? (outcome, "\(outcome.rawValue) \($0)") : nil } }
        let countsText = items.map(\.1).joined(separator: "  ")

        // A bar of 6 to 20 cells, only when it fits beside every count.
        let room = width - position.count - 3 - 2 - countsText.count  // " [" + "]" + "  "
        let cells = min(20, room)
        var bar = ""
        var barFilled = 0
        if cells >= 6 {
            barFilled = total > 0 ? min(cells, max(0, done) * cells / total) : 0
            bar = String(repeating: "#", count: barFilled) + String(repeating: "-", count: cells - barFilled)
        }

        var budget = width - position.count - (bar.isEmpty ? 0 : bar.count + 3) - 2
        var shown: [(Outcome, String)] = []
        for (index, item) in items.enumerated() {
            let cost = item.1.count + (shown.isEmpty ? 0 : 2)
            let ellipsis = index < items.count - 1 ? 3 : 0  // room for "  …" if more follow
            guard cost + ellipsis <= budget || (index == items.count - 1 && cost <= budget) else { break }
            shown.append(item)
            budget -= cost
        }
        let cut = shown.count < items.count

        let anyFailure = counts.contains { ($0.key.isConformanceFailure || $0.key.isInfrastructureFailure) && $0.value > 0 }
        var line = position
        if !bar.isEmpty {
            let filled = String(bar.prefix(barFilled)), empty = String(bar.dropFirst(barFilled))
            line += " [" + paint(filled, color ? (anyFailure ? red : green) : nil) + empty + "]"
        }
        if !shown.isEmpty || cut {
            line += "  " + shown.map { paint($0.1, color ? style($0.0) : nil) }.joined(separator: "  ")
            if cut { line += shown.isEmpty ? "…" : "  …" }
        }
        return line
    }

    /// The end-of-run summary: counts by outcome, a breakdown by family (the id's text before "::"),
    /// the total and duration, and what to act on (canary diagnosis, expired baseline entries).
    ///
    /// In the family table (``ReportText/familyRows(_:)``), "Pass" counts every outcome that needs no action
    /// (PASS, ACCEPTABLE, XFAIL), so Pass + Fail + Error + Skip = Total on every row.
    public static func summary(_ results: RunResults) -> String {
        var lines: [String] = []
        var title = "Receipt conformance: \(results.name) (suite \(results.suite)"
        if let profile = results.profile { title += ", profile \(profile)" }
        lines.append(fit(title + ")"))
        if let artifacts = results.artifacts { lines += wrap(artifacts.summary) }
        lines.append("")

        let counts = ReportText.counts(results)
        let outcomeWidth = Outcome.allCases.map(\.rawValue.count).max() ?? 0
        lines.append(pad("Outcome", outcomeWidth, left: true) + "  " + pad("Count", 7))
        for outcome in Outcome.reportOrder where counts[outcome, default: 0] > 0 {
            lines.append(pad(outcome.rawValue, outcomeWidth, left: true) + "  " + pad(String(counts[outcome]!), 7))
        }
        lines.append(pad("Total", outcomeWidth, left: true) + "  " + pad(String(results.results.count), 7))

        let families = ReportText.familyRows(results)
        if !families.isEmpty {
            lines.append("")
            let columns = ReportText.FamilyRow.columns
            let nameWidth = min(maximumLineLength - columns.count * 8, max(6, families.map(\.family.count).max() ?? 0))
            lines.append(pad("Family", nameWidth, left: true) + columns.map { " " + pad($0, 7) }.joined())
            for row in families {
                lines.append(pad(fit(row.family, nameWidth), nameWidth, left: true) + row.numbers.map { " " + pad(String($0), 7) }.joined())
            }
        }

        lines.append("")
        let verdict =
            switch results.exitCode {
            case 0: "conformant"
            case 1: "conformance failure"
            case 2: "infrastructure failure"
            default: "failure"
            }
        lines.append("\(results.results.count) vectors in \(ReportText.duration(milliseconds: results.durationMilliseconds)): \(verdict) (exit \(results.exitCode))")
        if let diagnosis = results.canaryDiagnosis {
            lines += wrap("Canary diagnosis: " + diagnosis)
        }
        if let stopped = results.stoppedEarly {
            lines += wrap("Stopped early: " + stopped)
        }
        if let notJudged = results.notJudged {
            lines += wrap("Not judged: " + notJudged)
        }
        if !results.expiredBaselineEntries.isEmpty {
            lines += wrap("Expired baseline entries (triage again): " + results.expiredBaselineEntries.joined(separator: ", "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Layout

    private static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return left ? text + padding : padding + text
    }

    /// Cuts a line to `width` characters, marking the cut with "…".
    static func fit(_ text: String, _ width: Int = maximumLineLength) -> String {
        text.count <= width ? text : String(text.prefix(max(0, width - 1))) + "…"
    }

    /// Word-wraps free text (a diagnosis, a list of ids) to the line limit; newlines in it become breaks,
    /// and a word longer than a line is cut rather than overflowing.
    static func wrap(_ text: String, indent: String = "  ") -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = lines.isEmpty ? "" : indent
            var lineHasWord = false
            for word in paragraph.split(separator: " ") {
                let word = fit(String(word), maximumLineLength - indent.count)
                if lineHasWord && line.count + 1 + word.count > maximumLineLength {
                    lines.append(line)
                    line = indent
                    lineHasWord = false
                }
                line += (lineHasWord ? " " : "") + word
                lineHasWord = true
            }
            lines.append(fit(line))
        }
        return lines
    }

    // MARK: - Colour

    private static let red = "\u{1B}[31;1m", green = "\u{1B}[32m", yellow = "\u{1B}[33m", cyan = "\u{1B}[36m", dim = "\u{1B}[2m"

    private static func style(_ outcome: Outcome) -> String {
        if outcome.isConformanceFailure { return red }
        if outcome.isInfrastructureFailure { return yellow }
        return switch outcome {
        case .pass: green
        case .skip: dim
        default: cyan
        }
    }

    private static func paint(_ text: String, _ style: String?) -> String {
        guard let style, !text.isEmpty else { return text }
        return style + text + "\u{1B}[0m"
    }

    // MARK: - What `forge run` prints

    /// One run's console output: every failing vector on a line, the canary diagnosis, then the summary
    /// table, or with `quiet` one line of counts (and why the run stopped early, if it did).
    public static func outcome(_ results: RunResults, quiet: Bool) -> String {
        var lines = results.results.filter { $0.outcome.isConformanceFailure || $0.outcome.isInfrastructureFailure }.map { $0.summaryLine(padded: true) }
        if let diagnosis = results.canaryDiagnosis { lines.append("CANARIES FAILED: \(diagnosis)") }
        guard quiet else { return lines.map { $0 + "\n" }.joined() + summary(results) }
        if let stopped = results.stoppedEarly { lines.append("STOPPED: \(stopped)") }
        if let notJudged = results.notJudged { lines.append("NOT JUDGED: \(notJudged)") }
        if let artifacts = results.artifacts { lines.append(artifacts.summary) }
        let counts = results.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("\(results.results.count) vectors in \(results.durationMilliseconds) ms: \(counts)")
        return lines.map { $0 + "\n" }.joined()
    }

    /// Differential mode: each target's outcome, the times side by side, then every disagreement.
    public static func differential(_ differential: DifferentialResults, runs: [RunResults], quiet: Bool) -> String {
        var text = ""
        for (name, run) in zip(differential.targets, runs) {
            text += "== \(name): \(run.results.count) vectors in \(run.durationDescription)\n" + outcome(run, quiet: quiet)
        }
        text += "Times: " + zip(differential.targets, runs).map { "\($0) \($1.durationDescription)" }.joined(separator: ", ") + "\n"
        let count = differential.disagreements.count
        text += "\(count) disagreement\(count == 1 ? "" : "s") between \(differential.targets.joined(separator: ", "))\n"
        for disagreement in differential.disagreements {
            let answers = differential.targets.map { "\($0): \(disagreement.answers[$0] ?? "-")" }.joined(separator: "; ")
            text += "DISAGREE \(disagreement.id) (expected \(disagreement.expected.rawValue)): \(answers)\n"
        }
        return text
    }
}
