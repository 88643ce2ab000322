import _ForgeSupport

/// The old-style (NeXTSTEP) property list the iOS 6 transaction receipt is written in, outside and inside
/// (apple-2026-facts §4): `{ "key" = "value"; … }`.
///
/// The reader takes the whole syntax (quoted and unquoted strings, dictionaries, arrays, `<hex>` data, comments) so
/// that a receipt's judge can say *what* stands where a string should, and keeps every entry in order, duplicates
/// included (a dictionary with a key twice is the receipt reader's to refuse, not silently collapsed). One pass over
/// the bytes, nesting bounded, input bounded: hostile input costs linear time and never traps.
public enum OldStylePlist {
    public indirect enum Value: Sendable, Hashable {
        case string(String)
        case data([UInt8])
        case array([Value])
        case dictionary([Entry])

        /// What the value is, in words (`a dictionary`), for messages.
        public var kindName: String {
            switch self {
            case .string: "a string"
            case .data: "data"
            case .array: "an array"
            case .dictionary: "a dictionary"
            }
        }
    }

    public struct Entry: Sendable, Hashable {
        public var key: String
        public var value: Value
        public init(key: String, value: Value) {
            self.key = key
            self.value = value
        }
    }

    /// Nesting a reader follows: a receipt needs 1.
    public static let maximumDepth = 32

