internal import COpenSSL

/// A bit of the keyUsage extension (RFC 5280 §4.2.1.3); raw values are OpenSSL's names.
public enum KeyUsage: String, Sendable, Hashable, CaseIterable {
    /// The RFC 5280 key usage bits, in bit order.
    case digitalSignature, nonRepudiation, keyEncipherment, dataEncipherment, keyAgreement, keyCertSign, cRLSign
}

/// A purpose in the extendedKeyUsage extension (RFC 5280 §4.2.1.12).
public enum ExtendedKeyUsage: Sendable, Hashable {
    /// The id-kp purposes of RFC 5280 §4.2.1.12.
    case serverAuth, clientAuth, codeSigning, emailProtection, timeStamping
    /// Any other purpose, by dotted-decimal OID.
    case oid(String)

    fileprivate var configurationName: String {
        switch self {
        case .serverAuth: "serverAuth"
        case .clientAuth: "clientAuth"
        case .codeSigning: "codeSigning"
        case .emailProtection: "emailProtection"
        case .timeStamping: "timeStamping"
        case .oid(let oid): oid
        }
    }
}

/// One PolicyInformation of the certificatePolicies extension, with optional CPS and user-notice qualifiers.
public struct CertificatePolicy: Sendable, Hashable {
    /// The policy identifier, dotted decimal.
    public var oid: String
    /// A CPS pointer qualifier (id-qt-cps), encoded as IA5String; must be ASCII.
    public var cpsURI: String?
    /// A user-notice qualifier (id-qt-unotice) whose explicitText is a UTF8String; written after the CPS qualifier.
    public var userNotice: String?

    /// Creates a policy; qualifiers that are `nil` are left out.
    public init(oid: String, cpsURI: String? = nil, userNotice: String? = nil) {
        self.oid = oid
        self.cpsURI = cpsURI
        self.userNotice = userNotice
    }
}

/// A certificate extension to be written by ``X509Certificate/issue(_:subjectKey:issuer:issuerKey:)``.
///
/// Standard extensions are built by OpenSSL from its configuration syntax; certificatePolicies and
/// ``custom(oid:critical:derValue:)`` are written from DER that ForgeCrypto builds itself.
public struct CertificateExtension: Sendable, Hashable {
    private enum Storage: Sendable, Hashable {
        case basicConstraints(isCA: Bool, pathLength: Int?, critical: Bool)
        case keyUsage([KeyUsage], critical: Bool)
        case extendedKeyUsage([ExtendedKeyUsage], critical: Bool)
        case certificatePolicies([CertificatePolicy], critical: Bool)
        case authorityInformationAccess(ocsp: [String], caIssuers: [String])
        case subjectKeyIdentifier
        case authorityKeyIdentifier
        case custom(oid: String, critical: Bool, derValue: [UInt8])
    }

    private let storage: Storage

    private init(_ storage: Storage) {
        self.storage = storage
    }

    /// basicConstraints; `pathLength` (only meaningful for CAs) must not be negative.
    public static func basicConstraints(isCA: Bool, pathLength: Int? = nil, critical: Bool = true) -> Self {
        Self(.basicConstraints(isCA: isCA, pathLength: pathLength, critical: critical))
    }

    /// keyUsage with the given bits; the list must not be empty.
    public static func keyUsage(_ usages: [KeyUsage], critical: Bool = true) -> Self {
        Self(.keyUsage(usages, critical: critical))
    }

    /// extendedKeyUsage with the given purposes, in order; the list must not be empty.
    public static func extendedKeyUsage(_ purposes: [ExtendedKeyUsage], critical: Bool = false) -> Self {
        Self(.extendedKeyUsage(purposes, critical: critical))
    }

    /// certificatePolicies with the given policies, in order; the list must not be empty.
    public static func certificatePolicies(_ policies: [CertificatePolicy], critical: Bool = false) -> Self {
        Self(.certificatePolicies(policies, critical: critical))
    }

    /// authorityInfoAccess (non-critical, as RFC 5280 requires): OCSP responders first, then caIssuers.
    /// URIs must be printable ASCII without spaces or commas; at least one is required.
    public static func authorityInformationAccess(ocsp: [String], caIssuers: [String]) -> Self {
        Self(.authorityInformationAccess(ocsp: ocsp, caIssuers: caIssuers))
    }

