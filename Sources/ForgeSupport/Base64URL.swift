public import Foundation

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

    /// Each byte's 6-bit value, 0xFF for a byte outside the alphabet (`+/` or `-_` besides letters and digits).
    private static func table(url: Bool) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8).enumerated() { table[Int(byte)] = UInt8(index) }
        table[Int(url ? 0x2D : 0x2B)] = 62
        table[Int(url ? 0x5F : 0x2F)] = 63
        return table
    }
    private static let standardTable = table(url: false)
    private static let urlTable = table(url: true)

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
        let table = url ? urlTable : standardTable
        let whole = count / 4
        let rest = count % 4
        let size = whole * 3 + (rest == 0 ? 0 : rest - 1)
        return table.withUnsafeBufferPointer { table -> [UInt8]? in
            var valid = true
            let output = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
                // Four characters make three bytes; an invalid character sets a high bit that `valid` catches.
                var out = 0
                var index = 0
                var seen: UInt8 = 0
                while index + 4 <= count {
                    let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                    let c = table[Int(input[index + 2])], d = table[Int(input[index + 3])]
                    seen |= a | b | c | d
                    let value = UInt32(a & 63) << 18 | UInt32(b & 63) << 12 | UInt32(c & 63) << 6 | UInt32(d & 63)
                    buffer[out] = UInt8(truncatingIfNeeded: value >> 16)
                    buffer[out + 1] = UInt8(truncatingIfNeeded: value >> 8)
                    buffer[out + 2] = UInt8(truncatingIfNeeded: value)
                    out += 3
                    index += 4
                }
                if rest > 0 {
                    var value: UInt32 = 0
                    for offset in 0..<4 {
                        let digit = offset < rest ? table[Int(input[index + offset])] : 0
                        seen |= digit
                        value = value << 6 | UInt32(digit & 63)
                    }
                    // Bits past the last whole byte are ignored.
                    for byte in 0..<(rest - 1) { buffer[out + byte] = UInt8(truncatingIfNeeded: value >> UInt32(16 - 8 * byte)) }
                    out += rest - 1
                }
                valid = seen & 0x80 == 0
                initialized = out
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
