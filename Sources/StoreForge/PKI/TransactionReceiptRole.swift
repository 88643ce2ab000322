#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import ForgeCrypto
import ReceiptModel
import _ForgeSupport
import StoreModel

/// The certificates that sign version 2 of the iOS 6 transaction receipt (apple-2026-facts §4), Apple-shaped and
/// TEST-named. Version 3 is signed by the SHA-1-era receipt-signing leaf of ``CertificateRole`` under its WWDR-like
/// intermediate, as Apple's was by the same certificate that signed app receipts then.
public enum TransactionReceiptRole: String, PKIRole, Codable {
    /// Like "Apple iTunes Store Certification Authority": the issuer a version 2 validator anchors on (the chain is
    /// exactly two certificates), self-signed here, SHA-1.
    case iTunesStoreCA = "itunes-store-ca"
    /// Like "PurchaseReceiptCertificate, OU=Apple iTunes Store": RSA-1024, SHA-1, marker 1.2.840.113635.100.6.5.1.
    case purchaseReceipt = "purchase-receipt"

    public var fileStem: String { rawValue }

    public var issuer: TransactionReceiptRole? { self == .purchaseReceipt ? .iTunesStoreCA : nil }

    /// RSA-1024 for the leaf, as Apple's version 2 signatures are 128 bytes; RSA-2048 for the authority.
    public var keyParameters: Int { self == .purchaseReceipt ? 1024 : 2048 }

    public var purpose: String {
        switch self {
        case .iTunesStoreCA: "iTunes Store CA-like authority (sha1WithRSAEncryption): the anchor of version 2 transaction receipts."
        case .purchaseReceipt: "Version 2 transaction-receipt signer, RSA-1024, sha1WithRSAEncryption, marker 1.2.840.113635.100.6.5.1."
        }
    }

    public typealias Key = RSAPrivateKey
    public var template: CertificateTemplate { TransactionReceiptProfile.template(for: self) }
    public static let bundledName = "the bundled transaction-receipt test PKI"
    /// `Certificates/transaction-receipt/` has no README.
    public static let readmeIntro: String? = nil
}

/// The certificate templates of the version 2 transaction-receipt PKI.
public enum TransactionReceiptProfile {
    /// The marker Apple's version 2 signing certificate carries (a NULL extension), which Apple's sample checks.
    public static let purchaseReceiptMarker = "1.2.840.113635.100.6.5.1"

    public static func template(for role: TransactionReceiptRole) -> CertificateTemplate {
        let name: [(String, String)]
        let extensions: [CertificateExtension]
        let serial: [UInt8]
        var notAfter = TestPKIProfile.date(2099, 12, 31, 23, 59, 59)
        switch role {
        case .iTunesStoreCA:
            name = [
                ("C", "US"), ("O", "receipt-forge TEST"), ("OU", "receipt-forge TEST Certification Authority"),
                ("CN", "TEST iTunes Store Certification Authority — not Apple"),
            ]
            extensions = [
                .basicConstraints(isCA: true, critical: true), .keyUsage([.keyCertSign, .cRLSign], critical: true), .subjectKeyIdentifier,
                .authorityKeyIdentifier,
            ]
            serial = [0x01, 0x17, 0x7E, 0x57, 0x01]
        case .purchaseReceipt:
            name = [
                ("CN", "receipt-forge TEST PurchaseReceiptCertificate — not Apple"), ("OU", "receipt-forge TEST iTunes Store"),
                ("O", "receipt-forge TEST"), ("C", "US"),
            ]
            extensions = [
                .basicConstraints(isCA: false, critical: true), .authorityKeyIdentifier, .subjectKeyIdentifier,
                .keyUsage([.digitalSignature], critical: true),
                .custom(oid: purchaseReceiptMarker, critical: false, derValue: [0x05, 0x00]),
            ]
            serial = [0x02, 0x17, 0x7E, 0x57, 0x02]
            notAfter = TestPKIProfile.date(2097, 12, 31, 23, 59, 59)
        }
        return CertificateTemplate(
            serialNumber: serial, subject: DistinguishedName(name), notBefore: TestPKIProfile.date(2000, 1, 1), notAfter: notAfter,
            extensions: extensions, signatureDigest: .sha1)
    }
}
