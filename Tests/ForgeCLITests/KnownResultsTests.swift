import Foundation
import Testing
import ForgeSupport
import StoreModel

/// The published known-results matrix (Documentation/runner.md) is the output of `scripts/known-results.sh`;
/// these tests run the same script for one validator at a time and compare its row and its column of the
/// per-family table with the published ones, so the figures cannot silently rot. openssl always runs; the Python validators run
/// when their venv is present (`.oracles/NAME`, or `$RECEIPT_FORGE_ORACLES/NAME`; `.ci/run` installs them).
@Suite("Known results of real validators", .serialized, .timeLimit(.minutes(10)))
struct KnownResultsTests {
    static let oracles = URL(
        fileURLWithPath: ProcessInfo.processInfo.environment["RECEIPT_FORGE_ORACLES"]
            ?? repositoryRoot.appendingPathComponent(".oracles").path)

    /// The page the script writes the matrix into.
    static let published = repositoryRoot.appendingPathComponent("Documentation/runner.md")

    static func installed(_ name: String) -> Bool {
        FileManager.default.isExecutableFile(atPath: oracles.appendingPathComponent("\(name)/bin/python").path)
    }

    @Test("openssl cms -verify: the published row and column are what the script measures now")
    func openssl() throws { try check("openssl") }

    @Test("apple-purchase-receipt-verifier: the published row and column hold", .enabled(if: installed("aprv")))
    func aprv() throws { try check("aprv") }

    @Test("iap_local_receipt: the published row and column hold", .enabled(if: installed("iap")))
    func iap() throws { try check("iap") }

    @Test("app-store-server-library ReceiptUtility: the published row and column hold", .enabled(if: installed("asl")))
    func asl() throws { try check("asl") }

    /// Apple's SignedDataVerifier over the whole StoreKit 2 corpus: the outcome counts are the published row.
    @Test("app-store-server-library SignedDataVerifier (StoreKit 2 JWS): the published row and column hold", .enabled(if: installed("asl")))
    func aslJWS() throws { try check("asl-jws") }

    /// vapor/jwt-kit's X5CVerifier, built from the package mirror by the script (`.ci/run` builds it).
    @Test(
        "vapor/jwt-kit X5CVerifier (StoreKit 2 JWS): the published row and column hold",
        .enabled(if: FileManager.default.isExecutableFile(atPath: oracles.appendingPathComponent("jwtkit/release/jwtkit-harness").path)))
    func jwtkit() throws { try check("jwtkit") }

    /// Runs the script for `name` into a scratch folder (the installed venv linked in), on a copy of the
    /// published page, and compares the two matrices for that validator.
    func check(_ name: String) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let scratch = directory.appendingPathComponent("oracles")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        if name != "openssl" {
            let venv = name == "asl-jws" ? "asl" : name  // the JWS row runs in asl's venv
            try FileManager.default.createSymbolicLink(at: scratch.appendingPathComponent(venv), withDestinationURL: Self.oracles.appendingPathComponent(venv))
        }
        let page = directory.appendingPathComponent("runner.md")
        try FileManager.default.copyItem(at: Self.published, to: page)
        let script = repositoryRoot.appendingPathComponent("scripts/known-results.sh")
        let ran = try run(URL(fileURLWithPath: "/bin/bash"), [script.path, "--forge", forgeBinary.path, "--only", name, "--doc", page.path, scratch.path])
        #expect(ran.status == 0, "\(ran.stderr)")

        let published = try Self.matrix(String(contentsOf: Self.published, encoding: .utf8))
        let measured = try Self.matrix(String(contentsOf: page, encoding: .utf8))
        let row = try #require(measured.rows[name], "the script wrote no row for \(name): \(measured.rows.keys)")
        #expect(published.rows[name] == row, "published row for \(name) is stale: published \(published.rows[name] ?? []), measured \(row); run scripts/known-results.sh .oracles")
        for (family, cells) in measured.families {
            #expect(published.families[family]?[name] == cells[name], "published cell \(family)/\(name) is stale: measured \(cells[name] ?? "-")")
        }
        #expect(measured.families.count >= 10)
    }

    /// The known-results matrix between the page's markers: each validator's counts (every column but
    /// the time) and each family's cell per validator.
    static func matrix(_ text: String) throws -> (rows: [String: [String]], families: [String: [String: String]]) {
        let section = try #require(
            text.range(of: "<!-- known-results:begin -->").flatMap { begin in
                text.range(of: "<!-- known-results:end -->", range: begin.upperBound..<text.endIndex).map { text[begin.upperBound..<$0.lowerBound] }
            }, "no known-results markers")
        var rows: [String: [String]] = [:], families: [String: [String: String]] = [:]
        var header: [String] = []
        for line in section.split(separator: "\n") where line.hasPrefix("|") && !line.hasPrefix("|---") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = cells.first else { continue }
            if first == "validator" || first == "family" { header = cells; continue }
            if header.first == "validator" {
                rows[first] = Array(cells.dropFirst().dropLast())  // the time varies from run to run
            } else if header.first == "family" {
                let family = String(first.prefix { $0 != " " })
                families[family] = Dictionary(zip(header.dropFirst(), cells.dropFirst()).map { ($0, $1) }, uniquingKeysWith: { first, _ in first })
            }
        }
        return (rows, families)
    }
}
