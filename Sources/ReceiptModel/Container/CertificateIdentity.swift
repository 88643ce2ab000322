/// The names and serial of an X.509 certificate, read without any crypto.
///
/// Enough to write a SignerInfo's `issuerAndSerialNumber`, to find which embedded certificate a
/// SignerInfo points at, and to tell the order certificates are embedded in (leaf first or not).
public struct CertificateIdentity: Sendable, Hashable {
    /// The issuer Name TLV exactly as encoded in the certificate.
    public let issuer: [UInt8]
    /// The subject Name TLV exactly as encoded.
    public let subject: [UInt8]
    /// serialNumber INTEGER content.
    public let serialNumber: [UInt8]

    /// Reads `Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version?, serialNumber, signature, issuer, validity, subject, … } … }`.
    public init(derEncoded bytes: [UInt8]) throws(ReceiptDecodingError) {
        let reader = BERReader(bytes)
        let certificate = try reader.node(at: 0, expecting: ASN1Tag.sequence, "Certificate")
        let tbs = try reader.node(
            at: certificate.contentRange.lowerBound, limit: certificate.contentRange.upperBound,
            expecting: ASN1Tag.sequence, "tbsCertificate")
        var fields = try reader.children(of: tbs)
        if fields.first?.identifier == ASN1Tag.contextConstructed(0) { fields.removeFirst() }
        guard fields.count >= 5, fields[0].identifier == ASN1Tag.integer, fields[2].identifier == ASN1Tag.sequence,
            fields[4].identifier == ASN1Tag.sequence
        else {
            throw ReceiptDecodingError(.unexpectedTag, at: tbs.offset, "expected tbsCertificate { serialNumber, signature, issuer, validity, subject, … }")
        }
        serialNumber = Array(reader.content(of: fields[0]))
        issuer = Array(reader.encoding(of: fields[2]))
        subject = Array(reader.encoding(of: fields[4]))
    }

    public var isSelfIssued: Bool { issuer == subject }

    /// Whether a SignerInfo's `issuerAndSerialNumber` names this certificate.
    public func matches(_ signer: ReceiptContainer.Signer) -> Bool {
        signer.issuer == issuer && signer.serialNumber == serialNumber
    }

    /// How a list of embedded certificates is ordered relative to the chain of issuance.
    public enum ChainOrder: String, Sendable, Hashable, Codable {
        /// Each certificate is issued by the next one: leaf, intermediate…, root (Apple's order).
        case leafFirst = "leaf-first"
        /// Each certificate issues the next one: root first.
        case rootFirst = "root-first"
        case single
        case none
        /// Neither order (e.g. DER-sorted, or unrelated certificates).
        case other
    }

    public static func order(of certificates: [CertificateIdentity]) -> ChainOrder {
        switch certificates.count {
        case 0: return .none
        case 1: return .single
        default:
            let pairs = zip(certificates, certificates.dropFirst())
            if pairs.allSatisfy({ $0.issuer == $1.subject }) { return .leafFirst }
            if pairs.allSatisfy({ $1.issuer == $0.subject }) { return .rootFirst }
            return .other
        }
    }
}
