import Foundation
import _ForgeSupport
import Testing

/// The JSON string scan that finds `"`, `\` and control characters eight bytes a step: every such byte, at
/// every offset within a word and near the ends, is found when writing and when reading, with Foundation's
/// `JSONSerialization` as the oracle of what the text means.
@Suite("JSON strings: the word-at-a-time scan", .timeLimit(.minutes(2)))
struct JSONStringScanTests {
    static let specials: [UInt8] = [0x22, 0x5C, 0x00, 0x01, 0x0A, 0x1F]

    @Test("A special byte at each position of strings of 0 to 40 bytes is escaped when written and read back exactly; 0x20, 0x7F and UTF-8 are not escaped")
    func everyPosition() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0...40 {
            for position in -1..<length {
                var bytes = (0..<length).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }.map { $0 == 0x22 || $0 == 0x5C ? 0x41 : $0 }
                if position >= 0 { bytes[position] = Self.specials.randomElement(using: &generator) ?? 0x22 }
                let text = String(decoding: bytes, as: UTF8.self)
                let quoted = JSONValue.quoted(text)
                #expect((quoted.utf8.count == bytes.count + 2) == (position < 0), "\(bytes)")
                let oracle = try JSONSerialization.jsonObject(with: Data(quoted.utf8), options: .fragmentsAllowed) as? String
                #expect(oracle == text, "\(quoted)")
                #expect(try JSONValue(parsing: Array(quoted.utf8)) == .string(text))
            }
        }
        for plain in [" ", "\u{7F}", "é", "日本", "🙂 x"] {
            #expect(JSONValue.quoted(plain) == "\"" + plain + "\"")
        }
    }

    @Test("A raw control byte inside a JSON string is refused wherever it is, as RFC 8259 says")
    func rawControlRefused() {
        for length in [1, 7, 8, 9, 16, 33] {
            for position in 0..<length {
                var bytes = [UInt8](repeating: 0x61, count: length)
                bytes[position] = 0x09
                #expect(throws: JSONParseError.self) { try JSONValue(parsing: [0x22] + bytes + [0x22]) }
            }
        }
    }
}
