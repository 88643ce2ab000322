extension String {
    /// The text whole when it fits `limit` bytes of UTF-8, else cut at a character boundary with a note of how
    /// long it was: `… (cut at LIMIT bytes of TOTAL)`. What a report or a log keeps of text it did not choose.
    public func cut(atUTF8 limit: Int) -> String {
        let total = utf8.count
        guard total > limit else { return self }
        var kept = 0
        var end = unicodeScalars.startIndex
        for scalar in unicodeScalars {
            let width = UTF8.width(scalar)
            if kept + width > limit { break }
            kept += width
            end = unicodeScalars.index(after: end)
        }
        return String(unicodeScalars[..<end]) + "… (cut at \(limit) bytes of \(total))"
    }
}
