/// A value of a JSON document being read into typed fields (a scenario spec). Every error names the value's key
/// path in the style of StoreModel's `ForgeError.fields` (`purchases[0].quantity`) and what the key takes (its values, its
/// range), never Codable's text ("Cannot initialize Kind from invalid String value…", "not valid JSON" for a
/// number too large).
public struct JSONField: Sendable {
    public let value: JSONValue
    /// `purchases[0].quantity`; empty for the document itself.
    public let keyPath: String

    public init(_ value: JSONValue, keyPath: String = "") {
        self.value = value
        self.keyPath = keyPath
    }

    /// How a message names this value: `'purchases[0].quantity'`, or "the document".
    public var name: String { keyPath.isEmpty ? "the document" : "'\(keyPath)'" }

    /// The members of an object; a key not in `known` is an error (a typo must not be a silent default).
    public func object(known: [String]) throws(JSONFieldError) -> JSONFields {
        guard case .object(let members) = value else { throw mismatch(.wrongType, "must be an object") }
        if let unknown = members.keys.first(where: { !known.contains($0) }) {
            throw JSONFieldError(
                .unknownKey, "unknown key '\(unknown)' in \(keyPath.isEmpty ? "the document" : name); known keys: \(known.joined(separator: ", "))",
                keyPath: keyPath)
        }
        return JSONFields(members: members, keyPath: keyPath)
    }

    /// The members of an object whose format another tool writes and extends (Xcode's `.storekit`): keys this
    /// reader does not know are passed over.
    public func object() throws(JSONFieldError) -> JSONFields {
        guard case .object(let members) = value else { throw mismatch(.wrongType, "must be an object") }
        return JSONFields(members: members, keyPath: keyPath)
    }

    /// The elements of an array, each with its place (`purchases[1]`).
    public func array() throws(JSONFieldError) -> [JSONField] {
        guard case .array(let elements) = value else { throw mismatch(.wrongType, "must be an array") }
        return elements.enumerated().map { JSONField($1, keyPath: "\(keyPath)[\($0)]") }
    }

    public func string() throws(JSONFieldError) -> String {
        guard case .string(let text) = value else { throw mismatch(.wrongType, "must be a string") }
        return text
    }

    /// A string `accepts` takes; `expected` says what it must be ("a date like 2025-01-31T12:00:00Z").
    public func string(expected: String, where accepts: (String) -> Bool) throws(JSONFieldError) -> String {
        let text = try string()
        guard accepts(text) else { throw JSONFieldError(.invalidValue, "\(name) is \(JSONValue.quoted(text)), not \(expected)", keyPath: keyPath) }
        return text
    }

    public func bool() throws(JSONFieldError) -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(.wrongType, "must be true or false") }
        return flag
    }

    /// An integer in `range`: `1.5`, `1e20` and anything `Value` cannot hold are out of range, never trapped on.
    public func integer<Value: FixedWidthInteger>(in range: ClosedRange<Value>) throws(JSONFieldError) -> Value {
        switch value {
        case .integer(let number):
            if let exact = Value(exactly: number), range.contains(exact) { return exact }
        case .number:
            break
        default:
            throw mismatch(.wrongType, range.requirement)
        }
        throw mismatch(.outOfRange, range.requirement)
    }

    /// One of a vocabulary's raw values, e.g. a timeline event's kind; the error lists every one.
    public func oneOf<Value: RawRepresentable & CaseIterable>(_: Value.Type) throws(JSONFieldError) -> Value where Value.RawValue == String {
        let values = Value.allCases.map(\.rawValue).joined(separator: ", ")
        guard case .string(let text) = value else { throw mismatch(.wrongType, "must be one of \(values)") }
        guard let known = Value(rawValue: text) else {
            throw JSONFieldError(.invalidValue, "\(name) is \(JSONValue.quoted(text)), not one of \(values)", keyPath: keyPath)
        }
        return known
    }

    /// "'quantity' must be …, not 1.5": the value as JSON writes it (arrays and objects by kind, so a message stays one line).
    private func mismatch(_ code: JSONFieldError.Code, _ requirement: String) -> JSONFieldError {
        let shown: String =
            switch value {
            case .array: "an array"
            case .object: "an object"
            default: value.serialized(pretty: false)
            }
        return JSONFieldError(code, "\(name) \(requirement), not \(shown)", keyPath: keyPath)
    }
}

/// The members of an object being read (``JSONField/object(known:)``).
public struct JSONFields: Sendable {
    let members: JSONObject
    let keyPath: String

    /// The member, or nil when it is absent or `null` (as an optional field reads).
    public subscript(key: String) -> JSONField? {
        guard let value = members[key], value != .null else { return nil }
        return JSONField(value, keyPath: keyPath.isEmpty ? key : "\(keyPath).\(key)")
    }

    public func required(_ key: String) throws(JSONFieldError) -> JSONField {
        guard let field = self[key] else {
            let path = keyPath.isEmpty ? key : "\(keyPath).\(key)"
            throw JSONFieldError(.missing, "'\(path)' is required", keyPath: path)
        }
        return field
    }
}

/// Why a JSON value is not what its key takes; the message names the key path (``keyPath``).
public struct JSONFieldError: CodedError, Sendable {
    public enum Code: String, Hashable, Sendable, CustomStringConvertible {
        case wrongType, invalidValue, outOfRange, unknownKey, missing
        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String
    public let keyPath: String

    public init(_ code: Code, _ message: String, keyPath: String) {
        self.code = code
        self.message = message
        self.keyPath = keyPath
    }
}

extension ClosedRange where Bound: BinaryInteger {
    /// "must be an integer between 0 and 10000": the words of every range error of a number, from a file or a flag.
    public var requirement: String { "must be an integer between \(lowerBound) and \(upperBound)" }
}
