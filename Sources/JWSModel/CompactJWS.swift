#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    public let signingInput: ArraySlice<UInt8>

    public init(header: [UInt8], payload: [UInt8], signature: [UInt8]) {
        self.header = header
        self.payload = payload
        self.signature = signature
        signingInput = ArraySlice((Base64URL.encode(header) + "." + Base64URL.encode(payload)).utf8)
    }

    /// Parses the compact form; the reason it cannot, otherwise.
    public init(parsing text: String) throws(JWSFormatError) { try self.init(parsing: Array(text.utf8)) }

    /// Parses the compact form from its UTF-8 bytes, which the signing input then shares (a JWS can be a
    /// megabyte, and each copy of it cost its verification a tenth). Bytes that are not UTF-8 are not base64url
    /// either, so they are refused as a part that does not decode.
    public init(parsing bytes: [UInt8]) throws(JWSFormatError) {
        guard bytes.count <= JWSLimits.maximumSize else {
            throw JWSFormatError("the JWS is \(bytes.count) bytes; a JWS is at most \(JWSLimits.maximumSize) bytes")
        }
        // One pass to find the dots, one to decode each part (String's Character-wise split cost more than the
        // signature's verification).
        let end = bytes.last == 0x0A ? bytes.count - 1 : bytes.count
        let parsed = bytes.withUnsafeBufferPointer { bytes -> (header: [UInt8]?, payload: [UInt8]?, signature: [UInt8]?, signed: Int, parts: Int) in
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
            let parts = bytes.prefix(end).reduce(1) { $0 + ($1 == 0x2E ? 1 : 0) }
            throw JWSFormatError("a compact JWS has 3 dot-separated parts, this has \(parts)")
        }
        guard let header = parsed.header else { throw JWSFormatError("the header is not base64url") }
        guard let payload = parsed.payload else { throw JWSFormatError("the payload is not base64url") }
        guard let signature = parsed.signature else { throw JWSFormatError("the signature is not base64url") }
        self.header = header
        self.payload = payload
        self.signature = signature
        signingInput = bytes.prefix(parsed.signed)
    }

    public var compact: String { String(decoding: signingInput, as: UTF8.self) + "." + Base64URL.encode(signature) }
}

/// Why a text is not a compact JWS.
public struct JWSFormatError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
