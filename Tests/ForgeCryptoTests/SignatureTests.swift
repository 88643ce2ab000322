import ForgeCrypto
import ForgeTestSupport
import Testing

@Suite(.timeLimit(.minutes(2))) struct SignatureTests {
    static let message = Array("receipt payload — signed by receipt-forge".utf8)

    @Test(arguments: [DigestAlgorithm.sha1, .sha256])
    func signsAndVerifies(algorithm: DigestAlgorithm) throws {
        let key = try TestKeys.shared.get().leaf
        let digest = try algorithm.digest(Self.message)
        let signature = try key.signature(forDigest: digest, algorithm: algorithm)
        #expect(signature.count == 256)
        #expect(key.publicKey.isValidSignature(signature, forDigest: digest, algorithm: algorithm))
        #expect(key.publicKey.isValidSignature(signature, for: Self.message, algorithm: algorithm))
        #expect(try key.signature(for: Self.message, algorithm: algorithm) == signature)
        #expect(try key.signature(forDigest: digest, algorithm: algorithm) == signature, "PKCS#1 v1.5 is deterministic")
    }

    @Test func rejectsWrongAlgorithmTamperingAndWrongKey() throws {
        let keys = try TestKeys.shared.get()
        let signature = try keys.leaf.signature(for: Self.message, algorithm: .sha256)
        let publicKey = keys.leaf.publicKey
        #expect(publicKey.isValidSignature(signature, for: Self.message, algorithm: .sha256))
        #expect(!publicKey.isValidSignature(signature, for: Self.message, algorithm: .sha1))
        #expect(!publicKey.isValidSignature(signature, for: Self.message, algorithm: .sha512))
        var tamperedSignature = signature
        tamperedSignature[100] ^= 0x01
        #expect(!publicKey.isValidSignature(tamperedSignature, for: Self.message, algorithm: .sha256))
        var tamperedMessage = Self.message
        tamperedMessage[0] ^= 0x01
        #expect(!publicKey.isValidSignature(signature, for: tamperedMessage, algorithm: .sha256))
        #expect(!keys.root.publicKey.isValidSignature(signature, for: Self.message, algorithm: .sha256))
        #expect(!publicKey.isValidSignature([], for: Self.message, algorithm: .sha256))
        #expect(!publicKey.isValidSignature(Array(signature.dropLast()), for: Self.message, algorithm: .sha256))
    }

    @Test(.requires(.openssl), arguments: [DigestAlgorithm.sha1, .sha256])
    func openSSLCommandLineAcceptsSignature(algorithm: DigestAlgorithm) async throws {
        let key = try TestKeys.shared.get().leaf
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        try openssl.write(key.publicKey.pemRepresentation, to: "pub.pem")
        try openssl.write(Self.message, to: "message.bin")
        try openssl.write(try key.signature(for: Self.message, algorithm: algorithm), to: "signature.bin")
        let outcome = try await openssl.run(
            "dgst", "-\(algorithm.rawValue)", "-verify", "pub.pem", "-signature", "signature.bin", "message.bin")
        #expect(outcome.exitStatus == 0)
        #expect(outcome.output.contains("Verified OK"), "\(outcome.output)")
    }

    @Test func recoversTheDigestInfoTheSignerUsed() throws {
        let key = try TestKeys.shared.get().leaf
        let sha256Digest = try DigestAlgorithm.sha256.digest(Self.message)
        let sha256Signature = try key.signature(forDigest: sha256Digest, algorithm: .sha256)
        #expect(
            key.publicKey.recoveredDigestInfo(from: sha256Signature)
                == [UInt8](hex: "3031300d060960864801650304020105000420") + sha256Digest)
        let sha1Digest = try DigestAlgorithm.sha1.digest(Self.message)
        let sha1Signature = try key.signature(forDigest: sha1Digest, algorithm: .sha1)
        #expect(key.publicKey.recoveredDigestInfo(from: sha1Signature) == [UInt8](hex: "3021300906052b0e03021a05000414") + sha1Digest)
        #expect(try TestKeys.shared.get().root.publicKey.recoveredDigestInfo(from: sha256Signature) == nil)
        #expect(key.publicKey.recoveredDigestInfo(from: [0x01, 0x02]) == nil)
    }

    @Test func digestOfWrongLengthIsInvalidInput() throws {
        let key = try TestKeys.shared.get().leaf
        let error = try #require(throws: ForgeCryptoError.self) {
            try key.signature(forDigest: DigestAlgorithm.sha1.digest(Self.message), algorithm: .sha256)
        }
        #expect(error.code == .invalidInput)
        #expect(error.reasons.isEmpty)
        #expect(!key.publicKey.isValidSignature(Array(repeating: 0, count: 256), forDigest: [1, 2, 3], algorithm: .sha256))
    }
}
