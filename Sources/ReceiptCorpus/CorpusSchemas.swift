public import Foundation

/// JSON Schemas (draft 2020-12) for the corpus files, generated from the Codable models by encoding their
/// exemplars (see `ShapeRecorder`), so they cannot drift from what `ManifestIO` reads and writes.
public enum CorpusSchemas {
    /// Prefix of every schema's `$id`; `.invalid` because the schemas ship with the corpus, not on the web.
    public static let baseID = "https://receipt-forge.invalid/schema/"

    /// File name → canonical JSON text (sorted keys, pretty, trailing newline): "manifest.schema.json"
    /// (the whole manifest, vectors included) and "vector.schema.json" (one vector).
    public static func all() throws -> [String: Data] {
        [
            "manifest.schema.json": try document(for: Manifest.exemplar, fileName: "manifest.schema.json"),
            "vector.schema.json": try document(for: Vector.exemplar, fileName: "vector.schema.json"),
        ]
    }

    /// The root type's schema at the top level, every other named type (struct or enum) under `$defs`.
    private static func document(for exemplar: some Encodable, fileName: String) throws -> Data {
        let shape = try ShapeRecorder.shape(of: exemplar)
        guard case .object(let name?, _, _) = shape else {
            throw ShapeRecorder.exemplarGap([], "a schema document's root must be a struct")
        }
        var renderer = SchemaRenderer()
        guard case .object(var root) = try renderer.schema(for: shape, inline: true) else {
            throw ShapeRecorder.exemplarGap([], "a schema document's root must be a struct")
        }
        root["$schema"] = .string("https://json-schema.org/draft/2020-12/schema")
        root["$id"] = .string(baseID + fileName)
        root["title"] = .string(name)
        if !renderer.definitions.isEmpty {
            root["$defs"] = .object(renderer.definitions)
        }
        return try CanonicalJSON.encode(JSONValue.object(root))
    }
}

/// Turns shapes into schema keywords, collecting named types as `$defs`.
private struct SchemaRenderer {
    private(set) var definitions: [String: JSONValue] = [:]

    /// `inline` renders a named type in place instead of as a `$ref` (for the document root).
    mutating func schema(for shape: Shape, inline: Bool = false) throws -> JSONValue {
        switch shape {
        case .string: return .object(["type": .string("string")])
        case .integer: return .object(["type": .string("integer")])
        case .number: return .object(["type": .string("number")])
        case .boolean: return .object(["type": .string("boolean")])
        case .enumeration(let name, let cases):
            let body = JSONValue.object(["type": .string("string"), "enum": .array(cases.map(JSONValue.string))])
            return try reference(name, body)
        case .array(let items):
            return .object(["type": .string("array"), "items": try schema(for: items)])
        case .dictionary(let values):
            return .object(["type": .string("object"), "additionalProperties": try schema(for: values)])
        case .object(let name, let properties, let required):
            var propertySchemas: [String: JSONValue] = [:]
            for (key, property) in properties.sorted(by: { $0.key < $1.key }) {
                propertySchemas[key] = try schema(for: property)
            }
            let body = JSONValue.object([
                "type": .string("object"),
                "properties": .object(propertySchemas),
                "required": .array(required.sorted().map(JSONValue.string)),
                "additionalProperties": .bool(false),
            ])
            guard let name, !inline else { return body }
            return try reference(name, body)
        }
    }

    /// Files `body` under `$defs/name` and points there. Two different types sharing a name would
    /// silently merge, so that is refused.
    private mutating func reference(_ name: String, _ body: JSONValue) throws -> JSONValue {
        if let existing = definitions[name], existing != body {
            throw ShapeRecorder.exemplarGap([], "two different types are both named \(name)")
        }
        definitions[name] = body
        return .object(["$ref": .string("#/$defs/\(name)")])
    }
}

/// Just enough JSON to write schemas through the canonical encoder.
private enum JSONValue: Encodable, Equatable {
    case string(String)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .string(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .bool(let flag):
            var container = encoder.singleValueContainer()
            try container.encode(flag)
        case .array(let elements):
            try elements.encode(to: encoder)
        case .object(let members):
            try members.encode(to: encoder)
        }
    }
}
