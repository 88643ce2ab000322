public import Foundation

/// RFC 4648 §5 base64url without padding, as JWS uses it.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encoded directly from the bytes: going through Foundation's base64 and three string replacements
    /// cost a JWS with a 3-certificate header more than its ES256 signature (measured: 38% of `forge jws make`).
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        let count = (input.count * 4 + 2) / 3
        let output = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var out = 0
            var index = 0
            func put(_ value: UInt32, _ shift: UInt32) {
                buffer[out] = alphabet[Int(value >> shift & 63)]
                out += 1
            }
            while index + 3 <= input.count {
                let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                put(value, 18)
                put(value, 12)
                put(value, 6)
                put(value, 0)
                index += 3
            }
            if index < input.count {
                let value = UInt32(input[index]) << 16 | (index + 1 < input.count ? UInt32(input[index + 1]) << 8 : 0)
                put(value, 18)
                put(value, 12)
                if index + 1 < input.count { put(value, 6) }
            }
            initialized = out
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Strict: only the base64url alphabet, no padding, no whitespace, no impossible lengths.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        guard
            text.utf8.allSatisfy({ byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
            }), text.utf8.count % 4 != 1
        else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }
}

/// How much a JWS may hold before it is refused, checked before the work it would cost.
public enum JWSLimits {
    /// Bytes of a compact JWS, the same 16 MiB as any input (``ReceiptLimits/maximumInputSize``): Apple's are
    /// under 20 KiB; the corpus's largest carries a 1 MiB header member.
    public static let maximumSize = ReceiptLimits.maximumInputSize
    /// `x5c` entries `forge jws inspect` decodes (Apple sends 3, Xcode 1; the verifier decodes none unless there are exactly those).
    public static let maximumCertificates = ReceiptLimits.maximumCertificates
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
