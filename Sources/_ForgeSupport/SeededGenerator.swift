/// xoshiro256** seeded through SplitMix64: the only source of randomness in anything that makes receipts.
///
/// Same seed, same sequence, on every platform and Swift version (unlike `SystemRandomNumberGenerator`
/// or the standard library's unspecified algorithms), so forged bytes are reproducible.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    public init(seed: UInt64) {
        var mixer = seed
        func splitMix() -> UInt64 {
            mixer &+= 0x9E37_79B9_7F4A_7C15
            var z = mixer
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (splitMix(), splitMix(), splitMix(), splitMix())
    }

    public mutating func next() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotate(state.3, 45)
        return result
    }

    /// `count` bytes from the stream.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count + 8)
        while out.count < count {
            let word = next()
            for shift in stride(from: 0, to: 64, by: 8) where out.count < count { out.append(UInt8(truncatingIfNeeded: word >> shift)) }
        }
        return out
    }

    /// A number with exactly `digits` decimal digits, as App Store transaction ids are written.
    public mutating func decimalString(digits: Int) -> String {
        var text = String(below(9) + 1)
        for _ in 1..<max(1, digits) { text += String(below(10)) }
        return text
    }

    /// A uniform number in `0..<bound` by rejection sampling. Written out rather than
    /// `Int.random(in:using:)`, whose algorithm the standard library does not promise to keep.
    public mutating func below(_ bound: UInt64) -> UInt64 {
        precondition(bound > 0)
        let limit = UInt64.max - UInt64.max % bound
        while true {
            let value = next()
            if value < limit { return value % bound }
        }
    }

    private func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}
