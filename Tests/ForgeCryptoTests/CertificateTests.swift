import Foundation
import ForgeCrypto
import ForgeTestSupport
import Testing

@Suite(.timeLimit(.minutes(2))) struct CertificateTests {
    static let basicConstraints = "2.5.29.19"
    static let keyUsage = "2.5.29.15"
    static let extendedKeyUsage = "2.5.29.37"
    static let certificatePolicies = "2.5.29.32"
    static let authorityInfoAccess = "1.3.6.1.5.5.7.1.1"
    static let subjectKeyIdentifier = "2.5.29.14"
    static let authorityKeyIdentifier = "2.5.29.35"
    static let sha256WithRSA = "1.2.840.113549.1.1.11"
    static let sha1WithRSA = "1.2.840.113549.1.1.5"

    @Test func rootAccessors() throws {
        let chain = try TestChain.shared.get()
        let root = chain.root
        #expect(root.subject == "CN=receipt-forge TEST Root CA — not Apple,O=receipt-forge TEST,C=US")
        #expect(root.issuer == root.subject)
        #expect(root.commonName == TestChain.rootCommonName)
        #expect(root.serialNumber == [0x02])
        #expect(root.notBefore == Instant.jan2015)
        #expect(root.notAfter == Instant.jan2055)
        #expect(root.isSelfIssued)
        #expect(root.isCA)
        #expect(root.signatureAlgorithmOID == Self.sha256WithRSA)
        #expect(root.publicKey.rsa == chain.keys.root.publicKey)
        #expect(root.sha256Fingerprint == (try DigestAlgorithm.sha256.digest(root.derRepresentation)))
        #expect(root.isCritical(oid: Self.basicConstraints) == true)
        #expect(root.hasExtension(oid: Self.subjectKeyIdentifier))
        let subjectKeyIdentifier = try #require(root.extensionValue(oid: Self.subjectKeyIdentifier))
        #expect(subjectKeyIdentifier.count == 22, "OCTET STRING of a SHA-1 key hash")
        #expect(root.extensionValue(oid: Self.authorityKeyIdentifier) == [0x30, 0x16, 0x80, 0x14] + subjectKeyIdentifier.dropFirst(2))
        #expect(root.isIssued(by: root))
    }

    @Test func intermediateAccessors() throws {
        let chain = try TestChain.shared.get()
        let intermediate = chain.intermediate
        #expect(intermediate.issuer == chain.root.subject)
        #expect(intermediate.subject == "CN=receipt-forge TEST Worldwide Developer Relations CA,OU=G5,O=receipt-forge TEST,C=US")
        #expect(!intermediate.isSelfIssued)
        #expect(intermediate.isCA)
        #expect(intermediate.serialNumber == [0x01, 0x7A, 0x2B])
        #expect(intermediate.extensionValue(oid: TestChain.appleIntermediateMarker) == [0x05, 0x00])
        #expect(intermediate.isCritical(oid: TestChain.appleIntermediateMarker) == false)
        #expect(intermediate.extensionValue(oid: Self.basicConstraints) == [0x30, 0x06, 0x01, 0x01, 0xFF, 0x02, 0x01, 0x00])
        #expect(intermediate.isIssued(by: chain.root))
        #expect(!chain.root.isIssued(by: intermediate))
    }

    @Test func leafAccessors() throws {
        let chain = try TestChain.shared.get()
        let leaf = chain.leaf
        #expect(leaf.serialNumber == [0x9A, 0xBC, 0xDE, 0xF0, 0x12, 0x34], "leading zero byte dropped")
        #expect(leaf.notBefore == Instant.jan2020)
        #expect(leaf.notAfter == Instant.jan2030)
        #expect(!leaf.isCA)
        #expect(leaf.publicKey.rsa == chain.keys.leaf.publicKey)
        #expect(leaf.isCritical(oid: Self.keyUsage) == true)
        #expect(leaf.extensionValue(oid: Self.keyUsage) == [0x03, 0x02, 0x07, 0x80])
        #expect(leaf.extensionValue(oid: TestChain.appleReceiptSigningMarker) == [0x05, 0x00])
        #expect(leaf.isCritical(oid: TestChain.appleReceiptSigningMarker) == false)
        #expect(leaf.isCritical(oid: Self.certificatePolicies) == false)
        #expect(
            leaf.extensionValue(oid: Self.certificatePolicies)
                == [UInt8](
                    hex:
                        "305d305b060a2a864886f76364050601304d302706082b06010505070201161b68747470733a2f2f6578616d706c652e696e76616c69642f637073302206082b0601050507020230160c1454657374206f6e6c792c206e6f74204170706c65"
                ))
        #expect(leaf.hasExtension(oid: Self.authorityInfoAccess))
        #expect(!leaf.hasExtension(oid: Self.extendedKeyUsage))
        #expect(leaf.isCritical(oid: Self.extendedKeyUsage) == nil)
        #expect(leaf.extensionValue(oid: "1.2.3.4") == nil)
        #expect(leaf.isIssued(by: chain.intermediate))
        #expect(!leaf.isIssued(by: chain.root))
        #expect(!leaf.isIssued(by: chain.storeKit))
    }

    @Test func storeKitLikeCertificate() throws {
        let storeKit = try TestChain.shared.get().storeKit
        #expect(storeKit.isSelfIssued)
        #expect(storeKit.isCA)
        #expect(storeKit.subject == "O=receipt-forge TEST,CN=receipt-forge TEST StoreKit Testing")
        #expect(storeKit.commonName == "receipt-forge TEST StoreKit Testing")
        #expect(storeKit.isCritical(oid: Self.extendedKeyUsage) == true)
        #expect(storeKit.extensionValue(oid: Self.extendedKeyUsage) == [0x30, 0x0A, 0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x03])
        #expect(storeKit.isCritical(oid: Self.keyUsage) == true)
        #expect(storeKit.extensionValue(oid: Self.keyUsage) == [0x03, 0x02, 0x02, 0x84])
    }

    @Test func issuanceIsByteForByteReproducible() throws {
        let chain = try TestChain.shared.get()
        let root = try X509Certificate.issue(TestChain.rootTemplate, subjectKey: chain.keys.root.publicKey, issuer: nil, issuerKey: chain.keys.root)
        #expect(root.derRepresentation == chain.root.derRepresentation)
        #expect(try chain.issueLeaf(TestChain.leafTemplate()).derRepresentation == chain.leaf.derRepresentation)
        #expect(try chain.issueLeaf(TestChain.leafTemplate(commonName: "other")) != chain.leaf)
    }

    @Test(.requires(.openssl)) func openSSLTextShowsTheExtensions() async throws {
        let chain = try TestChain.shared.get()
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        try openssl.write(chain.leaf.pemRepresentation, to: "leaf.pem")
        try openssl.write(chain.intermediate.pemRepresentation, to: "intermediate.pem")
        try openssl.write(chain.storeKit.pemRepresentation, to: "storekit.pem")

        let leaf = try await openssl.run("x509", "-in", "leaf.pem", "-noout", "-text")
        #expect(leaf.exitStatus == 0)
        for expected in [
            "Version: 3 (0x2)", "Policy: 1.2.840.113635.100.5.6.1", "CPS: https://example.invalid/cps",
            "Explicit Text: Test only, not Apple", "OCSP - URI:http://127.0.0.1:1/ocsp", "X509v3 Key Usage: critical",
            "Digital Signature", "1.2.840.113635.100.6.11.1:", "CA:FALSE", "sha256WithRSAEncryption",
        ] {
            #expect(leaf.output.contains(expected), "missing \(expected) in\n\(leaf.output)")
        }
        let intermediate = try await openssl.run("x509", "-in", "intermediate.pem", "-noout", "-text")
        #expect(intermediate.output.contains("CA:TRUE, pathlen:0"))
        #expect(intermediate.output.contains("1.2.840.113635.100.6.2.1:"))
        let storeKit = try await openssl.run("x509", "-in", "storekit.pem", "-noout", "-text")
        #expect(storeKit.output.contains("X509v3 Extended Key Usage: critical"))
        #expect(storeKit.output.contains("Code Signing"))
        #expect(storeKit.output.contains("Digital Signature, Certificate Sign"))
    }

    @Test(.requires(.openssl)) func openSSLAgreesOnNamesDatesSerialAndDER() async throws {
        let chain = try TestChain.shared.get()
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        try openssl.write(chain.root.pemRepresentation, to: "root.pem")
        try openssl.write(chain.leaf.pemRepresentation, to: "leaf.pem")
        let root = try await openssl.run("x509", "-in", "root.pem", "-noout", "-subject", "-enddate", "-nameopt", "RFC2253,-esc_msb")
        #expect(root.output.contains("subject=\(chain.root.subject)\n"), "\(root.output)")
        #expect(root.output.contains("notAfter=Jan  1 00:00:00 2055 GMT"), "GeneralizedTime after 2049")
        let leaf = try await openssl.run("x509", "-in", "leaf.pem", "-noout", "-serial", "-startdate")
        #expect(leaf.output.contains("serial=9ABCDEF01234"))
        #expect(leaf.output.contains("notBefore=Jan  1 00:00:00 2020 GMT"))
        #expect(try await openssl.run("x509", "-in", "leaf.pem", "-outform", "DER", "-out", "leaf.der").exitStatus == 0)
        #expect(Array(try openssl.read("leaf.der")) == chain.leaf.derRepresentation)
    }

    /// `validity(derEncoded:)` walks the DER to the dates without a full parse; it must read what the full parse
    /// reads (UTCTime and GeneralizedTime alike) and refuse every truncation, never trap.
    @Test func validityWithoutAFullParse() throws {
        let chain = try TestChain.shared.get()
        for certificate in [chain.root, chain.intermediate, chain.leaf] {
            let validity = try X509Certificate.validity(derEncoded: certificate.derRepresentation)
            #expect(validity.notBefore == certificate.notBefore && validity.notAfter == certificate.notAfter, "\(certificate.subject)")
        }
        let der = chain.leaf.derRepresentation
        for length in 0..<200 {
            #expect(throws: (any Error).self) { try X509Certificate.validity(derEncoded: Array(der.prefix(length))) }
        }
        #expect(throws: (any Error).self) { try X509Certificate.validity(derEncoded: [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]) }
    }

    @Test(.requires(.openssl)) func openSSLVerifiesTheIssuedChains() async throws {
        let chain = try TestChain.shared.get()
        let openssl = try OpenSSLCommandLine()
        defer { openssl.removeDirectory() }
        try openssl.write(chain.root.pemRepresentation, to: "root.pem")
        try openssl.write(chain.intermediate.pemRepresentation, to: "intermediate.pem")
        try openssl.write(chain.leaf.pemRepresentation, to: "leaf.pem")
        try openssl.write(chain.sha1Intermediate.pemRepresentation, to: "sha1-intermediate.pem")
        try openssl.write(chain.sha1Leaf.pemRepresentation, to: "sha1-leaf.pem")
        try openssl.write(chain.storeKit.pemRepresentation, to: "storekit.pem")
        let inValidity = String(Int(Instant.jun2025.timeIntervalSince1970))

        let sha256 = try await openssl.run("verify", "-attime", inValidity, "-CAfile", "root.pem", "-untrusted", "intermediate.pem", "leaf.pem")
        #expect(sha256.exitStatus == 0, "\(sha256.output)")
        #expect(sha256.output.contains("leaf.pem: OK"))
        let sha1 = try await openssl.run(
            "verify", "-attime", inValidity, "-CAfile", "root.pem", "-untrusted", "sha1-intermediate.pem", "sha1-leaf.pem")
        #expect(sha1.exitStatus == 0, "\(sha1.output)")
        let storeKit = try await openssl.run("verify", "-attime", inValidity, "-CAfile", "storekit.pem", "storekit.pem")
        #expect(storeKit.exitStatus == 0, "\(storeKit.output)")
        let expired = try await openssl.run(
            "verify", "-attime", String(Int(Instant.jan2031.timeIntervalSince1970)), "-CAfile", "root.pem", "-untrusted",
            "intermediate.pem", "leaf.pem")
        #expect(expired.exitStatus != 0)
    }

    @Test func sha1SignedCertificates() throws {
        let chain = try TestChain.shared.get()
        #expect(chain.sha1Intermediate.signatureAlgorithmOID == Self.sha1WithRSA)
        #expect(chain.sha1Leaf.signatureAlgorithmOID == Self.sha1WithRSA)
        #expect(chain.leaf.signatureAlgorithmOID == Self.sha256WithRSA)
        #expect(chain.sha1Leaf.isIssued(by: chain.sha1Intermediate))
    }

    @Test func pemParsing() throws {
        let chain = try TestChain.shared.get()
        let bundle = chain.leaf.pemRepresentation + "\n" + chain.intermediate.pemRepresentation + chain.root.pemRepresentation
        #expect(try X509Certificate.all(fromPEM: bundle) == [chain.leaf, chain.intermediate, chain.root])
        let keyThenCertificate = try chain.keys.storeKit.pemRepresentation + bundle.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try X509Certificate(pemEncoded: keyThenCertificate) == chain.leaf)
        #expect(try X509Certificate.all(fromPEM: keyThenCertificate).count == 3)
        #expect(try X509Certificate(derEncoded: chain.root.derRepresentation).pemRepresentation == chain.root.pemRepresentation)
    }

    @Test func rejectsMalformedCertificates() throws {
        let der = try TestChain.shared.get().root.derRepresentation
        let trailing = try #require(throws: ForgeCryptoError.self) { try X509Certificate(derEncoded: der + [0x00]) }
        #expect(trailing.code == .certificateParsingFailed)
        #expect(trailing.context.contains("trailing"))
        let truncated = try #require(throws: ForgeCryptoError.self) { try X509Certificate(derEncoded: Array(der.dropLast())) }
        #expect(truncated.code == .certificateParsingFailed)
        #expect(!truncated.reasons.isEmpty)
        expectForgeCryptoError(.certificateParsingFailed) { try X509Certificate(derEncoded: Array("garbage".utf8)) }
        expectForgeCryptoError(.certificateParsingFailed) { try X509Certificate(derEncoded: []) }

        let noPEM = try #require(throws: ForgeCryptoError.self) { try X509Certificate.all(fromPEM: "not a certificate") }
        #expect(noPEM.code == .certificateParsingFailed)
        #expect(noPEM.description == "certificate parsing failed: PEM_read_bio: no start line")
        let onlyKey = try #require(throws: ForgeCryptoError.self) {
            try X509Certificate(pemEncoded: TestKeys.shared.get().root.pemRepresentation)
        }
        #expect(onlyKey.code == .certificateParsingFailed)
        let badBase64 = "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"
        expectForgeCryptoError(.certificateParsingFailed) { try X509Certificate.all(fromPEM: badBase64) }
    }

    @Test func issuanceRejectsBadTemplates() throws {
        let chain = try TestChain.shared.get()
        var emptySerial = TestChain.leafTemplate()
        emptySerial.serialNumber = []
        expectForgeCryptoError(.invalidInput) { try chain.issueLeaf(emptySerial) }

        var unknownAttribute = TestChain.leafTemplate()
        unknownAttribute.subject = DistinguishedName([("NOT-AN-ATTRIBUTE", "x")])
        let attributeError = try #require(throws: ForgeCryptoError.self) { try chain.issueLeaf(unknownAttribute) }
        #expect(attributeError.code == .certificateIssuanceFailed)
        #expect(!attributeError.reasons.isEmpty)

        let badOID = TestChain.leafTemplate(extraExtensions: [.custom(oid: "not.an.oid", critical: false, derValue: [0x05, 0x00])])
        expectForgeCryptoError(.invalidInput) { try chain.issueLeaf(badOID) }
        let badURI = TestChain.leafTemplate(extraExtensions: [.authorityInformationAccess(ocsp: ["http://a,b"], caIssuers: [])])
        expectForgeCryptoError(.invalidInput) { try chain.issueLeaf(badURI) }
        let noUsages = TestChain.leafTemplate(extraExtensions: [.keyUsage([])])
        expectForgeCryptoError(.invalidInput) { try chain.issueLeaf(noUsages) }

        var issuerWithoutKeyIdentifier = TestChain.storeKitTemplate
        issuerWithoutKeyIdentifier.extensions = [.authorityKeyIdentifier]
        let keyIdentifierError = try #require(throws: ForgeCryptoError.self) {
            try X509Certificate.issue(
                issuerWithoutKeyIdentifier, subjectKey: chain.keys.leaf.publicKey, issuer: chain.storeKit, issuerKey: chain.keys.storeKit)
        }
        #expect(keyIdentifierError.code == .certificateIssuanceFailed)
        #expect(keyIdentifierError.reasons.contains("unable to get issuer keyid"), "\(keyIdentifierError)")
    }
}
