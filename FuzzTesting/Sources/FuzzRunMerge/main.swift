import Foundation
import FuzzSupport
import ReceiptConformance
import ReceiptCorpus

/// The corpus's first 24 receipt and 16 JWS vectors: a merge adds every vector no shard ran, so the whole corpus would
/// make each input a thousand-row report. Made once, lazily (LeakSanitizer and one-time initializers: lsan.supp).
enum Fixture {
    static let manifest: Manifest? = {
        let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Vectors")
        guard var whole = try? ManifestIO.load(from: vectors) else { return nil }
        whole.vectors = Array(whole.vectors.filter { !$0.id.family.hasPrefix("jws-") }.prefix(24) + whole.vectors.filter { $0.id.family.hasPrefix("jws-") }.prefix(16))
        return whole
    }()
}

/// `forge run merge` on arbitrary shards: the input split at 0x00 bytes into at most four results.json files, each
/// decoded as the command reads it, merged (alone and against the corpus) and rendered as every report the command
/// writes (results.json, JUnit, Markdown, HTML) and its console summary and exit code.
func fuzzRunMerge(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    guard let manifest = Fixture.manifest else { return 0 }
    let decoder = JSONDecoder()
    let parts = bytes.split(separator: 0, maxSplits: 3, omittingEmptySubsequences: false).compactMap { try? decoder.decode(RunResults.self, from: Data($0)) }
    guard !parts.isEmpty else { return 0 }
    let reports = ReportFiles(results: "results.json", junit: "junit.xml", markdown: "report.md", html: "report.html")
    _ = try? RunResults.merged(parts)
    if let (merged, _) = try? RunResults.merged(parts, corpus: manifest) {
        try? reports.write([merged], manifest: manifest, to: { _, _ in })
        _ = ConsoleReport.summary(merged)
        _ = merged.exitCode
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzRunMerge(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
