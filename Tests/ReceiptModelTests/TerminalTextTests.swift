import _ForgeSupport
import Testing

/// Text from a file shown on a terminal: every scalar a terminal would act on is written as `\u{…}`, the rest kept.
@Suite("Terminal-safe text", .timeLimit(.minutes(2)))
struct TerminalTextTests {
    @Test("C0 (tab and newline too), DEL, C1, the line separators and the bidi controls are escaped; other scripts and emoji are kept")
    func escaped() {
        #expect(TerminalText.escaped("\u{1B}[2J\t\n\r\u{0}") == #"\u{1B}[2J\u{9}\u{A}\u{D}\u{0}"#)
        #expect(TerminalText.escaped("a\u{7F}b\u{80}c\u{9B}31m\u{9F}") == #"a\u{7F}b\u{80}c\u{9B}31m\u{9F}"#)
        let bidi: [Unicode.Scalar] =
            ["\u{061C}", "\u{200E}", "\u{200F}", "\u{2028}", "\u{2029}"] + (0x202A...0x202E).compactMap(Unicode.Scalar.init) + (0x2066...0x2069).compactMap(Unicode.Scalar.init)
        for scalar in bidi {
            #expect(TerminalText.escaped("x\(Character(scalar))y") == "x\\u{\(String(scalar.value, radix: 16, uppercase: true))}y")
        }
        for kept in ["com.example.pro", "Ünïcödé €9.99", "日本語のプラン", "🚀 Pro", "a\\u{1B}b", "\u{A0}\u{200D}\u{2060}"] {
            #expect(TerminalText.escaped(kept) == kept)
        }
    }
}
