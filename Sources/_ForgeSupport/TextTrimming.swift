extension StringProtocol {
    /// `trimmingCharacters(in: .whitespaces)` (or `.whitespacesAndNewlines` with `newlines`) on the standard library:
    /// CharacterSet is Foundation proper, which links ICU (issue 41). The same sets, by Unicode scalar: general
    /// category Zs and tab; with newlines also Zl, Zp, U+000A–U+000D and U+0085.
    public func trimmingWhitespace(newlines: Bool = false) -> String {
        let scalars = unicodeScalars
        func isTrimmed(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.properties.generalCategory {
            case .spaceSeparator: return true
            case .lineSeparator, .paragraphSeparator: return newlines
            default: return scalar == "\t" || (newlines && ((0x0A...0x0D).contains(scalar.value) || scalar.value == 0x85))
            }
        }
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }), let last = scalars.lastIndex(where: { !isTrimmed($0) }) else {
            return ""
        }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}

extension String {
    /// `padding(toLength: width, withPad: " ", startingAt: 0)` on the standard library (Foundation proper links ICU,
    /// issue 41): a column of `width` UTF-16 units, cut to it or filled with spaces.
    public func paddedColumn(_ width: Int) -> String {
        let length = utf16.count
        if length >= width { return String(decoding: Array(utf16.prefix(max(width, 0))), as: UTF16.self) }
        return self + String(repeating: " ", count: width - length)
    }
}
