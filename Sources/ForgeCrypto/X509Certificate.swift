internal import COpenSSL
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Owns one `X509` and is the only place that frees it.
///
/// `@unchecked Sendable` invariant: the certificate is never modified after init; it is only passed
/// to reading OpenSSL calls. The one piece of lazily cached state inside `X509` (decoded extension
/// flags) is filled in during `X509Certificate.init` and is guarded by OpenSSL's own lock anyway.
final class X509Backing: @unchecked Sendable {
    let pointer: OpaquePointer

    init(takingOwnershipOf pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        X509_free(pointer)
    }
}

/// A parsed X.509 certificate, keeping the exact DER it was read from.
///
/// All accessors are decoded once at init, so reading them never fails. RSA and EC (P-256, P-384)
/// certificates are accepted. Equality and hashing use ``derRepresentation``.
public struct X509Certificate: Sendable, Hashable {
    let backing: X509Backing

    /// The certificate's DER, byte for byte as given (never re-encoded).
    public let derRepresentation: [UInt8]
    /// Subject name on one line, RFC 2253 order (last RDN first, e.g. `"CN=…,O=…,C=US"`), UTF-8 left readable.
    public let subject: String
    /// Issuer name, formatted like ``subject``.
    public let issuer: String
    /// The first commonName in the subject, if any.
    public let commonName: String?
    /// The serial number's big-endian magnitude bytes, without leading zero padding.
    public let serialNumber: [UInt8]
    /// Start of the validity period.
    public let notBefore: Date
    /// End of the validity period.
    public let notAfter: Date
    /// The certified public key.
    public let publicKey: PublicKey
    /// The outer `signatureAlgorithm` OID, e.g. `"1.2.840.113549.1.1.11"` for sha256WithRSAEncryption.
    public let signatureAlgorithmOID: String
    /// Whether subject and issuer are the same name (the certificate claims to issue itself).
    public let isSelfIssued: Bool
    /// Whether basicConstraints is present with `cA` true.
    public let isCA: Bool
    /// SHA-256 of ``derRepresentation``.
    public let sha256Fingerprint: [UInt8]
    /// Every extension in certificate order, known to OpenSSL or not.
    public let extensions: [Extension]
    /// The key usage bits set, by RFC 5280 name (`digitalSignature`, `keyCertSign`, …); nil without the extension.
    public let keyUsage: [String]?
    /// The extended key usages, by name where OpenSSL knows them (`codeSigning`), else as dotted OIDs; nil without the extension.
    public let extendedKeyUsage: [String]?
    /// basicConstraints pathLenConstraint; nil when absent or unlimited.
    public let pathLength: Int?

    /// One extension as it appears in the certificate.
    public struct Extension: Sendable, Hashable {
        public let oid: String
        public let isCritical: Bool
        /// The extnValue OCTET STRING contents: the DER of the extension's value.
        public let value: [UInt8]
    }

    /// Parses one DER certificate; the bytes must be exactly one certificate, with nothing trailing.
    public init(derEncoded: [UInt8]) throws {
        OpenSSLErrorQueue.clear()
        let backing = try decodedExactly(
            derEncoded,
            failure: .certificateParsingFailed,
            function: "d2i_X509",
            decode: { d2i_X509(nil, $0, $1) },
            takeOwnership: X509Backing.init(takingOwnershipOf:)
        )
        try self.init(backing: backing, derEncoded: derEncoded)
    }

