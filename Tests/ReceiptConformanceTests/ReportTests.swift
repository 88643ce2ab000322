import Foundation
@testable import ReceiptConformance
import ReceiptCorpus
import Testing
import _ForgeSupport

/// Hand-built results, so the reports are tested against known counts and hostile text, without a corpus run.
enum ReportFixtures {
    static let hostileMessage = "accepted | trusted <script>alert(\"pwned\")</script> 'single'\nsecond line"

    static func result(
        _ id: String, _ outcome: Outcome, severity: Severity = .high, expected: Verdict = .invalid,
        classes: [String] = ["chain.untrusted-root"], verdict: HarnessReply.Verdict? = .reject,
        errorClass: String? = nil, message: String? = nil
    ) -> VectorResult {
        VectorResult(
            id: id, revision: 1, severity: severity, outcome: outcome, expected: expected, expectedErrorClasses: classes,
            verdict: verdict, errorClass: errorClass, message: message, durationMicroseconds: 1500)
    }

    static func run(_ implementation: String, _ results: [VectorResult], diagnosis: String? = nil, expired: [String] = []) -> RunResults {
        RunResults(
            suite: "2026.09.0", implementation: implementation, profile: "apple-compatible", canaryDiagnosis: diagnosis,
            counts: Dictionary(grouping: results, by: \.outcome.rawValue).mapValues(\.count), results: results,
            durationMilliseconds: 1234, expiredBaselineEntries: expired)
    }

    /// Eight vectors, one per interesting outcome, with `|`, `<script>`, quotes, newlines and URLs in the data.
    static let mixed = run(
        "acme <receipts>",
        [
            result("chain::foreign-root", .falseAccept, severity: .critical, verdict: .accept, message: hostileMessage),
            result("chain::expired-leaf", .pass, errorClass: "chain.expired"),
            result(
                "binding::bundle-mismatch", .wrongReason, classes: ["binding.bundle-id"], errorClass: "signature.invalid",
                message: "pipe|in|message"),
            result("binding::device-hash", .falseReject, severity: .medium, expected: .valid, classes: [], errorClass: "binding.device-hash"),
            result("encoding::ber-indefinite", .skip, verdict: nil, message: "feature not declared by the harness: ber"),
            result("encoding::trailing-data", .error, verdict: nil, message: "harness died loading https://evil.example/x.js"),
            result("policy::segmented", .acceptable, expected: .acceptable, classes: [], verdict: .accept),
            result("policy::known", .xfail, verdict: .accept, message: "known failure: legacy (https://github.com/acme/receipts/issues/1)"),
        ])

    static func vector(_ id: String, description: String, flags: [String] = []) -> Vector {
        Vector(
            id: VectorID(id), revision: 1, description: description, file: id.replacingOccurrences(of: "::", with: "/") + ".der",
            sha256: String(repeating: "ab", count: 32), flags: flags, severity: .high, features: [], canary: false,
            context: Context(now: "2026-01-01T00:00:00Z", trustAnchor: "forge-root", bundleId: "com.example.app"),
            expected: Expectation(verdict: .invalid, errorClasses: []),
            provenance: Provenance(preset: "ios-basic", recipe: [RecipeStep(mutation: "swap-root", parameters: ["root": "foreign"])]))
    }

    static let manifest = Manifest(
        schemaVersion: 1, suite: Suite(name: "receipt-conformance", version: "2026.09.0"),
        generator: Generator(name: "forge", version: "1", seed: "1"), trustAnchors: [:], notes: [:], features: [:], errorTaxonomy: [:],
        profiles: [:],
        vectors: [
            vector("chain::foreign-root", description: "Signed by a <script>evil()</script> \"foreign\" root | not Apple", flags: ["FOREIGN_ROOT"]),
            vector("binding::bundle-mismatch", description: "Bundle id differs from context"),
        ])
}

