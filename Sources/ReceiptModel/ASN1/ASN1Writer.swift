import _ForgeSupport
/// An ASN.1 writer that can produce DER and the BER shapes real receipts use.
///
/// Each node chooses its length form, so one writer makes the App Store shape (definite, minimal)
/// and the Xcode shape (indefinite) and, on purpose, the non-minimal forms negative vectors need.
public struct ASN1Writer: Sendable {
    /// How a node writes its length.
    public enum Length: Sendable, Hashable, Codable {
        /// DER: the shortest definite form.
        case minimal
        /// Definite, always in long form with this many length octets (1…4): non-minimal when longer than needed.
        case longForm(octets: Int)
        /// `0x80` … `00 00`; constructed nodes only.
        case indefinite
    }

    public private(set) var bytes: [UInt8]

    public init(reservingCapacity capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends a primitive node.
    public mutating func appendPrimitive<Content: Collection>(_ identifier: UInt8, _ content: Content, length: Length = .minimal)
    where Content.Element == UInt8 {
        bytes.append(identifier)
        Self.appendLength(content.count, form: length == .indefinite ? .minimal : length, to: &bytes)
        bytes.append(contentsOf: content)
    }

    /// Appends a constructed node whose children `body` writes.
    public mutating func appendConstructed<Failure: Error>(
        _ identifier: UInt8, length: Length = .minimal, _ body: (inout ASN1Writer) throws(Failure) -> Void
    ) throws(Failure) {
        bytes.append(identifier)
        if length == .indefinite {
            bytes.append(0x80)
            try body(&self)
            bytes.append(contentsOf: [0, 0])
            return
        }
        // Write the children in place, then slide them right to make room for the length.
        let headerEnd = bytes.count
        try body(&self)
        let contentLength = bytes.count - headerEnd
        var lengthBytes: [UInt8] = []
        Self.appendLength(contentLength, form: length, to: &lengthBytes)
        bytes.insert(contentsOf: lengthBytes, at: headerEnd)
    }

    /// Appends bytes that are already an encoding (a certificate, a pre-built SET).
    public mutating func appendEncoded<Encoded: Collection>(_ encoded: Encoded) where Encoded.Element == UInt8 {
        bytes.append(contentsOf: encoded)
    }

    public mutating func appendInteger(_ value: Int64, length: Length = .minimal) {
        appendPrimitive(ASN1Tag.integer, ASN1Value.integerContent(value), length: length)
    }

    public mutating func appendObjectIdentifier(_ dotted: String) throws(ReceiptDecodingError) {
        appendPrimitive(ASN1Tag.objectIdentifier, try OID.encodeContent(dotted))
    }

    /// `AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters NULL }`, NULL written as receipts do.
    public mutating func appendAlgorithmIdentifier(_ dotted: String, withNullParameters: Bool = true) throws(ReceiptDecodingError) {
        let content = try OID.encodeContent(dotted)
        appendConstructed(ASN1Tag.sequence) { writer in
            writer.appendPrimitive(ASN1Tag.objectIdentifier, content)
            if withNullParameters { writer.appendPrimitive(ASN1Tag.null, EmptyCollection()) }
        }
    }

    static func appendLength(_ length: Int, form: Length, to bytes: inout [UInt8]) {
        var needed = 0
        var rest = length
        while rest > 0 { needed += 1; rest >>= 8 }
        switch form {
        case .minimal, .indefinite:
            if length < 0x80 {
                bytes.append(UInt8(length))
                return
            }
        case .longForm(let octets):
            needed = max(needed, min(max(octets, 1), 4))
        }
        bytes.append(0x80 | UInt8(needed))
        for index in stride(from: needed - 1, through: 0, by: -1) {
            bytes.append(UInt8(truncatingIfNeeded: length >> (8 * index)))
        }
    }
}

/// Content encodings of the simple values receipt attributes carry.
public enum ASN1Value {
    /// Minimal two's-complement content of an INTEGER.
    public static func integerContent(_ value: Int64) -> [UInt8] {
        var out: [UInt8] = []
        appendIntegerContent(value, to: &out)
        return out
    }

