import ForgeCrypto
import ForgeTestSupport
import Testing

@Suite(.timeLimit(.minutes(2))) struct DigestAlgorithmTests {
    @Test func knownAnswers() throws {
        let abc = Array("abc".utf8)
        #expect(try DigestAlgorithm.sha1.digest(abc) == [UInt8](hex: "a9993e364706816aba3e25717850c26c9cd0d89d"))
        #expect(
            try DigestAlgorithm.sha256.digest(abc)
                == [UInt8](hex: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(
            try DigestAlgorithm.sha384.digest(abc)
                == [UInt8](hex: "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"))
        #expect(
            try DigestAlgorithm.sha512.digest(abc)
                == [UInt8](
                    hex: "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"))
        #expect(try DigestAlgorithm.md5.digest([UInt8]()) == [UInt8](hex: "d41d8cd98f00b204e9800998ecf8427e"))
    }

    @Test(arguments: DigestAlgorithm.allCases)
    func everyCollectionShapeGivesTheSameDigest(algorithm: DigestAlgorithm) throws {
        let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let expected = try algorithm.digest(message)
        #expect(expected.count == algorithm.digestLength)
        #expect(try algorithm.digest(message[100...]) == algorithm.digest(Array(message[100...])))
        #expect(try algorithm.digest(message.lazy.map { $0 }) == expected)
        #expect(try algorithm.digest(message.reversed().reversed()) == expected)
    }

    @Test(arguments: DigestAlgorithm.allCases)
    func dottedOIDRoundTrips(algorithm: DigestAlgorithm) {
        #expect(DigestAlgorithm(dottedOID: algorithm.dottedOID) == algorithm)
    }

    @Test func oidsAreTheRegisteredOnes() {
        #expect(DigestAlgorithm.md5.dottedOID == "1.2.840.113549.2.5")
        #expect(DigestAlgorithm.sha1.dottedOID == "1.3.14.3.2.26")
        #expect(DigestAlgorithm.sha256.dottedOID == "2.16.840.1.101.3.4.2.1")
        #expect(DigestAlgorithm(dottedOID: "2.16.840.1.101.3.4.2.3") == .sha512)
        #expect(DigestAlgorithm(dottedOID: "1.2.840.113549.1.1.11") == nil)
    }

    @Test(.requires(.openssl)) func matchesOpenSSLCommandLine() async throws {
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        let message = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        try openssl.write(message, to: "message.bin")
        let outcome = try await openssl.run("dgst", "-sha384", "-r", "message.bin")
        #expect(outcome.exitStatus == 0)
        #expect(outcome.output.hasPrefix(try DigestAlgorithm.sha384.digest(message).hex + " "))
    }
}
