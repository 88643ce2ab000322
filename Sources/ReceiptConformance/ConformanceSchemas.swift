#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ReceiptCorpus
import _ForgeSupport

/// JSON Schemas (draft 2020-12) for what the runner exchanges and writes: the harness protocol's messages,
/// `results.json` and the baseline. Generated from the Codable models by encoding their exemplars
/// (`ConformanceExemplars.swift`), as `CorpusSchemas` does for the manifest, so they cannot drift from
/// the code. They ship in `Vectors/schema/` beside the corpus's own, for harness authors.
public enum ConformanceSchemas {
    public static let harnessFileName = "harness-v1.schema.json"
    public static let resultsFileName = "results.schema.json"
    public static let baselineFileName = "baseline.schema.json"

    /// File name → canonical JSON text (sorted keys, pretty, trailing newline), like `CorpusSchemas.all()`.
    public static func all() throws -> [String: Data] {
        try generated.get()
    }

    /// Any protocol message, either direction.
    public static var harnessMessage: JSONSchemaValidator {
        get throws { try JSONSchemaValidator(schema: try file(harnessFileName)) }
    }

    /// What a harness may send: its `hello`, `result`, `skipped` or `errored` (not the runner's messages).
    public static var harnessToRunner: JSONSchemaValidator {
        get throws { try JSONSchemaValidator(schema: try file(harnessFileName), at: "/$defs/HarnessToRunner") }
    }

    /// What the runner sends: `hello`, `validate`, `stop`.
    public static var runnerToHarness: JSONSchemaValidator {
        get throws { try JSONSchemaValidator(schema: try file(harnessFileName), at: "/$defs/RunnerToHarness") }
    }

    /// `results.json` (`RunResults`).
    public static var results: JSONSchemaValidator {
        get throws { try JSONSchemaValidator(schema: try file(resultsFileName)) }
    }

    /// A baseline file (`Baseline`).
    public static var baseline: JSONSchemaValidator {
        get throws { try JSONSchemaValidator(schema: try file(baselineFileName)) }
    }

    private static func file(_ name: String) throws -> Data {
        guard let data = try all()[name] else { throw SchemaError(.unresolvableReference, "no schema named \(name)") }
        return data
    }

    /// Generated once per process: encoding the exemplars is cheap, but a checker may be made per harness.
    private static let generated = Result { try generate() }

    private static func generate() throws -> [String: Data] {
        // Harnesses are written in any language and read by JSONDecoder, which takes `null` for an absent
        // optional (the protocol's own examples send `"decoded": null`): the harness schema allows it.
        let harness = try CorpusSchemas.document(
            oneOf: [
                .group(
                    "RunnerToHarness",
                    [
                        .message("RunnerHello", RunnerHello.exemplar),
                        .message("ValidateRequest", ValidateRequest.exemplar),
                        .message("StopMessage", StopMessage.exemplar),
                    ]),
                .group(
                    "HarnessToRunner",
                    [
                        .message("HarnessHello", HarnessHello.exemplar),
                        .message("ResultReply", HarnessReply.resultExemplar),
                        .message("SkippedReply", HarnessReply.skippedExemplar),
                        .message("ErroredReply", HarnessReply.erroredExemplar),
                    ]),
            ],
            title: "HarnessMessage", fileName: harnessFileName, nullableOptionals: true,
            minimums: [
                "/$defs/RunnerHello/properties/protocol": 1,
                "/$defs/HarnessHello/properties/protocol": 1,
                "/$defs/HarnessHello/properties/maxConcurrency": 1,
                "/$defs/ValidateRequest/properties/seq": 0,
                "/$defs/ResultReply/properties/seq": 0,
                "/$defs/SkippedReply/properties/seq": 0,
                "/$defs/ErroredReply/properties/seq": 0,
            ])
        // Only the runner writes results: the schema says exactly what it writes.
        let results = try CorpusSchemas.document(
            for: RunResults.exemplar, fileName: resultsFileName,
            minimums: [
                "/properties/durationMilliseconds": 0,
                "/properties/counts/additionalProperties": 0,
                "/properties/errorBudget": 0,
                "/$defs/VectorResult/properties/revision": 1,
                "/$defs/VectorResult/properties/durationMicroseconds": 0,
                "/$defs/ArtifactSelection/properties/excluded": 0,
                "/$defs/HarnessHello/properties/protocol": 1,
                "/$defs/HarnessHello/properties/maxConcurrency": 1,
            ])
        // People write baselines by hand; JSONDecoder reads `"issue": null` as absent, so the schema does too.
        let baseline = try CorpusSchemas.document(
            for: Baseline.exemplar, fileName: baselineFileName, nullableOptionals: true,
            minimums: ["/properties/schemaVersion": 1])
        return [harnessFileName: harness, resultsFileName: results, baselineFileName: baseline]
    }
}

extension RunResults {
    /// A results.json as `forge run merge` and `forge run matrix` read it, refused where it breaks
    /// results.schema.json, which says what the runner writes: a negative duration or count, a revision of 0, a
    /// member no run writes. The message names the first such place (`/results/3/durationMicroseconds: …`).
    public static func read(_ data: Data) throws(ConformanceError) -> RunResults {
        let schema: JSONSchemaValidator
        do { schema = try ConformanceSchemas.results } catch { throw ConformanceError(.invalidResults, "cannot check it: \(error)") }
        if let violation = schema.violations(data).first { throw ConformanceError(.invalidResults, violation.description) }
        do { return try JSONDecoder().decode(RunResults.self, from: data) } catch { throw ConformanceError(.invalidResults, "\(error)") }
    }
}
