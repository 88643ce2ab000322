#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ReceiptCorpus
import Synchronization
import _ForgeSupport

/// The report files one run writes (`--results`, `--junit`, `--markdown`, `--html`), shared by `forge run`,
/// `forge run merge` and any program driving the runner. A nil path is a report not asked for.
public struct ReportFiles: Sendable {
    public var results: String?
    public var junit: String?
    public var markdown: String?
    public var html: String?

    public init(results: String? = nil, junit: String? = nil, markdown: String? = nil, html: String? = nil) {
        self.results = results
        self.junit = junit
        self.markdown = markdown
        self.html = html
    }

    /// Renders each report asked for and hands it to `write` with its path. Several runs with a
    /// `differential` are a comparison: `results` holds it, the HTML report is a matrix.
    public func write(
        _ runs: [RunResults], differential: DifferentialResults? = nil, manifest: Manifest, to write: (Data, String) throws -> Void
    ) throws {
        guard let first = runs.first else { return }
        if let results {
            let encoder = Self.encoder
            try write(try differential.map { try encoder.encode($0) } ?? encoder.encode(first), results)
        }
        if let junit { try write(Data(JUnitReport.xml(runs).utf8), junit) }
        if let markdown {
            var text = runs.map { MarkdownReport.render($0, manifest: manifest) }.joined(separator: "\n")
            if let differential { text += "\n" + MarkdownReport.render(disagreements: differential) }
            try write(Data(text.utf8), markdown)
        }
        if let html {
            let page = differential == nil ? HTMLReport.render(first, manifest: manifest) : HTMLReport.render(matrix: runs, manifest: manifest)
            try write(Data(page.utf8), html)
        }
    }

    /// How results and baselines are written: pretty, sorted keys, so they diff well under version control.
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

/// The progress line of a run on a terminal, redrawn in place at most every 100 ms; silent when disabled
/// (stderr is not a terminal, or `--quiet`). Fed from the runner's concurrent progress callback.
public final class ProgressLine: Sendable {
    private struct State {
        var counts: [Outcome: Int] = [:]
        var lastDraw = ContinuousClock.now
    }
    private let enabled: Bool
    private let label: String?
    private let state = Mutex(State())
    private let draw: @Sendable (String) -> Void

    /// `draw` receives the escape sequences and text to write (to stderr).
    public init(enabled: Bool, label: String?, draw: @escaping @Sendable (String) -> Void) {
        self.enabled = enabled
        self.label = label
        self.draw = draw
    }

    public func update(_ outcome: Outcome, done: Int, total: Int) {
        let line: String? = state.withLock { state in
            state.counts[outcome, default: 0] += 1
            guard enabled, done == total || ContinuousClock.now - state.lastDraw > .milliseconds(100) else { return nil }
            state.lastDraw = ContinuousClock.now
            return ConsoleReport.progressLine(done: done, total: total, counts: state.counts)
        }
        if let line { draw("\r\(label.map { "\($0) " } ?? "")\(line)\u{1B}[K") }
    }

    /// Clears the line, so the summary starts on a clean one.
    public func finish() {
        if enabled { draw("\r\u{1B}[K") }
    }
}
