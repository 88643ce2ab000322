import _ForgeSupport
/// A tolerant BER reader over a byte buffer.
///
/// Receipts come in DER (App Store) and BER with indefinite lengths (Xcode), so the reader accepts
/// both and records which form every node used; the caller decides what is acceptable. Nodes are
/// offsets into the original buffer, never copies, so "keep the bytes you parsed" is free.
/// Depth and lengths are bounded before anything is allocated.
public struct BERNode: Sendable, Hashable {
    /// How a node wrote its length.
    public enum LengthForm: Sendable, Hashable {
        /// Definite length in `octets` length octets (1 = short form); `isMinimal` is DER's rule.
        case definite(octets: Int, isMinimal: Bool)
        /// `0x80`, content ended by an end-of-contents marker.
        case indefinite
    }

    /// The identifier octet (class, constructed bit and tag number ≤ 30).
    public let identifier: UInt8
    /// Offset of the identifier octet.
    public let offset: Int
    /// Where the content lies (for indefinite nodes: before the end-of-contents marker).
    public let contentRange: Range<Int>
    /// Offset just past the node, end-of-contents marker included.
    public let endOffset: Int
    public let lengthForm: LengthForm

    public var isConstructed: Bool { identifier & 0x20 != 0 }
    public var headerLength: Int { contentRange.lowerBound - offset }
    /// The whole node: header, content and end-of-contents marker.
    public var range: Range<Int> { offset..<endOffset }
    public var isIndefinite: Bool { lengthForm == .indefinite }
}

/// Universal tags the receipt structures use.
public enum ASN1Tag {
    public static let integer: UInt8 = 0x02
    public static let octetString: UInt8 = 0x04
    public static let constructedOctetString: UInt8 = 0x24
    public static let null: UInt8 = 0x05
    public static let objectIdentifier: UInt8 = 0x06
    public static let utf8String: UInt8 = 0x0C
    public static let printableString: UInt8 = 0x13
    public static let ia5String: UInt8 = 0x16
    public static let utcTime: UInt8 = 0x17
    public static let generalizedTime: UInt8 = 0x18
    public static let sequence: UInt8 = 0x30
    public static let set: UInt8 = 0x31

    /// `[n]` context-specific constructed.
    public static func contextConstructed(_ number: UInt8) -> UInt8 { 0xA0 | number }
    /// `[n]` context-specific primitive.
    public static func contextPrimitive(_ number: UInt8) -> UInt8 { 0x80 | number }

    /// A short human name for error messages and `forge inspect`.
    public static func name(_ identifier: UInt8) -> String {
        switch identifier {
        case integer: "INTEGER"
        case octetString: "OCTET STRING"
        case constructedOctetString: "constructed OCTET STRING"
        case null: "NULL"
        case objectIdentifier: "OBJECT IDENTIFIER"
        case utf8String: "UTF8String"
        case printableString: "PrintableString"
        case ia5String: "IA5String"
        case utcTime: "UTCTime"
        case generalizedTime: "GeneralizedTime"
        case sequence: "SEQUENCE"
        case set: "SET"
        case 0x00: "end-of-contents"
        default:
            if identifier & 0xC0 == 0x80 {
                "[\(identifier & 0x1F)]\(identifier & 0x20 != 0 ? "" : " primitive")"
            } else {
                "tag 0x\(String(identifier, radix: 16, uppercase: true))"
            }
        }
    }
}

/// Reads BER nodes out of one buffer. Offsets in nodes and errors are absolute in `bytes`.
public struct BERReader: Sendable {
    public let bytes: [UInt8]
    /// Deepest nesting followed when searching the end of an indefinite-length node.
    public let maximumDepth: Int

