import _ForgeSupport

// Encodes an exemplar value and records the JSON shape its Codable conformance produces, instead of
// the JSON itself. The schema then follows the models: a new property appears without anyone editing it.
//
// What is learnt from encoding:
// - a key is `required` when encoded with `encode`, optional when with `encodeIfPresent` (what synthesized
//   Codable does for Optional properties) — so exemplars must set every optional;
// - an array's `items` is the shape of its elements — so exemplars must hold at least one, all alike;
// - `[String: X]` encodes keyed exactly like a struct, so dictionaries are told apart by type:
//   `Dictionary where Key == String` conforms to `SchemaDictionary` below;
// - String enums are listed by case through `SchemaEnumeration` (CaseIterable + String raw values).

/// The JSON shape of one encoded value.
indirect enum Shape: Equatable {
    case string, integer, number, boolean
    /// A named String enum and all its raw values, in declaration order.
    case enumeration(name: String, cases: [String])
    case array(items: Shape)
    /// A string-keyed dictionary: any key, values of one shape.
    case dictionary(values: Shape)
    /// Any JSON object (``JSONValue``): a document recorded as it is, such as a scenario.
    case anyObject
    /// A keyed container; `name` is the Swift type's, nil for nested containers.
    case object(name: String?, properties: [String: Shape], required: Set<String>)
}

/// A String enum the schema lists by case rather than as free text. `package` so the conformance
/// models (another module) can list theirs.
package protocol SchemaEnumeration {
    static var schemaCases: [String] { get }
}

extension SchemaEnumeration where Self: CaseIterable & RawRepresentable, RawValue == String {
    package static var schemaCases: [String] { allCases.map(\.rawValue) }
}

/// A type filed under `$defs` by another name than its bare Swift one, because nested types share names
/// (`HarnessReply.Verdict` and `Verdict` both print as "Verdict" and would collide).
package protocol SchemaNamed {
    static var schemaName: String { get }
}

extension Verdict: SchemaEnumeration {}
extension Severity: SchemaEnumeration {}

/// Marks `[String: X]`, which encodes keyed like a struct but allows any key.
protocol SchemaDictionary {}

extension Dictionary: SchemaDictionary where Key == String {}

enum ShapeRecorder {
    /// The shape `value` encodes to. Throws `EncodingError.invalidValue` where the exemplar leaves a gap
    /// (a nil optional, an empty collection, elements of different shapes).
    static func shape<T: Encodable>(of value: T, at codingPath: [any CodingKey] = []) throws -> Shape {
        let typeName = (T.self as? any SchemaNamed.Type)?.schemaName ?? String(describing: T.self)
        switch value {
        case is String: return .string
        case is Bool: return .boolean
        case is any BinaryInteger: return .integer
        case is any BinaryFloatingPoint: return .number
        case is JSONValue: return .anyObject
        default: break
        }
        if let enumeration = value as? any SchemaEnumeration {
            return .enumeration(name: typeName, cases: type(of: enumeration).schemaCases)
        }
        let encoder = ShapeEncoder(
            codingPath: codingPath, typeName: typeName, isDictionary: value is any SchemaDictionary)
        try value.encode(to: encoder)
        return try encoder.shape()
    }

    static func exemplarGap(_ codingPath: [any CodingKey], _ problem: String) -> EncodingError {
        let path = codingPath.keyPathText
        return EncodingError.invalidValue(
            path, .init(codingPath: codingPath, debugDescription: "exemplar gap at \(path): \(problem)"))
    }
}

/// A value whose shape is known now, or a child encoder still being written to (nested containers).
private enum PendingShape {
    case known(Shape)
    case encoder(ShapeEncoder)

    func resolve() throws -> Shape {
        switch self {
        case .known(let shape): shape
        case .encoder(let encoder): try encoder.shape()
        }
    }
}

private final class KeyedRecording {
    var members: [String: PendingShape] = [:]
    var required: Set<String> = []
}

private final class UnkeyedRecording {
    var elements: [PendingShape] = []
}

private final class SingleRecording {
    var value: PendingShape?
}

/// Records which container the value asked for and what went into it.
private final class ShapeEncoder: Encoder {
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any] = [:]
    private let typeName: String?
    private let isDictionary: Bool
    private var recording: Recording?

    private enum Recording {
        case keyed(KeyedRecording)
        case unkeyed(UnkeyedRecording)
        case single(SingleRecording)
    }

    init(codingPath: [any CodingKey], typeName: String?, isDictionary: Bool = false) {
        self.codingPath = codingPath
        self.typeName = typeName
        self.isDictionary = isDictionary
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let keyed: KeyedRecording
        if case .keyed(let existing) = recording { keyed = existing } else { keyed = KeyedRecording() }
        recording = .keyed(keyed)
        return KeyedEncodingContainer(KeyedShapeContainer<Key>(codingPath: codingPath, recording: keyed))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let unkeyed = UnkeyedRecording()
        recording = .unkeyed(unkeyed)
        return UnkeyedShapeContainer(codingPath: codingPath, recording: unkeyed)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        let single = SingleRecording()
        recording = .single(single)
        return SingleShapeContainer(codingPath: codingPath, recording: single)
    }

    func shape() throws -> Shape {
        switch recording {
        case nil:
            throw ShapeRecorder.exemplarGap(codingPath, "encoded nothing")
        case .single(let single):
            guard let value = single.value else { throw ShapeRecorder.exemplarGap(codingPath, "encoded nothing") }
            return try value.resolve()
        case .unkeyed(let unkeyed):
            return .array(items: try uniformShape(of: unkeyed.elements))
        case .keyed(let keyed) where isDictionary:
            return .dictionary(values: try uniformShape(of: keyed.members.sorted { $0.key < $1.key }.map(\.value)))
        case .keyed(let keyed):
            return .object(
                name: typeName, properties: try keyed.members.mapValues { try $0.resolve() }, required: keyed.required)
        }
    }

    /// The one shape all elements share; a collection needs at least one element to have a known shape.
    private func uniformShape(of elements: [PendingShape]) throws -> Shape {
        let shapes = try elements.map { try $0.resolve() }
        guard let first = shapes.first else {
            throw ShapeRecorder.exemplarGap(codingPath, "empty collection; give it one element")
        }
        guard shapes.allSatisfy({ $0 == first }) else {
            throw ShapeRecorder.exemplarGap(codingPath, "elements differ in shape")
        }
        return first
    }
}

