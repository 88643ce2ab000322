import ForgeCrypto
import ForgeTestSupport
import Testing

@Suite(.timeLimit(.minutes(2))) struct RSAKeyTests {
    @Test func generatedKeyRoundTripsThroughPKCS8PEM() throws {
        let key = try TestKeys.shared.get().leaf
        #expect(key.bitCount == 2048)
        let pem = try key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let parsed = try RSAPrivateKey(pemRepresentation: pem)
        #expect(parsed.publicKey == key.publicKey)
        #expect(try parsed.pemRepresentation == pem)
    }

    @Test(.requires(.openssl)) func acceptsPKCS1PEMWrittenByOpenSSL() async throws {
        let key = try TestKeys.shared.get().leaf
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        try openssl.write(try key.pemRepresentation, to: "key.pem")
        let outcome = try await openssl.run("rsa", "-in", "key.pem", "-traditional", "-out", "pkcs1.pem")
        #expect(outcome.exitStatus == 0, "\(outcome.output)")
        let pkcs1 = String(decoding: try openssl.read("pkcs1.pem"), as: UTF8.self)
        #expect(pkcs1.hasPrefix("-----BEGIN RSA PRIVATE KEY-----"))
        #expect(try RSAPrivateKey(pemRepresentation: pkcs1).publicKey == key.publicKey)
    }

    @Test(.requires(.openssl)) func publicKeyMatchesOpenSSLDerivation() async throws {
        let key = try TestKeys.shared.get().root
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        try openssl.write(try key.pemRepresentation, to: "key.pem")
        let outcome = try await openssl.run("pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem")
        #expect(outcome.exitStatus == 0, "\(outcome.output)")
        #expect(String(decoding: try openssl.read("pub.pem"), as: UTF8.self) == key.publicKey.pemRepresentation)
    }

    @Test func publicKeyRoundTripsThroughDERAndPEM() throws {
        let publicKey = try TestKeys.shared.get().root.publicKey
        #expect(try RSAPublicKey(derRepresentation: publicKey.derRepresentation) == publicKey)
        #expect(try RSAPublicKey(pemRepresentation: publicKey.pemRepresentation) == publicKey)
        #expect(publicKey != (try TestKeys.shared.get().leaf.publicKey))
    }

    @Test func garbagePrivateKeyPEMReportsOpenSSLReason() throws {
        let error = try #require(throws: ForgeCryptoError.self) {
            try RSAPrivateKey(pemRepresentation: "this is not a key")
        }
        #expect(error.code == .keyParsingFailed)
        #expect(error.reasons == ["no start line"])
        #expect(error.description == "key parsing failed: PEM_read_bio: no start line")
    }

    @Test(.requires(.openssl)) func rejectsEncryptedAndMismatchedPEM() async throws {
        let key = try TestKeys.shared.get().leaf
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        try openssl.write(try key.pemRepresentation, to: "key.pem")
        for (arguments, file) in [
            (["pkey", "-in", "key.pem", "-aes128", "-passout", "pass:secret", "-out", "pkcs8.pem"], "pkcs8.pem"),
            (["rsa", "-in", "key.pem", "-traditional", "-aes128", "-passout", "pass:secret", "-out", "pkcs1.pem"], "pkcs1.pem"),
        ] {
            let outcome = try await openssl.run(arguments)
            #expect(outcome.exitStatus == 0, "\(outcome.output)")
            let pem = String(decoding: try openssl.read(file), as: UTF8.self)
            expectForgeCryptoError(.keyParsingFailed) { try RSAPrivateKey(pemRepresentation: pem) }
        }
        let publicOnly = try #require(throws: ForgeCryptoError.self) {
            try RSAPrivateKey(pemRepresentation: key.publicKey.pemRepresentation)
        }
        #expect(publicOnly.context.contains("only PUBLIC KEY"), "\(publicOnly)")
        expectForgeCryptoError(.keyParsingFailed) { try RSAPublicKey(pemRepresentation: key.pemRepresentation) }
    }

    @Test func publicKeyDERMustBeExactlyOneStructure() throws {
        let der = try TestKeys.shared.get().root.publicKey.derRepresentation
        let trailing = try #require(throws: ForgeCryptoError.self) { try RSAPublicKey(derRepresentation: der + [0x00]) }
        #expect(trailing.code == .keyParsingFailed)
        #expect(trailing.context.contains("1 trailing bytes"))
        let garbage = try #require(throws: ForgeCryptoError.self) { try RSAPublicKey(derRepresentation: [0x30, 0x03, 0x02, 0x01]) }
        #expect(garbage.code == .keyParsingFailed)
        #expect(!garbage.reasons.isEmpty)
        #expect(throws: ForgeCryptoError.self) { try RSAPublicKey(pemRepresentation: "-----BEGIN PUBLIC KEY-----\n") }
    }

    @Test(.requires(.openssl)) func rejectsNonRSAKeys() async throws {
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        let outcome = try await openssl.run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.pem")
        #expect(outcome.exitStatus == 0, "\(outcome.output)")
        let pem = String(decoding: try openssl.read("ec.pem"), as: UTF8.self)
        let error = try #require(throws: ForgeCryptoError.self) { try RSAPrivateKey(pemRepresentation: pem) }
        #expect(error.code == .keyParsingFailed)
        #expect(error.context == "not an RSA key")
    }

    /// The RSA-specific fast parser must not turn an RSA-PSS key (another algorithm OID) into a plain RSA key.
    @Test(.requires(.openssl)) func rejectsRSAPSSKeysPrivateAndPublic() async throws {
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        #expect(try await openssl.run("genpkey", "-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "pss.pem").exitStatus == 0)
        #expect(try await openssl.run("pkey", "-in", "pss.pem", "-pubout", "-outform", "DER", "-out", "pss.pub.der").exitStatus == 0)
        let pem = String(decoding: try openssl.read("pss.pem"), as: UTF8.self)
        let privateError = try #require(throws: ForgeCryptoError.self) { try RSAPrivateKey(pemRepresentation: pem) }
        #expect(privateError.context == "not an RSA key")
        let publicError = try #require(throws: ForgeCryptoError.self) { try RSAPublicKey(derRepresentation: [UInt8](try openssl.read("pss.pub.der"))) }
        #expect(publicError.context == "not an RSA key")
    }

    /// The fast parser and OpenSSL's own PEM reading give the same key: same public key, same signatures.
    @Test(.requires(.openssl)) func fastParserAgreesWithOpenSSL() async throws {
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        #expect(try await openssl.run("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "k.pem").exitStatus == 0)
        #expect(try await openssl.run("pkey", "-in", "k.pem", "-pubout", "-outform", "DER", "-out", "k.pub.der").exitStatus == 0)
        let key = try RSAPrivateKey(pemRepresentation: String(decoding: try openssl.read("k.pem"), as: UTF8.self))
        #expect(key.publicKey.derRepresentation == [UInt8](try openssl.read("k.pub.der")))
        let digest = [UInt8](repeating: 7, count: 32)
        let signature = try key.signature(forDigest: digest, algorithm: .sha256)
        #expect(try RSAPublicKey(derRepresentation: [UInt8](try openssl.read("k.pub.der"))).isValidSignature(signature, forDigest: digest, algorithm: .sha256))
    }

    @Test func tooSmallKeyFailsGeneration() throws {
        let error = try #require(throws: ForgeCryptoError.self) { try RSAPrivateKey.generate(bits: 256) }
        #expect(error.code == .keyGenerationFailed)
        #expect(!error.reasons.isEmpty)
    }
}
