public import Foundation
public import ForgeSupport

/// How much a JWS may hold before it is refused, checked before the work it would cost.
public enum JWSLimits {
    /// Bytes of a compact JWS, the same 16 MiB as any input (``InputLimits/maximumSize``): Apple's are
    /// under 20 KiB; the corpus's largest carries a 1 MiB header member.
    public static let maximumSize = InputLimits.maximumSize
    /// `x5c` entries `forge jws inspect` decodes (Apple sends 3, Xcode 1; the verifier decodes none unless there are exactly those).
    public static let maximumCertificates = InputLimits.maximumCertificates
}

/// A JWS in compact serialization (RFC 7515 §7.1): `header.payload.signature`, each base64url.
public struct CompactJWS: Sendable, Hashable {
    public let header: [UInt8]
    public let payload: [UInt8]
    public let signature: [UInt8]
    /// `BASE64URL(header) "." BASE64URL(payload)`, exactly as received: what the signature covers.
    public let signingInput: String

    public init(header: [UInt8], payload: [UInt8], signature: [UInt8]) {
        self.header = header
        self.payload = payload
        self.signature = signature
        signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
    }

    /// Parses the compact form; the reason it cannot, otherwise.
    public init(parsing text: String) throws(JWSFormatError) {
        guard text.utf8.count <= JWSLimits.maximumSize else {
            throw JWSFormatError("the JWS is \(text.utf8.count) bytes; a JWS is at most \(JWSLimits.maximumSize) bytes")
        }
        // On the UTF-8 bytes: one pass to find the dots, one to decode each part (String's Character-wise split
        // cost more than the signature's verification).
        var text = text
        let parsed = text.withUTF8 { bytes -> (header: [UInt8]?, payload: [UInt8]?, signature: [UInt8]?, signed: Int, parts: Int) in
            let end = bytes.last == 0x0A ? bytes.count - 1 : bytes.count
            // memchr for the dots: the parts between them can be a megabyte.
            var dots: [Int] = []
            var from = 0
            while dots.count < 3, from < end, let base = bytes.baseAddress, let found = memchr(base + from, 0x2E, end - from) {
                let index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                dots.append(index)
                from = index + 1
            }
            guard dots.count == 2 else { return (nil, nil, nil, 0, dots.count + 1) }
            func part(_ range: Range<Int>) -> [UInt8]? { Base64.decode(UnsafeBufferPointer(rebasing: bytes[range]), url: true) }
            return (part(0..<dots[0]), part(dots[0] + 1..<dots[1]), part(dots[1] + 1..<end), dots[1], 3)
        }
        guard parsed.parts == 3 else {
            // The count as a split would give it: every dot of the text makes one more part.
            let parts = text.utf8.dropLast(text.utf8.last == 0x0A ? 1 : 0).reduce(1) { $0 + ($1 == 0x2E ? 1 : 0) }
            throw JWSFormatError("a compact JWS has 3 dot-separated parts, this has \(parts)")
        }
        guard let header = parsed.header else { throw JWSFormatError("the header is not base64url") }
        guard let payload = parsed.payload else { throw JWSFormatError("the payload is not base64url") }
        guard let signature = parsed.signature else { throw JWSFormatError("the signature is not base64url") }
        self.header = header
        self.payload = payload
        self.signature = signature
        signingInput = String(decoding: text.utf8.prefix(parsed.signed), as: UTF8.self)
    }

    public var compact: String { signingInput + "." + Base64URL.encode(signature) }
}

/// Why a text is not a compact JWS.
public struct JWSFormatError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
