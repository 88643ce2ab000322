#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import _ForgeSupport

/// One place a JSON document breaks its schema.
public struct SchemaViolation: Sendable, Hashable, CustomStringConvertible {
    /// JSON pointer to the offending value (`/results/3/outcome`); "" is the whole document.
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// "/verdict: expected one of accept, reject, got "yes"", with "(root)" for the empty pointer.
    public var description: String { "\(path.isEmpty ? "(root)" : path): \(message)" }
}

/// Why a schema cannot be used. Compared by code only.
public struct SchemaError: CodedError, Sendable {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Storage: String, Sendable, Hashable {
            case invalidSchema, unsupportedKeyword, unresolvableReference
        }
        private let storage: Storage
        /// The schema is not JSON, or a keyword has a value of the wrong kind.
        public static var invalidSchema: Code { .init(storage: .invalidSchema) }
        /// A keyword this validator does not implement: refusing beats silently not checking it.
        public static var unsupportedKeyword: Code { .init(storage: .unsupportedKeyword) }
        /// A `$ref` (or the starting pointer) that does not name a subschema of the document.
        public static var unresolvableReference: Code { .init(storage: .unresolvableReference) }
        public var description: String { storage.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

}

/// A JSON Schema (draft 2020-12) validator for the subset the generated corpus and protocol schemas use:
/// `type` (one or several, `null` included), `properties`, `required`, `additionalProperties` (bool or
/// schema), `enum`, `const`, `items`, `$ref` to `#` or `#/$defs/…`, `oneOf`, `anyOf` and `minimum`.
///
/// The schema is compiled once at `init`, so checking every message of a run costs a parse and a walk.
/// Other validation keywords are refused at `init` rather than ignored, so a schema never looks
/// enforced when it is not. When no `oneOf`/`anyOf` branch fits, the branch that fits best is reported
/// (the one whose `const`s — e.g. the message `type` — match), not every branch's complaints.
public struct JSONSchemaValidator: Sendable {
    private let root: SchemaNode
    private let definitions: [String: SchemaNode]

