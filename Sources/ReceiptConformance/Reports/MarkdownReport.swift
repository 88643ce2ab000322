public import ReceiptCorpus
import _ForgeSupport

/// A Markdown summary of a run, written for a CI job page (`--markdown $GITHUB_STEP_SUMMARY`).
///
/// It leads with what a reviewer must act on: the verdict, the counts (failures first), a canary
/// diagnosis, expired baseline entries, then the unexpected outcomes grouped by outcome. Groups are
/// sampled (x509-limbo style) because job summaries are size-limited and long tables go unread; the
/// full list is in `results.json` and the HTML report.
public enum MarkdownReport {
    /// Messages longer than this are cut in table cells; the HTML report keeps them whole.
    static let messageLimit = 300

    public static func render(_ results: RunResults, manifest: Manifest?, sampleLimit: Int = 25) -> String {
        let vectors = manifest.map(ReportText.vectorsByID) ?? [:]
        var out = "## Receipt conformance: \(escape(results.name))\n\n"
        var facts = ["suite \(escape(results.suite))"]
        if let profile = results.profile { facts.append("profile \(escape(profile))") }
        facts.append("\(results.results.count) vectors in \(ReportText.duration(milliseconds: results.durationMilliseconds))")
        out += facts.joined(separator: " · ") + "\n\n"
        let selection = [results.artifacts?.summary, ReportText.corpus(results)].compactMap { $0 }
        if !selection.isEmpty { out += selection.map { escape($0) }.joined(separator: "<br>\n") + "\n\n" }
        out += verdictLine(results) + "\n\n"

        let counts = ReportText.counts(results)
        out += "| Outcome | Count |\n|---|---:|\n"
        for outcome in Outcome.reportOrder where counts[outcome, default: 0] > 0 {
            let name = outcome.isConformanceFailure || outcome.isInfrastructureFailure ? "**\(outcome.rawValue)**" : outcome.rawValue
            out += "| \(escape(name, markup: false)) | \(counts[outcome]!) |\n"
        }
        out += "| Total | \(results.results.count) |\n\n"

        if let diagnosis = results.canaryDiagnosis {
            out += "### Canary diagnosis\n\n> \(escape(diagnosis))\n\n"
        }
        if let stopped = results.stoppedEarly {
            out += "### Stopped early\n\n> \(escape(stopped))\n\n"
        }
        if let notJudged = results.notJudged {
            out += "### Not judged\n\n> \(escape(notJudged))\n\n"
        }
        if !results.expiredBaselineEntries.isEmpty {
            out += "### Expired baseline entries\n\nThese entries are past their expiry date and fail the run until triaged again:\n\n"
            out += results.expiredBaselineEntries.map { "- \(escape($0))\n" }.joined() + "\n"
        }

        let unexpected = Dictionary(
            grouping: results.results.filter { $0.outcome.isConformanceFailure || $0.outcome.isInfrastructureFailure },
            by: \.outcome)
        guard !unexpected.isEmpty else { return out }
        out += "### Unexpected outcomes\n\n"
        let limit = max(0, sampleLimit)
        for outcome in Outcome.reportOrder {
            guard let group = unexpected[outcome] else { continue }
            // Most harmful first, so a sample keeps what matters.
            let rows = group.sorted { ($0.severity, $1.id) > ($1.severity, $0.id) }
            out += "#### \(outcome.rawValue) (\(rows.count))\n\n"
            out +=
                vectors.isEmpty
                ? "| ID | Severity | Expected | Got | Message |\n|---|---|---|---|---|\n"
                : "| ID | Description | Severity | Expected | Got | Message |\n|---|---|---|---|---|---|\n"
            for result in rows.prefix(limit) {
                var cells = [escape(result.id)]
                if !vectors.isEmpty { cells.append(escape(vectors[result.id]?.description ?? "")) }
                cells += [
                    result.severity.rawValue, escape(ReportText.expected(result)), escape(ReportText.got(result)),
                    escape(truncated(result.message ?? "")),
                ]
                out += "| " + cells.joined(separator: " | ") + " |\n"
            }
            if rows.count > limit {
                out += "\n… and \(rows.count - limit) more (see results.json / the HTML report)\n"
            }
            out += "\n"
        }
        return out
    }

