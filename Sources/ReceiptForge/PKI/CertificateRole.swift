import Foundation
public import ForgeCrypto
import ReceiptModel
public import ForgeSupport
public import StoreModel

/// The certificates of the test PKI, each shaped like its Apple counterpart (receipt-facts §b.2, §b.6)
/// but named as a TEST authority that is not Apple.
public enum CertificateRole: String, Sendable, Hashable, CaseIterable, Codable {
    /// Self-signed root, like "Apple Root CA".
    case root
    /// Like "Apple Worldwide Developer Relations Certification Authority, OU=G5": CA, pathlen 0, marker 6.2.1.
    case intermediate
    /// Like "Mac App Store and iTunes Store Receipt Signing": digitalSignature, marker 6.11.1, policy 5.6.1.
    case leaf
    /// The SHA-1-era WWDR intermediate (sha1WithRSAEncryption), for `appstore-sha1` receipts.
    case intermediateSHA1 = "intermediate-sha1"
    /// The SHA-1-era receipt-signing leaf.
    case leafSHA1 = "leaf-sha1"
    /// Like Xcode's self-signed "StoreKit" certificate: CA:TRUE, critical EKU codeSigning.
    case storeKit = "storekit"
    /// An unrelated root with its own key, for "foreign root" vectors.
    case foreignRoot = "foreign-root"

    /// File name stem in `Certificates/`: `<stem>.pem` and `<stem>.key.pem`.
    public var fileStem: String {
        switch self {
        case .root: "root"
        case .intermediate: "wwdr-g5"
        case .leaf: "receipt-signing"
        case .intermediateSHA1: "wwdr-sha1"
        case .leafSHA1: "receipt-signing-sha1"
        case .storeKit: "storekit"
        case .foreignRoot: "foreign-root"
        }
    }

    /// Who signs this role's certificate; nil for self-signed roles.
    public var issuerRole: CertificateRole? {
        switch self {
        case .root, .storeKit, .foreignRoot: nil
        case .intermediate, .intermediateSHA1: .root
        case .leaf: .intermediate
        case .leafSHA1: .intermediateSHA1
        }
    }

    /// One line for `Certificates/README.md` and `forge ca init`.
    public var purpose: String {
        switch self {
        case .root: "Trust anchor of App Store-shaped receipts (plays Apple Root CA)."
        case .intermediate: "WWDR G5-like intermediate: CA, pathlen 0, marker 1.2.840.113635.100.6.2.1."
        case .leaf: "Receipt-signing leaf (SHA-256 era): digitalSignature, marker 1.2.840.113635.100.6.11.1, policy 1.2.840.113635.100.5.6.1."
        case .intermediateSHA1: "SHA-1-era WWDR-like intermediate (sha1WithRSAEncryption), issued by the root."
        case .leafSHA1: "SHA-1-era receipt-signing leaf (sha1WithRSAEncryption), issued by the SHA-1 intermediate."
        case .storeKit: "Xcode-like self-signed StoreKit certificate: CA:TRUE, critical EKU codeSigning."
        case .foreignRoot: "An unrelated root for untrusted-chain vectors; never the trust anchor."
        }
    }
}

/// The certificate templates of the Apple-shaped test PKI.
///
/// Validity windows are wide (2000–2097 and later) so receipts made for any date in this century
/// verify at their creation date; vectors that need expired or not-yet-valid certificates issue
/// them from the same keys. AIA and CPS URLs point at 127.0.0.1 port 1, so a validator that goes
/// online gets an immediate refusal instead of reaching Apple or hanging.
public enum TestPKIProfile {
    public static let loopbackBase = "http://127.0.0.1:1"