    /// subjectKeyIdentifier: SHA-1 of the subject's public key bits (OpenSSL's `hash`).
    public static var subjectKeyIdentifier: Self { Self(.subjectKeyIdentifier) }

    /// authorityKeyIdentifier with the issuer's key identifier (OpenSSL's `keyid:always`).
    /// The issuer certificate must carry a subjectKeyIdentifier; for a self-signed certificate the own key is used.
    public static var authorityKeyIdentifier: Self { Self(.authorityKeyIdentifier) }

    /// subjectAltName with DNS names and IP addresses (4 or 16 bytes each), as a TLS serving certificate needs.
    public static func subjectAlternativeNames(dnsNames: [String], ipAddresses: [[UInt8]]) throws -> Self {
        let names = try dnsNames.map { name in
            guard name.utf8.allSatisfy({ $0 < 0x80 }) else { throw ForgeCryptoError(.invalidInput, "the DNS name \"\(name)\" is not ASCII") }
            return DER.element(tag: 0x82, contents: Array(name.utf8))  // [2] IMPLICIT IA5String
        }
        let addresses = ipAddresses.map { DER.element(tag: 0x87, contents: $0) }  // [7] IMPLICIT OCTET STRING
        return custom(oid: "2.5.29.17", critical: false, derValue: DER.sequence(names + addresses))
    }

    /// Any extension, written verbatim: `derValue` becomes the extnValue contents (it is not checked to be valid DER).
    /// E.g. Apple's receipt-signing marker `1.2.840.113635.100.6.11.1` with DER NULL `[0x05, 0x00]`.
    public static func custom(oid: String, critical: Bool, derValue: [UInt8]) -> Self {
        Self(.custom(oid: oid, critical: critical, derValue: derValue))
    }