    /// `pointer` selects the subschema to validate against (e.g. "/$defs/HarnessToRunner"); `$ref`s still
    /// resolve against the whole document.
    public init(schema: Data, at pointer: String = "") throws {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: schema)
        } catch {
            throw SchemaError(.invalidSchema, "the schema is not JSON: \(error.reason)")
        }
        var definitions: [String: SchemaNode] = [:]
        if case .object(let members) = document, let defs = members["$defs"] {
            guard case .object(let entries) = defs else { throw SchemaError(.invalidSchema, "$defs is not an object") }
            for (name, entry) in entries {
                definitions[name] = try SchemaNode.compile(entry, at: "/$defs/\(JSONPointer.escape(name))")
            }
        }
        let start: JSONValue
        if pointer.isEmpty {
            start = document
        } else {
            guard let found = document.at(pointer: pointer) else {
                throw SchemaError(.unresolvableReference, "\(pointer) names nothing in the schema")
            }
            start = found
        }
        self.root = try SchemaNode.compile(start, at: pointer)
        self.definitions = definitions
        for reference in root.references.union(definitions.values.flatMap(\.references)) where reference != "#" {
            let name = JSONPointer.unescape(String(reference.dropFirst("#/$defs/".count)))
            guard definitions[name] != nil else {
                throw SchemaError(.unresolvableReference, "$ref \(reference) names no entry of $defs")
            }
        }
        if root.references.contains("#") || definitions.values.contains(where: { $0.references.contains("#") }) {
            // "#" is the whole document; only meaningful when validating from it.
            guard pointer.isEmpty else { throw SchemaError(.unsupportedKeyword, "$ref \"#\" with a starting pointer") }
        }
    }

    /// Every violation of `json`, in document order (object members by key); empty when it conforms.
    /// Bytes that are not JSON give one violation at "" saying why.
    public func violations(_ json: Data) -> [SchemaViolation] {
        let instance: JSONValue
        do {
            instance = try JSONValue(parsing: json)
        } catch {
            return [SchemaViolation(path: "", message: "not JSON: \(error.reason)")]
        }
        return violations(of: instance, against: root, at: "").map(\.violation)
    }

    /// Why a value fails, plus what `oneOf`/`anyOf` need to pick the best branch.
    private struct Finding {
        var violation: SchemaViolation
        /// The `const` values that were expected at this path, when a `const` (or a whole
        /// discriminated choice) failed; nil for every other keyword.
        var expectedConstants: [JSONValue]?
        /// A `type` failure: the schema does not apply to this kind of value at all.
        var isTypeMismatch = false
    }

    private func violations(of instance: JSONValue, against node: SchemaNode, at path: String) -> [Finding] {
        var found: [Finding] = []
        func report(_ message: String, at place: String? = nil) {
            found.append(Finding(violation: SchemaViolation(path: place ?? path, message: message)))
        }
        if node.alwaysFails { return [Finding(violation: SchemaViolation(path: path, message: "no value is allowed here"))] }
        if let reference = node.reference {
            let target = reference == "#" ? root : definitions[JSONPointer.unescape(String(reference.dropFirst("#/$defs/".count)))]
            if let target { found += violations(of: instance, against: target, at: path) }
        }
        if let types = node.types, !types.contains(where: { instance.matches($0) }) {
            // A wrong type makes every other keyword's complaint noise.
            return found + [
                Finding(
                    violation: SchemaViolation(
                        path: path, message: "expected \(types.joined(separator: " or ")), got \(instance.summary)"), isTypeMismatch: true)
            ]
        }
        if let constant = node.constant, constant != instance {
            found.append(
                Finding(
                    violation: SchemaViolation(path: path, message: "expected \(constant.summary), got \(instance.summary)"),
                    expectedConstants: [constant]))
        }
        if let allowed = node.allowed, !allowed.contains(instance) {
            report("expected one of \(allowed.map(\.listed).joined(separator: ", ")), got \(instance.summary)")
        }
        if let minimum = node.minimum, let value = instance.numericValue, value < minimum {
            report("expected at least \(JSONValue.number(minimum).summary), got \(instance.summary)")
        }
        if case .object(let members) = instance {
            for name in node.required where members[name] == nil {
                report("missing required property \"\(name)\"")
            }
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                let place = path + "/" + JSONPointer.escape(key)
                if let property = node.properties[key] {
                    found += violations(of: value, against: property, at: place)
                } else if let additional = node.additionalProperties {
                    if additional.alwaysFails {
                        report("unexpected property \"\(key)\"", at: place)
                    } else {
                        found += violations(of: value, against: additional, at: place)
                    }
                }
            }
        }
        if case .array(let elements) = instance, let items = node.items {
            for (index, element) in elements.enumerated() {
                found += violations(of: element, against: items, at: "\(path)/\(index)")
            }
        }
        if let branches = node.oneOf {
            found += choose(instance, branches, at: path, exactlyOne: true)
        }
        if let branches = node.anyOf {
            found += choose(instance, branches, at: path, exactlyOne: false)
        }
        return found
    }

    /// `oneOf`/`anyOf`: nothing when the right number of branches fit; otherwise the best branch's findings.
    /// When every branch fails a `const` at the same place (an unknown message `type`), one finding lists
    /// all the values that would have been accepted there.
    private func choose(_ instance: JSONValue, _ branches: [SchemaNode], at path: String, exactlyOne: Bool) -> [Finding] {
        let results = branches.map { violations(of: instance, against: $0, at: path) }
        let fitting = results.filter(\.isEmpty).count
        if fitting == 1 || (fitting > 1 && !exactlyOne) { return [] }
        if fitting > 1 {
            return [Finding(violation: SchemaViolation(path: path, message: "matches \(fitting) alternatives of oneOf, expected exactly one"))]
        }
        let constantFailures = results.map { findings in findings.filter { $0.expectedConstants != nil } }
        if let first = constantFailures.first?.first, constantFailures.allSatisfy({ $0.contains { $0.violation.path == first.violation.path } }) {
            var expected: [JSONValue] = []
            for finding in constantFailures.joined() where finding.violation.path == first.violation.path {
                for value in finding.expectedConstants ?? [] where !expected.contains(value) { expected.append(value) }
            }
            let actual = instance.at(pointer: String(first.violation.path.dropFirst(path.count)))?.summary ?? "nothing"
            return [
                Finding(
                    violation: SchemaViolation(
                        path: first.violation.path, message: "expected one of \(expected.map(\.listed).joined(separator: ", ")), got \(actual)"),
                    expectedConstants: expected)
            ]
        }
        // Fewest failed consts first (the branch the message claims to be), then branches for this kind of
        // value (an object is not judged as `null`), then fewest findings; ties keep schema order.
        func rank(_ index: Int) -> (Int, Int, Int) {
            let wrongKind = results[index].contains { $0.isTypeMismatch && $0.violation.path == path }
            return (constantFailures[index].count, wrongKind ? 1 : 0, results[index].count)
        }
        let best = results.indices.min { rank($0) < rank($1) }
        return best.map { results[$0] } ?? []
    }
}

