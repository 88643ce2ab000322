// JSON text in and out: one writer, one string escaper, one strict parser and the Codable bridge.

extension JSONValue {
    /// JSON text: pretty with two-space indentation, or compact on one line. Members in their order.
    public func serialized(pretty: Bool = true) -> String {
        var out = ""
        write(into: &out, indent: pretty ? 0 : nil)
        return out
    }

    /// Appends `text` as a JSON string literal to UTF-8 `bytes`: copied whole when nothing needs escaping.
    public static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        if needsEscape(text) {
            bytes += quoted(text).utf8
        } else {
            bytes.append(UInt8(ascii: "\""))
            bytes += text.utf8
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// `text` as a JSON string literal, quotes included: the one JSON escaper in the package.
    public static func quoted(_ text: String) -> String {
        var out = ""
        writeString(text, into: &out)
        return out
    }

    /// Parses RFC 8259 JSON strictly: one value, nothing after it, valid UTF-8, paired surrogates, no leading
    /// zeros, nesting at most ``JSONParseError/maximumDepth``. A repeated key keeps its last value.
    /// Hand-written because `JSONSerialization` on Linux cannot tell `true` from `1`, and `JSONDecoder` loses
    /// `1` vs `1.0` and member order.
    public init(parsing data: some Collection<UInt8>) throws(JSONParseError) {
        self = try JSONParser.parse(Array(data))
    }

    /// As ``init(parsing:)``, refusing an object that repeats a key, as `JSONDecoder` does: for a reader that
    /// must answer exactly as `JSONDecoder` would.
    public init(parsingUniqueKeys data: some Collection<UInt8>) throws(JSONParseError) {
        self = try JSONParser.parse(Array(data), uniqueKeys: true)
    }

    private func write(into out: inout String, indent: Int?) {
        switch self {
        case .string(let text): Self.writeString(text, into: &out)
        case .integer(let number): out += String(number)
        case .number(let number): out += Self.numberText(number)
        case .bool(let flag): out += flag ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                Self.newline(&out, indent.map { $0 + 1 })
                item.write(into: &out, indent: indent.map { $0 + 1 })
            }
            Self.newline(&out, indent)
            out += "]"
        case .object(let object):
            guard !object.isEmpty else { out += "{}"; return }
            out += "{"
            for (index, (key, value)) in object.members.enumerated() {
                if index > 0 { out += "," }
                Self.newline(&out, indent.map { $0 + 1 })
                Self.writeString(key, into: &out)
                out += indent == nil ? ":" : ": "
                value.write(into: &out, indent: indent.map { $0 + 1 })
            }
            Self.newline(&out, indent)
            out += "}"
        }
    }

    private static func needsEscape(_ text: String) -> Bool {
        func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool { firstEscaped(bytes, from: 0) < bytes.count }
        if let found = text.utf8.withContiguousStorageIfAvailable(scan) { return found }
        var copy = text
        return copy.withUTF8(scan)
    }

