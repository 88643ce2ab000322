import _ForgeSupport
/// `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
///
/// `value` is kept as the exact bytes inside the OCTET STRING: a complete DER TLV for strings, dates
/// and numbers, raw bytes for the opaque value and hash, a nested SET for in-app purchases.
public struct ReceiptAttribute: Sendable, Hashable {
    public var type: Int
    public var version: Int
    public var value: [UInt8]

    public init(type: Int, version: Int = 1, value: [UInt8]) {
        self.type = type
        self.version = version
        self.value = value
    }

    public static func utf8(_ type: Int, _ text: String, version: Int = 1) -> Self {
        .init(type: type, version: version, value: ASN1Value.utf8String(text))
    }
    public static func ia5(_ type: Int, _ text: String, version: Int = 1) -> Self {
        .init(type: type, version: version, value: ASN1Value.ia5String(text))
    }
    public static func integer(_ type: Int, _ number: Int64, version: Int = 1) -> Self {
        .init(type: type, version: version, value: ASN1Value.integer(number))
    }
    public static func raw(_ type: Int, _ bytes: [UInt8], version: Int = 1) -> Self {
        .init(type: type, version: version, value: bytes)
    }

    /// The value read as a single TLV of the given tag; nil when it is not exactly that.
    public func innerContent(_ identifier: UInt8) -> ArraySlice<UInt8>? {
        let reader = BERReader(value)
        guard let node = try? reader.node(at: 0), node.identifier == identifier, node.endOffset == value.count,
            !node.isIndefinite
        else { return nil }
        return value[node.contentRange]
    }

    /// The value as text when it is a UTF8String or IA5String TLV.
    public var stringValue: String? {
        guard let content = innerContent(ASN1Tag.utf8String) ?? innerContent(ASN1Tag.ia5String) else { return nil }
        return String(validating: content, as: UTF8.self)
    }

    /// The value as a number when it is an INTEGER TLV of at most 8 bytes.
    public var integerValue: Int64? { innerContent(ASN1Tag.integer).flatMap { ASN1Value.integerValue($0) } }

    /// DER encoding of the attribute SEQUENCE.
    public func encoded(length: ASN1Writer.Length = .minimal) -> [UInt8] {
        if length == .minimal {
            // The hot path of making receipts: sizes are computed, the bytes written once.
            let typeCount = ASN1Value.integerByteCount(Int64(type))
            let versionCount = ASN1Value.integerByteCount(Int64(version))
            let valueField = 1 + ASN1Value.lengthFieldSize(value.count) + value.count
            let content = 2 + typeCount + 2 + versionCount + valueField
            var out: [UInt8] = []
            out.reserveCapacity(1 + ASN1Value.lengthFieldSize(content) + content)
            out.append(ASN1Tag.sequence)
            ASN1Writer.appendLength(content, form: .minimal, to: &out)
            out.append(ASN1Tag.integer)
            out.append(UInt8(typeCount))
            ASN1Value.appendIntegerContent(Int64(type), to: &out)
            out.append(ASN1Tag.integer)
            out.append(UInt8(versionCount))
            ASN1Value.appendIntegerContent(Int64(version), to: &out)
            out.append(ASN1Tag.octetString)
            ASN1Writer.appendLength(value.count, form: .minimal, to: &out)
            out.append(contentsOf: value)
            return out
        }
        var writer = ASN1Writer(reservingCapacity: value.count + 16)
        writer.appendConstructed(ASN1Tag.sequence, length: length) { writer in
            writer.appendInteger(Int64(type))
            writer.appendInteger(Int64(version))
            writer.appendPrimitive(ASN1Tag.octetString, value)
        }
        return writer.bytes
    }
}

/// How the elements of a `SET OF` are ordered on the wire.
public enum SetOrdering: String, Sendable, Hashable, Codable {
    /// DER canonical order (App Store receipts, top level and in each purchase).
    case derSorted
    /// The order given (Xcode receipts write ascending attribute type, which is not DER order).
    case asGiven
}

/// The receipt payload: `SET OF ReceiptAttribute`, signed as the eContent of the SignedData.
public struct ReceiptPayload: Sendable, Hashable {
    public var attributes: [ReceiptAttribute]

    public init(_ attributes: [ReceiptAttribute]) { self.attributes = attributes }

    /// The first attribute of a type.
    public func first(_ type: Int) -> ReceiptAttribute? { attributes.first { $0.type == type } }
    /// Every attribute of a type, in wire order.
    public func all(_ type: Int) -> [ReceiptAttribute] { attributes.filter { $0.type == type } }

    /// Encodes the SET, ordering its elements as asked.
    public func encoded(ordering: SetOrdering, length: ASN1Writer.Length = .minimal) -> [UInt8] {
        let elements = attributes.map { $0.encoded() }
        let order = Self.wireOrder(of: elements, ordering)
        let total = elements.reduce(0) { $0 + $1.count }
        var writer = ASN1Writer(reservingCapacity: total + 6)
        writer.appendConstructed(ASN1Tag.set, length: length) { writer in
            for index in order { writer.appendEncoded(elements[index]) }
        }
        return writer.bytes
    }

