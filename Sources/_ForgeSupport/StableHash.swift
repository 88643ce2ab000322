/// FNV-1a, 64-bit: the stable hash behind derived seeds and mutant ids. Swift's `Hasher` is seeded per
/// process, and the corpus must be the same bytes on every machine and run.
public enum StableHash {
    public static let offsetBasis: UInt64 = 0xCBF2_9CE4_8422_2325

    public static func fnv1a<Bytes: Sequence>(_ bytes: Bytes, basis: UInt64 = offsetBasis) -> UInt64 where Bytes.Element == UInt8 {
        var hash = basis
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