    /// The validity window of one DER certificate, read by walking its TLVs to `tbsCertificate.validity` (linear,
    /// bounds-checked) instead of a full parse: OpenSSL 3's `d2i_X509` decodes the public key through its provider
    /// framework, which costs more than the rest of `forge make`'s certificate work, and a caller that only checks
    /// dates (`make`'s warning) never needs the key.
    public static func validity(derEncoded der: [UInt8]) throws -> (notBefore: Date, notAfter: Date) {
        let failure = ForgeCryptoError(.certificateParsingFailed, "no tbsCertificate.validity in the certificate's DER")
        // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer,
        // validity SEQUENCE { notBefore Time, notAfter Time }, … }, … }
        guard der.first == 0x30, let (certificate, _) = DER.contentRange(der, at: 0), certificate < der.count, der[certificate] == 0x30,
            let (tbs, tbsEnd) = DER.contentRange(der, at: certificate), tbs < tbsEnd
        else { throw failure }
        var offset = tbs
        if der[offset] == 0xA0, let (_, versionEnd) = DER.contentRange(der, at: offset) { offset = versionEnd }
        for _ in 0..<3 {  // serialNumber, signature, issuer
            guard offset < tbsEnd, let (_, end) = DER.contentRange(der, at: offset) else { throw failure }
            offset = end
        }
        guard offset < tbsEnd, der[offset] == 0x30, let (validity, validityEnd) = DER.contentRange(der, at: offset),
            let (_, notBeforeEnd) = DER.contentRange(der, at: validity), notBeforeEnd < validityEnd,
            let (_, notAfterEnd) = DER.contentRange(der, at: notBeforeEnd), notAfterEnd <= validityEnd
        else { throw failure }
        return (try time(Array(der[validity..<notBeforeEnd]), field: "notBefore"), try time(Array(der[notBeforeEnd..<notAfterEnd]), field: "notAfter"))
    }

    /// One DER `Time` (UTCTime or GeneralizedTime), read by OpenSSL.
    private static func time(_ element: [UInt8], field: String) throws -> Date {
        let time: UnsafeMutablePointer<ASN1_TIME>? = element.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ASN1_TIME(nil, &cursor, buffer.count)
        }
        guard let time else { throw ForgeCryptoError(.certificateParsingFailed, "d2i_ASN1_TIME(\(field))") }
        defer { ASN1_TIME_free(time) }
        return try date(from: UnsafePointer(time), field: field)
    }

    /// The DER of the first `CERTIFICATE` block in `pem`, not parsed: for callers that only embed the bytes.
    public static func firstDER(inPEM pem: String) throws -> [UInt8] {
        try pemBlocks(in: pem, labeled: pemLabels, failure: .certificateParsingFailed, stoppingAfterFirst: true)[0]
    }

    /// Parses the first `CERTIFICATE` block in `pemEncoded`; other blocks (keys, CRLs) before it are skipped.
    public init(pemEncoded: String) throws {
        let blocks = try pemBlocks(in: pemEncoded, labeled: Self.pemLabels, failure: .certificateParsingFailed, stoppingAfterFirst: true)
        try self.init(derEncoded: blocks[0])
    }

    /// Parses every `CERTIFICATE` block in `pem`, in order; throws if there is none or any is malformed.
    public static func all(fromPEM pem: String) throws -> [X509Certificate] {
        try pemBlocks(in: pem, labeled: pemLabels, failure: .certificateParsingFailed, stoppingAfterFirst: false)
            .map(X509Certificate.init(derEncoded:))
    }

    /// PEM labels that hold a plain DER certificate (`X509 CERTIFICATE` is the historic spelling).
    private static let pemLabels: Set<String> = ["CERTIFICATE", "X509 CERTIFICATE"]

    /// The certificate as a `-----BEGIN CERTIFICATE-----` PEM block.
    public var pemRepresentation: String {
        PEM.encode(derRepresentation, label: "CERTIFICATE")
    }

    /// Whether an extension with this dotted OID is present, including ones OpenSSL does not know.
    public func hasExtension(oid: String) -> Bool {
        extensions.contains { $0.oid == oid }
    }

    /// The extnValue OCTET STRING contents (the DER of the inner value) of the first extension with this OID.
    public func extensionValue(oid: String) -> [UInt8]? {
        extensions.first { $0.oid == oid }?.value
    }

    /// Whether the first extension with this OID is marked critical; `nil` if there is no such extension.
    public func isCritical(oid: String) -> Bool? {
        extensions.first { $0.oid == oid }?.isCritical
    }

    /// The subject Name's DER and the subjectPublicKey BIT STRING's bits: what an OCSP CertID hashes of an issuer
    /// (RFC 6960 §4.1.1), and what a responder named by key hash is matched by. Nil when OpenSSL cannot encode them.
    public var ocspIdentity: (nameDER: [UInt8], keyBits: [UInt8])? {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let name = X509_get_subject_name(backing.pointer),
            let nameDER = try? encodedDER(failure: .certificateParsingFailed, context: "i2d_X509_NAME", by: { i2d_X509_NAME(name, $0) }),
            let bits = X509_get0_pubkey_bitstr(backing.pointer), let data = ASN1_STRING_get0_data(bits)
        else { return nil }
        let count = Int(ASN1_STRING_length(bits))
        guard count > 0 else { return nil }
        return (nameDER, Array(UnsafeBufferPointer(start: data, count: count)))
    }

    /// Whether `issuer` issued this certificate: names, key identifiers and key usage line up
    /// (`X509_check_issued`), and the signature verifies with the issuer's key.
    public func isIssued(by issuer: X509Certificate) -> Bool {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard X509_check_issued(issuer.backing.pointer, backing.pointer) == X509_V_OK else { return false }
        return X509_verify(backing.pointer, issuer.publicKey.backing.pointer) == 1
    }

    /// Certificates are equal when their DER is.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.derRepresentation == rhs.derRepresentation
    }

    /// Hashes the DER, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derRepresentation)
    }
}

