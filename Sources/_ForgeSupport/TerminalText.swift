/// Text from a file or a peer made safe to print on a terminal, for the lines people read (`--json` keeps the
/// exact values).
public enum TerminalText {
    /// `text` with every scalar a terminal acts on rather than shows written as `\u{…}`: C0 controls (newline and tab
    /// included, so a value stays on its line), DEL, C1 controls (U+0080–U+009F: 0x9B is a CSI on its own), the line
    /// and paragraph separators, and the bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E,
    /// U+200F, U+202A–U+202E, U+2066–U+2069) that reorder what a line shows ("Trojan Source", CVE-2021-42574). Every
    /// other scalar, other scripts and emoji included, is kept; text with none of these is returned as it is.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isActive) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if isActive(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether a terminal acts on `scalar` instead of showing it (``escaped(_:)`` lists them).
    public static func isActive(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
