#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Everything that goes into a certificate except the keys and the issuer.
///
/// Issuing the same template with the same keys and issuer always yields byte-identical DER.
public struct CertificateTemplate: Sendable, Hashable {
    /// Big-endian serial number; must not be empty. Leading zero bytes are dropped when encoding.
    public var serialNumber: [UInt8]
    /// Subject name; also the issuer name when the certificate is self-signed.
    public var subject: DistinguishedName
    /// Start of validity, truncated to whole seconds.
    public var notBefore: Date
    /// End of validity, truncated to whole seconds; UTCTime up to 2049, GeneralizedTime from 2050 (RFC 5280).
    public var notAfter: Date
    /// Extensions, written in this order.
    public var extensions: [CertificateExtension]
    /// Digest of the PKCS#1 v1.5 certificate signature (e.g. `.sha256` ⇒ sha256WithRSAEncryption, `.sha1` ⇒ sha1WithRSAEncryption).
    public var signatureDigest: DigestAlgorithm

    /// Creates a template; see the properties for the contract of each field.
    public init(
        serialNumber: [UInt8],
        subject: DistinguishedName,
        notBefore: Date,
        notAfter: Date,
        extensions: [CertificateExtension] = [],
        signatureDigest: DigestAlgorithm = .sha256
    ) {
        self.serialNumber = serialNumber
        self.subject = subject
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.extensions = extensions
        self.signatureDigest = signatureDigest
    }
}