extension X509Certificate {
    private init(backing: X509Backing, derEncoded: [UInt8]) throws {
        let certificate = backing.pointer
        guard let subjectName = X509_get_subject_name(certificate), let issuerName = X509_get_issuer_name(certificate) else {
            throw ForgeCryptoError(.certificateParsingFailed, "X509_get_subject_name")
        }
        guard let keyInfo = X509_get_X509_PUBKEY(certificate) else {
            throw ForgeCryptoError(.certificateParsingFailed, "X509_get_X509_PUBKEY")
        }
        let keyDER = try encodedDER(failure: .certificateParsingFailed, context: "i2d_X509_PUBKEY") { i2d_X509_PUBKEY(keyInfo, $0) }
        do {
            self.publicKey = try PublicKey(derRepresentation: keyDER)
        } catch {
            throw ForgeCryptoError(.certificateParsingFailed, "subjectPublicKeyInfo rejected (\(error))")
        }
        self.backing = backing
        self.derRepresentation = derEncoded
        self.subject = try Self.formatted(subjectName)
        self.issuer = try Self.formatted(issuerName)
        self.commonName = try Self.firstCommonName(in: subjectName)
        guard let serial = X509_get0_serialNumber(certificate) else {
            throw ForgeCryptoError(.certificateParsingFailed, "X509_get0_serialNumber")
        }
        self.serialNumber = contents(of: serial)
        self.notBefore = try Self.date(from: X509_get0_notBefore(certificate), field: "notBefore")
        self.notAfter = try Self.date(from: X509_get0_notAfter(certificate), field: "notAfter")
        self.signatureAlgorithmOID = try Self.signatureAlgorithmOID(of: certificate)
        self.isSelfIssued = X509_NAME_cmp(subjectName, issuerName) == 0
        let flags = X509_get_extension_flags(certificate)
        self.isCA = flags & UInt32(EXFLAG_CA) != 0
        self.extensions = try Self.decodedExtensions(of: certificate)
        self.keyUsage = Self.keyUsageNames(certificate)
        self.extendedKeyUsage = try Self.extendedKeyUsageNames(certificate)
        let pathLength = X509_get_pathlen(certificate)
        self.pathLength = pathLength >= 0 ? pathLength : nil
        self.sha256Fingerprint = try DigestAlgorithm.sha256.digest(derEncoded)
    }

