import Foundation
import ReceiptConformance
import ReceiptCorpus
import Testing
import _ForgeSupport
import ForgeTestSupport

/// Our JSON Schema validator against an independent one: Python's `jsonschema` (Draft 2020-12) judges the
/// same documents against the committed `Vectors/schema/` files, and the two must agree on every one —
/// the exemplars, real files, and systematic breakages of each (a member removed, given another type,
/// an unknown member added). `.ci/run` installs it in `.oracles/jsonschema`.
@Suite("Schemas, cross-checked with Python jsonschema", .requires(.jsonschema), .timeLimit(.minutes(2)))
struct SchemaOracleTests {
    /// (schema file, document) pairs: each valid document, then each of its breakages.
    static func documents() throws -> [(schema: String, json: Data)] {
        let encoder = JSONEncoder()
        var valid: [(String, Data)] = [
            ("manifest.schema.json", try Data(contentsOf: Repository.vectors.appendingPathComponent("manifest.json"))),
            ("vector.schema.json", try encoder.encode(manifest.vectors[0])),
            ("vector.schema.json", try encoder.encode(Vector.exemplar)),
            ("results.schema.json", try encoder.encode(RunResults.exemplar)),
            ("baseline.schema.json", try encoder.encode(Baseline.exemplar)),
        ]
        for message in [
            try encoder.encode(RunnerHello.exemplar), try encoder.encode(ValidateRequest.exemplar), try encoder.encode(StopMessage.exemplar),
            try encoder.encode(HarnessHello.exemplar), try encoder.encode(HarnessReply.resultExemplar),
            try encoder.encode(HarnessReply.skippedExemplar), try encoder.encode(HarnessReply.erroredExemplar),
        ] {
            valid.append(("harness-v1.schema.json", message))
        }
        var all: [(String, Data)] = []
        for (schema, data) in valid {
            all.append((schema, data))
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { continue }
            for key in object.keys.sorted() {
                var removed = object
                removed[key] = nil
                all.append((schema, try JSONSerialization.data(withJSONObject: removed, options: .sortedKeys)))
                var retyped = object
                retyped[key] =
                    switch object[key] {
                    case is String: 7
                    case is [Any]: ["not": "an array"]
                    case is [String: Any]: ["not an object"]
                    default: "not a number"
                    }
                all.append((schema, try JSONSerialization.data(withJSONObject: retyped, options: .sortedKeys)))
            }
            var extended = object
            extended["zzUnknownMember"] = true
            all.append((schema, try JSONSerialization.data(withJSONObject: extended, options: .sortedKeys)))
        }
        return all
    }

    @Test("Ours and Python's jsonschema give every document the same verdict")
    func agree() async throws {
        let documents = try Self.documents()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = documents.map {
            [
                "schema": Repository.vectors.appendingPathComponent("schema/\($0.schema)").path,
                "document": String(decoding: $0.json, as: UTF8.self),
            ]
        }
        let input = directory.appendingPathComponent("documents.json")
        try JSONSerialization.data(withJSONObject: list).write(to: input)
        let script = """
            import json, sys
            from jsonschema import Draft202012Validator
            schemas = {}
            for item in json.load(open(sys.argv[1])):
                schema = schemas.setdefault(item["schema"], Draft202012Validator(json.load(open(item["schema"]))))
                print("valid" if schema.is_valid(json.loads(item["document"])) else "invalid")
            """
        let answer = try await run(try Oracle.jsonschema.required(), ["-c", script, input.path])
        #expect(answer.status == 0, "\(answer.stderr)")
        let theirs = answer.text.split(separator: "\n").map(String.init)
        #expect(theirs.count == documents.count)
        var validators: [String: JSONSchemaValidator] = [:]
        var disagreements: [String] = []
        for (index, document) in documents.enumerated() where index < theirs.count {
            let validator = try validators[document.schema] ?? JSONSchemaValidator(schema: Data(contentsOf: Repository.vectors.appendingPathComponent("schema/\(document.schema)")))
            validators[document.schema] = validator
            let ours = validator.violations(document.json).isEmpty ? "valid" : "invalid"
            if ours != theirs[index] {
                disagreements.append("\(document.schema): ours \(ours), jsonschema \(theirs[index]): \(String(decoding: document.json.prefix(300), as: UTF8.self))")
            }
        }
        #expect(disagreements == [], "\(disagreements.joined(separator: "\n"))")
        // Both sides saw breakages, not only valid documents.
        #expect(theirs.filter { $0 == "invalid" }.count > documents.count / 3)
    }
}
