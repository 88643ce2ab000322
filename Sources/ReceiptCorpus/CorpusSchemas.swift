#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport

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
    /// `package` so the conformance models (another module) generate theirs the same way.
    ///
    /// - Parameters:
    ///   - nullableOptionals: also allow `null` for optional properties: right for files others write and
    ///     `JSONDecoder` reads (it takes `null` for a missing optional), wrong for files only we write.
    ///   - minimums: JSON pointer into the document → `minimum` for an integer the types cannot constrain.
    package static func document(
        for exemplar: some Encodable, fileName: String, nullableOptionals: Bool = false, minimums: [String: Int] = [:]
    ) throws -> Data {
        let shape = try ShapeRecorder.shape(of: exemplar)
        guard case .object(let name?, _, _) = shape else {
            throw ShapeRecorder.exemplarGap([], "a schema document's root must be a struct")
        }
        var renderer = SchemaRenderer(nullableOptionals: nullableOptionals)
        guard case .object(let root) = try renderer.schema(for: shape, inline: true) else {
            throw ShapeRecorder.exemplarGap([], "a schema document's root must be a struct")
        }
        return try finish(root, renderer: renderer, title: name, fileName: fileName, minimums: minimums)
    }

    /// A document whose root is `oneOf` several message kinds (a protocol's messages), each filed under
    /// `$defs` by its alternative's name with its `discriminator` property pinned by `const` to the value
    /// its exemplar encodes — so a validator can tell which message a wrong one meant to be. Groups become
    /// named `oneOf`s of their own (e.g. one per direction), so a reader can check one side only.
    package static func document(
        oneOf alternatives: [SchemaAlternative], title: String, fileName: String, discriminator: String = "type",
        nullableOptionals: Bool = false, minimums: [String: Int] = [:]
    ) throws -> Data {
        var renderer = SchemaRenderer(nullableOptionals: nullableOptionals)
        let branches = try alternatives.map { try renderer.alternative($0, discriminator: discriminator) }
        return try finish(["oneOf": .array(branches)], renderer: renderer, title: title, fileName: fileName, minimums: minimums)
    }

    private static func finish(
        _ body: JSONObject, renderer: SchemaRenderer, title: String, fileName: String, minimums: [String: Int]
    ) throws -> Data {
        var root = body
        root["$schema"] = .string("https://json-schema.org/draft/2020-12/schema")
        root["$id"] = .string(baseID + fileName)
        root["title"] = .string(title)
        if !renderer.definitions.isEmpty {
            root["$defs"] = .object(renderer.definitions)
        }
        var document = JSONValue.object(root)
        for (pointer, minimum) in minimums.sorted(by: { $0.key < $1.key }) {
            try document.add("minimum", .integer(Int64(minimum)), at: pointer.split(separator: "/").map(String.init), fullPointer: pointer)
        }
        return try CanonicalJSON.encode(document)
    }
}

/// One message kind of a `oneOf` document, or a named group of them.
package indirect enum SchemaAlternative {
    /// `name` is the `$defs` entry; the exemplar gives the shape and the discriminator's value.
    case message(String, any Encodable)
    case group(String, [SchemaAlternative])
}

/// Turns shapes into schema keywords, collecting named types as `$defs`.
private struct SchemaRenderer {
    let nullableOptionals: Bool
    private(set) var definitions = JSONObject()

    /// A `oneOf` branch: the message's object schema (discriminator pinned) or a group, both as `$ref`s.
    mutating func alternative(_ alternative: SchemaAlternative, discriminator: String) throws -> JSONValue {
        switch alternative {
        case .group(let name, let members):
            let branches = try members.map { try self.alternative($0, discriminator: discriminator) }
            return try reference(name, .object(["oneOf": .array(branches)]))
        case .message(let name, let exemplar):
            guard case .object(var body) = try schema(for: try ShapeRecorder.shape(of: exemplar), inline: true),
                case .object(var properties)? = body["properties"]
            else {
                throw ShapeRecorder.exemplarGap([], "message \(name) must encode as an object")
            }
            let encoded = try JSONValue(parsing: try JSONEncoder().encode(exemplar))
            guard let value = encoded[discriminator]?.stringValue else {
                throw ShapeRecorder.exemplarGap([], "message \(name) has no string \"\(discriminator)\" to tell it apart")
            }
            properties[discriminator] = .object(["type": .string("string"), "const": .string(value)])
            body["properties"] = .object(properties)
            return try reference(name, .object(body))
        }
    }

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
        case .anyObject: return .object(["type": .string("object")])
        case .object(let name, let properties, let required):
            var propertySchemas = JSONObject()
            for (key, property) in properties.sorted(by: { $0.key < $1.key }) {
                let rendered = try schema(for: property)
                propertySchemas[key] = nullableOptionals && !required.contains(key) ? Self.nullable(rendered) : rendered
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

    /// `schema` or `null`: a plain `type` gains "null"; anything else (a `$ref`) becomes an `anyOf`.
    private static func nullable(_ schema: JSONValue) -> JSONValue {
        if case .object(var keywords) = schema, case .string(let type)? = keywords["type"], keywords["enum"] == nil, keywords["const"] == nil {
            keywords["type"] = .array([.string(type), .string("null")])
            return .object(keywords)
        }
        return .object(["anyOf": .array([schema, .object(["type": .string("null")])])])
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

extension JSONValue {
    /// Adds `keyword` to the schema object at `tokens` (a JSON pointer's, `~` escapes not needed by our
    /// names); a pointer naming nothing throws, so a refinement cannot go stale when a model changes.
    fileprivate mutating func add(_ keyword: String, _ value: JSONValue, at tokens: [String], fullPointer: String) throws {
        guard case .object(var members) = self else {
            throw ShapeRecorder.exemplarGap([], "\(fullPointer) does not name a schema object")
        }
        guard let token = tokens.first else {
            members[keyword] = value
            self = .object(members)
            return
        }
        guard var child = members[token] else {
            throw ShapeRecorder.exemplarGap([], "\(fullPointer) does not name a schema object")
        }
        try child.add(keyword, value, at: Array(tokens.dropFirst()), fullPointer: fullPointer)
        members[token] = child
        self = .object(members)
    }
}
