import StoreForge
import ForgeCrypto
import Foundation
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport

/// The EC test PKI regenerates byte for byte and has Apple's chain shape.
@Suite("JWS test PKI", .timeLimit(.minutes(2)))
struct JWSTestPKITests {
    static let directory = Repository.file("Certificates/jws")

    @Test("The compiled-in set equals Certificates/jws, and issuing again from its keys gives the same certificates")
    func regenerates() throws {
        // Every role parses and each key is its certificate's: the lazy parse of a shipped binary cannot fail.
        let bundled = try CertificateSet<JWSRole>.bundled().validated()
        let files = try CertificateSet<JWSRole>.load(from: Self.directory)
        let reissued = try CertificateSet<JWSRole>.issue(keys: Dictionary(uniqueKeysWithValues: JWSRole.allCases.map { ($0, bundled.privateKey($0)) }))
        for role in JWSRole.allCases {
            #expect(bundled.certificate(role) == files.certificate(role), "\(role): run scripts/embed-certificates.sh")
            #expect(try bundled.privateKey(role).pemRepresentation == files.privateKey(role).pemRepresentation, "\(role)")
            #expect(reissued.certificate(role).derRepresentation == bundled.certificate(role).derRepresentation, "\(role)")
        }
    }

    @Test("Apple's shape: P-384 root and intermediate, P-256 leaf, markers, AKI/SKI, critical constraints")
    func shape() throws {
        let pki = try CertificateSet<JWSRole>.bundled()
        let root = pki.certificate(.root)
        let intermediate = pki.certificate(.intermediate)
        let leaf = pki.certificate(.leaf)
        let xcode = pki.certificate(.xcode)
        #expect(root.publicKey.ec?.curve == .p384 && intermediate.publicKey.ec?.curve == .p384 && leaf.publicKey.ec?.curve == .p256)
        #expect(root.signatureAlgorithmOID == "1.2.840.10045.4.3.3" && leaf.signatureAlgorithmOID == "1.2.840.10045.4.3.3")  // ecdsa-with-SHA384
        #expect(intermediate.hasExtension(oid: "1.2.840.113635.100.6.2.1") && intermediate.pathLength == 0 && intermediate.isCritical(oid: "2.5.29.19") == true)
        #expect(leaf.hasExtension(oid: "1.2.840.113635.100.6.11.1") && !leaf.isCA && leaf.keyUsage == ["digitalSignature"])
        #expect(leaf.isCritical(oid: "2.5.29.15") == true && leaf.isCritical(oid: "2.5.29.19") == true)
        for certificate in [intermediate, leaf] { #expect(certificate.hasExtension(oid: "2.5.29.35") && certificate.hasExtension(oid: "2.5.29.14")) }
        #expect(leaf.isIssued(by: intermediate) && intermediate.isIssued(by: root) && root.isIssued(by: root))
        #expect(xcode.isCA && xcode.pathLength == 0 && xcode.keyUsage == ["digitalSignature"])
        // Self-signed with digitalSignature only (no keyCertSign), as Xcode's is: OpenSSL does not call it its own issuer.
    }
}
