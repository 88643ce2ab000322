#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import ForgeCrypto
import ReceiptModel
import _ForgeSupport
public import StoreModel

/// A certificate of the Apple-shaped EC test PKI that signs StoreKit 2 JWS.
public enum JWSRole: String, PKIRole, Codable {
    /// P-384 root, plays Apple Root CA - G3.
    case root
    /// P-384 intermediate, plays Apple Worldwide Developer Relations CA - G6 (marker 1.2.840.113635.100.6.2.1).
    case intermediate
    /// P-256 signing leaf, plays "Prod ECC Mac App Store and iTunes Store Receipt Signing" (marker 1.2.840.113635.100.6.11.1).
    case leaf
    /// P-256 self-signed certificate, plays Xcode's "StoreKit Testing in Xcode".
    case xcode

    public var fileStem: String {
        switch self {
        case .root: "jws-root-g3"
        case .intermediate: "jws-wwdr-g6"
        case .leaf: "jws-signing"
        case .xcode: "jws-xcode"
        }
    }

    /// P-384 for the root and intermediate, P-256 for the keys that sign JWS (ES256).
    public var keyParameters: ECCurve { self == .root || self == .intermediate ? .p384 : .p256 }
    public var issuer: JWSRole? {
        switch self {
        case .root, .xcode: nil
        case .intermediate: .root
        case .leaf: .intermediate
        }
    }

    public var purpose: String {
        switch self {
        case .root: "Trust anchor of App Store-shaped JWS (plays Apple Root CA - G3), P-384."
        case .intermediate: "WWDR G6-like intermediate, P-384: CA, pathlen 0, marker 1.2.840.113635.100.6.2.1."
        case .leaf: "JWS-signing leaf, P-256: digitalSignature, marker 1.2.840.113635.100.6.11.1."
        case .xcode: "Xcode-like self-signed P-256 certificate that signs `xcode-*` JWS."
        }
    }

    public typealias Key = ECPrivateKey
    public var template: CertificateTemplate { JWSProfile.template(for: self) }
    public static let bundledName = "the bundled JWS test PKI"
    /// `Certificates/jws/` has no README.
    public static let readmeIntro: String? = nil
}

/// The certificate templates of the EC test PKI, shaped after Apple's JWS chain (storekit2-facts §2).
public enum JWSProfile {
    static let base = TestPKIProfile.loopbackBase