    /// The positions of ``attributes`` in the order ``encoded(ordering:length:)`` writes them: what a reader of the
    /// bytes meets first.
    public func wireOrder(_ ordering: SetOrdering) -> [Int] { Self.wireOrder(of: attributes.map { $0.encoded() }, ordering) }

    private static func wireOrder(of elements: [[UInt8]], _ ordering: SetOrdering) -> [Int] {
        // Sorting positions rather than the arrays themselves: swapping arrays retains and releases
        // them, which cost a batch more than the comparisons (measured: 5% of `make --count`).
        var order = Array(elements.indices)
        if ordering == .derSorted { order.sort { derSetOrder(elements[$0], elements[$1]) } }
        return order
    }

    /// X.690 §11.6: SET OF elements compare as octet strings, the shorter padded with trailing zeros.
    public static func derSetOrder(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBufferPointer { left in
            rhs.withUnsafeBufferPointer { right in
                let common = min(left.count, right.count)
                for index in 0..<common where left[index] != right[index] { return left[index] < right[index] }
                // Past the shorter one, its padding is zeros: the longer sorts later if any byte is not zero.
                return left.count < right.count && right[common...].contains { $0 != 0 }
            }
        }
    }
}

/// A payload as it was read: the attributes, where each stood, and how the SET was written.
public struct DecodedPayload: Sendable, Hashable {
    /// One attribute with the place and bytes it came from.
    public struct Entry: Sendable, Hashable {
        public let attribute: ReceiptAttribute
        /// Offset of the attribute SEQUENCE within the payload.
        public let offset: Int
        /// The attribute SEQUENCE exactly as encoded.
        public let encoding: [UInt8]
    }

    public let entries: [Entry]
    /// Whether the elements appear in DER SET OF order.
    public let isDERSorted: Bool
    /// Whether every length in the payload is definite and minimal.
    public let usesMinimalLengths: Bool
    public var payload: ReceiptPayload { ReceiptPayload(entries.map(\.attribute)) }

    /// Reads `SET OF ReceiptAttribute`; offsets in errors count from the first payload byte.
    /// `region` names those offsets in messages ("payload byte", "in-app purchase byte").
    public init(berEncoded bytes: [UInt8], region: String = "payload byte") throws(ReceiptDecodingError) {
        do throws(ReceiptDecodingError) {
            let reader = BERReader(bytes)
            let set = try reader.node(at: 0, expecting: ASN1Tag.set, "the payload SET OF ReceiptAttribute")
            guard set.endOffset == bytes.count else {
                throw ReceiptDecodingError(.trailingBytes, at: set.endOffset, "\(bytes.count - set.endOffset) bytes after the payload SET")
            }
            var minimal = Self.isMinimal(set)
            var entries: [Entry] = []
            for node in try reader.children(of: set, "attributes") {
                guard node.identifier == ASN1Tag.sequence else {
                    throw ReceiptDecodingError(
                        .unexpectedTag, at: node.offset,
                        "expected ReceiptAttribute (SEQUENCE), found \(ASN1Tag.name(node.identifier))")
                }
                let fields = try reader.children(of: node)
                guard fields.count == 3 else {
                    throw ReceiptDecodingError(
                        .invalidValue, at: node.offset,
                        "expected ReceiptAttribute with 3 fields (type, version, value), found \(fields.count)")
                }
                let type = try Self.integer(fields[0], reader, "attribute type")
                let version = try Self.integer(fields[1], reader, "attribute version")
                let value = try reader.octetStringContent(fields[2])
                for part in [node] + fields where !Self.isMinimal(part) { minimal = false }
                if value.segments > 0 { minimal = false }
                entries.append(
                    Entry(
                        attribute: ReceiptAttribute(type: type, version: version, value: value.bytes),
                        offset: node.offset, encoding: Array(reader.encoding(of: node))))
            }
            self.entries = entries
            self.usesMinimalLengths = minimal
            self.isDERSorted = zip(entries, entries.dropFirst()).allSatisfy { !ReceiptPayload.derSetOrder($1.encoding, $0.encoding) }
        } catch {
            throw ReceiptDecodingError(error.code, at: error.offset, error.message, region: region)
        }
    }

    private static func isMinimal(_ node: BERNode) -> Bool {
        if case .definite(_, let isMinimal) = node.lengthForm { return isMinimal }
        return false
    }

    private static func integer(_ node: BERNode, _ reader: BERReader, _ what: String) throws(ReceiptDecodingError) -> Int {
        guard node.identifier == ASN1Tag.integer else {
            throw ReceiptDecodingError(.unexpectedTag, at: node.offset, "expected \(what) (INTEGER), found \(ASN1Tag.name(node.identifier))")
        }
        guard let value = ASN1Value.integerValue(reader.content(of: node)), let small = Int(exactly: value) else {
            throw ReceiptDecodingError(.invalidValue, at: node.offset, "\(what) is not an INTEGER of at most 8 bytes")
        }
        return small
    }
}