@Suite("Markdown report", .timeLimit(.minutes(2)))
struct MarkdownReportTests {
    @Test("Counts table lists every outcome present, failures before passes, with the total")
    func countsTable() throws {
        let markdown = MarkdownReport.render(ReportFixtures.mixed, manifest: nil)
        #expect(markdown.contains("| Outcome | Count |\n|---|---:|\n"))
        let lines = markdown.split(separator: "\n").map(String.init)
        for expected in [
            "| **FALSE_ACCEPT** | 1 |", "| **FALSE_REJECT** | 1 |", "| **WRONG_REASON** | 1 |", "| **ERROR** | 1 |",
            "| PASS | 1 |", "| ACCEPTABLE | 1 |", "| XFAIL | 1 |", "| SKIP | 1 |", "| Total | 8 |",
        ] {
            #expect(lines.contains(expected), "missing count row \(expected)")
        }
        let falseAccept = try #require(lines.firstIndex(of: "| **FALSE_ACCEPT** | 1 |"))
        let error = try #require(lines.firstIndex(of: "| **ERROR** | 1 |"))
        let pass = try #require(lines.firstIndex(of: "| PASS | 1 |"))
        #expect(falseAccept < error && error < pass)
        #expect(markdown.hasPrefix("## Receipt conformance: acme &lt;receipts&gt;\n"))
        #expect(markdown.contains("suite 2026.09.0 · profile apple-compatible · 8 vectors in 1.234 s"))
    }

    @Test("Unexpected outcomes are grouped by outcome, one escaped row each; expected ones are not listed")
    func failureRows() throws {
        let markdown = MarkdownReport.render(ReportFixtures.mixed, manifest: ReportFixtures.manifest)
        #expect(markdown.contains("🛑 **Infrastructure failure** (exit 2): 1 harness error, 3 conformance failures."))
        for group in ["#### FALSE_ACCEPT (1)", "#### FALSE_REJECT (1)", "#### WRONG_REASON (1)", "#### ERROR (1)"] {
            #expect(markdown.contains(group))
        }
        for quiet in ["#### PASS", "#### SKIP", "#### XFAIL", "#### ACCEPTABLE", "chain::expired-leaf", "policy::known"] {
            #expect(!markdown.contains(quiet), "\(quiet) should not be listed")
        }
        let row = try #require(markdown.split(separator: "\n").first { $0.hasPrefix("| chain::foreign-root |") }.map(String.init))
        #expect(
            row == #"| chain::foreign-root | Signed by a &lt;script&gt;evil()&lt;/script&gt; "foreign" root \| not Apple | critical | "#
                + #"invalid \[chain.untrusted-root\] | accept | accepted \| trusted &lt;script&gt;alert("pwned")&lt;/script&gt; 'single'<br>second line |"#)
        // Every table row has exactly one cell per column: escaped pipes do not split cells.
        for line in markdown.split(separator: "\n") where line.hasPrefix("| chain::") || line.hasPrefix("| binding::") {
            #expect(unescapedPipes(String(line)) == 7, "\(line)")
        }
        #expect(!markdown.contains("<script"))
        #expect(markdown.contains("| binding::bundle-mismatch | Bundle id differs from context | high |"))
    }

    @Test("Without a manifest the table has no description column")
    func noManifest() throws {
        let markdown = MarkdownReport.render(ReportFixtures.mixed, manifest: nil)
        #expect(markdown.contains("| ID | Severity | Expected | Got | Message |\n|---|---|---|---|---|\n"))
        let row = try #require(markdown.split(separator: "\n").first { $0.hasPrefix("| binding::bundle-mismatch |") })
        #expect(unescapedPipes(String(row)) == 6)
        #expect(row.contains(#"pipe\|in\|message"#))
    }

