/// Lowercase hex of a byte sequence, for display and JSON.
public func hexString<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
}

extension String {
    /// Zeros in front up to `width` characters: fixed-width decimal ids.
    package func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