    public init(_ bytes: [UInt8], maximumDepth: Int = ReceiptLimits.maximumDepth) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// Reads the node starting at `offset`, which must end by `limit`.
    public func node(at offset: Int, limit: Int? = nil, depth: Int = 0) throws(ReceiptDecodingError) -> BERNode {
        let limit = limit ?? bytes.count
        guard depth <= maximumDepth else {
            throw ReceiptDecodingError(.tooDeep, at: offset, "expected at most \(maximumDepth) levels of nesting, found deeper")
        }
        guard offset < limit else {
            throw ReceiptDecodingError(.truncated, at: offset, "expected an ASN.1 header, found the end of the input")
        }
        let identifier = bytes[offset]
        guard identifier & 0x1F != 0x1F else {
            throw ReceiptDecodingError(.unsupportedTag, at: offset, "high-tag-number identifier 0x\(hex(identifier)) is not used by receipts")
        }
        guard offset + 1 < limit else {
            throw ReceiptDecodingError(.truncated, at: offset + 1, "expected a length octet after \(ASN1Tag.name(identifier)), found the end of the input")
        }
        let first = bytes[offset + 1]
        if first == 0x80 {
            guard identifier & 0x20 != 0 else {
                throw ReceiptDecodingError(.invalidLength, at: offset + 1, "indefinite length on primitive \(ASN1Tag.name(identifier))")
            }
            let contentStart = offset + 2
            var cursor = contentStart
            while true {
                guard cursor + 1 < limit else {
                    throw ReceiptDecodingError(.truncated, at: limit, "expected end-of-contents (00 00) closing the indefinite \(ASN1Tag.name(identifier)) at byte \(offset)")
                }
                if bytes[cursor] == 0, bytes[cursor + 1] == 0 {
                    return BERNode(
                        identifier: identifier, offset: offset, contentRange: contentStart..<cursor,
                        endOffset: cursor + 2, lengthForm: .indefinite)
                }
                cursor = try node(at: cursor, limit: limit, depth: depth + 1).endOffset
            }
        }
        var length = 0
        var lengthOctets = 1
        var isMinimal = true
        if first & 0x80 == 0 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count != 0x7F else {
                throw ReceiptDecodingError(.invalidLength, at: offset + 1, "reserved length octet 0xFF")
            }
            guard count <= 4 else {
                throw ReceiptDecodingError(.invalidLength, at: offset + 1, "length of \(count) octets; receipts never exceed 4")
            }
            guard offset + 2 + count <= limit else {
                throw ReceiptDecodingError(.truncated, at: offset + 2, "expected \(count) length octets, found the end of the input")
            }
            for index in 0..<count { length = length << 8 | Int(bytes[offset + 2 + index]) }
            lengthOctets = 1 + count
            isMinimal = length >= 0x80 && bytes[offset + 2] != 0
        }
        let contentStart = offset + 1 + lengthOctets
        guard length <= limit - contentStart else {
            throw ReceiptDecodingError(
                .truncated, at: contentStart,
                "expected \(length) content bytes for the \(ASN1Tag.name(identifier)) at byte \(offset), found only \(max(0, limit - contentStart)) (truncated?)")
        }
        return BERNode(
            identifier: identifier, offset: offset, contentRange: contentStart..<(contentStart + length),
            endOffset: contentStart + length, lengthForm: .definite(octets: lengthOctets, isMinimal: isMinimal))
    }

    /// Reads a node and checks its identifier.
    public func node(at offset: Int, limit: Int? = nil, expecting identifier: UInt8, _ what: String) throws(ReceiptDecodingError) -> BERNode {
        guard offset < (limit ?? bytes.count) else {
            throw ReceiptDecodingError(.truncated, at: offset, "expected \(what) (\(ASN1Tag.name(identifier))), found the end of its parent")
        }
        guard bytes[offset] == identifier else {
            throw ReceiptDecodingError(
                .unexpectedTag, at: offset,
                "expected \(what) (\(ASN1Tag.name(identifier)), 0x\(hex(identifier))), found \(ASN1Tag.name(bytes[offset])) (0x\(hex(bytes[offset])))")
        }
        return try node(at: offset, limit: limit)
    }

    /// The direct children of a constructed node, in order; more than `maximumCount` is `tooLarge`, found
    /// before they are all collected (a few bytes each, so 16 MiB of input could otherwise ask for millions).
    public func children(
        of parent: BERNode, depth: Int = 0, maximumCount: Int = ReceiptLimits.maximumChildren,
        _ what: @autoclosure () -> String = "elements"
    ) throws(ReceiptDecodingError) -> [BERNode] {
        var result: [BERNode] = []
        var cursor = parent.contentRange.lowerBound
        while cursor < parent.contentRange.upperBound {
            guard result.count < maximumCount else {
                throw ReceiptDecodingError(.tooLarge, at: cursor, "more than \(maximumCount) \(what()) in the \(ASN1Tag.name(parent.identifier)) at byte \(parent.offset)")
            }
            let child = try node(at: cursor, limit: parent.contentRange.upperBound, depth: depth + 1)
            result.append(child)
            cursor = child.endOffset
        }
        return result
    }

    /// The content of an OCTET STRING, joining the segments of a constructed one.
    /// Also returns how many primitive segments were joined (0 for a primitive string).
    public func octetStringContent(_ node: BERNode, depth: Int = 0) throws(ReceiptDecodingError) -> (bytes: [UInt8], segments: Int) {
        if node.identifier == ASN1Tag.octetString {
            return (Array(bytes[node.contentRange]), 0)
        }
        guard node.identifier == ASN1Tag.constructedOctetString else {
            throw ReceiptDecodingError(.unexpectedTag, at: node.offset, "expected OCTET STRING, found \(ASN1Tag.name(node.identifier))")
        }
        guard depth < maximumDepth else {
            throw ReceiptDecodingError(.tooDeep, at: node.offset, "expected constructed OCTET STRINGs nested at most \(maximumDepth) levels, found deeper")
        }
        var joined: [UInt8] = []
        var segments = 0
        for child in try children(of: node, depth: depth) {
            let part = try octetStringContent(child, depth: depth + 1)
            joined += part.bytes
            segments += max(1, part.segments)
        }
        return (joined, segments)
    }

    /// The bytes of a node, header included.
    public func encoding(of node: BERNode) -> ArraySlice<UInt8> { bytes[node.range] }
    /// The content bytes of a definite or indefinite node.
    public func content(of node: BERNode) -> ArraySlice<UInt8> { bytes[node.contentRange] }
}

func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
