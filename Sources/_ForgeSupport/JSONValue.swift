#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The package's one JSON value: what it renders (verifyReceipt bodies, `inspect --json`, reports), what it
/// reads when the shape is not known in advance (HTTP answers, mapping templates) and what the schema
/// validator checks.
///
/// Objects keep their members in order, so written JSON is stable and reads in a sensible order
/// (Foundation's `JSONSerialization` reorders keys and writes numbers as it pleases). Integers are kept
/// apart from other numbers, and both apart from booleans, because JSON Schema's `integer` and
/// verifyReceipt's numeric `status` need that distinction. Equality is JSON's: members in any order,
/// `1` equal to `1.0`.
public indirect enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// A member of an object by key; nil for anything else.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The members when this is an object.
    public var objectValue: JSONObject? {
        if case .object(let members) = self { members } else { nil }
    }

    /// The elements when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { elements } else { nil }
    }

    /// The text when this is a string.
    public var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// The value when this is an integer (`3`, not `3.0` or `"3"`).
    public var integerValue: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// Either kind of number as a `Double`; nil for everything else.
    public var numericValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    /// A scalar as a reader writes it: `21003` (not `21003.0`), `true`, `text` unquoted; nil for `null`, arrays
    /// and objects.
    public var scalarText: String? {
        switch self {
        case .bool(let flag): flag ? "true" : "false"
        case .integer(let value): String(value)
        case .number(let value): Self.numberText(value)
        case .string(let text): text
        case .null, .array, .object: nil
        }
    }

    /// The value at an RFC 6901 pointer ("/result/0/status"); "" is the value itself.
    public func at(pointer: String) -> JSONValue? {
        guard let tokens = JSONPointer.tokens(pointer) else { return nil }
        var current = self
        for token in tokens {
            switch current {
            case .object(let members):
                guard let next = members[token] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Int(token), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let left), .bool(let right)): left == right
        case (.string(let left), .string(let right)): left == right
        case (.array(let left), .array(let right)): left == right
        case (.object(let left), .object(let right)): left == right
        case (.integer(let left), .integer(let right)): left == right
        default:
            if let left = lhs.numericValue, let right = rhs.numericValue { left == right } else { false }
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let flag): hasher.combine(flag)
        case .integer, .number: hasher.combine(numericValue)
        case .string(let text): hasher.combine(text)
        case .array(let elements): hasher.combine(elements)
        case .object(let members): hasher.combine(members)
        }
    }

    /// `value` as JSON writes it: integral values without a fraction, non-finite ones (which JSON cannot
    /// carry) as `null`.
    static func numberText(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        return value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// A JSON object's members in order. Setting a key that is present replaces its value in place, so a key
/// appears at most once.
///
/// Lookups are constant time once an object has more than ``indexThreshold`` members: a key → position
/// index is kept beside the members, so parsing an object of n keys is linear, not quadratic (a hostile
/// body of a million keys is read in about a second, not hours). Small objects, nearly all of them, scan.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    public private(set) var members: [(key: String, value: JSONValue)] = []
    /// Each key's position in ``members``; nil while the object is small enough to scan.
    private var positions: [String: Int]?

    /// Members up to which a lookup scans instead of keeping an index (scanning a few short keys is cheaper
    /// than hashing, and most objects a receipt or JWS renders are this small).
    static let indexThreshold = 16

    public init() {}

    /// Members in the order given; a repeated key keeps its first place and its last value.
    public init(_ members: some Sequence<(String, JSONValue)>) {
        for (key, value) in members { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }

    /// `[("status", .integer(0)), ("receipt", …)]`: the same as a dictionary literal, for members built up as pairs.
    public init(arrayLiteral elements: (String, JSONValue)...) { self.init(elements) }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> { members.makeIterator() }

    public var isEmpty: Bool { members.isEmpty }
    public var count: Int { members.count }
    public var keys: [String] { members.map(\.key) }

    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            switch (position(of: key), newValue) {
            case (let index?, let value?): members[index].value = value
            case (let index?, nil):
                members.remove(at: index)
                if positions != nil { reindex() }
            case (nil, let value?): appendNew(key, value)
            case (nil, nil): break
            }
        }
    }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex { $0.key == key }
    }

    /// Appends a member whose key is not present.
    private mutating func appendNew(_ key: String, _ value: JSONValue) {
        members.append((key, value))
        if positions != nil {
            positions?[key] = members.count - 1
        } else if members.count > Self.indexThreshold {
            reindex()
        }
    }

    private mutating func reindex() {
        guard members.count > Self.indexThreshold else {
            positions = nil
            return
        }
        var index: [String: Int] = [:]
        index.reserveCapacity(members.count)
        for (position, member) in members.enumerated() { index[member.key] = position }
        positions = index
    }

    /// Adds (or replaces) one member: `object.append(("status", .integer(0)))`.
    public mutating func append(_ member: (String, JSONValue)) { self[member.0] = member.1 }

    public mutating func append(contentsOf members: some Sequence<(String, JSONValue)>) {
        for member in members { append(member) }
    }

    public static func += (object: inout JSONObject, members: some Sequence<(String, JSONValue)>) { object.append(contentsOf: members) }
    public static func += (object: inout JSONObject, other: JSONObject) { object.append(contentsOf: other.members.map { ($0.key, $0.value) }) }

    /// Members whose transformed value is not nil, in order.
    public func compactMapValues(_ transform: (JSONValue) throws -> JSONValue?) rethrows -> JSONObject {
        var result = JSONObject()
        for (key, value) in members {
            if let mapped = try transform(value) { result.appendNew(key, mapped) }
        }
        return result
    }

    /// Order does not matter: JSON objects are unordered.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.count == rhs.count && lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        // Order-independent: the members' own hashes summed.
        var sum = 0
        for (key, value) in members {
            var member = Hasher()
            member.combine(key)
            member.combine(value)
            sum = sum &+ member.finalize()
        }
        hasher.combine(sum)
    }
}

/// RFC 6901 pointers: writing a key as a token, and splitting a pointer into keys.
public enum JSONPointer {
    /// `a/b~c` → `a~1b~0c`.
    public static func escape(_ key: String) -> String {
        key.replacing("~", with: "~0").replacing("/", with: "~1")
    }

    public static func unescape(_ token: some StringProtocol) -> String {
        String(token).replacing("~1", with: "/").replacing("~0", with: "~")
    }

    /// The keys a pointer names, in order: [] for "", nil for a pointer that does not start with "/".
    public static func tokens(_ pointer: String) -> [String]? {
        guard !pointer.isEmpty else { return [] }
        guard pointer.hasPrefix("/") else { return nil }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { unescape($0) }
    }
}
