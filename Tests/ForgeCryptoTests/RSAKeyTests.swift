import ForgeCrypto
import Testing

@Suite struct RSAKeyTests {
    @Test func generatedKeyRoundTripsThroughPKCS8PEM() throws {
        let key = try TestKeys.shared.get().leaf
        #expect(key.bitCount == 2048)
        let pem = try key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let parsed = try RSAPrivateKey(pemRepresentation: pem)
        #expect(parsed.publicKey == key.publicKey)
        #expect(try parsed.pemRepresentation == pem)
    }

    @Test func acceptsPKCS1PEMWrittenByOpenSSL() throws {
        let key = try TestKeys.shared.get().leaf
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        try openssl.write(try key.pemRepresentation, to: "key.pem")
        let outcome = try openssl.run("rsa", "-in", "key.pem", "-traditional", "-out", "pkcs1.pem")
        #expect(outcome.exitStatus == 0, "\(outcome.output)")
        let pkcs1 = String(decoding: try openssl.read("pkcs1.pem"), as: UTF8.self)
        #expect(pkcs1.hasPrefix("-----BEGIN RSA PRIVATE KEY-----"))
        #expect(try RSAPrivateKey(pemRepresentation: pkcs1).publicKey == key.publicKey)
    }

    @Test func publicKeyMatchesOpenSSLDerivation() throws {
        let key = try TestKeys.shared.get().root
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        try openssl.write(try key.pemRepresentation, to: "key.pem")
        let outcome = try openssl.run("pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem")
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

    @Test func rejectsEncryptedAndMismatchedPEM() throws {
        let key = try TestKeys.shared.get().leaf
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        try openssl.write(try key.pemRepresentation, to: "key.pem")
        for (arguments, file) in [
            (["pkey", "-in", "key.pem", "-aes128", "-passout", "pass:secret", "-out", "pkcs8.pem"], "pkcs8.pem"),
            (["rsa", "-in", "key.pem", "-traditional", "-aes128", "-passout", "pass:secret", "-out", "pkcs1.pem"], "pkcs1.pem"),
        ] {
            let outcome = try openssl.run(arguments)
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

    @Test func rejectsNonRSAKeys() throws {
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        let outcome = try openssl.run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.pem")
        #expect(outcome.exitStatus == 0, "\(outcome.output)")
        let pem = String(decoding: try openssl.read("ec.pem"), as: UTF8.self)
        let error = try #require(throws: ForgeCryptoError.self) { try RSAPrivateKey(pemRepresentation: pem) }
        #expect(error.code == .keyParsingFailed)
        #expect(error.context == "not an RSA key")
    }

    @Test func tooSmallKeyFailsGeneration() throws {
        let error = try #require(throws: ForgeCryptoError.self) { try RSAPrivateKey.generate(bits: 256) }
        #expect(error.code == .keyGenerationFailed)
        #expect(!error.reasons.isEmpty)
    }
}
