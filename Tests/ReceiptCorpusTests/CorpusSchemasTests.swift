import Foundation
import ReceiptCorpus
import Testing
import _ForgeSupport

/// The package's JSON value, which keeps booleans and integers apart (JSONSerialization blurs them on Linux).
private typealias JSON = JSONValue

extension JSONValue {
    fileprivate static func parse(_ data: Data) throws -> JSON { try JSONValue(parsing: data) }

    var objectKeys: Set<String> {
        guard case .object(let members) = self else { return [] }
        return Set(members.keys)
    }

    var strings: [String] {
        guard case .array(let elements) = self else { return [] }
        return elements.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }
}

/// Just the keywords the generated schemas use: $ref (into $defs), type, enum, properties, required,
/// additionalProperties (false or a schema), items. Returns one line per violation.
private struct MiniValidator {
    let root: JSON

    func violations(of instance: JSON, against schema: JSON, at path: String = "$") -> [String] {
        if case .string(let reference)? = schema["$ref"] {
            let name = String(reference.dropFirst("#/$defs/".count))
            guard reference.hasPrefix("#/$defs/"), let target = root["$defs"]?[name] else {
                return ["\(path): unresolvable $ref \(reference)"]
            }
            return violations(of: instance, against: target, at: path)
        }
        var found: [String] = []
        if case .string(let type)? = schema["type"], !Self.matches(instance, type) {
            return ["\(path): expected \(type)"]
        }
        if let allowed = schema["enum"], case .array(let values) = allowed, !values.contains(instance) {
            found.append("\(path): not one of the enum values")
        }
        if case .object(let members) = instance {
            let properties = schema["properties"]
            for required in schema["required"]?.strings ?? [] where members[required] == nil {
                found.append("\(path): missing required \(required)")
            }
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                if let propertySchema = properties?[key] {
                    found += violations(of: value, against: propertySchema, at: "\(path).\(key)")
                } else if schema["additionalProperties"] == .bool(false) {
                    found.append("\(path): unexpected property \(key)")
                } else if let additional = schema["additionalProperties"] {
                    found += violations(of: value, against: additional, at: "\(path).\(key)")
                }
            }
        }
        if case .array(let elements) = instance, let items = schema["items"] {
            for (index, element) in elements.enumerated() {
                found += violations(of: element, against: items, at: "\(path)[\(index)]")
            }
        }
        return found
    }

    private static func matches(_ instance: JSON, _ type: String) -> Bool {
        switch (type, instance) {
        case ("string", .string), ("integer", .integer), ("boolean", .bool), ("array", .array), ("object", .object),
            ("number", .integer), ("number", .number):
            true
        default:
            false
        }
    }
}

