import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptConformance
import ReceiptCorpus
import StoreForge
import ReceiptModel
import ReferenceValidation
import _ForgeSupport
import StoreModel

struct VectorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vectors",
        abstract: "Generate, check and browse the conformance corpus (Vectors/).",
        subcommands: [Generate.self, Lint.self, List.self, Show.self])

    /// Where the corpus is: --vectors, else $RECEIPT_FORGE_VECTORS, else ./Vectors, else this package's own.
    struct Location: ParsableArguments {
        @Option(name: .customLong(RunOption.vectors.rawValue), help: ArgumentHelp("The corpus directory (holding manifest.json).", valueName: "dir"))
        var vectors: String?

        func resolve() throws -> URL { try Self.locate(vectors) }

        static func locate(_ explicit: String?) throws -> URL {
            do {
                return try CorpusLocation.resolve(
                    explicit: explicit, environment: ProcessInfo.processInfo.environment,
                    currentDirectory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
                ).vectors
            } catch {
                throw fail(error.message, Exit.noInput)
            }
        }

        func manifest() throws -> (Manifest, URL) {
            let directory = try resolve()
            do { return (try ManifestIO.load(from: directory), directory) } catch { throw fail(error.message, Exit.dataError) }
        }
    }

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Write every vector, the trust anchors, the schemas and manifest.json.",
            discussion:
                "Deterministic: the same forge writes the same bytes, so `forge vectors generate && git diff --exit-code Vectors/` is the reproducibility check.\n\nThe corpus is written whole: into a staging folder beside DIR, which then replaces DIR in one step, so an interrupt or a full disk leaves the old corpus as it was. DIR must be new, empty or a corpus forge wrote (its manifest.json): of that, the files its manifest listed are replaced (retired vectors disappear) and a README.md is kept. Anything else in DIR refuses with exit 73 naming it, and nothing is changed."
        )

        @Option(help: ArgumentHelp("Directory to write. Default: the located corpus (./Vectors in the repository).", valueName: "dir"))
        var out: String?

        func run() throws {
            let directory = try out.map { URL(fileURLWithPath: $0) } ?? Location.locate(nil)
            let clock = ContinuousClock()
            let start = clock.now
            let pki = try loadPKI(nil)
            let conformanceSchemas: [String: Data]
            do { conformanceSchemas = try ConformanceSchemas.all() } catch { throw fail("cannot generate the runner's schemas: \(error)", Exit.software) }
            let interrupts = Interrupts.discardStagedOnSignal()
            do {
                let manifest = try CorpusGenerator(
                    forge: try Forge(receiptPKI: pki), additionalSchemas: conformanceSchemas
                ).write(to: directory, slot: interrupts.slot)
                let elapsed = start.duration(to: clock.now)
                let families = Dictionary(grouping: manifest.vectors, by: \.id.family).map { "\($0.key) \($0.value.count)" }.sorted()
                print("wrote \(manifest.vectors.count) vectors to \(directory.path) in \(secondsAndMilliseconds(elapsed))")
                print(families.joined(separator: ", "))
            } catch {
                throw fail(error.message, Exit.code(for: error))
            }
        }
    }

    struct Lint: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lint",
            abstract: "Check the corpus: ids, files and hashes, flags and notes, expectations, pinned times, anchors, canaries.",
            discussion: "Exit codes: 0 clean, 1 findings (one line each), 65 unreadable manifest.")
        @OptionGroup var location: Location

        func run() throws {
            let (manifest, directory) = try location.manifest()
            let findings = Linter.lint(manifest, vectorsDirectory: directory)
            for finding in findings { print(finding) }
            print("\(manifest.vectors.count) vectors, \(findings.count) finding\(findings.count == 1 ? "" : "s")")
            if !findings.isEmpty { throw Exit.invalid }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List vectors whose id matches a pattern (* matches anything).")
        @Argument(help: "Pattern, e.g. 'chain::*' or '*expired*'. Default: all.")
        var pattern: String = "*"
        @OptionGroup var location: Location

        func run() throws {
            let (manifest, _) = try location.manifest()
            let matching = manifest.vectors.filter { matches($0.id.text, pattern) }
            for vector in matching {
                let classes = vector.expected.errorClasses.isEmpty ? "" : " [\(vector.expected.errorClasses.map(\.rawValue).joined(separator: "|"))]"
                print(
                    "\(vector.id.text.paddedColumn(52)) \(vector.expected.verdict.rawValue.paddedColumn(10)) \(vector.severity.rawValue.paddedColumn(8))\(classes)"
                )
            }
            if matching.isEmpty { throw fail("no vector matches '\(pattern)'", Exit.usage) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show one vector: description, expectation, context, recipe and the inspect view of its bytes.")
        @Argument(help: "The vector id, e.g. chain::foreign-root.")
        var id: String
        @OptionGroup var location: Location

        func run() throws {
            let (manifest, directory) = try location.manifest()
            guard let vector = manifest.vectors.first(where: { $0.id.text == id }) else {
                let near = manifest.vectors.map(\.id.text).filter { $0.contains(id.split(separator: ":").last.map(String.init) ?? id) }.prefix(5)
                throw fail("no vector \(id)\(near.isEmpty ? "" : "; did you mean \(near.joined(separator: ", "))?")", Exit.usage)
            }
            print("\(vector.id) (revision \(vector.revision), \(vector.severity.rawValue)\(vector.canary ? ", canary" : ""))")
            print(vector.description)
            var expected =
                "expected: \(vector.expected.verdict.rawValue)\(vector.expected.errorClasses.isEmpty ? "" : " with " + vector.expected.errorClasses.map(\.rawValue).joined(separator: " or "))"
            if vector.expected.verdict == .acceptable {
                expected +=
                    " ("
                    + manifest.profiles.sorted { $0.key < $1.key }.map { name, profile in
                        let verdict = profile.resolve(vector.flags)
                        return "\(name): \(verdict == .acceptable ? "either" : verdict.rawValue)"
                    }.joined(separator: ", ") + ")"
            }
            print(expected)
            for flag in vector.flags { print("flag \(flag): \(manifest.notes[flag]?.description ?? "?")") }
            if !vector.features.isEmpty { print("features: \(vector.features.joined(separator: ", "))") }
            let context = vector.context
            print(
                "context: now \(context.now), trust \(context.trustAnchor)"
                    + [
                        context.bundleId.map { ", bundle id \($0)" }, context.appVersion.map { ", version \($0)" },
                        context.deviceId.map { ", device \($0)" }, context.environment.map { ", environment \($0)" },
                        context.artifact.map { ", artifact \($0.rawValue)" }, context.appAppleId.map { ", app Apple id \($0)" },
                    ]
                    .compactMap { $0 }.joined())
            print(
                "recipe: preset \(vector.provenance.preset)"
                    + vector.provenance.recipe.map { step in
                        " + \(step.mutation)"
                            + step.parameters.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value.count > 24 ? String($0.value.prefix(24)) + "…" : $0.value)" }.joined()
                    }.joined())
            print("file: \(vector.file) (sha256 \(vector.sha256))\n")
            let bytes = try readInput(directory.appendingPathComponent(vector.file).path, kind: .vector).bytes
            if context.artifactKind == .transactionReceipt {
                print(
                    TransactionReceiptInspection(bytes, source: vector.file).map { Inspection($0, report: nil).text() }
                        ?? "(not a readable transaction receipt: \(bytes.count) bytes)")
                return
            }
            if context.artifactKind.isJWS {
                let text = String(decoding: bytes, as: UTF8.self)
                print(Inspection(jws: text)?.text() ?? "(not a readable JWS: \(bytes.count) bytes)")
                return
            }
            let report = ReferenceValidator().validate(bytes, context: ValidationContext(trustedRoots: [], now: ReceiptDate.parse(context.now) ?? Date()))
            if report.container == nil {
                print("(not a readable receipt: \(report.message))")
            } else {
                print(Inspection(receipt: report, source: vector.file, inputSize: bytes.count, includeChecks: false).text())
            }
        }
    }
}

/// Shell-style matching with `*` only (shared with baselines).
func matches(_ text: String, _ pattern: String) -> Bool { IDPattern.matches(text, pattern) }

/// `elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow))` ("2s 345ms", "999ms", "1,234s"),
/// without Foundation proper (its format styles link ICU, issue 41): milliseconds rounded half to even.
private func secondsAndMilliseconds(_ elapsed: Duration) -> String {
    let (seconds, attoseconds) = elapsed.components
    // Checked: a duration past Int's range (never, for a run of this command) reads as 0, not a trap.
    let total = max(0, Int(exactly: (Double(seconds) * 1000 + Double(attoseconds) / 1e15).rounded(.toNearestOrEven)) ?? 0)
    var grouped = String(total / 1000)
    for index in stride(from: grouped.count - 3, to: 0, by: -3) {
        grouped.insert(",", at: grouped.index(grouped.startIndex, offsetBy: index))
    }
    let parts = (total >= 1000 ? [grouped + "s"] : []) + (total % 1000 > 0 ? ["\(total % 1000)ms"] : [])
    return parts.isEmpty ? "0ms" : parts.joined(separator: " ")
}
