#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// RFC 4648 §5 base64url without padding, as JWS uses it.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Encoded directly from the bytes: going through Foundation's base64 and three string replacements
    /// cost a JWS with a 3-certificate header more than its ES256 signature (measured: 38% of `forge jws make`).
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 { encode(bytes, standard: false) }

    /// Either alphabet from any bytes: read where they lie when contiguous (`Data`, arrays), copied otherwise.
    static func encode<Bytes: Sequence>(_ bytes: Bytes, standard: Bool) -> String where Bytes.Element == UInt8 {
        bytes.withContiguousStorageIfAvailable { encode($0, standard: standard) } ?? Array(bytes).withUnsafeBufferPointer { encode($0, standard: standard) }
    }

    /// Both alphabets share the loop; `standard` adds the padding (``Base64/encode(_:)``). Written straight into
    /// the string's storage through unchecked buffers: the runner encodes every vector it sends, a megabyte
    /// for the largest, and the checked loop with a copy into a `String` was a tenth of its time over HTTP.
    static func encode(_ input: UnsafeBufferPointer<UInt8>, standard: Bool) -> String {
        let unpadded = (input.count * 4 + 2) / 3
        let count = standard ? (input.count + 2) / 3 * 4 : unpadded
        guard count > 0 else { return "" }
        return (standard ? standardAlphabet : alphabet).withUnsafeBufferPointer { alphabet in
            String(unsafeUninitializedCapacity: count) { buffer in
                var out = 0
                var index = 0
                while index + 3 <= input.count {
                    let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    buffer[out] = alphabet[Int(value >> 18 & 63)]
                    buffer[out + 1] = alphabet[Int(value >> 12 & 63)]
                    buffer[out + 2] = alphabet[Int(value >> 6 & 63)]
                    buffer[out + 3] = alphabet[Int(value & 63)]
                    out += 4
                    index += 3
                }
                if index < input.count {
                    let value = UInt32(input[index]) << 16 | (index + 1 < input.count ? UInt32(input[index + 1]) << 8 : 0)
                    buffer[out] = alphabet[Int(value >> 18 & 63)]
                    buffer[out + 1] = alphabet[Int(value >> 12 & 63)]
                    out += 2
                    if index + 1 < input.count {
                        buffer[out] = alphabet[Int(value >> 6 & 63)]
                        out += 1
                    }
                }
                while out < count {
                    buffer[out] = 0x3D
                    out += 1
                }
                return out
            }
        }
    }

    /// Strict: only the base64url alphabet, no padding, no whitespace, no impossible lengths.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { Base64.decode($0, url: true) }
    }
}

/// RFC 4648 §4 standard base64, and decoding of both alphabets, straight from bytes in one linear pass.
/// Foundation's `Data(base64Encoded:)` and `base64EncodedString()` go through NSString on Linux, and decoding cost
/// a JWS verification more than its ES256 signature (measured: most of the reference verifier's time). Bits past
/// the last whole byte are ignored, as Foundation ignores them.
public enum Base64 {
    /// Standard base64 with padding, as `Data.base64EncodedString()` writes it (the runner encodes every vector it sends).
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 { Base64URL.encode(bytes, standard: true) }

    /// For each of the four places in a quantum, each byte's 6-bit value already shifted into place, and bit 24
    /// for a byte outside the alphabet (`+/` or `-_` besides letters and digits): four loads and three ORs
    /// make three bytes, and one OR per quantum collects every invalid character.
    private static func tables(url: Bool) -> [UInt32] {
        var digits = [UInt32](repeating: invalid, count: 256)
        for (index, byte) in Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8).enumerated() { digits[Int(byte)] = UInt32(index) }
        digits[Int(url ? 0x2D : 0x2B)] = 62
        digits[Int(url ? 0x5F : 0x2F)] = 63
        return [18, 12, 6, 0].flatMap { shift in digits.map { $0 == invalid ? invalid : $0 << shift } }
    }
    private static let invalid: UInt32 = 1 << 24
    private static let standardTables = tables(url: false)
    private static let urlTables = tables(url: true)

    /// `url`: base64url without padding (a length of 1 modulo 4 is impossible). Else standard base64 with its
    /// padding: a multiple of 4 characters, `=` only as the last one or two. Nil for anything else (white
    /// space included).
    public static func decode(_ input: UnsafeBufferPointer<UInt8>, url: Bool) -> [UInt8]? {
        var count = input.count
        if !url {
            guard count % 4 == 0 else { return nil }
            if count > 0, input[count - 1] == 0x3D { count -= 1 }
            if count > 0, input[count - 1] == 0x3D, count % 4 == 3 { count -= 1 }
        }
        guard count % 4 != 1 else { return nil }
        let whole = count / 4
        let rest = count % 4
        let size = whole * 3 + (rest == 0 ? 0 : rest - 1)
        let length = count
        return (url ? urlTables : standardTables).withUnsafeBufferPointer { tables -> [UInt8]? in
            var valid = false
            let output = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
                // Locals, not the captured variables: those would be stored back on every round.
                let count = length
                var seen: UInt32 = 0
                var out = 0
                var index = 0
                // Two quanta a round: the loads of one overlap the other's (a megabyte JWS part is 350,000 quanta).
                while index + 8 <= count {
                    let first =
                        tables[Int(input[index])] | tables[256 + Int(input[index + 1])] | tables[512 + Int(input[index + 2])] | tables[768 + Int(input[index + 3])]
                    let second =
                        tables[Int(input[index + 4])] | tables[256 + Int(input[index + 5])] | tables[512 + Int(input[index + 6])]
                        | tables[768 + Int(input[index + 7])]
                    seen |= first | second
                    buffer[out] = UInt8(truncatingIfNeeded: first >> 16)
                    buffer[out + 1] = UInt8(truncatingIfNeeded: first >> 8)
                    buffer[out + 2] = UInt8(truncatingIfNeeded: first)
                    buffer[out + 3] = UInt8(truncatingIfNeeded: second >> 16)
                    buffer[out + 4] = UInt8(truncatingIfNeeded: second >> 8)
                    buffer[out + 5] = UInt8(truncatingIfNeeded: second)
                    out += 6
                    index += 8
                }
                if index + 4 <= count {
                    let value =
                        tables[Int(input[index])] | tables[256 + Int(input[index + 1])] | tables[512 + Int(input[index + 2])] | tables[768 + Int(input[index + 3])]
                    seen |= value
                    buffer[out] = UInt8(truncatingIfNeeded: value >> 16)
                    buffer[out + 1] = UInt8(truncatingIfNeeded: value >> 8)
                    buffer[out + 2] = UInt8(truncatingIfNeeded: value)
                    out += 3
                    index += 4
                }
                if rest > 0 {
                    var value: UInt32 = 0
                    for offset in 0..<rest { value |= tables[256 * offset + Int(input[index + offset])] }
                    seen |= value
                    // Bits past the last whole byte are ignored.
                    for byte in 0..<(rest - 1) { buffer[out + byte] = UInt8(truncatingIfNeeded: value >> UInt32(16 - 8 * byte)) }
                    out += rest - 1
                }
                initialized = out
                valid = seen & invalid == 0
            }
            return valid ? output : nil
        }
    }

    /// Standard base64 (with padding) of `text`, as `x5c` carries certificates (RFC 7515 §4.1.6).
    public static func decodeStandard(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0, url: false) }
    }
}
