internal import COpenSSL

/// Just enough DER encoding to build the extension values OpenSSL's config syntax cannot express deterministically.
enum DER {
    /// `SEQUENCE { elements… }`.
    static func sequence(_ elements: [[UInt8]]) -> [UInt8] {
        element(tag: 0x30, contents: elements.flatMap { $0 })
    }

    /// `IA5String`; `text` must be ASCII.
    static func ia5String(_ text: String) throws -> [UInt8] {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else {
            throw ForgeCryptoError(.invalidInput, "\"\(text)\" is not ASCII, so it cannot be an IA5String")
        }
        return element(tag: 0x16, contents: Array(text.utf8))
    }

    /// `UTF8String`.
    static func utf8String(_ text: String) -> [UInt8] {
        element(tag: 0x0C, contents: Array(text.utf8))
    }

    /// `OBJECT IDENTIFIER` from dotted-decimal text, encoded by OpenSSL (which handles arbitrarily large arcs).
    static func objectIdentifier(_ dotted: String) throws -> [UInt8] {
        try withObject(dotted) { object in
            try encodedDER(failure: .invalidInput, context: "i2d_ASN1_OBJECT(\(dotted))") { i2d_ASN1_OBJECT(object, $0) }
        }
    }

    /// Runs `body` with a temporary `ASN1_OBJECT` for `dotted`, which must be numeric (names are rejected).
    static func withObject<Result>(_ dotted: String, _ body: (OpaquePointer) throws -> Result) throws -> Result {
        guard let object = OBJ_txt2obj(dotted, 1) else {
            throw ForgeCryptoError(.invalidInput, "OBJ_txt2obj(\"\(dotted)\"): not a dotted-decimal OID")
        }
        defer { ASN1_OBJECT_free(object) }
        return try body(object)
    }

    /// The dotted OIDs of a DER `SEQUENCE OF OBJECT IDENTIFIER` (an extendedKeyUsage value). Elements that
    /// are not OIDs, or bytes that do not parse, end the list: this reads certificates OpenSSL already parsed.
    static func objectIdentifiers(inSequence der: [UInt8]) throws -> [String] {
        guard der.first == 0x30, let (start, end) = contentRange(der, at: 0) else { return [] }
        var oids: [String] = []
        var offset = start
        while offset < end, der[offset] == 0x06, let (_, elementEnd) = contentRange(der, at: offset), elementEnd <= end {
            let element = Array(der[offset..<elementEnd])
            let object: OpaquePointer? = element.withUnsafeBufferPointer { buffer in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                return d2i_ASN1_OBJECT(nil, &cursor, buffer.count)
            }
            guard let object else { break }
            defer { ASN1_OBJECT_free(object) }
            oids.append(try dottedOID(of: object, failure: .certificateParsingFailed))
            offset = elementEnd
        }
        return oids
    }

    /// The contents' start and end of the definite-length TLV at `offset`, or nil when it does not fit in `der`.
    static func contentRange(_ der: [UInt8], at offset: Int) -> (Int, Int)? {
        guard offset + 1 < der.count else { return nil }
        var length = Int(der[offset + 1])
        var start = offset + 2
        if length & 0x80 != 0 {
            let octets = length & 0x7F
            guard (1...3).contains(octets), start + octets <= der.count else { return nil }
            length = der[start..<start + octets].reduce(0) { $0 << 8 | Int($1) }
            start += octets
        }
        guard start + length <= der.count else { return nil }
        return (start, start + length)
    }

    /// Tag, definite length, contents.
    static func element(tag: UInt8, contents: [UInt8]) -> [UInt8] {
        [tag] + length(contents.count) + contents
    }

    private static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var remaining = count
        while remaining > 0 {
            bytes.insert(UInt8(remaining & 0xFF), at: 0)
            remaining >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}