/// One compiled (sub)schema: the keywords it uses, with their values already checked.
private final class SchemaNode: Sendable {
    /// The boolean schema `false` (also how `additionalProperties: false` is kept).
    let alwaysFails: Bool
    let reference: String?
    let types: [String]?
    let constant: JSONValue?
    let allowed: [JSONValue]?
    let minimum: Double?
    let properties: [String: SchemaNode]
    let required: [String]
    let additionalProperties: SchemaNode?
    let items: SchemaNode?
    let oneOf: [SchemaNode]?
    let anyOf: [SchemaNode]?
    /// Every `$ref` in this subtree, checked against `$defs` once at init.
    let references: Set<String>

    /// Keywords that only describe: ignored when validating.
    private static let annotations: Set<String> = [
        "$schema", "$id", "$comment", "$defs", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
    ]
    private static let implemented: Set<String> = [
        "$ref", "type", "const", "enum", "minimum", "properties", "required", "additionalProperties", "items", "oneOf", "anyOf",
    ]
    private static let typeNames: Set<String> = ["null", "boolean", "object", "array", "number", "integer", "string"]

    private init(
        alwaysFails: Bool = false, reference: String? = nil, types: [String]? = nil, constant: JSONValue? = nil,
        allowed: [JSONValue]? = nil, minimum: Double? = nil, properties: [String: SchemaNode] = [:], required: [String] = [],
        additionalProperties: SchemaNode? = nil, items: SchemaNode? = nil, oneOf: [SchemaNode]? = nil,
        anyOf: [SchemaNode]? = nil
    ) {
        self.alwaysFails = alwaysFails
        self.reference = reference
        self.types = types
        self.constant = constant
        self.allowed = allowed
        self.minimum = minimum
        self.properties = properties
        self.required = required
        self.additionalProperties = additionalProperties
        self.items = items
        self.oneOf = oneOf
        self.anyOf = anyOf
        var references: Set<String> = reference.map { [$0] } ?? []
        for child in Array(properties.values) + [additionalProperties, items].compactMap({ $0 }) + (oneOf ?? []) + (anyOf ?? []) {
            references.formUnion(child.references)
        }
        self.references = references
    }

    static func compile(_ schema: JSONValue, at pointer: String) throws -> SchemaNode {
        switch schema {
        case .bool(let allowsAll): return allowsAll ? SchemaNode() : SchemaNode(alwaysFails: true)
        case .object(let keywords): return try compile(keywords, at: pointer)
        default: throw SchemaError(.invalidSchema, "\(pointer.isEmpty ? "(root)" : pointer): a schema must be an object or a boolean")
        }
    }

