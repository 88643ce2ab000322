internal import COpenSSL
#if canImport(FoundationEssentials)
    internal import FoundationEssentials
#else
    internal import Foundation
#endif

extension X509Certificate {
    /// Issues an X.509 v3 certificate certifying `subjectKey`, signed by `issuerKey` with PKCS#1 v1.5 over `template.signatureDigest`.
    ///
    /// `issuer == nil` makes it self-signed (issuer name = subject name). Writes version, serial, names, validity and
    /// SubjectPublicKeyInfo, then the extensions in template order. `issuerKey` is not checked against `issuer`, so
    /// deliberately mis-signed certificates can be forged. Deterministic: same inputs ⇒ same DER.
    public static func issue(
        _ template: CertificateTemplate,
        subjectKey: RSAPublicKey,
        issuer: X509Certificate?,
        issuerKey: RSAPrivateKey
    ) throws -> X509Certificate {
        try issue(template, subjectKey: subjectKey.backing, issuer: issuer, issuerKey: issuerKey.backing, resign: nil)
    }

    /// Issues a certificate signed with ECDSA by `issuerKey` (ecdsa-with-SHA256/384 after `template.signatureDigest`).
    /// OpenSSL signs with a random nonce; the signature is then replaced by an RFC 6979 one over the same
    /// TBSCertificate, so the same inputs give the same DER, as with RSA.
    public static func issue(
        _ template: CertificateTemplate,
        subjectKey: PublicKey,
        issuer: X509Certificate?,
        issuerKey: ECPrivateKey
    ) throws -> X509Certificate {
        try issue(template, subjectKey: subjectKey.backing, issuer: issuer, issuerKey: issuerKey.backing) { tbs, algorithm in
            let signature = try issuerKey.derSignature(forDigest: try template.signatureDigest.digest(tbs), algorithm: template.signatureDigest)
            return DER.sequence([tbs, algorithm, DER.element(tag: 0x03, contents: [0x00] + signature)])
        }
    }

    static func issue(
        _ template: CertificateTemplate,
        subjectKey: EVPKeyBacking,
        issuer: X509Certificate?,
        issuerKey: EVPKeyBacking,
        resign: ((_ tbs: [UInt8], _ algorithm: [UInt8]) throws -> [UInt8])?
    ) throws -> X509Certificate {
        OpenSSLErrorQueue.clear()
        guard let certificate = X509_new() else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "X509_new")
        }
        defer { X509_free(certificate) }
        guard X509_set_version(certificate, Int(X509_VERSION_3)) == 1 else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "X509_set_version")
        }
        try setSerialNumber(template.serialNumber, on: certificate)
        try template.subject.withX509Name { subjectName in
            guard X509_set_subject_name(certificate, subjectName) == 1 else {
                throw ForgeCryptoError(.certificateIssuanceFailed, "X509_set_subject_name")
            }
            let issuerName = issuer.map { X509_get_subject_name($0.backing.pointer) } ?? subjectName
            guard X509_set_issuer_name(certificate, issuerName) == 1 else {
                throw ForgeCryptoError(.certificateIssuanceFailed, "X509_set_issuer_name")
            }
        }
        guard let notBefore = timeT(template.notBefore), let notAfter = timeT(template.notAfter) else {
            throw ForgeCryptoError(.invalidInput, "validity \(template.notBefore.timeIntervalSince1970) to \(template.notAfter.timeIntervalSince1970) s since 1970 is not a time_t")
        }
        guard ASN1_TIME_set(X509_getm_notBefore(certificate), notBefore) != nil else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "ASN1_TIME_set(notBefore)")
        }
        guard ASN1_TIME_set(X509_getm_notAfter(certificate), notAfter) != nil else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "ASN1_TIME_set(notAfter)")
        }
        guard X509_set_pubkey(certificate, subjectKey.pointer) == 1 else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "X509_set_pubkey")
        }

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.backing.pointer ?? certificate, certificate, nil, nil, 0)
        guard X509V3_set_issuer_pkey(&context, issuerKey.pointer) == 1 else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "X509V3_set_issuer_pkey")
        }
        for `extension` in template.extensions {
            try `extension`.append(to: certificate, context: &context)
        }

        guard X509_sign(certificate, issuerKey.pointer, try template.signatureDigest.fetchedMethod) > 0 else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "X509_sign(\(template.signatureDigest))")
        }
        var der = try encodedDER(failure: .certificateIssuanceFailed, context: "i2d_X509") { i2d_X509(certificate, $0) }
        if let resign {
            let tbs = try encodedDER(failure: .certificateIssuanceFailed, context: "i2d_re_X509_tbs") { i2d_re_X509_tbs(certificate, $0) }
            var algorithm: UnsafePointer<X509_ALGOR>?
            X509_get0_signature(nil, &algorithm, certificate)
            guard let algorithm else { throw ForgeCryptoError(.certificateIssuanceFailed, "X509_get0_signature") }
            let algorithmDER = try encodedDER(failure: .certificateIssuanceFailed, context: "i2d_X509_ALGOR") { i2d_X509_ALGOR(algorithm, $0) }
            der = try resign(tbs, algorithmDER)
        }
        return try X509Certificate(derEncoded: der)
    }

    private static func setSerialNumber(_ serialNumber: [UInt8], on certificate: OpaquePointer) throws {
        guard !serialNumber.isEmpty, let length = Int32(exactly: serialNumber.count) else {
            throw ForgeCryptoError(.invalidInput, "the serial number must not be empty")
        }
        guard let number = BN_bin2bn(serialNumber, length, nil) else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "BN_bin2bn(serialNumber)")
        }
        defer { BN_free(number) }
        guard let integer = BN_to_ASN1_INTEGER(number, nil) else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "BN_to_ASN1_INTEGER(serialNumber)")
        }
        defer { ASN1_INTEGER_free(integer) }
        guard X509_set_serialNumber(certificate, integer) == 1 else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "X509_set_serialNumber")
        }
    }
}