    @Test("Large groups are sampled, most severe first, and say how many rows were left out")
    func sampling() {
        let many = (0..<30).map { index in
            ReportFixtures.result(String(format: "chain::case-%02d", index), .falseAccept, severity: index >= 25 ? .critical : .low, verdict: .accept)
        }
        let markdown = MarkdownReport.render(ReportFixtures.run("lax", many), manifest: nil, sampleLimit: 25)
        let rows = markdown.split(separator: "\n").filter { $0.hasPrefix("| chain::case-") }
        #expect(rows.count == 25)
        #expect(markdown.contains("… and 5 more (see results.json / the HTML report)"))
        #expect(markdown.contains("#### FALSE_ACCEPT (30)"))
        for index in 25..<30 { #expect(rows.contains { $0.hasPrefix("| chain::case-\(index) | critical") }, "critical case \(index) sampled") }
        #expect(markdown.contains("❌ **Conformance failure** (exit 1)"))

        let exact = MarkdownReport.render(ReportFixtures.run("lax", Array(many.prefix(25))), manifest: nil, sampleLimit: 25)
        #expect(!exact.contains("more (see results.json"))
    }

    @Test("A conformant run says so and lists no unexpected outcomes; diagnosis and expired entries are shown")
    func verdicts() {
        let clean = MarkdownReport.render(ReportFixtures.run("ok", [ReportFixtures.result("chain::a", .pass)]), manifest: nil)
        #expect(clean.contains("✅ **Conformant** (exit 0)"))
        #expect(!clean.contains("Unexpected outcomes"))

        let stopped = ReportFixtures.run(
            "broken", [ReportFixtures.result("canary::basic", .falseReject, expected: .valid, classes: [])],
            diagnosis: "all canaries rejected | is the *test root* configured?", expired: ["xcode::**"])
        let markdown = MarkdownReport.render(stopped, manifest: nil)
        #expect(markdown.contains("### Canary diagnosis\n\n> all canaries rejected \\| is the \\*test root\\* configured?"))
        #expect(markdown.contains("### Expired baseline entries"))
        #expect(markdown.contains("- xcode::\\*\\*"))
    }

    @Test("Cell escaping protects the table structure and neutralises HTML")
    func escaping() {
        #expect(MarkdownReport.escape("a|b\r\nc\rd<e>&") == #"a\|b<br>c<br>d&lt;e&gt;&amp;"#)
        #expect(MarkdownReport.escape("**x**", markup: false) == "**x**")
        #expect(MarkdownReport.escape("tab\there\u{7}") == "tab here ")
    }

    private func unescapedPipes(_ line: String) -> Int {
        var count = 0
        var previous: Character = " "
        for character in line {
            if character == "|" && previous != "\\" { count += 1 }
            previous = character
        }
        return count
    }
}

@Suite("HTML report", .timeLimit(.minutes(2)))
struct HTMLReportTests {
    @Test("escape neutralises markup, both quote kinds, ampersands and control characters")
    func escaping() {
        #expect(HTMLReport.escape(#"<script>alert("x")</script> & 'y'"#) == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;")
        #expect(HTMLReport.escape("a\u{0}b\u{1B}c\nd") == "a\u{FFFD}b\u{FFFD}c\nd")
        #expect(HTMLReport.escape("plain text · ünïcode") == "plain text · ünïcode")
    }