    private static func formatted(_ name: OpaquePointer) throws -> String {
        let bytes = try bytesWritten(failure: .certificateParsingFailed, context: "X509_NAME_print_ex") { bio in
            X509_NAME_print_ex(bio, name, 0, COpenSSL_XN_FLAG_RFC2253_UTF8()) >= 0
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func firstCommonName(in name: OpaquePointer) throws -> String? {
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0 else { return nil }
        guard let entry = X509_NAME_get_entry(name, index), let value = X509_NAME_ENTRY_get_data(entry) else {
            throw ForgeCryptoError(.certificateParsingFailed, "X509_NAME_get_entry")
        }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, value)
        defer { COpenSSL_free(utf8) }
        guard length >= 0, let utf8 else {
            throw ForgeCryptoError(.certificateParsingFailed, "ASN1_STRING_to_UTF8(commonName)")
        }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    private static func date(from time: UnsafePointer<ASN1_TIME>?, field: String) throws -> Date {
        var components = tm()
        guard let time, ASN1_TIME_to_tm(time, &components) == 1 else {
            throw ForgeCryptoError(.certificateParsingFailed, "ASN1_TIME_to_tm(\(field))")
        }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&components)))
    }

    private static func signatureAlgorithmOID(of certificate: OpaquePointer) throws -> String {
        var algorithm: UnsafePointer<X509_ALGOR>?
        X509_get0_signature(nil, &algorithm, certificate)
        var object: OpaquePointer?
        X509_ALGOR_get0(&object, nil, nil, algorithm)
        guard let object else {
            throw ForgeCryptoError(.certificateParsingFailed, "X509_get0_signature")
        }
        return try dottedOID(of: object, failure: .certificateParsingFailed)
    }

    /// RFC 5280 §4.2.1.3 names of the key usage bits OpenSSL decoded (`X509_get_key_usage`).
    private static func keyUsageNames(_ certificate: OpaquePointer) -> [String]? {
        guard X509_get_extension_flags(certificate) & UInt32(EXFLAG_KUSAGE) != 0 else { return nil }
        let bits = X509_get_key_usage(certificate)
        let names: [(UInt32, String)] = [
            (0x80, "digitalSignature"), (0x40, "nonRepudiation"), (0x20, "keyEncipherment"), (0x10, "dataEncipherment"),
            (0x08, "keyAgreement"), (0x04, "keyCertSign"), (0x02, "cRLSign"), (0x01, "encipherOnly"), (0x8000, "decipherOnly"),
        ]
        return names.filter { bits & $0.0 != 0 }.map(\.1)
    }

    /// The EKU OIDs, named like RFC 5280 where known; read from the extension so unknown purposes show too.
    private static func extendedKeyUsageNames(_ certificate: OpaquePointer) throws -> [String]? {
        guard let value = try decodedExtensions(of: certificate).first(where: { $0.oid == "2.5.29.37" })?.value else { return nil }
        let known = [
            "1.3.6.1.5.5.7.3.1": "serverAuth", "1.3.6.1.5.5.7.3.2": "clientAuth", "1.3.6.1.5.5.7.3.3": "codeSigning",
            "1.3.6.1.5.5.7.3.4": "emailProtection", "1.3.6.1.5.5.7.3.8": "timeStamping", "1.3.6.1.5.5.7.3.9": "OCSPSigning",
            "2.5.29.37.0": "anyExtendedKeyUsage",
        ]
        return try DER.objectIdentifiers(inSequence: value).map { known[$0] ?? $0 }
    }

    private static func decodedExtensions(of certificate: OpaquePointer) throws -> [Extension] {
        try (0..<X509_get_ext_count(certificate)).map { index in
            guard let `extension` = X509_get_ext(certificate, index),
                let object = X509_EXTENSION_get_object(`extension`),
                let value = X509_EXTENSION_get_data(`extension`)
            else {
                throw ForgeCryptoError(.certificateParsingFailed, "X509_get_ext(\(index))")
            }
            return Extension(
                oid: try dottedOID(of: object, failure: .certificateParsingFailed),
                isCritical: X509_EXTENSION_get_critical(`extension`) != 0,
                value: contents(of: value)
            )
        }
    }
}

/// A certified public key: RSA (receipts) or EC (StoreKit 2 JWS).
public enum PublicKey: Sendable, Hashable {
    case rsa(RSAPublicKey)
    case ec(ECPublicKey)

    /// Parses SubjectPublicKeyInfo DER: rsaEncryption, or id-ecPublicKey on P-256 or P-384.
    public init(derRepresentation: [UInt8]) throws {
        if let rsa = try? RSAPublicKey(derRepresentation: derRepresentation) {
            self = .rsa(rsa)
        } else {
            self = .ec(try ECPublicKey(derRepresentation: derRepresentation))
        }
    }

    public var rsa: RSAPublicKey? {
        if case .rsa(let key) = self { return key }
        return nil
    }

    public var ec: ECPublicKey? {
        if case .ec(let key) = self { return key }
        return nil
    }

    public var derRepresentation: [UInt8] {
        switch self {
        case .rsa(let key): key.derRepresentation
        case .ec(let key): key.derRepresentation
        }
    }

    var backing: EVPKeyBacking {
        switch self {
        case .rsa(let key): key.backing
        case .ec(let key): key.backing
        }
    }
}
