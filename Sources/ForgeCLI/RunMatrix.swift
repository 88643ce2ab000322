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
    struct Matrix: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "matrix",
            abstract: "Put the results.json of several validators side by side: a Markdown known-results matrix.",
            discussion: """
                One row per validator (outcome counts and time), then one row per family with each validator's \
                PASS / FALSE_ACCEPT / FALSE_REJECT / WRONG_REASON / SKIP. Validators are named by their --label, \
                else by the implementation their harness declared. scripts/known-results.sh uses it to write the \
                README's table.

                Example: forge run matrix results/openssl.json results/aprv.json -o matrix.md
                """)

        @Argument(help: ArgumentHelp("results.json files of forge run (one target each).", valueName: "file"))
        var files: [String]
        @Option(name: .shortAndLong, help: ArgumentHelp("Write the Markdown here instead of stdout.", valueName: "file"))
        var output: String?

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("give at least one results.json") }
        }

        func run() throws {
            let markdown = Data(MatrixReport.render(try files.map(Run.loadResults)).utf8)
            if let output { try writeOutput(markdown, to: output) } else { StandardStream.output.write(markdown) }
        }
    }
}
