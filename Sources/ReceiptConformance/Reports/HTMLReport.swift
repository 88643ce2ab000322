public import ReceiptCorpus
import _ForgeSupport

/// A single-file HTML report (`--html report.html`): open it from a CI artifact, mail it, archive it.
///
/// Everything is inline (CSS, a small script for sorting and filtering, no fonts or images) and the page
/// refers to no URL at all, so it works offline and leaks nothing. All data (ids, messages, descriptions)
/// comes from harnesses and corpora we do not control, so every piece goes through `escape`, and none
/// of it is ever placed inside the script.
public enum HTMLReport {
    /// One run: summary counts, then one sortable, filterable row per vector (unexpected outcomes first),
    /// each with a detail panel holding the description, file, context, recipe and the full message.
    public static func render(_ results: RunResults, manifest: Manifest?) -> String {
        let vectors = manifest.map(ReportText.vectorsByID) ?? [:]
        var body = "<h1>Receipt conformance: \(escape(results.name))</h1>\n"
        body += facts(results)
        body += #"<p class="verdict exit-\#(results.exitCode)">\#(verdictText(results.exitCode)) (exit \#(results.exitCode))</p>"# + "\n"
        if let diagnosis = results.canaryDiagnosis {
            body += #"<div class="diagnosis"><strong>Canary diagnosis:</strong> \#(escape(diagnosis))</div>"# + "\n"
        }
        if let stopped = results.stoppedEarly {
            body += #"<div class="diagnosis"><strong>Stopped early:</strong> \#(escape(stopped))</div>"# + "\n"
        }
        if let notJudged = results.notJudged {
            body += #"<div class="diagnosis"><strong>Not judged:</strong> \#(escape(notJudged))</div>"# + "\n"
        }
        if !results.expiredBaselineEntries.isEmpty {
            body +=
                "<h2>Expired baseline entries</h2>\n<p>Past their expiry date: they fail the run until triaged again.</p>\n<ul>"
                + results.expiredBaselineEntries.map { "<li><code>\(escape($0))</code></li>" }.joined() + "</ul>\n"
        }

        let counts = ReportText.counts(results)
        body += "<h2>Counts</h2>\n" + #"<table class="counts"><thead><tr><th>Outcome</th><th>Count</th></tr></thead><tbody>"# + "\n"
        for outcome in Outcome.reportOrder where counts[outcome, default: 0] > 0 {
            body += #"<tr><td class="o-\#(outcome.rawValue)">\#(outcome.rawValue)</td><td class="n">\#(counts[outcome]!)</td></tr>"# + "\n"
        }
        body += #"<tr class="total"><td>Total</td><td class="n">\#(results.results.count)</td></tr>"# + "\n</tbody></table>\n"

        let families = ReportText.familyRows(results)
        if !families.isEmpty {
            body +=
                "<h2>Families</h2>\n<p>Pass counts every outcome that needs no action (PASS, ACCEPTABLE, XFAIL).</p>\n"
                + #"<table class="families sortable"><thead><tr><th>Family</th>"#
                + ReportText.FamilyRow.columns.map { "<th>\($0)</th>" }.joined() + "</tr></thead><tbody>\n"
            for row in families {
                body += "<tr><td><code>\(escape(row.family))</code></td>" + row.numbers.map { #"<td class="n">\#($0)</td>"# }.joined() + "</tr>\n"
            }
            body += "</tbody></table>\n"
        }

        body += "<h2>Vectors</h2>\n" + filterControls(unexpectedToggle: true)
        body +=
            #"<table class="results sortable filterable"><thead><tr>"#
            + ["ID", "Severity", "Flags", "Expected", "Got", "Outcome", "Message"].map { "<th>\($0)</th>" }.joined() + "</tr></thead><tbody>\n"
        let rank = Dictionary(uniqueKeysWithValues: Outcome.reportOrder.enumerated().map { ($1, $0) })
        let rows = results.results.sorted { (rank[$0.outcome] ?? 99, $0.id) < (rank[$1.outcome] ?? 99, $1.id) }
        for result in rows {
            let vector = vectors[result.id]
            let unexpected = result.outcome.isConformanceFailure || result.outcome.isInfrastructureFailure
            let reproduce = unexpected ? vector.flatMap { vector in manifest.flatMap { ReproduceCommand.line(for: vector, in: results, manifest: $0) } } : nil
            body += row(result, vector: vector, outcomeRank: rank[result.outcome] ?? 99, reproduce: reproduce)
        }
        body += "</tbody></table>\n"
        return page(title: "Receipt conformance: \(results.name)", body: body)
    }

    /// Several targets on one corpus (differential mode): a column per target, and rows folded into
    /// clusters of vectors whose pattern of answers is identical (JSONTestSuite style), clusters where
    /// the targets disagree first. A cluster's key is the expected verdict and each target's verdict
    /// (or SKIP, ERROR, NOT RUN…); error classes are listed per vector but not part of the key, as their
    /// vocabularies differ between validators.
    public static func render(matrix: [RunResults], manifest: Manifest?) -> String {
        let vectors = manifest.map(ReportText.vectorsByID) ?? [:]
        let names = Differential.targetNames(matrix)
        var body = "<h1>Receipt conformance: differential run of \(matrix.count) target\(matrix.count == 1 ? "" : "s")</h1>\n"

        body +=
            "<h2>Targets</h2>\n"
            + #"<table class="targets"><thead><tr><th>Target</th><th>Suite</th><th>Profile</th><th>Vectors</th><th>Verdict</th><th>Counts</th></tr></thead><tbody>"# + "\n"
        for (name, run) in zip(names, matrix) {
            let counts = ReportText.counts(run)
            let summary = Outcome.reportOrder.compactMap { outcome in
                counts[outcome].map { #"<span class="o-\#(outcome.rawValue)">\#(outcome.rawValue)&nbsp;\#($0)</span>"# }
            }.joined(separator: " ")
            body +=
                "<tr><td>\(escape(name))</td><td>\(escape(run.suite))</td><td>\(escape(run.profile ?? "none"))</td>"
                + #"<td class="n">\#(run.results.count)</td><td class="exit-\#(run.exitCode)">\#(verdictText(run.exitCode)) (exit \#(run.exitCode))</td><td>\#(summary)</td></tr>"#
                + "\n"
            if let diagnosis = run.canaryDiagnosis {
                body += #"<tr><td colspan="6" class="diagnosis"><strong>\#(escape(name)) canary diagnosis:</strong> \#(escape(diagnosis))</td></tr>"# + "\n"
            }
        }
        body += "</tbody></table>\n"

        let clusters = cluster(matrix)
        let disagreeing = clusters.filter(\.disagree)
        let disagreeingVectors = disagreeing.reduce(0) { $0 + $1.ids.count }
        body +=
            "<h2>Results</h2>\n<p>\(disagreeingVectors) vector\(disagreeingVectors == 1 ? "" : "s") with disagreeing verdicts "
            + "in \(disagreeing.count) pattern\(disagreeing.count == 1 ? "" : "s"); \(clusters.count) result pattern\(clusters.count == 1 ? "" : "s") in all.</p>\n"
        body += filterControls(unexpectedToggle: true)
        body +=
            #"<table class="matrix sortable filterable"><thead><tr><th>Agreement</th><th>Vectors</th><th>Expected</th>"#
            + names.map { "<th>\(escape($0))</th>" }.joined() + "<th>IDs</th></tr></thead><tbody>\n"
        let byID = matrix.map { run in Dictionary(run.results.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
        for (index, cluster) in clusters.enumerated() {
            // `unexpected` drives the "unexpected only" toggle: a disagreement, or a verdict the corpus forbids.
            let bad = cluster.answers.contains { cellClass($0, expected: cluster.expected) == "bad" }
            body +=
                "<tr class=\"\(cluster.disagree ? "disagree unexpected" : bad ? "unexpected" : "agree")\">"
                + #"<td data-key="\#(index)">\#(cluster.disagree ? "disagree" : "agree")</td><td class="n">\#(cluster.ids.count)</td><td>\#(cluster.expected.rawValue)</td>"#
            for answer in cluster.answers {
                body += #"<td class="c-\#(cellClass(answer, expected: cluster.expected))">\#(escape(answer))</td>"#
            }
            let preview = cluster.ids.prefix(3).joined(separator: ", ") + (cluster.ids.count > 3 ? ", …" : "")
            body += "<td><details><summary>\(escape(preview))</summary><ul>"
            for id in cluster.ids {
                body += "<li><code>\(escape(id))</code>"
                if let description = vectors[id]?.description { body += " — \(escape(description))" }
                body += "<ul>"
                for (name, results) in zip(names, byID) {
                    let answer = results[id].map(Differential.answer) ?? Differential.notRun
                    let outcome = results[id].map { #" <span class="o-\#($0.outcome.rawValue)">\#($0.outcome.rawValue)</span>"# } ?? ""
                    let message = results[id]?.message.map { ": " + escape($0) } ?? ""
                    body += "<li>\(escape(name)): <b>\(escape(answer))</b>\(outcome)\(message)</li>"
                }
                body += "</ul></li>"
            }
            body += "</ul></details></td></tr>\n"
        }
        body += "</tbody></table>\n"
        return page(title: "Receipt conformance: differential", body: body)
    }

    /// Makes text inert in HTML element content and in quoted attribute values, and in XML 1.0's (the JUnit report's):
    /// every character either forbids becomes U+FFFD, visibly, so a hostile message cannot corrupt the page or the
    /// XML. Those are the C0 controls but tab, LF and CR, DEL and the C1 controls (HTML), and the noncharacters:
    /// U+FDD0-U+FDEF and the last two of every plane (U+FFFE and U+FFFF are outside XML 1.0's `Char`). Lone surrogates
    /// cannot be in a Swift string: the JSON reader already made them U+FFFD.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\n", "\t", "\r": out.unicodeScalars.append(scalar)
            case _ where isForbidden(scalar): out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A control character or a noncharacter (see ``escape(_:)``).
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE
    }

    // MARK: - Single run

    private static func facts(_ results: RunResults) -> String {
        var facts = ["Suite \(escape(results.suite))"]
        if let profile = results.profile { facts.append("profile \(escape(profile))") }
        facts.append("\(results.results.count) vectors in \(ReportText.duration(milliseconds: results.durationMilliseconds))")
        var html = #"<p class="facts">\#(facts.joined(separator: " · "))</p>"# + "\n"
        if let target = results.target { html += "<p class=\"facts\">Target <code>\(escape(target))</code></p>\n" }
        if let corpus = results.corpus {
            html += "<p class=\"facts\">Corpus <code>\(escape(corpus.path))</code> (manifest sha256 <code>\(escape(corpus.manifestSHA256))</code>)</p>\n"
        }
        if let artifacts = results.artifacts { html += "<p class=\"facts\">\(escape(artifacts.summary.prefix(1).uppercased() + artifacts.summary.dropFirst()))</p>\n" }
        return html
    }

    private static func row(_ result: VectorResult, vector: Vector?, outcomeRank: Int, reproduce: String?) -> String {
        let unexpected = result.outcome.isConformanceFailure || result.outcome.isInfrastructureFailure
        var html = "<tr class=\"r-\(result.outcome.rawValue)\(unexpected ? " unexpected" : "")\">"
        html += "<td><code>\(escape(result.id))</code></td>"
        html += #"<td data-key="\#(Severity.allCases.count - 1 - (Severity.allCases.firstIndex(of: result.severity) ?? 0))">\#(result.severity.rawValue)</td>"#
        html += "<td>\((vector?.flags ?? []).map { "<span class=\"flag\">\(escape($0))</span>" }.joined(separator: " "))</td>"
        html += "<td>\(escape(ReportText.expected(result)))</td>"
        html += "<td>\(escape(ReportText.got(result)))</td>"
        html += #"<td class="outcome o-\#(result.outcome.rawValue)" data-key="\#(outcomeRank)">\#(result.outcome.rawValue)</td>"#

        let message = result.message ?? ""
        let firstLine = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let summary = firstLine.isEmpty ? "details" : (firstLine.count > 120 ? String(firstLine.prefix(120)) + "…" : firstLine)
        html += "<td><details><summary>\(escape(summary))</summary><dl>"
        if let vector {
            html += "<dt>Description</dt><dd>\(escape(vector.description))</dd>"
            html += "<dt>File</dt><dd><code>\(escape(vector.file))</code> (sha256 \(escape(vector.sha256)))</dd>"
            html += "<dt>Context</dt><dd>\(escape(contextText(vector.context)))</dd>"
            let steps = vector.provenance.recipe.map { step in
                step.mutation + (step.parameters.isEmpty ? "" : "(" + step.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ") + ")")
            }
            html += "<dt>Recipe</dt><dd>\(escape(([vector.provenance.preset] + steps).joined(separator: " → ")))</dd>"
            if !vector.features.isEmpty { html += "<dt>Features</dt><dd>\(escape(vector.features.joined(separator: ", ")))</dd>" }
        }
        if let reproduce { html += "<dt>Reproduce</dt><dd><pre class=\"reproduce\">\(escape(reproduce))</pre></dd>" }
        html += "<dt>Revision</dt><dd>\(result.revision)</dd>"
        html += "<dt>Duration</dt><dd>\(result.durationMicroseconds) µs</dd>"
        html += "<dt>Message</dt><dd>" + (message.isEmpty ? "(none)" : "<pre>\(escape(message))</pre>") + "</dd>"
        html += "</dl></details></td></tr>\n"
        return html
    }

    private static func contextText(_ context: Context) -> String {
        let fields: [(String, String?)] = [
            ("now", context.now), ("trustAnchor", context.trustAnchor), ("bundleId", context.bundleId),
            ("appVersion", context.appVersion), ("deviceId", context.deviceId), ("environment", context.wireEnvironment),
        ]
        return fields.compactMap { name, value in value.map { "\(name)=\($0)" } }.joined(separator: ", ")
    }

    // MARK: - Matrix

    struct Cluster: Equatable {
        var expected: Verdict
        /// One per target: "accept", "reject", or the outcome / NOT RUN when there is no verdict.
        var answers: [String]
        var ids: [String]
        /// Two targets gave different verdicts (skips and errors do not count).
        var disagree: Bool
    }

    /// Folds vectors with the same expected verdict and the same answer per target. Disagreements come
    /// first, then clusters where some target is wrong, then the rest; larger clusters first within each.
    static func cluster(_ runs: [RunResults]) -> [Cluster] {
        let byID = runs.map { run in Dictionary(run.results.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
        var clusters: [Cluster] = []
        var index: [[String]: Int] = [:]
        for id in Set(runs.flatMap { $0.results.map(\.id) }).sorted() {
            let results = byID.map { $0[id] }
            guard let expected = results.lazy.compactMap({ $0?.expected }).first else { continue }
            let answers = results.map { result in
                result.map { result in Differential.comparableVerdict(result)?.rawValue ?? result.outcome.rawValue } ?? Differential.notRun
            }
            let key = [expected.rawValue] + answers
            if let existing = index[key] {
                clusters[existing].ids.append(id)
            } else {
                index[key] = clusters.count
                let verdicts = Set(results.compactMap { $0.flatMap(Differential.comparableVerdict) })
                clusters.append(Cluster(expected: expected, answers: answers, ids: [id], disagree: verdicts.count > 1))
            }
        }
        func priority(_ cluster: Cluster) -> Int {
            if cluster.disagree { return 0 }
            return cluster.answers.contains { cellClass($0, expected: cluster.expected) == "bad" } ? 1 : 2
        }
        return clusters.sorted { (priority($0), -$0.ids.count, $0.ids[0]) < (priority($1), -$1.ids.count, $1.ids[0]) }
    }

    /// How a matrix cell is coloured: right or wrong against the corpus, neutral for `acceptable`.
    static func cellClass(_ answer: String, expected: Verdict) -> String {
        switch (answer, expected) {
        case ("accept", .valid), ("reject", .invalid): "good"
        case ("accept", .invalid), ("reject", .valid): "bad"
        case ("accept", .acceptable), ("reject", .acceptable): "neutral"
        case (Outcome.skip.rawValue, _), (Differential.notRun, _): "skip"
        default: "infra"
        }
    }

    // MARK: - Page

    private static func verdictText(_ exitCode: Int32) -> String {
        switch exitCode {
        case 0: "Conformant"
        case 1: "Conformance failure"
        case 2: "Infrastructure failure"
        default: "Failure"
        }
    }

    private static func filterControls(unexpectedToggle: Bool) -> String {
        #"<p class="controls"><input type="search" class="filter" placeholder="Filter rows (id, outcome, message…)" aria-label="Filter rows">"#
            + (unexpectedToggle ? #" <label><input type="checkbox" class="unexpected-only"> unexpected only</label>"# : "")
            + " <span class=\"hint\">Click a column header to sort.</span></p>\n"
    }

    private static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>\(style)</style>
        </head>
        <body>
        \(body)<script>\(script)</script>
        </body>
        </html>

        """
    }

    private static let style = """

        body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1f2328; }
        h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.5em; }
        table { border-collapse: collapse; margin: .5em 0; }
        th, td { border: 1px solid #d0d7de; padding: 3px 6px; text-align: left; vertical-align: top; }
        th { background: #f6f8fa; position: sticky; top: 0; }
        table.sortable th { cursor: pointer; user-select: none; }
        th[aria-sort=ascending]::after { content: " \\25B2"; } th[aria-sort=descending]::after { content: " \\25BC"; }
        td.n { text-align: right; font-variant-numeric: tabular-nums; }
        tr.total td { font-weight: bold; }
        code, pre { font: 12px ui-monospace, monospace; } pre { white-space: pre-wrap; margin: 0; }
        details summary { cursor: pointer; } dl { margin: .3em 0; } dt { font-weight: bold; } dd { margin: 0 0 .3em 1em; }
        .flag { display: inline-block; background: #eef; border-radius: 3px; padding: 0 3px; font-size: 11px; }
        .verdict { font-weight: bold; font-size: 1.1em; }
        .exit-0 { color: #1a7f37; } .exit-1 { color: #cf222e; } .exit-2 { color: #9a6700; }
        .diagnosis { background: #fff8c5; border: 1px solid #d4a72c; padding: .5em; margin: .5em 0; }
        .o-FALSE_ACCEPT, .o-FALSE_REJECT, .o-WRONG_DECODE, .o-XPASS, .o-CHANGED_FAILURE { color: #cf222e; font-weight: bold; }
        .o-WRONG_REASON { color: #bc4c00; font-weight: bold; }
        .o-ERROR, .o-TIMEOUT, .o-CRASH { color: #9a6700; font-weight: bold; }
        .o-PASS { color: #1a7f37; } .o-ACCEPTABLE, .o-XFAIL { color: #0969da; } .o-SKIP { color: #6e7781; }
        td.outcome { font-weight: bold; } tr.unexpected > td:first-child { border-left: 3px solid #cf222e; }
        td.c-good { background: #dafbe1; } td.c-bad { background: #ffebe9; } td.c-neutral { background: #ddf4ff; }
        td.c-skip { background: #f6f8fa; color: #6e7781; } td.c-infra { background: #fff8c5; }
        tr.disagree > td:first-child { color: #cf222e; font-weight: bold; }
        .controls input[type=search] { width: 24em; } .hint { color: #6e7781; }

        """

    /// Sorting on header click (numbers by value, `data-key` when a cell has one) and the filter box.
    /// It reads only the page itself; no data is ever interpolated into it.
    private static let script = #"""

        (function () {
          function key(row, index) {
            var cell = row.cells[index];
            if (!cell) return "";
            var k = cell.getAttribute("data-key");
            return k !== null ? k : cell.textContent.trim().toLowerCase();
          }
          function compare(a, b) {
            var x = Number(a), y = Number(b);
            if (a !== "" && b !== "" && !isNaN(x) && !isNaN(y)) return x - y;
            return a < b ? -1 : a > b ? 1 : 0;
          }
          document.querySelectorAll("table.sortable").forEach(function (table) {
            var headers = table.tHead.rows[0].cells;
            Array.prototype.forEach.call(headers, function (th, index) {
              th.title = "Sort by this column";
              th.addEventListener("click", function () {
                var ascending = th.getAttribute("aria-sort") !== "ascending";
                Array.prototype.forEach.call(headers, function (h) { h.removeAttribute("aria-sort"); });
                th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
                var body = table.tBodies[0];
                var rows = Array.prototype.slice.call(body.rows);
                rows.sort(function (a, b) { var c = compare(key(a, index), key(b, index)); return ascending ? c : -c; });
                rows.forEach(function (row) { body.appendChild(row); });
              });
            });
          });
          var filter = document.querySelector("input.filter");
          var only = document.querySelector("input.unexpected-only");
          function apply() {
            var needle = filter ? filter.value.trim().toLowerCase() : "";
            document.querySelectorAll("table.filterable tbody tr").forEach(function (row) {
              var shown = (!needle || row.textContent.toLowerCase().indexOf(needle) >= 0)
                && (!only || !only.checked || row.classList.contains("unexpected"));
              row.hidden = !shown;
            });
          }
          if (filter) filter.addEventListener("input", apply);
          if (only) only.addEventListener("change", apply);
        })();

        """#
}