    /// A dictionary of strings as Apple wrote it: one tab-indented `"key" = "value";` line per entry, in order.
    public static func render(_ entries: [(key: String, value: String)]) -> [UInt8] {
        var out: [UInt8] = Array("{\n".utf8)
        for (key, value) in entries {
            out.append(0x09)
            appendQuoted(key, to: &out)
            out += Array(" = ".utf8)
            appendQuoted(value, to: &out)
            out += Array(";\n".utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22, 0x5C: out += [0x5C, byte]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }

    /// The one value `bytes` hold, with nothing but white space and comments around it.
    public static func parse(_ bytes: [UInt8], region: String = "byte") throws(ReceiptDecodingError) -> Value {
        guard !bytes.isEmpty else { throw ReceiptDecodingError(.empty, at: 0, "no bytes", region: region) }
        guard bytes.count <= ReceiptLimits.maximumInputSize else {
            throw ReceiptDecodingError(.tooLarge, at: 0, "\(bytes.count) bytes; at most \(ReceiptLimits.maximumInputSize)", region: region)
        }
        var reader = Reader(bytes: bytes, region: region)
        let value = try reader.value(depth: 0)
        try reader.skipSpace()
        guard reader.index == bytes.count else {
            throw ReceiptDecodingError(.trailingBytes, at: reader.index, "bytes after the property list", region: region)
        }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        let region: String
        var index = 0
        /// Values read so far: a bound on the elements of all containers together.
        var elements = 0

        init(bytes: [UInt8], region: String) {
            self.bytes = bytes
            self.region = region
        }

        func fail(_ code: ReceiptDecodingError.Code, _ message: String, at offset: Int? = nil) -> ReceiptDecodingError {
            ReceiptDecodingError(code, at: offset ?? index, message, region: region)
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        /// White space, `// …` and `/* … */`.
        mutating func skipSpace() throws(ReceiptDecodingError) {
            while let byte = current {
                if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C || byte == 0x0B {
                    index += 1
                } else if byte == 0x2F, index + 1 < bytes.count, bytes[index + 1] == 0x2F {
                    while let next = current, next != 0x0A { index += 1 }
                } else if byte == 0x2F, index + 1 < bytes.count, bytes[index + 1] == 0x2A {
                    let start = index
                    index += 2
                    while index + 1 < bytes.count, !(bytes[index] == 0x2A && bytes[index + 1] == 0x2F) { index += 1 }
                    guard index + 1 < bytes.count else { throw fail(.truncated, "a comment that never ends", at: start) }
                    index += 2
                } else {
                    return
                }
            }
        }

        mutating func value(depth: Int) throws(ReceiptDecodingError) -> Value {
            guard depth < OldStylePlist.maximumDepth else { throw fail(.tooDeep, "nesting deeper than \(OldStylePlist.maximumDepth)") }
            elements += 1
            guard elements <= ReceiptLimits.maximumChildren else { throw fail(.tooLarge, "more than \(ReceiptLimits.maximumChildren) values") }
            try skipSpace()
            guard let byte = current else { throw fail(.truncated, "a value") }
            switch byte {
            case 0x7B: return .dictionary(try dictionary(depth: depth))
            case 0x28: return .array(try array(depth: depth))
            case 0x3C: return .data(try data())
            case 0x22: return .string(try quoted())
            default:
                guard Self.isUnquoted(byte) else { throw fail(.unexpectedTag, "'\(Self.shown(byte))' where a value starts") }
                return .string(unquoted())
            }
        }

        mutating func dictionary(depth: Int) throws(ReceiptDecodingError) -> [Entry] {
            index += 1
            var entries: [Entry] = []
            while true {
                try skipSpace()
                guard let byte = current else { throw fail(.truncated, "'}' or a key") }
                if byte == 0x7D {
                    index += 1
                    return entries
                }
                let keyOffset = index
                guard case .string(let key) = try value(depth: depth + 1) else { throw fail(.unexpectedTag, "a key that is not a string", at: keyOffset) }
                try expect(0x3D, "'=' after the key \"\(key)\"")
                let value = try value(depth: depth + 1)
                try expect(0x3B, "';' after the value of \"\(key)\"")
                entries.append(Entry(key: key, value: value))
            }
        }

        mutating func array(depth: Int) throws(ReceiptDecodingError) -> [Value] {
            index += 1
            var values: [Value] = []
            while true {
                try skipSpace()
                guard let byte = current else { throw fail(.truncated, "')' or a value") }
                if byte == 0x29 {
                    index += 1
                    return values
                }
                values.append(try value(depth: depth + 1))
                try skipSpace()
                if current == 0x2C { index += 1 } else if current != 0x29 { throw fail(.unexpectedTag, "',' or ')' in an array") }
            }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(ReceiptDecodingError) {
            try skipSpace()
            guard current == byte else { throw fail(current == nil ? .truncated : .unexpectedTag, what) }
            index += 1
        }

        mutating func data() throws(ReceiptDecodingError) -> [UInt8] {
            let start = index
            index += 1
            var out: [UInt8] = []
            var high: UInt8?
            while let byte = current {
                index += 1
                if byte == 0x3E {
                    guard high == nil else { throw fail(.invalidValue, "an odd number of hex digits in data", at: start) }
                    return out
                }
                if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { continue }
                guard let nibble = Self.hexValue(byte) else { throw fail(.invalidValue, "'\(Self.shown(byte))' in data", at: index - 1) }
                if let first = high {
                    out.append(first << 4 | nibble)
                    high = nil
                } else {
                    high = nibble
                }
            }
            throw fail(.truncated, "'>' closing the data that starts here", at: start)
        }

        mutating func quoted() throws(ReceiptDecodingError) -> String {
            let start = index
            index += 1
            var out: [UInt8] = []
            while let byte = current {
                index += 1
                switch byte {
                case 0x22:
                    guard let text = String(validating: out, as: UTF8.self) else { throw fail(.invalidValue, "a string that is not UTF-8", at: start) }
                    return text
                case 0x5C:
                    try escape(into: &out)
                default:
                    out.append(byte)
                }
            }
            throw fail(.truncated, "'\"' closing the string that starts here", at: start)
        }

        /// After a backslash: `\\ \" \n \t \r \b \f \a \v`, up to three octal digits, `\U` and up to four hex digits.
        mutating func escape(into out: inout [UInt8]) throws(ReceiptDecodingError) {
            guard let byte = current else { throw fail(.truncated, "an escape") }
            index += 1
            switch byte {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "a"): out.append(0x07)
            case UInt8(ascii: "v"): out.append(0x0B)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var value = UInt32(byte - 0x30)
                var digits = 1
                while digits < 3, let next = current, (0x30...0x37).contains(next) {
                    value = value * 8 + UInt32(next - 0x30)
                    index += 1
                    digits += 1
                }
                guard value < 0x80 else { throw fail(.invalidValue, "an octal escape above 177 (NeXTSTEP encoding)", at: index - digits - 1) }
                out.append(UInt8(value))
            case UInt8(ascii: "U"):
                var value: UInt32 = 0
                var digits = 0
                while digits < 4, let next = current, let nibble = Self.hexValue(next) {
                    value = value << 4 | UInt32(nibble)
                    index += 1
                    digits += 1
                }
                guard digits > 0, let scalar = Unicode.Scalar(value) else { throw fail(.invalidValue, "a \\U escape that names no character") }
                out += Array(String(Character(scalar)).utf8)
            default: out.append(byte)
            }
        }

        mutating func unquoted() -> String {
            let start = index
            while let byte = current, Self.isUnquoted(byte) { index += 1 }
            // Only ASCII letters, digits and _$+/:.- are taken: always UTF-8.
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        static func isUnquoted(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"): true
            default: false
            }
        }

        static func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - 0x30
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - 0x57
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - 0x37
            default: nil
            }
        }

        static func shown(_ byte: UInt8) -> String { (0x21...0x7E).contains(byte) ? String(UnicodeScalar(byte)) : "0x" + hexString([byte]) }
    }
}