    /// How many content octets the minimal encoding of `value` takes.
    static func integerByteCount(_ value: Int64) -> Int {
        var count = 1
        var rest = value
        while rest < -128 || rest > 127 {
            rest >>= 8
            count += 1
        }
        return count
    }

    static func appendIntegerContent(_ value: Int64, to out: inout [UInt8]) {
        for index in stride(from: integerByteCount(value) - 1, through: 0, by: -1) {
            out.append(UInt8(truncatingIfNeeded: value >> (8 * index)))
        }
    }

    /// Octets a minimal definite length field takes.
    static func lengthFieldSize(_ length: Int) -> Int {
        guard length >= 0x80 else { return 1 }
        var count = 1
        var rest = length
        while rest > 0 {
            rest >>= 8
            count += 1
        }
        return count
    }

    /// A complete INTEGER TLV.
    public static func integer(_ value: Int64) -> [UInt8] { tlv(ASN1Tag.integer, integerContent(value)) }
    /// A complete INTEGER TLV whose content is `content` verbatim (e.g. four ASCII bytes such as "P302").
    public static func integer(content: [UInt8]) -> [UInt8] { tlv(ASN1Tag.integer, content) }
    /// A complete UTF8String TLV.
    public static func utf8String(_ text: String) -> [UInt8] { tlv(ASN1Tag.utf8String, Array(text.utf8)) }
    /// A complete IA5String TLV (dates and the age rating).
    public static func ia5String(_ text: String) -> [UInt8] { tlv(ASN1Tag.ia5String, Array(text.utf8)) }

    /// A TLV with a minimal definite length.
    public static func tlv(_ identifier: UInt8, _ content: [UInt8]) -> [UInt8] {
        var writer = ASN1Writer(reservingCapacity: content.count + 6)
        writer.appendPrimitive(identifier, content)
        return writer.bytes
    }

    /// Decodes INTEGER content as a signed 64-bit value; nil when empty or wider than 8 bytes.
    public static func integerValue<Content: Collection>(_ content: Content) -> Int64? where Content.Element == UInt8 {
        guard !content.isEmpty, content.count <= 8 else { return nil }
        var value: Int64 = content.first! & 0x80 != 0 ? -1 : 0
        for byte in content { value = value << 8 | Int64(byte) }
        return value
    }
}

/// Dotted object identifiers to and from their DER content.
public enum OID {
    /// The OIDs every receipt writes, encoded once.
    private static let common: [String: [UInt8]] = {
        var table: [String: [UInt8]] = [:]
        for dotted in [
            KnownOID.data, KnownOID.signedData, KnownOID.rsaEncryption, KnownOID.sha1WithRSAEncryption,
            KnownOID.sha256WithRSAEncryption, KnownOID.sha1, KnownOID.sha256,
        ] {
            table[dotted] = try? slowEncodeContent(dotted)
        }
        return table
    }()

    public static func encodeContent(_ dotted: String) throws(ReceiptDecodingError) -> [UInt8] {
        if let known = common[dotted] { return known }
        return try slowEncodeContent(dotted)
    }

