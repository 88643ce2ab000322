import Foundation
import ForgeCrypto
import StoreForge
import ReceiptModel
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport

@Suite("The bundled TEST PKI", .timeLimit(.minutes(2)))
struct PKITests {
    @Test("The compiled-in set equals Certificates/ byte for byte (run scripts/embed-certificates.sh after changing it)")
    func bundledEqualsFiles() throws {
        // Every role parses and each key is its certificate's: the lazy parse of a shipped binary cannot fail.
        let pki = try CertificateSet<CertificateRole>.bundled().validated()
        let onDisk = try CertificateSet<CertificateRole>.load(from: Repository.file("Certificates"))
        for role in CertificateRole.allCases {
            #expect(pki[role].certificate.derRepresentation == onDisk[role].certificate.derRepresentation, "\(role)")
            #expect(try pki[role].privateKey.pemRepresentation == onDisk[role].privateKey.pemRepresentation, "\(role)")
        }
        let readme = try String(contentsOf: Repository.file("Certificates/README.md"), encoding: .utf8)
        for role in CertificateRole.allCases {
            let fingerprint = pki[role].certificate.sha256Fingerprint.map { String($0, radix: 16, uppercase: true) }
                .map { $0.count == 1 ? "0" + $0 : $0 }.joined(separator: ":")
            #expect(readme.contains(fingerprint), "README lists \(role.fileStem)'s fingerprint")
        }
    }

    @Test("Re-issuing from the committed keys reproduces the committed certificates (issuance is deterministic)")
    func reissue() throws {
        let pki = try CertificateSet<CertificateRole>.bundled()
        let again = try CertificateSet<CertificateRole>.issue(keys: Dictionary(uniqueKeysWithValues: CertificateRole.allCases.map { ($0, pki[$0].privateKey) }))
        for role in CertificateRole.allCases {
            #expect(again[role].certificate.derRepresentation == pki[role].certificate.derRepresentation, "\(role)")
        }
    }

    @Test("Every subject says TEST and never claims to be Apple", arguments: CertificateRole.allCases)
    func testNames(role: CertificateRole) throws {
        let certificate = try CertificateSet<CertificateRole>.bundled()[role].certificate
        #expect(certificate.subject.contains("TEST"))
        #expect(certificate.subject.replacingOccurrences(of: "not Apple", with: "").contains("Apple") == false)
    }

    @Test("Apple-shaped extensions: markers, policy, key usage, EKU, path length, algorithms")
    func appleShape() throws {
        let pki = try CertificateSet<CertificateRole>.bundled()
        let root = pki[.root].certificate, intermediate = pki[.intermediate].certificate, leaf = pki[.leaf].certificate
        #expect(root.isSelfIssued && root.isCA)
        #expect(intermediate.isCA && intermediate.isIssued(by: root))
        #expect(intermediate.extensionValue(oid: KnownOID.appleWWDRIntermediateMarker) == [0x05, 0x00])
        #expect(intermediate.isCritical(oid: KnownOID.appleWWDRIntermediateMarker) == false)
        #expect(leaf.isIssued(by: intermediate) && !leaf.isCA)
        #expect(leaf.extensionValue(oid: KnownOID.appleReceiptSigningMarker) == [0x05, 0x00])
        #expect(leaf.isCritical(oid: "2.5.29.15") == true)  // keyUsage
        let policies = try #require(leaf.extensionValue(oid: "2.5.29.32"))
        #expect(hexString(policies).contains(hexString(try OID.encodeContent(KnownOID.appleReceiptSigningPolicy))))
        let aia = try #require(leaf.extensionValue(oid: "1.3.6.1.5.5.7.1.1"))
        #expect(String(decoding: aia, as: UTF8.self).contains("http://127.0.0.1:1/"))
        #expect(leaf.signatureAlgorithmOID == KnownOID.sha256WithRSAEncryption)
        #expect(pki[.leafSHA1].certificate.signatureAlgorithmOID == KnownOID.sha1WithRSAEncryption)
        #expect(pki[.intermediateSHA1].certificate.signatureAlgorithmOID == KnownOID.sha1WithRSAEncryption)
        #expect(pki[.leafSHA1].certificate.isIssued(by: pki[.intermediateSHA1].certificate))
        let storeKit = pki[.storeKit].certificate
        #expect(storeKit.isSelfIssued && storeKit.isCA && storeKit.isCritical(oid: "2.5.29.37") == true)
        #expect(storeKit.serialNumber == [0x01])
        #expect(pki[.foreignRoot].certificate.publicKey != root.publicKey)
        #expect(
            ChainVerifier.verify(leaf: leaf, intermediates: [intermediate], trustedRoots: [root], at: pinnedNow)
                == .trusted(chain: [leaf, intermediate, root]))
    }

    @Test("ca init writes a fresh set that loads back, and refuses to overwrite without permission")
    func freshSet() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pki-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fresh = try CertificateSet<CertificateRole>.generate()
        try fresh.write(to: directory, overwrite: false)
        let loaded = try CertificateSet<CertificateRole>.load(from: directory)
        #expect(loaded[.leaf].certificate == fresh[.leaf].certificate)
        #expect(loaded[.root].certificate.publicKey != (try CertificateSet<CertificateRole>.bundled())[.root].certificate.publicKey)
        #expect(throws: ForgeError(.wouldOverwrite, "")) { try fresh.write(to: directory, overwrite: false) }
        try fresh.write(to: directory, overwrite: true)
    }
}
