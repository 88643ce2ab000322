/// What Upload Image checks of a PNG (RFC 2083 / ISO 15948): its signature, its `IHDR` (width, height, colour type)
/// and whether it has transparency — an alpha channel (colour types 4 and 6) or a `tRNS` chunk, which must come before
/// the first `IDAT`, so the walk stops there. Reads lengths and types only, every one checked against the bytes there
/// are: no input can trap, and a 32 MiB body costs a few chunk headers.
package struct PNGHeader: Sendable, Hashable {
    package var width: UInt32
    package var height: UInt32
    package var hasTransparency: Bool

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The header of `bytes`, or nil when they are not a PNG (no signature, no `IHDR` first, a chunk past the end).
    package init?(_ bytes: [UInt8]) {
        guard bytes.count >= 33, bytes.starts(with: Self.signature) else { return nil }
        func word(_ at: Int) -> UInt32? {
            guard at >= 0, at + 4 <= bytes.count else { return nil }
            return bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        func type(_ at: Int) -> String? {
            guard at + 8 <= bytes.count else { return nil }
            return String(decoding: bytes[at + 4..<at + 8], as: UTF8.self)
        }
        // IHDR: length 13, then width, height, bit depth, colour type.
        guard word(8) == 13, type(8) == "IHDR", let width = word(16), let height = word(20), width > 0, height > 0 else { return nil }
        let colourType = bytes[25]
        var transparent = colourType == 4 || colourType == 6
        var at = 8 + 8 + 13 + 4
        while !transparent, let length = word(at), let name = type(at) {
            if name == "IDAT" || name == "IEND" { break }
            if name == "tRNS" { transparent = true }
            // A length past the bytes ends the walk: what follows is not looked at.
            let next = at + 12 + Int(length)
            guard next <= bytes.count else { break }
            at = next
        }
        self.width = width
        self.height = height
        hasTransparency = transparent
    }
}