    private static func slowEncodeContent(_ dotted: String) throws(ReceiptDecodingError) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0) }
        guard arcs.count >= 2, arcs.allSatisfy({ $0 != nil }), let first = arcs[0], let second = arcs[1],
            first <= 2, first == 2 || second < 40
        else {
            throw ReceiptDecodingError(.invalidValue, at: 0, "'\(dotted)' is not a dotted object identifier")
        }
        var out: [UInt8] = []
        for arc in [first * 40 + second] + arcs.dropFirst(2).map({ $0! }) {
            var chunk: [UInt8] = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                chunk.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            out += chunk
        }
        return out
    }

    /// Dotted form of OID content; nil when malformed.
    public static func dotted<Content: Collection>(_ content: Content) -> String? where Content.Element == UInt8 {
        guard let last = content.reversed().first, last & 0x80 == 0 else { return nil }
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        var started = false
        for byte in content {
            if !started, byte == 0x80 { return nil }  // non-minimal arc
            guard value >> 57 == 0 else { return nil }
            value = value << 7 | UInt64(byte & 0x7F)
            started = byte & 0x80 != 0
            if !started {
                arcs.append(value)
                value = 0
            }
        }
        let head = arcs[0]
        let parts = head < 80 ? [head / 40, head % 40] : [2, head - 80]
        return (parts + arcs.dropFirst()).map(String.init).joined(separator: ".")
    }
}

/// The object identifiers that receipts and their certificates use.
public enum KnownOID {
    public static let data = "1.2.840.113549.1.7.1"
    public static let signedData = "1.2.840.113549.1.7.2"
    public static let contentTypeAttribute = "1.2.840.113549.1.9.3"
    public static let messageDigestAttribute = "1.2.840.113549.1.9.4"
    public static let signingTimeAttribute = "1.2.840.113549.1.9.5"
    public static let rsaEncryption = "1.2.840.113549.1.1.1"
    public static let sha1WithRSAEncryption = "1.2.840.113549.1.1.5"
    public static let sha256WithRSAEncryption = "1.2.840.113549.1.1.11"
    public static let sha384WithRSAEncryption = "1.2.840.113549.1.1.12"
    public static let sha512WithRSAEncryption = "1.2.840.113549.1.1.13"
    public static let md5 = "1.2.840.113549.2.5"
    public static let sha1 = "1.3.14.3.2.26"
    public static let sha256 = "2.16.840.1.101.3.4.2.1"
    public static let sha384 = "2.16.840.1.101.3.4.2.2"
    public static let sha512 = "2.16.840.1.101.3.4.2.3"
    /// Apple's marker on the receipt-signing leaf ("Mac App Store and iTunes Store Receipt Signing").
    public static let appleReceiptSigningMarker = "1.2.840.113635.100.6.11.1"
    /// Apple's marker on the WWDR intermediate.
    public static let appleWWDRIntermediateMarker = "1.2.840.113635.100.6.2.1"
    /// Apple's certificate policy on the receipt-signing leaf.
    public static let appleReceiptSigningPolicy = "1.2.840.113635.100.5.6.1"

    /// A readable name for the OIDs `forge inspect` prints.
    public static func name(_ dotted: String) -> String? {
        switch dotted {
        case data: "data"
        case signedData: "signedData"
        case rsaEncryption: "rsaEncryption"
        case sha1WithRSAEncryption: "sha1WithRSAEncryption"
        case sha256WithRSAEncryption: "sha256WithRSAEncryption"
        case sha384WithRSAEncryption: "sha384WithRSAEncryption"
        case sha512WithRSAEncryption: "sha512WithRSAEncryption"
        case md5: "md5"
        case sha1: "sha1"
        case sha256: "sha256"
        case sha384: "sha384"
        case sha512: "sha512"
        case contentTypeAttribute: "contentType"
        case messageDigestAttribute: "messageDigest"
        case signingTimeAttribute: "signingTime"
        case "2.5.29.14": "subjectKeyIdentifier"
        case "2.5.29.15": "keyUsage"
        case "2.5.29.17": "subjectAltName"
        case "2.5.29.19": "basicConstraints"
        case "2.5.29.31": "cRLDistributionPoints"
        case "2.5.29.32": "certificatePolicies"
        case "2.5.29.35": "authorityKeyIdentifier"
        case "2.5.29.37": "extKeyUsage"
        case "1.3.6.1.5.5.7.1.1": "authorityInfoAccess"
        case appleReceiptSigningMarker: "receipt-signing marker"
        case appleWWDRIntermediateMarker: "WWDR marker"
        default: nil
        }
    }
}
