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
        let trimmed = text.hasSuffix("\n") ? String(text.dropLast()) : text
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw JWSFormatError("a compact JWS has 3 dot-separated parts, this has \(parts.count)") }
        guard let header = Base64URL.decode(parts[0]) else { throw JWSFormatError("the header is not base64url") }
        guard let payload = Base64URL.decode(parts[1]) else { throw JWSFormatError("the payload is not base64url") }
        guard let signature = Base64URL.decode(parts[2]) else { throw JWSFormatError("the signature is not base64url") }
        self.header = header
        self.payload = payload
        self.signature = signature
        signingInput = parts[0] + "." + parts[1]
    }

    public var compact: String { signingInput + "." + Base64URL.encode(signature) }
}

/// Why a text is not a compact JWS.
public struct JWSFormatError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
