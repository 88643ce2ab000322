import ForgeCrypto
import Testing

/// Deterministic ECDSA against RFC 6979's published vectors (appendix A.2.5 P-256, A.2.6 P-384).
@Suite("RFC 6979 deterministic ECDSA", .timeLimit(.minutes(2)))
struct RFC6979Tests {
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16) ?? 0 }
    }

    @Test(
        "Signatures equal RFC 6979's r and s, and verify",
        arguments: [
            (
                ECCurve.p256, DigestAlgorithm.sha256, "C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721", "sample",
                "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716" + "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"
            ),
            (
                .p256, .sha256, "C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721", "test",
                "F1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367" + "019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083"
            ),
            (
                .p384, .sha384, "6B9D3DAD2E1B8C1C05B19875B6659F4DE23C3B667BF297BA9AA47740787137D896D5724E4C70A825F872C9EA60D2EDF5", "sample",
                "94EDBB92A5ECB8AAD4736E56C691916B3F88140666CE9FA73D64C4EA95AD133C81A648152E44ACF96E36DD1E80FABE46"
                    + "99EF4AEB15F178CEA1FE40DB2603138F130E740A19624526203B6351D0A3A94FA329C145786E679E7B82C71A38628AC8"
            ),
        ])
    func vectors(curve: ECCurve, digest: DigestAlgorithm, scalar: String, message: String, expected: String) throws {
        let key = try ECPrivateKey(scalar: Self.bytes(scalar), curve: curve)
        let signature = try key.signature(for: Array(message.utf8), algorithm: digest)
        #expect(signature == Self.bytes(expected))
        #expect(key.publicKey.isValidSignature(signature, for: Array(message.utf8), algorithm: digest))
        var tampered = signature
        tampered[tampered.count - 1] ^= 1
        #expect(!key.publicKey.isValidSignature(tampered, for: Array(message.utf8), algorithm: digest))
        #expect(!key.publicKey.isValidSignature(Array(signature.dropLast()), for: Array(message.utf8), algorithm: digest))
    }
}
