import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptConformance
import ReceiptCorpus
import _ForgeSupport
import StoreModel

extension Run {
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Combine the results.json of shards (forge run --shard k/n) into one run, and render its reports.",
            discussion:
                "Reports as for `forge run`: --results, --junit, --markdown, --html, and --vectors for the corpus. Vectors of the corpus that no shard ran are added as SKIP and named on stderr. Exit codes as for `forge run`: the merged run's 0, 1 or 2; 65 for files that are not results of one suite, implementation and profile.\n\nExample: forge run merge shard1.json shard2.json --results results.json --junit junit.xml"
        )

        @Argument(help: ArgumentHelp("results.json files of the shards.", valueName: "file"))
        var files: [String]
        /// --vectors, --results, --junit, --markdown and --html are `forge run`'s own, given before or after `merge`.
        @ParentCommand var options: Run

        func run() throws {
            let parts = try files.map(Run.loadResults)
            let (manifest, _) = try options.location.manifest()
            let merged: RunResults
            let missing: [Vector]
            do { (merged, missing) = try RunResults.merged(parts, corpus: manifest) } catch { throw fail(error.message, Exit.dataError) }
            if !missing.isEmpty {
                let listed = missing.prefix(5).map(\.id.text).joined(separator: ", ") + (missing.count > 5 ? ", …" : "")
                note("\(missing.count) vector\(missing.count == 1 ? "" : "s") in no shard, listed as SKIP: \(listed)")
            }
            try ReportFiles(results: options.results, junit: options.junit, markdown: options.markdown, html: options.html)
                .write([merged], manifest: manifest, to: writeOutput)
            print(ConsoleReport.summary(merged))
            let code = merged.exitCode
            if code != 0 { throw ExitCode(code) }
        }
    }
}