    /// Encodes the extension and appends it to `certificate`; `context` must have subject, issuer and issuer key set.
    func append(to certificate: OpaquePointer, context: inout X509V3_CTX) throws {
        switch storage {
        case let .basicConstraints(isCA, pathLength, critical):
            if let pathLength, pathLength < 0 {
                throw ForgeCryptoError(.invalidInput, "basicConstraints pathLength \(pathLength) is negative")
            }
            let value = [critical ? "critical" : nil, isCA ? "CA:TRUE" : "CA:FALSE", pathLength.map { "pathlen:\($0)" }]
                .compactMap { $0 }.joined(separator: ",")
            try Self.appendConfigured(NID_basic_constraints, "basicConstraints", value, to: certificate, context: &context)

        case let .keyUsage(usages, critical):
            guard !usages.isEmpty else {
                throw ForgeCryptoError(.invalidInput, "keyUsage needs at least one usage")
            }
            let value = ((critical ? ["critical"] : []) + usages.map(\.rawValue)).joined(separator: ",")
            try Self.appendConfigured(NID_key_usage, "keyUsage", value, to: certificate, context: &context)

        case let .extendedKeyUsage(purposes, critical):
            guard !purposes.isEmpty else {
                throw ForgeCryptoError(.invalidInput, "extendedKeyUsage needs at least one purpose")
            }
            for case .oid(let oid) in purposes where !Self.isDottedDecimal(oid) {
                throw ForgeCryptoError(.invalidInput, "extendedKeyUsage purpose \"\(oid)\" is not a dotted-decimal OID")
            }
            let value = ((critical ? ["critical"] : []) + purposes.map(\.configurationName)).joined(separator: ",")
            try Self.appendConfigured(NID_ext_key_usage, "extendedKeyUsage", value, to: certificate, context: &context)

        case let .certificatePolicies(policies, critical):
            guard !policies.isEmpty else {
                throw ForgeCryptoError(.invalidInput, "certificatePolicies needs at least one policy")
            }
            try Self.appendVerbatim(
                oid: "2.5.29.32", critical: critical, derValue: Self.certificatePoliciesDER(policies), to: certificate)

        case let .authorityInformationAccess(ocsp, caIssuers):
            let entries = ocsp.map { ("OCSP", $0) } + caIssuers.map { ("caIssuers", $0) }
            guard !entries.isEmpty else {
                throw ForgeCryptoError(.invalidInput, "authorityInfoAccess needs at least one URI")
            }
            for (_, uri) in entries where uri.isEmpty || !uri.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ",") }) {
                throw ForgeCryptoError(.invalidInput, "authorityInfoAccess URI \"\(uri)\" must be printable ASCII without spaces or commas")
            }
            let value = entries.map { "\($0.0);URI:\($0.1)" }.joined(separator: ",")
            try Self.appendConfigured(NID_info_access, "authorityInfoAccess", value, to: certificate, context: &context)

        case .subjectKeyIdentifier:
            try Self.appendConfigured(NID_subject_key_identifier, "subjectKeyIdentifier", "hash", to: certificate, context: &context)

        case .authorityKeyIdentifier:
            try Self.appendConfigured(
                NID_authority_key_identifier, "authorityKeyIdentifier", "keyid:always", to: certificate, context: &context)

        case let .custom(oid, critical, derValue):
            try Self.appendVerbatim(oid: oid, critical: critical, derValue: derValue, to: certificate)
        }
    }

    private static func appendConfigured(
        _ nid: Int32,
        _ name: String,
        _ value: String,
        to certificate: OpaquePointer,
        context: inout X509V3_CTX
    ) throws {
        guard let `extension` = X509V3_EXT_nconf_nid(nil, &context, nid, value) else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "X509V3_EXT_nconf_nid(\(name), \"\(value)\")")
        }
        defer { X509_EXTENSION_free(`extension`) }
        guard X509_add_ext(certificate, `extension`, -1) == 1 else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "X509_add_ext(\(name))")
        }
    }

    private static func appendVerbatim(oid: String, critical: Bool, derValue: [UInt8], to certificate: OpaquePointer) throws {
        guard let length = Int32(exactly: derValue.count) else {
            throw ForgeCryptoError(.invalidInput, "extension \(oid) value is too long")
        }
        try DER.withObject(oid) { object in
            guard let octets = ASN1_OCTET_STRING_new() else {
                throw ForgeCryptoError(.certificateIssuanceFailed, "ASN1_OCTET_STRING_new")
            }
            defer { ASN1_OCTET_STRING_free(octets) }
            guard ASN1_OCTET_STRING_set(octets, derValue, length) == 1 else {
                throw ForgeCryptoError(.certificateIssuanceFailed, "ASN1_OCTET_STRING_set(\(oid))")
            }
            guard let `extension` = X509_EXTENSION_create_by_OBJ(nil, object, critical ? 1 : 0, octets) else {
                throw ForgeCryptoError(.certificateIssuanceFailed, "X509_EXTENSION_create_by_OBJ(\(oid))")
            }
            defer { X509_EXTENSION_free(`extension`) }
            guard X509_add_ext(certificate, `extension`, -1) == 1 else {
                throw ForgeCryptoError(.certificateIssuanceFailed, "X509_add_ext(\(oid))")
            }
        }
    }

    /// `certificatePolicies ::= SEQUENCE OF PolicyInformation` (RFC 5280 §4.2.1.4), qualifiers CPS then user notice.
    private static func certificatePoliciesDER(_ policies: [CertificatePolicy]) throws -> [UInt8] {
        try DER.sequence(
            policies.map { policy in
                var qualifiers: [[UInt8]] = []
                if let cpsURI = policy.cpsURI {
                    qualifiers.append(DER.sequence([try DER.objectIdentifier("1.3.6.1.5.5.7.2.1"), try DER.ia5String(cpsURI)]))
                }
                if let userNotice = policy.userNotice {
                    let notice = DER.sequence([DER.utf8String(userNotice)])
                    qualifiers.append(DER.sequence([try DER.objectIdentifier("1.3.6.1.5.5.7.2.2"), notice]))
                }
                let identifier = try DER.objectIdentifier(policy.oid)
                return DER.sequence(qualifiers.isEmpty ? [identifier] : [identifier, DER.sequence(qualifiers)])
            })
    }

    private static func isDottedDecimal(_ text: String) -> Bool {
        let arcs = text.split(separator: ".", omittingEmptySubsequences: false)
        return arcs.count >= 2 && arcs.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }
    }
}
