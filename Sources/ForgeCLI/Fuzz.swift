import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptCorpus
import StoreForge
import ReceiptModel
import _ForgeSupport
import StoreModel

struct Seeds: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seeds",
        abstract: "Export the corpus as fuzzer seeds: one file per vector named by its sha256, an index, and a token dictionary.",
        discussion:
            "Writes DIR/<sha256> for every vector, DIR/index.jsonl (one line per seed: sha256, id, verdict, file) and a libFuzzer/AFL dictionary of receipt tokens (OIDs, attribute-type encodings, ASN.1 headers, environment strings), DIR/receipt.dict unless --dict names another file."
    )

    @Option(help: ArgumentHelp("Directory for the seeds.", valueName: "dir"))
    var out: String
    @Option(help: ArgumentHelp("Where to write the dictionary. Default: <out>/receipt.dict.", valueName: "file"))
    var dict: String?
    @OptionGroup var location: VectorsCommand.Location

    func run() throws {
        let (manifest, directory) = try location.manifest()
        let output = URL(fileURLWithPath: out)
        do { try Folder.create(output) } catch { throw fail(error.message, Exit.cannotCreate) }
        var index: [String] = []
        for vector in manifest.vectors {
            let bytes = try readInput(directory.appendingPathComponent(vector.file).path, kind: .vector).bytes
            try writeOutput(Data(bytes), to: output.appendingPathComponent(vector.sha256).path)
            let line = JSONValue.object([
                ("sha256", .string(vector.sha256)), ("id", .string(vector.id.text)),
                ("verdict", .string(vector.expected.verdict.rawValue)), ("file", .string(vector.file)),
            ])
            index.append(line.serialized(pretty: false))
        }
        try writeOutput(Data((index.joined(separator: "\n") + "\n").utf8), to: output.appendingPathComponent("index.jsonl").path)
        let dictionary = dict ?? output.appendingPathComponent("receipt.dict").path
        try writeOutput(Data(FuzzDictionary.text().utf8), to: dictionary)
        print("wrote \(manifest.vectors.count) seeds, index.jsonl and \(dictionary)")
    }
}

struct Mutate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mutate",
        abstract: "Make structure-aware mutants of catalogue vectors, each with a recipe that replays byte for byte.",
        discussion: """
            Examples:
              forge mutate --from 'valid::*' --seed 7 --count 100 --out mutants/
              forge mutate --from 'jws-*' --count 50 --out jws-mutants/      (StoreKit 2: <id>.jws)
              forge mutate --replay mutants/mut-valid-appstore-subscription-1a2b3c4d.recipe.json -o again.der

            Each mutant is <out>/<id>.der with <out>/<id>.recipe.json beside it: the base vector, the steps, and the oracle — must-reject when bytes were changed after signing, none when the forge re-signed (judge such mutants by comparing validators).
            """)

    @Option(help: ArgumentHelp("Vector id pattern to start from (* matches anything).", valueName: "pattern"))
    var from: String = "*"
    @Option(help: "Seed for every random choice.")
    var seed: UInt64 = 1
    @Option(help: "How many mutants.")
    var count: Int = 100
    @Option(help: ArgumentHelp("Directory for mutants and recipes.", valueName: "dir"))
    var out: String?
    @Option(help: ArgumentHelp("Rebuild the mutant a recipe file describes.", valueName: "recipe"))
    var replay: String?
    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("With --replay: output file (default stdout).", valueName: "file"))
    var output: String?

    func validate() throws {
        if replay == nil, out == nil { throw ValidationError("give --out DIR to make mutants, or --replay RECIPE to rebuild one") }
        if replay != nil, out != nil { throw ValidationError("--replay conflicts with --out: a replay writes one mutant (-o FILE)") }
        guard (1...1_000_000).contains(count) else { throw ValidationError("--count must be between 1 and 1000000") }
    }

    func run() throws {
        let mutator = try catalogueMutator()
        if let replay {
            let data = Data(try readInput(replay, kind: .json).bytes)
            guard let recipe = try? JSONDecoder().decode(MutantRecipe.self, from: data) else { throw fail("\(replay) is not a mutant recipe", Exit.dataError) }
            do {
                try writeOutput(Data(try mutator.replay(recipe)), to: output)
            } catch let error as ForgeError {
                // The recipe is a file: whatever in it is wrong (a step, a parameter, its scenario) is the data's.
                throw fail("\(replay): \(error.message)", Exit.dataError)
            }
            return
        }
        let bases = VectorCatalogue.all.filter { matches($0.id, from) }
        guard !bases.isEmpty else { throw fail("no vector matches '\(from)'", Exit.usage) }
        // validate() refuses a run with neither --replay nor --out.
        guard let out else { throw ValidationError("give --out DIR to make mutants, or --replay RECIPE to rebuild one") }
        let directory = URL(fileURLWithPath: out)
        do { try Folder.create(directory) } catch { throw fail(error.message, Exit.cannotCreate) }
        let clock = ContinuousClock()
        let start = clock.now
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var made = 0
        for drawn in mutator.recipes(from: bases, seed: seed, count: count) {
            do {
                let mutant = try mutator.build(drawn)
                try writeOutput(Data(mutant.bytes), to: directory.appendingPathComponent(mutant.name + "." + mutant.fileExtension).path)
                try writeOutput(try encoder.encode(mutant.recipe), to: directory.appendingPathComponent(mutant.name + ".recipe.json").path)
                made += 1
            } catch let error as ForgeError {
                note("skipped \(mutator.label(of: drawn)): \(error.message)")
            }
        }
        let elapsed = start.duration(to: clock.now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "wrote \(made) mutants of \(bases.count) base vector(s) to \(directory.path) in \(printfFormat("%.2f", seconds)) s (\(printfFormat("%.0f", Double(made) / max(seconds, 1e-9))) mutants/s)"
        )
    }
}

/// The mutator over the bundled PKIs (receipts and StoreKit 2).
func catalogueMutator() throws -> Mutator {
    do { return Mutator(forge: try Forge(receiptPKI: try loadPKI(nil))) } catch let error as ForgeError {
        throw fail(error.message, Exit.software)
    }
}