    private static func compile(_ keywords: JSONObject, at pointer: String) throws -> SchemaNode {
        func invalid(_ keyword: String, _ problem: String) -> SchemaError {
            SchemaError(.invalidSchema, "\(pointer)/\(keyword): \(problem)")
        }
        func child(_ value: JSONValue, _ suffix: String) throws -> SchemaNode { try compile(value, at: pointer + "/" + suffix) }
        func list(_ keyword: String) throws -> [SchemaNode]? {
            guard let value = keywords[keyword] else { return nil }
            guard case .array(let elements) = value, !elements.isEmpty else { throw invalid(keyword, "must be a non-empty array of schemas") }
            return try elements.enumerated().map { try child($0.element, "\(keyword)/\($0.offset)") }
        }
        for keyword in keywords.keys.sorted() where !annotations.contains(keyword) {
            guard implemented.contains(keyword) else {
                throw SchemaError(.unsupportedKeyword, "\(pointer)/\(keyword): this validator does not implement \(keyword)")
            }
        }
        var reference: String?
        if let value = keywords["$ref"] {
            guard case .string(let text) = value else { throw invalid("$ref", "must be a string") }
            guard text == "#" || (text.hasPrefix("#/$defs/") && !text.dropFirst("#/$defs/".count).contains("/")) else {
                throw SchemaError(.unsupportedKeyword, "\(pointer)/$ref: only \"#\" and \"#/$defs/<name>\" are supported, not \(text)")
            }
            reference = text
        }
        var types: [String]?
        switch keywords["type"] {
        case nil: break
        case .string(let name)?: types = [name]
        case .array(let names)?:
            types = names.compactMap { if case .string(let name) = $0 { name } else { nil } }
            if types?.count != names.count || names.isEmpty { throw invalid("type", "must be a type name or a non-empty array of them") }
        default: throw invalid("type", "must be a type name or an array of them")
        }
        if let unknown = types?.first(where: { !typeNames.contains($0) }) { throw invalid("type", "unknown type \(unknown)") }
        var allowed: [JSONValue]?
        if let value = keywords["enum"] {
            guard case .array(let values) = value else { throw invalid("enum", "must be an array") }
            allowed = values
        }
        var minimum: Double?
        if let value = keywords["minimum"] {
            guard let number = value.numericValue else { throw invalid("minimum", "must be a number") }
            minimum = number
        }
        var properties: [String: SchemaNode] = [:]
        if let value = keywords["properties"] {
            guard case .object(let members) = value else { throw invalid("properties", "must be an object") }
            for (name, schema) in members { properties[name] = try child(schema, "properties/" + JSONPointer.escape(name)) }
        }
        var required: [String] = []
        if let value = keywords["required"] {
            guard case .array(let names) = value else { throw invalid("required", "must be an array of strings") }
            required = try names.map { name in
                guard case .string(let text) = name else { throw invalid("required", "must be an array of strings") }
                return text
            }
        }
        return SchemaNode(
            reference: reference, types: types, constant: keywords["const"], allowed: allowed, minimum: minimum, properties: properties,
            required: required, additionalProperties: try keywords["additionalProperties"].map { try child($0, "additionalProperties") },
            items: try keywords["items"].map { try child($0, "items") }, oneOf: try list("oneOf"), anyOf: try list("anyOf"))
    }
}

/// How the validator's messages show values.
extension JSONValue {
    fileprivate func matches(_ type: String) -> Bool {
        switch (type, self) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object), ("integer", .integer),
            ("number", .integer), ("number", .number):
            true
        case ("integer", .number(let value)):
            value.rounded() == value && value.isFinite
        default:
            false
        }
    }

    /// The value as a message shows it: scalars as JSON (long strings cut), containers by kind.
    fileprivate var summary: String {
        switch self {
        case .null, .bool, .integer, .number: scalarText ?? "null"
        case .string(let text): Self.quoted(text.count > 60 ? String(text.prefix(57)) + "…" : text)
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// How a permitted value is listed after "expected one of": strings bare, as the reader types them.
    fileprivate var listed: String {
        if case .string(let text) = self { return text }
        return summary
    }
}