    @Test("A single-run page is self-contained, balanced, escaped and lists every vector")
    func singleRun() throws {
        let html = HTMLReport.render(ReportFixtures.mixed, manifest: ReportFixtures.manifest)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        // The only script is ours; data never opens one.
        #expect(!html.contains("<script>alert"))
        #expect(!html.contains("<script>evil"))
        #expect(occurrences("<script", in: html) == 1)
        #expect(occurrences("</script>", in: html) == 1)
        #expect(html.contains("&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; &#39;single&#39;"))
        #expect(html.contains("&lt;script&gt;evil()&lt;/script&gt; &quot;foreign&quot; root | not Apple"))
        #expect(!html.contains(#""pwned""#))
        assertBalanced(html)
        assertSelfContained(html)
        for result in ReportFixtures.mixed.results { #expect(html.contains("<code>\(HTMLReport.escape(result.id))</code>"), "\(result.id)") }
        #expect(occurrences("<tr class=\"r-", in: html) == ReportFixtures.mixed.results.count)
        #expect(occurrences("<details>", in: html) == ReportFixtures.mixed.results.count)
        // Unexpected outcomes come first, in report order; the manifest fills the detail panel.
        let firstRow = try #require(html.range(of: "<tr class=\"r-"))
        #expect(html[firstRow.upperBound...].hasPrefix("FALSE_ACCEPT unexpected\"><td><code>chain::foreign-root</code>"))
        #expect(html.contains(#"<td class="outcome o-WRONG_REASON" data-key="3">WRONG_REASON</td>"#))
        #expect(html.contains("<dt>File</dt><dd><code>chain/foreign-root.der</code>"))
        #expect(html.contains("now=2026-01-01T00:00:00Z, trustAnchor=forge-root, bundleId=com.example.app"))
        #expect(html.contains("ios-basic → swap-root(root=foreign)"))
        #expect(html.contains("<span class=\"flag\">FOREIGN_ROOT</span>"))
        #expect(html.contains("<title>Receipt conformance: acme &lt;receipts&gt;</title>"))
        #expect(html.contains("Infrastructure failure (exit 2)"))
        #expect(html.contains(#"<td class="o-FALSE_ACCEPT">FALSE_ACCEPT</td><td class="n">1</td>"#))
    }

    @Test("The page without data refers to no URL at all")
    func noURLs() {
        let html = HTMLReport.render(ReportFixtures.run("x", []), manifest: nil)
        #expect(!html.contains("http"))
        #expect(!html.contains("://"))
        let matrix = HTMLReport.render(matrix: [ReportFixtures.run("x", [])], manifest: nil)
        #expect(!matrix.contains("http"))
    }

    @Test("The matrix has a column per target, disagreements first, identical patterns folded")
    func matrix() throws {
        let (runs, _) = DifferentialTests.threeTargets()
        let clusters = HTMLReport.cluster(runs)
        // v2 and v8 disagree (different patterns); v1 and v5 share a pattern; v3 differs from it only by a skip.
        #expect(clusters.prefix { $0.disagree }.flatMap(\.ids).sorted() == ["t::v2", "t::v7", "t::v8"])
        #expect(clusters.filter { !$0.disagree }.allSatisfy { !$0.ids.contains("t::v2") })
        let folded = try #require(clusters.first { $0.ids.contains("t::v1") })
        #expect(folded.ids == ["t::v1", "t::v5", "t::v6"])
        #expect(folded.answers == ["reject", "reject", "reject"])
        #expect(clusters.first { $0.ids.contains("t::v3") }?.answers == ["SKIP", "reject", "reject"])
        #expect(clusters.first { $0.ids.contains("t::v9") }?.answers == ["accept", "accept", Differential.notRun])
        #expect(clusters.flatMap(\.ids).count == 8)  // every vector in exactly one cluster

        let html = HTMLReport.render(matrix: runs, manifest: nil)
        #expect(html.contains("<th>A</th><th>B</th><th>A#2</th><th>IDs</th>"))
        #expect(html.contains("3 vectors with disagreeing verdicts in 3 patterns"))
        let firstRow = try #require(html.range(of: "<tr class=\"disagree"))
        #expect(!html[..<firstRow.lowerBound].contains("<tr class=\"agree"))
        #expect(html.contains(#"<td class="n">3</td><td>invalid</td><td class="c-good">reject</td>"#))
        #expect(html.contains(#"A: <b>reject chain.x</b> <span class="o-PASS">PASS</span></li>"#))
        #expect(html.contains("&lt;b&gt;bold&lt;/b&gt;"))
        assertBalanced(html)
        assertSelfContained(html)
    }

    private func occurrences(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    private func assertBalanced(_ html: String) {
        for tag in ["tr", "td", "th", "table", "details", "summary", "tbody", "thead", "ul", "li", "dl", "code"] {
            #expect(occurrences("<\(tag)>", in: html) + occurrences("<\(tag) ", in: html) == occurrences("</\(tag)>", in: html), "<\(tag)> unbalanced")
        }
    }

    /// URLs may only appear as escaped text from the data, never as a resource the page would load.
    private func assertSelfContained(_ html: String) {
        for reference in ["src=", "href=", "url(", "@import", "<link", "<img", "<iframe", "=\"http", "='http"] {
            #expect(!html.lowercased().contains(reference), "references \(reference)")
        }
    }
}

@Suite("Console report", .timeLimit(.minutes(2)))
struct ConsoleReportTests {
    @Test("A failure's console line stays one line, whatever the harness said")
    func summaryLine() {
        let said = ReportFixtures.result("chain::x", .wrongReason, errorClass: "sig\nnature", message: "line one\r\nline two\u{1B}[31m\t" + String(repeating: "x", count: 400))
        let line = said.summaryLine(padded: true)
        #expect(!line.contains("\n") && !line.contains("\r") && !line.contains("\u{1B}"))
        #expect(line.hasPrefix("WRONG_REASON     chain::x: expected invalid [chain.untrusted-root], got reject sig nature — line one line two [31m xxx"))
        #expect(line.hasSuffix("…") && line.count < 450)
        #expect(
            ReportFixtures.result("valid::y", .falseReject, expected: .valid, classes: []).summaryLine(padded: false)
                == "FALSE_REJECT valid::y: expected valid, got reject")
    }

    @Test("The summary keeps lines within 100 characters and adds up")
    func summary() {
        var results = ReportFixtures.mixed
        results.implementation = String(repeating: "very-long-implementation-name-", count: 5)
        results.canaryDiagnosis = String(repeating: "the canaries failed with chain.untrusted-root; ", count: 8) + String(repeating: "x", count: 140)
        results.results.append(ReportFixtures.result(String(repeating: "f", count: 150) + "::case", .pass))
        let text = ConsoleReport.summary(results)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines { #expect(line.count <= 100, "too long: \(line)") }
        #expect(lines.contains { $0.hasPrefix("Total") && $0.hasSuffix(" 9") })
        #expect(lines.contains { $0.hasPrefix("FALSE_ACCEPT") && $0.hasSuffix(" 1") })
        #expect(text.contains("9 vectors in 1.234 s: infrastructure failure (exit 2)"))
        #expect(text.contains("Canary diagnosis: the canaries failed"))

        // Family rows: Total, Pass, Fail, Error, Skip.
        func family(_ name: String) -> [Int]? {
            lines.first { $0.hasPrefix(name + " ") }.map { $0.split(separator: " ").dropFirst().compactMap { Int($0) } }
        }
        #expect(family("chain") == [2, 1, 1, 0, 0])
        #expect(family("binding") == [2, 0, 2, 0, 0])
        #expect(family("encoding") == [2, 0, 0, 1, 1])
        #expect(family("policy") == [2, 2, 0, 0, 0])
        #expect(lines.contains { $0.hasPrefix("fff") && $0.contains("…") })
        // Outcomes in report order: failures before passes.
        let falseAccept = lines.firstIndex { $0.hasPrefix("FALSE_ACCEPT") }!, pass = lines.firstIndex { $0.hasPrefix("PASS ") }!
        #expect(falseAccept < pass)
    }

    @Test("The progress line shows position, bar and counts, fits its width, and is colourless unless asked")
    func progress() {
        let line = ConsoleReport.progressLine(done: 57, total: 160, counts: [.pass: 50, .falseAccept: 3, .skip: 0])
        #expect(line == "[ 57/160] [#######-------------]  PASS 50  FALSE_ACCEPT 3")
        #expect(!line.contains("\u{1B}"))

        let colored = ConsoleReport.progressLine(done: 57, total: 160, counts: [.pass: 50, .falseAccept: 3], color: true)
        #expect(colored.contains("\u{1B}["))
        #expect(colored.replacing(/\x1B\[[0-9;]*m/, with: "") == line)

        let crowded: [Outcome: Int] = Dictionary(uniqueKeysWithValues: Outcome.allCases.map { ($0, 1000) })
        let narrow = ConsoleReport.progressLine(done: 5, total: 10_000, counts: crowded, width: 60)
        #expect(narrow.count <= 60)
        #expect(narrow.hasPrefix("[    5/10000]  PASS 1000"))
        #expect(narrow.hasSuffix("…"))

        #expect(ConsoleReport.progressLine(done: 4, total: 4, counts: [.pass: 4]).contains("[####################]"))
        #expect(ConsoleReport.progressLine(done: 0, total: 0, counts: [:]) == "[0/0] [--------------------]")
    }
}

@Suite("Differential mode", .timeLimit(.minutes(2)))
struct DifferentialTests {
    /// Targets A, B and a second A: v2 and v8 disagree on the verdict, v7 is an acceptable vector they
    /// split on; v3 differs by a skip only, v6 by error class only, v9 is missing from the second A.
    static func threeTargets() -> ([RunResults], [String]) {
        typealias F = ReportFixtures
        let a = F.run(
            "A",
            [
                F.result("t::v1", .pass, errorClass: "chain.x"), F.result("t::v2", .falseAccept, verdict: .accept),
                F.result("t::v3", .skip, verdict: nil), F.result("t::v5", .pass), F.result("t::v6", .pass, errorClass: "chain.x"),
                F.result("t::v7", .acceptable, expected: .acceptable, verdict: .accept),
                F.result("t::v8", .error, verdict: nil, message: "<b>bold</b>"), F.result("t::v9", .falseAccept, verdict: .accept),
            ])
        let b = F.run(
            "B",
            [
                F.result("t::v1", .pass), F.result("t::v2", .pass, errorClass: "chain.x"), F.result("t::v3", .pass),
                F.result("t::v5", .pass), F.result("t::v6", .wrongReason, errorClass: "signature.y"),
                F.result("t::v7", .acceptable, expected: .acceptable, verdict: .reject), F.result("t::v8", .falseAccept, verdict: .accept),
                F.result("t::v9", .falseAccept, verdict: .accept),
            ])
        let a2 = F.run(
            "A",
            [
                F.result("t::v1", .pass), F.result("t::v2", .pass), F.result("t::v3", .pass), F.result("t::v5", .pass),
                F.result("t::v6", .pass), F.result("t::v7", .acceptable, expected: .acceptable, verdict: .accept), F.result("t::v8", .pass),
            ], diagnosis: nil)
        return ([a, b, a2], ["A", "B", "A#2"])
    }

    @Test("Finds exactly the vectors whose verdicts differ, acceptable ones included; skips and reasons alone are not disagreements")
    func disagreements() {
        let (runs, names) = Self.threeTargets()
        let found = Differential.disagreements(runs)
        #expect(found.map(\.id) == ["t::v2", "t::v7", "t::v8"])
        let v2 = found[0]
        #expect(v2.expected == .invalid)
        #expect(v2.answers == ["A": "accept", "B": "reject chain.x", "A#2": "reject"])
        #expect(found[1].expected == .acceptable)
        #expect(found[2].answers == ["A": "ERROR", "B": "accept", "A#2": "reject"])
        #expect(Set(found.flatMap(\.answers.keys)) == Set(names))
    }

    @Test("A vector missing from a run is shown as not run, never as a disagreement by itself")
    func missingVector() {
        let a = ReportFixtures.run("A", [ReportFixtures.result("t::only-a", .pass), ReportFixtures.result("t::both", .pass)])
        let b = ReportFixtures.run("B", [ReportFixtures.result("t::both", .falseAccept, verdict: .accept)])
        let c = ReportFixtures.run("C", [ReportFixtures.result("t::only-a", .falseAccept, verdict: .accept)])
        #expect(Differential.disagreements([a, b]).map(\.id) == ["t::both"])
        let found = Differential.disagreements([a, b, c])
        #expect(found.map(\.id) == ["t::both", "t::only-a"])
        #expect(found[1].answers == ["A": "reject", "B": Differential.notRun, "C": "accept"])
    }

    @Test("A verdict recorded with an infrastructure failure (a reply to another request) takes no part")
    func staleVerdict() {
        let a = ReportFixtures.run("A", [ReportFixtures.result("t::v", .error, verdict: .accept, message: "reply seq 3 does not answer request 2")])
        let b = ReportFixtures.run("B", [ReportFixtures.result("t::v", .pass)])
        #expect(Differential.disagreements([a, b]).isEmpty)
        #expect(Differential.answer(a.results[0]) == "ERROR")
        let c = ReportFixtures.run("C", [ReportFixtures.result("t::v", .falseAccept, verdict: .accept)])
        #expect(Differential.disagreements([a, b, c]).first?.answers == ["A": "ERROR", "B": "reject", "C": "accept"])
    }

    @Test("Duplicate implementation names are disambiguated deterministically")
    func names() {
        let run = { (name: String) in ReportFixtures.run(name, []) }
        #expect(Differential.targetNames([run("A"), run("B"), run("A"), run("A")]) == ["A", "B", "A#2", "A#3"])
        #expect(Differential.targetNames([run("A"), run("A#2"), run("A")]) == ["A", "A#2", "A#3"])
        #expect(Differential.targetNames([]) == [])
        // With targets known, shared names say which target each run was; a unique name stays bare.
        let targeted = { (name: String, target: String) in
            var run = ReportFixtures.run(name, [])
            run.target = target
            return run
        }
        #expect(
            Differential.targetNames([targeted("ref", "stdio:forge validate --harness"), targeted("ref", "http://127.0.0.1:8080"), targeted("B", "exec:b")])
                == ["ref [stdio:forge validate --harness]", "ref [http://127.0.0.1:8080]", "B"])
    }

    @Test("Differential results take the worst exit code and survive a JSON round trip")
    func results() throws {
        let (runs, names) = Self.threeTargets()
        let differential = DifferentialResults(runs: runs)
        #expect(differential.targets == names)
        #expect(differential.exitCode == 2)  // A errored on v8
        #expect(DifferentialResults(runs: [runs[2]]).exitCode == 0)
        #expect(DifferentialResults(runs: [runs[1], runs[2]]).exitCode == 1)
        #expect(DifferentialResults(runs: []).exitCode == 0)

        let decoded = try JSONDecoder().decode(DifferentialResults.self, from: JSONEncoder().encode(differential))
        #expect(decoded.targets == names)
        #expect(decoded.disagreements == differential.disagreements)
        #expect(decoded.runs.map(\.results) == runs.map(\.results))
    }
}