    /// The index of the first byte at or after `start` that a JSON string cannot hold as it is — `"`, `\` or a
    /// control character — or `bytes.count`. Eight bytes a step (the classic has-zero-byte test on each of the
    /// three conditions), since base64 strings of a megabyte pass through here whole, when written and when read.
    static func firstEscaped(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = max(0, start)
        while index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let flagged = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
            if flagged & highs != 0 { break }  // one of these eight: found byte by byte below
            index += 8
        }
        while index < bytes.count {
            let byte = base[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return index }
            index += 1
        }
        return bytes.count
    }

    private static func newline(_ out: inout String, _ indent: Int?) {
        guard let indent else { return }
        out += "\n" + String(repeating: "  ", count: indent)
    }

    private static func writeString(_ text: String, into out: inout String) {
        out += "\""
        // Most strings (ids, base64, dates) need no escape: copied whole, not scalar by scalar.
        if !needsEscape(text) {
            out += text
            out += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// Why bytes are not JSON, with the byte offset in the reason.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Deep enough for any real message, shallow enough that hostile input cannot exhaust the stack.
    public static let maximumDepth = 512

    public let reason: String
    public var description: String { reason }
}

private struct JSONParser {
    private let bytes: [UInt8]
    private let uniqueKeys: Bool
    private var index = 0

    private init(_ bytes: [UInt8], uniqueKeys: Bool) {
        self.bytes = bytes
        self.uniqueKeys = uniqueKeys
    }

    static func parse(_ bytes: [UInt8], uniqueKeys: Bool = false) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes, uniqueKeys: uniqueKeys)
        parser.skipWhitespace()
        guard parser.index < parser.bytes.count else { throw JSONParseError(reason: "the input is empty") }
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    private func failure(_ reason: String) -> JSONParseError { JSONParseError(reason: "\(reason) at byte \(index)") }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < JSONParseError.maximumDepth else { throw failure("nested deeper than \(JSONParseError.maximumDepth) levels") }
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard index + expected.count <= bytes.count, bytes[index..<index + expected.count].elementsEqual(expected) else {
            throw failure("invalid literal")
        }
        index += expected.count
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(JSONParseError) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { throw failure("expected \(what)") }
        index += 1
    }

    private mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var members = JSONObject()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a property name") }
            let key = try string()
            if uniqueKeys, members[key] != nil { throw failure("the key '\(key)' is repeated") }
            try expect(UInt8(ascii: ":"), "':'")
            skipWhitespace()
            members[key] = try value(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw failure("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw failure("expected ',' or '}'")
        }
    }

    private mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw failure("expected ',' or ']'")
        }
    }

    private mutating func string() throws(JSONParseError) -> String {
        index += 1
        // Fast path: no escape before the closing quote (ids, dates, base64), so the bytes are the string.
        let start = index
        let end = bytes.withUnsafeBufferPointer { JSONValue.firstEscaped($0, from: start) }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            guard let text = String(validating: bytes[index..<end], as: UTF8.self) else { throw failure("string is not valid UTF-8") }
            index = end + 1
            return text
        }
        var utf8: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else { throw failure("string is not valid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hexQuad()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw failure("unpaired surrogate")
                        }
                        index += 2
                        let low = try hexQuad()
                        guard (0xDC00..<0xE000).contains(low) else { throw failure("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw failure("unpaired surrogate") }
                    utf8.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw failure("invalid escape")
                }
            case 0x00..<0x20:
                throw failure("control character in a string")
            default:
                utf8.append(byte)
            }
        }
        throw failure("unterminated string")
    }

    private mutating func hexQuad() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("short \\u escape") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            guard let digit = Character(Unicode.Scalar(byte)).hexDigitValue else { throw failure("invalid \\u escape") }
            value = value * 16 + UInt32(digit)
        }
        index += 4
        return value
    }

    private mutating func number() throws(JSONParseError) -> JSONValue {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - first
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        guard digits() > 0 else { throw failure("invalid number") }
        if bytes[integerStart] == UInt8(ascii: "0"), index - integerStart > 1 { throw failure("leading zero in a number") }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            isInteger = false
            guard digits() > 0 else { throw failure("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            isInteger = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("invalid number") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text) else { throw failure("invalid number") }
        return .number(value)
    }
}

/// Codable, for JSON values inside `Codable` models (mapping templates). Decoding cannot see member order,
/// so decoded objects list their keys sorted; ``JSONValue/init(parsing:)`` keeps the order.
extension JSONValue: Codable {
    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: Key.self) {
            var object = JSONObject()
            for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                object[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
            }
            self = .object(object)
        } else if var container = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !container.isAtEnd { elements.append(try container.decode(JSONValue.self)) }
            self = .array(elements)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let flag = try? container.decode(Bool.self) {
                self = .bool(flag)
            } else if let integer = try? container.decode(Int64.self) {
                self = .integer(integer)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let object):
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in object.members { try container.encode(value, forKey: Key(stringValue: key)) }
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let flag):
            var container = encoder.singleValueContainer()
            try container.encode(flag)
        case .integer(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let value):
            var container = encoder.singleValueContainer()
            if value.rounded() == value, abs(value) < 1e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case .string(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        }
    }
}