@Suite(.timeLimit(.minutes(2)))
struct CorpusSchemasTests {
    private func schema(_ fileName: String) throws -> JSON {
        try JSON.parse(try #require(try CorpusSchemas.all()[fileName]))
    }

    /// `value` encoded the way the manifest is written, as parsed JSON.
    private func json(_ value: some Encodable) throws -> JSON {
        try JSON.parse(try JSONEncoder().encode(value))
    }

    @Test func writesManifestAndVectorSchemas() throws {
        let schemas = try CorpusSchemas.all()
        #expect(Set(schemas.keys) == ["manifest.schema.json", "vector.schema.json"])
        let manifest = try schema("manifest.schema.json")
        #expect(manifest["$id"] == .string("https://receipt-forge.invalid/schema/manifest.schema.json"))
        #expect(manifest["$schema"] == .string("https://json-schema.org/draft/2020-12/schema"))
        #expect(manifest["title"] == .string("Manifest"))
    }

    @Test func outputIsByteStable() throws {
        let first = try CorpusSchemas.all()
        #expect(try CorpusSchemas.all() == first)
        for data in first.values {
            #expect(data.last == UInt8(ascii: "\n"))
        }
    }

    @Test func vectorSchemaListsEveryCodingKey() throws {
        let vector = try schema("vector.schema.json")
        let encodedKeys = try json(Vector.exemplar).objectKeys
        #expect(encodedKeys.count == 12)
        #expect(vector["properties"]?.objectKeys == encodedKeys)
        #expect(Set(vector["required"]?.strings ?? []) == encodedKeys, "no Vector property is optional")
        #expect(vector["additionalProperties"] == .bool(false))
        #expect(vector["properties"]?["revision"]?["type"] == .string("integer"))
        #expect(vector["properties"]?["canary"]?["type"] == .string("boolean"))
        #expect(vector["properties"]?["flags"] == .object(["type": .string("array"), "items": .object(["type": .string("string")])]))
    }

    @Test func optionalsAreNotRequired() throws {
        let definitions = try #require(try schema("vector.schema.json")["$defs"])
        let context = try #require(definitions["Context"])
        #expect(context["properties"]?.objectKeys == ["now", "trustAnchor", "bundleId", "appVersion", "deviceId", "environment", "artifact", "appAppleId", "ocsp"])
        #expect(context["required"]?.strings == ["now", "trustAnchor"])
        #expect(definitions["Expectation"]?["required"]?.strings == ["errorClasses", "verdict"])
        #expect(definitions["DecodedPurchase"]?["required"]?.strings == ["productId", "purchaseDate", "quantity", "transactionId"])
    }

    @Test func enumsListAllCases() throws {
        let definitions = try #require(try schema("manifest.schema.json")["$defs"])
        #expect(definitions["Verdict"]?["enum"]?.strings == Verdict.allCases.map(\.rawValue))
        #expect(definitions["Severity"]?["enum"]?.strings == Severity.allCases.map(\.rawValue))
        #expect(definitions["Verdict"]?["type"] == .string("string"))
    }

    @Test func dictionariesAllowAnyKey() throws {
        let manifest = try schema("manifest.schema.json")
        let properties = try #require(manifest["properties"])
        #expect(
            properties["trustAnchors"]
                == .object([
                    "type": .string("object"), "additionalProperties": .object(["$ref": .string("#/$defs/TrustAnchor")]),
                ]))
        #expect(properties["features"]?["additionalProperties"] == .object(["type": .string("string")]))
        #expect(
            manifest["$defs"]?["Profile"]?["properties"]?["acceptable"]?["additionalProperties"]
                == .object(["$ref": .string("#/$defs/Verdict")]))
    }

    @Test func exemplarAndFixtureValidate() throws {
        let validator = MiniValidator(root: try schema("manifest.schema.json"))
        #expect(validator.violations(of: try json(Manifest.exemplar), against: validator.root) == [])
        // The fixture leaves optionals out and collections empty.
        let fixture = try CorpusFixture()
        #expect(validator.violations(of: try json(fixture.manifest), against: validator.root) == [])

        let vectorValidator = MiniValidator(root: try schema("vector.schema.json"))
        #expect(vectorValidator.violations(of: try json(Vector.exemplar), against: vectorValidator.root) == [])
    }

    @Test func extraKeysFail() throws {
        let validator = MiniValidator(root: try schema("manifest.schema.json"))
        guard case .object(var manifest) = try json(Manifest.exemplar) else {
            Issue.record("manifest is not an object")
            return
        }
        var withExtraKey = manifest
        withExtraKey["comment"] = .string("not in the model")
        #expect(validator.violations(of: .object(withExtraKey), against: validator.root) == ["$: unexpected property comment"])

        guard case .array(var vectors)? = manifest["vectors"], case .object(var vector) = vectors[0],
            case .object(var context)? = vector["context"]
        else {
            Issue.record("unexpected manifest shape")
            return
        }
        context["clock"] = .string("system")
        vector["context"] = .object(context)
        vectors[0] = .object(vector)
        manifest["vectors"] = .array(vectors)
        #expect(
            validator.violations(of: .object(manifest), against: validator.root)
                == ["$.vectors[0].context: unexpected property clock"])
    }

    @Test func wrongTypesMissingKeysAndUnknownCasesFail() throws {
        let validator = MiniValidator(root: try schema("vector.schema.json"))
        guard case .object(var vector) = try json(Vector.exemplar) else {
            Issue.record("vector is not an object")
            return
        }
        vector["revision"] = .string("1")
        vector["severity"] = .string("catastrophic")
        vector["id"] = nil
        #expect(
            validator.violations(of: .object(vector), against: validator.root) == [
                "$: missing required id", "$.revision: expected integer", "$.severity: not one of the enum values",
            ])
    }
}
