#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport

/// Turns what a user hands over (DER, base64 with or without line breaks, base64 of base64) into
/// DER bytes, and says which transport encoding it found. A receipt starts with `0x30`; in base64
/// that is `M…` (`MI…` for any real size), and base64 of base64 is `TU…` (receipt-facts §c.6).
public enum ReceiptInput {
    /// How the receipt bytes were wrapped.
    public enum Transport: String, Sendable, Hashable, Codable {
        case der
        case base64
        case pem
        case doubleBase64 = "double-base64"
    }

    /// The largest input accepted: real receipts stay under 100 KiB; this leaves room for huge forged ones.
    public static let maximumSize = ReceiptLimits.maximumInputSize

    /// Decodes the transport encoding. Errors name the offset and what was expected.
    public static func decode(_ input: [UInt8]) throws(ReceiptDecodingError) -> (der: [UInt8], transport: Transport) {
        guard !input.isEmpty else { throw ReceiptDecodingError(.empty, at: 0, "expected a receipt (DER or base64), found no bytes") }
        guard input.count <= maximumSize else {
            throw ReceiptDecodingError(.tooLarge, at: maximumSize, "input is \(input.count) bytes; receipts are at most \(maximumSize) bytes")
        }
        if input[0] == ASN1Tag.sequence { return (input, .der) }
        var body = input[...]
        if input.starts(with: Array("-----BEGIN ".utf8)) {
            // PEM armour: PKCS7/CMS is a receipt in base64; any other label is something else.
            let firstLine = input.prefix { $0 != 0x0A }
            let label = String(decoding: firstLine.dropFirst(11), as: UTF8.self).replacing("-", with: "").trimmingWhitespace(newlines: true)
            guard label == "PKCS7" || label == "CMS" else {
                throw ReceiptDecodingError(.unexpectedTag, at: 0, "expected a receipt, found a PEM \(label) (a receipt is PKCS7 SignedData)")
            }
            body = input.dropFirst(firstLine.count).prefix { $0 != UInt8(ascii: "-") }
        }
        let text = body.filter { !Self.isWhitespace($0) }
        if text.starts(with: Array("eyJ".utf8)), text.filter({ $0 == UInt8(ascii: ".") }).count == 2 {
            throw ReceiptDecodingError(.invalidValue, at: 0, "expected an app receipt, found a JWS (a StoreKit 2 signed transaction, not a PKCS#7 receipt)")
        }
        let once = try base64(text, original: Array(body), base: body.startIndex)
        if once.first == ASN1Tag.sequence { return (once, body.count == input.count ? .base64 : .pem) }
        if once.first == UInt8(ascii: "M") {  // base64 of 0x30
            let twice = try base64(once.filter { !Self.isWhitespace($0) }, original: once, base: 0)
            if twice.first == ASN1Tag.sequence { return (twice, .doubleBase64) }
        }
        throw ReceiptDecodingError(
            .unexpectedTag, at: 0,
            "expected a PKCS#7 receipt: DER starting with 0x30 or base64 starting with 'M'; found base64 of bytes starting 0x\(once.first.map(hex) ?? "")")
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x0A || byte == 0x0D || byte == 0x20 || byte == 0x09 }

    /// Standard or URL-safe base64, padding optional; the error offset points into the original input.
    private static func base64(_ text: [UInt8], original: [UInt8], base: Int) throws(ReceiptDecodingError) -> [UInt8] {
        var normalized = text.map { byte -> UInt8 in
            switch byte {
            case UInt8(ascii: "-"): UInt8(ascii: "+")
            case UInt8(ascii: "_"): UInt8(ascii: "/")
            default: byte
            }
        }
        if let bad = normalized.firstIndex(where: { !Self.isBase64($0) }) {
            let offset = Self.originalOffset(ofFiltered: bad, in: original)
            throw ReceiptDecodingError(
                .invalidValue, at: base + offset,
                "expected DER (0x30) or base64, found byte 0x\(hex(original[offset])) that is neither")
        }
        while normalized.count % 4 != 0 { normalized.append(UInt8(ascii: "=")) }
        guard let data = Data(base64Encoded: Data(normalized)) else {
            throw ReceiptDecodingError(.invalidValue, at: 0, "base64 text is malformed (misplaced padding or a dangling character)")
        }
        return [UInt8](data)
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }

    private static func originalOffset(ofFiltered index: Int, in original: [UInt8]) -> Int {
        var seen = 0
        for (offset, byte) in original.enumerated() where !isWhitespace(byte) {
            if seen == index { return offset }
            seen += 1
        }
        return original.count - 1
    }
}