    static func verdictLine(_ results: RunResults) -> String {
        let failures = results.results.filter { $0.outcome.isConformanceFailure }.count
        let errors = results.results.filter { $0.outcome.isInfrastructureFailure }.count
        switch results.exitCode {
        case 0:
            // A run may tolerate harness failures (an error budget): say so rather than "nothing unexpected".
            return "✅ **Conformant** (exit 0): "
                + (errors > 0 ? "\(errors) harness error\(errors == 1 ? "" : "s") within the error budget." : "no unexpected outcomes.")
        case 1:
            let expired = results.expiredBaselineEntries.count
            return "❌ **Conformance failure** (exit 1): \(failures) unexpected outcome\(failures == 1 ? "" : "s")"
                + (expired > 0 ? ", \(expired) expired baseline entr\(expired == 1 ? "y" : "ies")." : ".")
        case 2:
            if results.canaryDiagnosis != nil { return "🛑 **Infrastructure failure** (exit 2): the run stopped early; see the canary diagnosis." }
            return "🛑 **Infrastructure failure** (exit 2): \(errors) harness error\(errors == 1 ? "" : "s")"
                + (failures > 0 ? ", \(failures) conformance failure\(failures == 1 ? "" : "s")." : ".")
        case let code:
            return "**Exit \(code)**"
        }
    }

    static func truncated(_ text: String) -> String {
        text.count > messageLimit ? String(text.prefix(messageLimit)) + "…" : text
    }

    /// Makes data inert inside a Markdown table cell: `|` would end the cell, a newline the row, and HTML
    /// or emphasis characters in a harness message would otherwise render (GitHub renders inline HTML).
    /// With `markup: false`, only the cell and line structure is protected (for text this report formats).
    static func escape(_ text: String, markup: Bool = true) -> String {
        var out = ""
        var previousWasCR = false
        for scalar in text.unicodeScalars {
            defer { previousWasCR = scalar == "\r" }
            switch scalar {
            case "\n" where previousWasCR: continue
            case "\n", "\r": out += "<br>"
            case "|": out += "\\|"
            case _ where markup && "\\`*_[]#~".unicodeScalars.contains(scalar): out += "\\" + String(scalar)
            case "&" where markup: out += "&amp;"
            case "<" where markup: out += "&lt;"
            case ">" where markup: out += "&gt;"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

// MARK: - Shared by the reports

extension Outcome {
    /// The order reports list outcomes in: security failures first, then the other conformance
    /// failures, infrastructure failures, and the outcomes that need no action last.
    static let reportOrder: [Outcome] = [
        .falseAccept, .falseReject, .wrongDecode, .wrongReason, .xpass, .changedFailure,
        .crash, .timeout, .error,
        .pass, .acceptable, .xfail, .skip,
    ]
}

/// Text every report shows the same way, so a vector reads alike in the console, Markdown and HTML.
enum ReportText {
    /// Outcome counts recomputed from the results, which are the source of truth (counts may be stale
    /// in a hand-edited or merged file).
    static func counts(_ results: RunResults) -> [Outcome: Int] {
        Dictionary(grouping: results.results, by: \.outcome).mapValues(\.count)
    }

    /// "invalid [chain.x, chain.y]" or "valid".
    static func expected(_ result: VectorResult) -> String {
        result.expected.rawValue + (result.expectedErrorClasses.isEmpty ? "" : " [\(result.expectedErrorClasses.joined(separator: ", "))]")
    }

    /// "reject chain.x", "accept", or "no verdict" when the harness skipped or failed.
    static func got(_ result: VectorResult) -> String {
        guard let verdict = result.verdict else { return "no verdict" }
        return verdict.rawValue + (result.errorClass.map { " \($0)" } ?? "")
    }

    /// One row of the per-family table the console and the HTML report show.
    struct FamilyRow {
        static let columns = ["Total", "Pass", "Fail", "Error", "Skip"]
        var family: String
        var total = 0, pass = 0, fail = 0, error = 0, skip = 0
        /// In `columns` order. "Pass" is every outcome that needs no action, so Pass + Fail + Error + Skip = Total.
        var numbers: [Int] { [total, pass, fail, error, skip] }
    }

    /// The results counted by family, families sorted by name.
    static func familyRows(_ results: RunResults) -> [FamilyRow] {
        var rows: [String: FamilyRow] = [:]
        for result in results.results {
            let family = VectorID(result.id).family
            var row = rows[family] ?? FamilyRow(family: family)
            row.total += 1
            if result.outcome.isConformanceFailure {
                row.fail += 1
            } else if result.outcome.isInfrastructureFailure {
                row.error += 1
            } else if result.outcome == .skip {
                row.skip += 1
            } else {
                row.pass += 1
            }
            rows[family] = row
        }
        return rows.values.sorted { $0.family < $1.family }
    }

    /// "Corpus /path/Vectors (manifest sha256 9f86d081…)", or nil when the run did not record it.
    static func corpus(_ results: RunResults) -> String? {
        results.corpus.map { "corpus \($0.path) (manifest sha256 \($0.manifestSHA256))" }
    }

    /// "850 ms" or "12.345 s".
    static func duration(milliseconds: Int) -> String {
        guard milliseconds >= 1000 else { return "\(milliseconds) ms" }
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
    }

    /// The manifest's vectors by id; the first wins if an id repeats (the linter rejects that anyway).
    static func vectorsByID(_ manifest: Manifest) -> [String: Vector] {
        Dictionary(manifest.vectors.map { ($0.id.text, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
