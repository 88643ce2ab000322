/// What an RSA and an EC private key share as the key of a certificate: PEM in and out, the public half a
/// certificate carries, issuing the certificates it signs and generating a fresh one. A certificate set is
/// written once over it, whatever its algorithm.
public protocol CertificateKey: Sendable {
    /// What generating a key takes: the modulus size in bits (RSA), the curve (EC).
    associatedtype Parameters: Sendable
    static func generate(_ parameters: Parameters) throws -> Self
    init(pemRepresentation: String) throws
    var pemRepresentation: String { get throws }
    /// The public half, as a certificate carries it.
    var certifiedKey: PublicKey { get }
    /// Issues `template` for `subjectKey`, signed by this key; self-signed when `issuer` is nil. Deterministic:
    /// same inputs, same DER (PKCS#1 v1.5 for RSA, RFC 6979 for EC).
    func issue(_ template: CertificateTemplate, subjectKey: PublicKey, issuer: X509Certificate?) throws -> X509Certificate
}

extension RSAPrivateKey: CertificateKey {
    public static func generate(_ bits: Int) throws -> RSAPrivateKey { try generate(bits: bits) }
    public var certifiedKey: PublicKey { .rsa(publicKey) }
    public func issue(_ template: CertificateTemplate, subjectKey: PublicKey, issuer: X509Certificate?) throws -> X509Certificate {
        try X509Certificate.issue(template, subjectKey: subjectKey.backing, issuer: issuer, issuerKey: backing, resign: nil)
    }
}

extension ECPrivateKey: CertificateKey {
    public static func generate(_ curve: ECCurve) throws -> ECPrivateKey { try generate(curve: curve) }
    public var certifiedKey: PublicKey { .ec(publicKey) }
    public func issue(_ template: CertificateTemplate, subjectKey: PublicKey, issuer: X509Certificate?) throws -> X509Certificate {
        try X509Certificate.issue(template, subjectKey: subjectKey, issuer: issuer, issuerKey: self)
    }
}