private struct KeyedShapeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let codingPath: [any CodingKey]
    let recording: KeyedRecording

    private func record<T: Encodable>(_ value: T, _ key: Key, required: Bool = true) throws {
        recording.members[key.stringValue] = .known(try ShapeRecorder.shape(of: value, at: codingPath + [key]))
        if required { recording.required.insert(key.stringValue) }
    }

    private func recordOptional<T: Encodable>(_ value: T?, _ key: Key) throws {
        guard let value else { throw ShapeRecorder.exemplarGap(codingPath + [key], "optional is nil; set it") }
        try record(value, key, required: false)
    }

    private func child(_ key: any CodingKey) -> ShapeEncoder {
        let encoder = ShapeEncoder(codingPath: codingPath + [key], typeName: nil)
        recording.members[key.stringValue] = .encoder(encoder)
        recording.required.insert(key.stringValue)
        return encoder
    }

    mutating func encodeNil(forKey key: Key) throws {
        throw ShapeRecorder.exemplarGap(codingPath + [key], "explicit null; set a value")
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try record(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try record(value, key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try record(value, key) }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try recordOptional(value, key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try recordOptional(value, key) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        child(key).container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        child(key).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { child(PathKey(stringValue: "super")) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { child(key) }
}

private struct UnkeyedShapeContainer: UnkeyedEncodingContainer {
    let codingPath: [any CodingKey]
    let recording: UnkeyedRecording
    var count: Int { recording.elements.count }

    /// The path of the next element, as `[0]`, `[1]`… under this container.
    private var nextPath: [any CodingKey] { codingPath + [PathKey(intValue: count)] }

    private func record<T: Encodable>(_ value: T) throws {
        recording.elements.append(.known(try ShapeRecorder.shape(of: value, at: nextPath)))
    }

    private func child() -> ShapeEncoder {
        let encoder = ShapeEncoder(codingPath: nextPath, typeName: nil)
        recording.elements.append(.encoder(encoder))
        return encoder
    }

    mutating func encodeNil() throws { throw ShapeRecorder.exemplarGap(nextPath, "explicit null; set a value") }
    mutating func encode(_ value: Bool) throws { try record(value) }
    mutating func encode(_ value: String) throws { try record(value) }
    mutating func encode(_ value: Double) throws { try record(value) }
    mutating func encode(_ value: Float) throws { try record(value) }
    mutating func encode(_ value: Int) throws { try record(value) }
    mutating func encode(_ value: Int8) throws { try record(value) }
    mutating func encode(_ value: Int16) throws { try record(value) }
    mutating func encode(_ value: Int32) throws { try record(value) }
    mutating func encode(_ value: Int64) throws { try record(value) }
    mutating func encode(_ value: UInt) throws { try record(value) }
    mutating func encode(_ value: UInt8) throws { try record(value) }
    mutating func encode(_ value: UInt16) throws { try record(value) }
    mutating func encode(_ value: UInt32) throws { try record(value) }
    mutating func encode(_ value: UInt64) throws { try record(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try record(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        child().container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { child().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { child() }
}

private struct SingleShapeContainer: SingleValueEncodingContainer {
    let codingPath: [any CodingKey]
    let recording: SingleRecording

    private func record<T: Encodable>(_ value: T) throws {
        recording.value = .known(try ShapeRecorder.shape(of: value, at: codingPath))
    }

    mutating func encodeNil() throws { throw ShapeRecorder.exemplarGap(codingPath, "explicit null; set a value") }
    mutating func encode(_ value: Bool) throws { try record(value) }
    mutating func encode(_ value: String) throws { try record(value) }
    mutating func encode(_ value: Double) throws { try record(value) }
    mutating func encode(_ value: Float) throws { try record(value) }
    mutating func encode(_ value: Int) throws { try record(value) }
    mutating func encode(_ value: Int8) throws { try record(value) }
    mutating func encode(_ value: Int16) throws { try record(value) }
    mutating func encode(_ value: Int32) throws { try record(value) }
    mutating func encode(_ value: Int64) throws { try record(value) }
    mutating func encode(_ value: UInt) throws { try record(value) }
    mutating func encode(_ value: UInt8) throws { try record(value) }
    mutating func encode(_ value: UInt16) throws { try record(value) }
    mutating func encode(_ value: UInt32) throws { try record(value) }
    mutating func encode(_ value: UInt64) throws { try record(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try record(value) }
}

/// A coding-path entry this file makes up: "super" for `superEncoder()`, or an array index.
private struct PathKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }
    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}