    /// `role`'s template; with `ocsp`, the leaf's and the intermediate's AIA name those responders (the one `forge
    /// serve` runs; none when empty) instead of the loopback port that refuses, and the root still carries none
    /// (Apple's Swift verifier refuses a root with an OCSP URL).
    public static func template(for role: JWSRole, ocsp: [String]? = nil) -> CertificateTemplate {
        let name: [(String, String)]
        var extensions: [CertificateExtension]
        let serial: [UInt8]
        var digest = DigestAlgorithm.sha384
        var notBefore = ReceiptDate.instant(year: 2020, month: 1, day: 1)
        var notAfter = ReceiptDate.instant(year: 2049, month: 12, day: 31, hour: 23, minute: 59, second: 59)
        switch role {
        case .root:
            name = [("CN", "receipt-forge TEST Root CA - G3 — not Apple"), ("OU", "receipt-forge TEST Certification Authority"), ("O", "receipt-forge TEST"), ("C", "US")]
            extensions = [.subjectKeyIdentifier, .basicConstraints(isCA: true, critical: true), .keyUsage([.keyCertSign, .cRLSign], critical: true)]
            serial = [0x2D, 0xC5, 0xFC, 0x88, 0xD2, 0xC5, 0x4B, 0x95]
        case .intermediate:
            name = [("CN", "receipt-forge TEST Worldwide Developer Relations CA — not Apple"), ("OU", "G6"), ("O", "receipt-forge TEST"), ("C", "US")]
            extensions = [
                .basicConstraints(isCA: true, pathLength: 0, critical: true), .authorityKeyIdentifier,
                .authorityInformationAccess(ocsp: ocsp ?? ["\(base)/ocsp03-applerootcag3"], caIssuers: []),
                .custom(oid: "2.5.29.31", critical: false, derValue: crlDistributionPoint("\(base)/applerootcag3.crl")), .subjectKeyIdentifier,
                .keyUsage([.keyCertSign, .cRLSign], critical: true),
                .custom(oid: KnownOID.appleWWDRIntermediateMarker, critical: false, derValue: [0x05, 0x00]),
            ]
            serial = [0x74, 0x8A, 0x3C, 0x2E, 0x11, 0x0F, 0x66, 0x06]
            notAfter = ReceiptDate.instant(year: 2048, month: 12, day: 31, hour: 23, minute: 59, second: 59)
        case .leaf:
            name = [
                ("CN", "receipt-forge TEST Prod ECC Receipt Signing — not Apple"),
                ("OU", "receipt-forge TEST Worldwide Developer Relations"), ("O", "receipt-forge TEST"), ("C", "US"),
            ]
            extensions = [
                .basicConstraints(isCA: false, critical: true), .authorityKeyIdentifier,
                .authorityInformationAccess(ocsp: ocsp ?? ["\(base)/ocsp03-wwdrg602"], caIssuers: ["\(base)/wwdrg6.der"]),
                .certificatePolicies([
                    CertificatePolicy(
                        oid: KnownOID.appleReceiptSigningPolicy, cpsURI: "\(base)/certificateauthority/",
                        userNotice: "TEST certificate of receipt-forge, not issued by Apple. Reliance on it by any party is a test.")
                ]),
                .subjectKeyIdentifier, .keyUsage([.digitalSignature], critical: true),
                .custom(oid: KnownOID.appleReceiptSigningMarker, critical: false, derValue: [0x05, 0x00]),
            ]
            serial = [0x79, 0x9C, 0x4E, 0x1B, 0x63, 0x9C, 0x2A, 0x23, 0x5C, 0x33, 0x5B, 0x0A]
            notAfter = ReceiptDate.instant(year: 2047, month: 12, day: 31, hour: 23, minute: 59, second: 59)
        case .xcode:
            name = [("CN", "receipt-forge TEST StoreKit Testing in Xcode — not Apple"), ("O", "receipt-forge TEST StoreKit Testing in Xcode")]
            extensions = [.basicConstraints(isCA: true, pathLength: 0, critical: true), .keyUsage([.digitalSignature], critical: true), .subjectKeyIdentifier]
            serial = [0x01]
            digest = .sha256
            notBefore = ReceiptDate.instant(year: 2023, month: 10, day: 19)
        }
        return CertificateTemplate(
            serialNumber: serial, subject: DistinguishedName(name), notBefore: notBefore, notAfter: notAfter, extensions: extensions, signatureDigest: digest)
    }

    /// `CRLDistributionPoints ::= SEQUENCE OF DistributionPoint` with one fullName URI.
    static func crlDistributionPoint(_ uri: String) -> [UInt8] {
        func element(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
            let count = contents.count
            let length: [UInt8] = count < 0x80 ? [UInt8(count)] : (count < 0x100 ? [0x81, UInt8(count)] : [0x82, UInt8(count >> 8), UInt8(count & 0xFF)])
            return [tag] + length + contents
        }
        return element(0x30, element(0x30, element(0xA0, element(0xA0, element(0x86, Array(uri.utf8))))))
    }
}

extension CertificateSet where Role == JWSRole {
    /// A fresh JWS set (`forge ca init --jws`) whose leaf and intermediate name `ocsp` as their responders (the root
    /// names none); the loopback port that refuses when nil.
    public static func generate(ocsp: [String]?) throws(ForgeError) -> Self { try generate(templates: { JWSProfile.template(for: $0, ocsp: ocsp) }) }
}
