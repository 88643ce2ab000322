#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension JSONValue {
    /// `value` as its `Encodable` conformance writes it, members in the order it encodes them: for a synthesized
    /// conformance, the order the stored properties are declared in. So a model type is written in the order its
    /// declaration reads, by the package's one serializer (``serialized(pretty:)``), which Foundation's `JSONEncoder`
    /// does not promise: on Linux its members come out in hash order, different from one value to the next.
    ///
    /// An optional that is nil is left out (a synthesized conformance uses `encodeIfPresent`); `encodeNil` writes
    /// `null`. Integers of any width are ``JSONValue/integer(_:)`` (an unsigned one past `Int64.max` is an error),
    /// floating-point ones ``JSONValue/number(_:)`` (NaN and the infinities are errors, as JSON cannot carry them). A
    /// value that encodes nothing is `{}` inside another and an error at the top. `Date` and `Data` are refused rather
    /// than written as their own conformances would (seconds since 2001, an array of bytes): give a date as the number
    /// or text the format wants. Never traps: what `JSONEncoder` would stop the process for (a second value in one
    /// container, a container of another kind asked for where one was begun) is thrown.
    public init(encoding value: some Encodable) throws(EncodingError) {
        let encoding = JSONValueEncoding()
        let root = JSONValueEncoding.Node()
        do {
            try encoding.encode(value, into: root, codingPath: [])
        } catch let error as EncodingError {
            throw error
        } catch {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(error)", underlyingError: error))
        }
        if let failure = encoding.failure { throw failure }
        guard let built = root.value else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(type(of: value)) encoded nothing"))
        }
        self = built
    }
}

/// One encoding in progress: the first misuse a container could not throw (``failure``), and the way into a value.
private final class JSONValueEncoding {
    /// A place in the value being built, shared by the encoder and the containers that write into it.
    final class Node {
        enum Kind { case empty, scalar, object, array }
        private(set) var kind = Kind.empty
        private var scalar = JSONValue.null
        /// An object's members in the order encoded; a key encoded twice keeps its first place and its last value.
        private var members: [(key: String, node: Node)] = []
        private var elements: [Node] = []

        var count: Int { elements.count }

        /// What was written here: nil when nothing was.
        var value: JSONValue? {
            switch kind {
            case .empty: nil
            case .scalar: scalar
            case .object: .object(JSONObject(members.map { ($0.key, $0.node.value ?? .object([])) }))
            case .array: .array(elements.map { $0.value ?? .object([]) })
            }
        }

        /// Makes this node `kind`, unless it already holds something of another kind.
        func become(_ wanted: Kind) -> Bool {
            if kind == .empty { kind = wanted }
            return kind == wanted
        }

        func set(_ value: JSONValue) -> Bool {
            guard kind == .empty else { return false }
            kind = .scalar
            scalar = value
            return true
        }

        func member(_ key: String) -> Node {
            let node = Node()
            members.append((key, node))
            return node
        }

        func element() -> Node {
            let node = Node()
            elements.append(node)
            return node
        }
    }

    private(set) var failure: EncodingError?

    /// Notes a misuse from a place that cannot throw; the first one is what the encoding throws.
    func fail(_ what: String, codingPath: [any CodingKey]) {
        if failure == nil { failure = .invalidValue(what, .init(codingPath: codingPath, debugDescription: what)) }
    }

    func encode(_ value: some Encodable, into node: Node, codingPath: [any CodingKey]) throws {
        if value is Date || value is Data {
            throw EncodingError.invalidValue(
                value, .init(codingPath: codingPath, debugDescription: "\(type(of: value)) has no one JSON form: encode the number or text the format wants"))
        }
        try value.encode(to: Encoder(encoding: self, node: node, codingPath: codingPath))
    }