    public static func template(for role: CertificateRole) -> CertificateTemplate {
        let oneLine: [(String, String)]
        var extensions: [CertificateExtension]
        let digest: DigestAlgorithm
        let serial: [UInt8]
        let notBefore = date(2000, 1, 1)
        var notAfter = date(2099, 12, 31, 23, 59, 59)
        switch role {
        case .root, .foreignRoot:
            let name = role == .root ? "receipt-forge TEST Root CA — not Apple" : "receipt-forge TEST Foreign Root CA — not Apple"
            oneLine = [("C", "US"), ("O", "receipt-forge TEST"), ("OU", "receipt-forge TEST Certification Authority"), ("CN", name)]
            extensions = [
                .keyUsage([.keyCertSign, .cRLSign], critical: true),
                .basicConstraints(isCA: true, critical: true),
                .subjectKeyIdentifier,
                .authorityKeyIdentifier,
                .certificatePolicies([CertificatePolicy(oid: "1.2.840.113635.100.5.1", cpsURI: "\(loopbackBase)/certificateauthority/", userNotice: nil)]),
            ]
            digest = .sha256
            serial = role == .root ? [0x02] : [0x03]
        case .intermediate, .intermediateSHA1:
            let sha1 = role == .intermediateSHA1
            oneLine = [
                ("CN", "receipt-forge TEST Worldwide Developer Relations CA — not Apple"),
                ("OU", sha1 ? "receipt-forge TEST Certification Authority" : "G5"), ("O", "receipt-forge TEST"), ("C", "US"),
            ]
            extensions = [
                .basicConstraints(isCA: true, pathLength: 0, critical: true),
                .authorityKeyIdentifier,
                .authorityInformationAccess(ocsp: ["\(loopbackBase)/ocsp03-applerootca"], caIssuers: []),
                .subjectKeyIdentifier,
                .keyUsage([.keyCertSign, .cRLSign], critical: true),
                .custom(oid: KnownOID.appleWWDRIntermediateMarker, critical: false, derValue: [0x05, 0x00]),
            ]
            digest = sha1 ? .sha1 : .sha256
            serial = sha1 ? [0x01, 0xDE, 0xA5, 0x7E, 0x57, 0x5A, 0x11, 0x01] : [0x7C, 0xAF, 0x69, 0x0A, 0x25, 0xB7, 0x39, 0xFE, 0x7B, 0x9B, 0x44, 0x86, 0x2C, 0x05, 0x0E, 0x5A]
            notAfter = date(2098, 12, 31, 23, 59, 59)
        case .leaf, .leafSHA1:
            let sha1 = role == .leafSHA1
            oneLine = [
                ("CN", "receipt-forge TEST Receipt Signing — not Apple"), ("OU", "receipt-forge TEST Developer Relations"),
                ("O", "receipt-forge TEST"), ("C", "US"),
            ]
            extensions = [
                .basicConstraints(isCA: false, critical: true),
                .authorityKeyIdentifier,
                .authorityInformationAccess(ocsp: ["\(loopbackBase)/ocsp03-wwdrg505"], caIssuers: ["\(loopbackBase)/wwdrg5.der"]),
                .certificatePolicies([
                    CertificatePolicy(
                        oid: KnownOID.appleReceiptSigningPolicy, cpsURI: "\(loopbackBase)/certificateauthority/",
                        userNotice: "TEST certificate of receipt-forge, not issued by Apple. Reliance on it by any party is a test.")
                ]),
                .subjectKeyIdentifier,
                .keyUsage([.digitalSignature], critical: true),
                .custom(oid: KnownOID.appleReceiptSigningMarker, critical: false, derValue: [0x05, 0x00]),
            ]
            digest = sha1 ? .sha1 : .sha256
            serial = sha1 ? [0x0E, 0xC1, 0x05, 0x15, 0x0A, 0x51, 0x6A, 0x01] : [0x15, 0xE7, 0x9F, 0xCE, 0x52, 0x55, 0x0A, 0x65, 0x01, 0x7C, 0x91, 0xDF, 0xE4, 0xEE, 0xB3, 0x59]
            notAfter = date(2097, 12, 31, 23, 59, 59)
        case .storeKit:
            oneLine = [("CN", "receipt-forge TEST StoreKit — not Apple"), ("O", "receipt-forge TEST StoreKit"), ("OU", "StoreKit"), ("C", "US")]
            extensions = [
                .basicConstraints(isCA: true, critical: true),
                .keyUsage([.digitalSignature, .keyCertSign], critical: true),
                .extendedKeyUsage([.codeSigning], critical: true),
            ]
            digest = .sha256
            serial = [0x01]
        }
        return CertificateTemplate(
            serialNumber: serial, subject: DistinguishedName(oneLine), notBefore: notBefore,
            notAfter: notAfter, extensions: extensions, signatureDigest: digest)
    }

    static func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
        ReceiptDate.instant(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }
}