    func scalar(_ value: JSONValue, into node: Node, codingPath: [any CodingKey]) throws {
        guard node.set(value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "a second value where one was encoded"))
        }
    }

    func integer<T: BinaryInteger>(_ value: T, codingPath: [any CodingKey]) throws -> JSONValue {
        guard let integer = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit a 64-bit signed integer"))
        }
        return .integer(integer)
    }

    func number<T: BinaryFloatingPoint>(_ value: T, codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) is not a JSON number"))
        }
        return .number(Double(value))
    }

    /// An index as a coding key, for paths in errors.
    struct Index: CodingKey {
        let intValue: Int?
        var stringValue: String { intValue.map(String.init) ?? "" }
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { return nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    /// `super`, the key `superEncoder()` writes under, as `JSONEncoder` names it.
    struct Super: CodingKey {
        var stringValue: String { "super" }
        var intValue: Int? { nil }
        init() {}
        init?(stringValue: String) { guard stringValue == "super" else { return nil } }
        init?(intValue: Int) { return nil }
    }

    struct Encoder: Swift.Encoder {
        let encoding: JSONValueEncoding
        let node: Node
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(KeyedContainer<Key>(encoding: encoding, node: object(node), codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer { UnkeyedContainer(encoding: encoding, node: array(node), codingPath: codingPath) }

        func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueContainer(encoding: encoding, node: node, codingPath: codingPath) }

        /// `node` as an object, or (noted as a failure) a detached one when it holds something else.
        private func object(_ node: Node) -> Node {
            if node.become(.object) { return node }
            encoding.fail("a keyed container where something else was encoded", codingPath: codingPath)
            return Node()
        }

        private func array(_ node: Node) -> Node {
            if node.become(.array) { return node }
            encoding.fail("an unkeyed container where something else was encoded", codingPath: codingPath)
            return Node()
        }
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoding: JSONValueEncoding
        let node: Node
        let codingPath: [any CodingKey]

        private func scalar(_ value: JSONValue, _ key: Key) throws {
            try encoding.scalar(value, into: node.member(key.stringValue), codingPath: codingPath + [key])
        }

        mutating func encodeNil(forKey key: Key) throws { try scalar(.null, key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { try scalar(.bool(value), key) }
        mutating func encode(_ value: String, forKey key: Key) throws { try scalar(.string(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try scalar(try encoding.number(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { try scalar(try encoding.number(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { try scalar(try encoding.integer(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try scalar(try encoding.integer(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try scalar(try encoding.integer(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try scalar(try encoding.integer(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try scalar(.integer(value), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try scalar(try encoding.integer(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try scalar(try encoding.integer(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try scalar(try encoding.integer(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try scalar(try encoding.integer(value, codingPath: codingPath + [key]), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try scalar(try encoding.integer(value, codingPath: codingPath + [key]), key) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try encoding.encode(value, into: node.member(key.stringValue), codingPath: codingPath + [key])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            Encoder(encoding: encoding, node: node.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Encoder(encoding: encoding, node: node.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
        }

        mutating func superEncoder() -> any Swift.Encoder { Encoder(encoding: encoding, node: node.member("super"), codingPath: codingPath + [Super()]) }

        mutating func superEncoder(forKey key: Key) -> any Swift.Encoder {
            Encoder(encoding: encoding, node: node.member(key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let encoding: JSONValueEncoding
        let node: Node
        let codingPath: [any CodingKey]
        var count: Int { node.count }

        /// The path of the next element.
        private var next: [any CodingKey] { codingPath + [Index(node.count)] }

        private func scalar(_ value: JSONValue) throws { try encoding.scalar(value, into: node.element(), codingPath: next) }

        mutating func encodeNil() throws { try scalar(.null) }
        mutating func encode(_ value: Bool) throws { try scalar(.bool(value)) }
        mutating func encode(_ value: String) throws { try scalar(.string(value)) }
        mutating func encode(_ value: Double) throws { try scalar(try encoding.number(value, codingPath: next)) }
        mutating func encode(_ value: Float) throws { try scalar(try encoding.number(value, codingPath: next)) }
        mutating func encode(_ value: Int) throws { try scalar(try encoding.integer(value, codingPath: next)) }
        mutating func encode(_ value: Int8) throws { try scalar(try encoding.integer(value, codingPath: next)) }
        mutating func encode(_ value: Int16) throws { try scalar(try encoding.integer(value, codingPath: next)) }
        mutating func encode(_ value: Int32) throws { try scalar(try encoding.integer(value, codingPath: next)) }
        mutating func encode(_ value: Int64) throws { try scalar(.integer(value)) }
        mutating func encode(_ value: UInt) throws { try scalar(try encoding.integer(value, codingPath: next)) }
        mutating func encode(_ value: UInt8) throws { try scalar(try encoding.integer(value, codingPath: next)) }
        mutating func encode(_ value: UInt16) throws { try scalar(try encoding.integer(value, codingPath: next)) }
        mutating func encode(_ value: UInt32) throws { try scalar(try encoding.integer(value, codingPath: next)) }
        mutating func encode(_ value: UInt64) throws { try scalar(try encoding.integer(value, codingPath: next)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let path = next
            try encoding.encode(value, into: node.element(), codingPath: path)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let path = next
            return Encoder(encoding: encoding, node: node.element(), codingPath: path).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let path = next
            return Encoder(encoding: encoding, node: node.element(), codingPath: path).unkeyedContainer()
        }

        mutating func superEncoder() -> any Swift.Encoder {
            let path = next
            return Encoder(encoding: encoding, node: node.element(), codingPath: path)
        }
    }

    struct SingleValueContainer: SingleValueEncodingContainer {
        let encoding: JSONValueEncoding
        let node: Node
        let codingPath: [any CodingKey]

        private func scalar(_ value: JSONValue) throws { try encoding.scalar(value, into: node, codingPath: codingPath) }

        mutating func encodeNil() throws { try scalar(.null) }
        mutating func encode(_ value: Bool) throws { try scalar(.bool(value)) }
        mutating func encode(_ value: String) throws { try scalar(.string(value)) }
        mutating func encode(_ value: Double) throws { try scalar(try encoding.number(value, codingPath: codingPath)) }
        mutating func encode(_ value: Float) throws { try scalar(try encoding.number(value, codingPath: codingPath)) }
        mutating func encode(_ value: Int) throws { try scalar(try encoding.integer(value, codingPath: codingPath)) }
        mutating func encode(_ value: Int8) throws { try scalar(try encoding.integer(value, codingPath: codingPath)) }
        mutating func encode(_ value: Int16) throws { try scalar(try encoding.integer(value, codingPath: codingPath)) }
        mutating func encode(_ value: Int32) throws { try scalar(try encoding.integer(value, codingPath: codingPath)) }
        mutating func encode(_ value: Int64) throws { try scalar(.integer(value)) }
        mutating func encode(_ value: UInt) throws { try scalar(try encoding.integer(value, codingPath: codingPath)) }
        mutating func encode(_ value: UInt8) throws { try scalar(try encoding.integer(value, codingPath: codingPath)) }
        mutating func encode(_ value: UInt16) throws { try scalar(try encoding.integer(value, codingPath: codingPath)) }
        mutating func encode(_ value: UInt32) throws { try scalar(try encoding.integer(value, codingPath: codingPath)) }
        mutating func encode(_ value: UInt64) throws { try scalar(try encoding.integer(value, codingPath: codingPath)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            guard node.kind == .empty else {
                throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "a second value where one was encoded"))
            }
            try encoding.encode(value, into: node, codingPath: codingPath)
        }
    }
}
