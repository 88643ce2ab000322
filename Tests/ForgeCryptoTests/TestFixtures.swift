import Foundation
import ForgeCrypto

/// RSA keys generated once for the whole test run (key generation is the slow part).
struct TestKeys: Sendable {
    let root: RSAPrivateKey
    let intermediate: RSAPrivateKey
    let leaf: RSAPrivateKey
    let storeKit: RSAPrivateKey
    let unrelatedRoot: RSAPrivateKey

    /// Shared keys; `get()` rethrows a generation failure inside whichever test asks first.
    static let shared = Result { try TestKeys() }

    private init() throws {
        root = try .generate()
        intermediate = try .generate()
        leaf = try .generate()
        storeKit = try .generate()
        unrelatedRoot = try .generate()
    }
}

/// Fixed instants, so every certificate and verification is reproducible.
enum Instant {
    static let jan2001 = Date(timeIntervalSince1970: 978_307_200)
    static let jan2002 = Date(timeIntervalSince1970: 1_009_843_200)
    static let jan2015 = Date(timeIntervalSince1970: 1_420_070_400)
    static let jan2016 = Date(timeIntervalSince1970: 1_451_606_400)
    static let jan2020 = Date(timeIntervalSince1970: 1_577_836_800)
    static let jun2025 = Date(timeIntervalSince1970: 1_748_736_000)
    static let jan2030 = Date(timeIntervalSince1970: 1_893_456_000)
    static let jan2031 = Date(timeIntervalSince1970: 1_924_992_000)
    static let jan2040 = Date(timeIntervalSince1970: 2_208_988_800)
    static let jan2055 = Date(timeIntervalSince1970: 2_682_374_400)
}

/// An Apple-shaped receipt chain (root → WWDR-like intermediate → receipt-signing leaf), a SHA-1 variant,
/// and a self-signed StoreKit-testing-like certificate — all issued once per test run.
struct TestChain: Sendable {
    static let appleIntermediateMarker = "1.2.840.113635.100.6.2.1"
    static let appleReceiptSigningMarker = "1.2.840.113635.100.6.11.1"
    static let applePolicy = "1.2.840.113635.100.5.6.1"
    static let cpsURI = "https://example.invalid/cps"
    static let ocspURI = "http://127.0.0.1:1/ocsp"
    static let rootCommonName = "receipt-forge TEST Root CA — not Apple"

    static let rootTemplate = CertificateTemplate(
        serialNumber: [0x02],
        subject: DistinguishedName([("C", "US"), ("O", "receipt-forge TEST"), ("CN", rootCommonName)]),
        notBefore: Instant.jan2015,
        notAfter: Instant.jan2055,
        extensions: [
            .basicConstraints(isCA: true),
            .keyUsage([.keyCertSign, .cRLSign]),
            .subjectKeyIdentifier,
            .authorityKeyIdentifier,
        ]
    )

    static let intermediateTemplate = CertificateTemplate(
        serialNumber: [0x01, 0x7A, 0x2B],
        subject: DistinguishedName([
            ("C", "US"), ("O", "receipt-forge TEST"), ("OU", "G5"),
            ("CN", "receipt-forge TEST Worldwide Developer Relations CA"),
        ]),
        notBefore: Instant.jan2016,
        notAfter: Instant.jan2040,
        extensions: [
            .basicConstraints(isCA: true, pathLength: 0),
            .authorityKeyIdentifier,
            .subjectKeyIdentifier,
            .keyUsage([.keyCertSign, .cRLSign]),
            .custom(oid: appleIntermediateMarker, critical: false, derValue: [0x05, 0x00]),
        ]
    )

    static func leafTemplate(
        commonName: String = "receipt-forge TEST Mac App Store Receipt Signing",
        notBefore: Date = Instant.jan2020,
        notAfter: Date = Instant.jan2030,
        extraExtensions: [CertificateExtension] = [],
        signatureDigest: DigestAlgorithm = .sha256
    ) -> CertificateTemplate {
        CertificateTemplate(
            serialNumber: [0x00, 0x9A, 0xBC, 0xDE, 0xF0, 0x12, 0x34],
            subject: DistinguishedName([("C", "US"), ("O", "receipt-forge TEST"), ("CN", commonName)]),
            notBefore: notBefore,
            notAfter: notAfter,
            extensions: [
                .basicConstraints(isCA: false),
                .authorityKeyIdentifier,
                .authorityInformationAccess(ocsp: [ocspURI], caIssuers: []),
                .certificatePolicies([CertificatePolicy(oid: applePolicy, cpsURI: cpsURI, userNotice: "Test only, not Apple")]),
                .subjectKeyIdentifier,
                .keyUsage([.digitalSignature]),
                .custom(oid: appleReceiptSigningMarker, critical: false, derValue: [0x05, 0x00]),
            ] + extraExtensions,
            signatureDigest: signatureDigest
        )
    }

    static let storeKitTemplate = CertificateTemplate(
        serialNumber: [0x5E, 0x11],
        subject: DistinguishedName([("CN", "receipt-forge TEST StoreKit Testing"), ("O", "receipt-forge TEST")]),
        notBefore: Instant.jan2020,
        notAfter: Instant.jan2040,
        extensions: [
            .basicConstraints(isCA: true),
            .keyUsage([.digitalSignature, .keyCertSign]),
            .extendedKeyUsage([.codeSigning], critical: true),
        ]
    )

    let keys: TestKeys
    let root: X509Certificate
    let intermediate: X509Certificate
    let leaf: X509Certificate
    let sha1Intermediate: X509Certificate
    let sha1Leaf: X509Certificate
    let storeKit: X509Certificate

    /// Shared chain; `get()` rethrows an issuance failure inside whichever test asks first.
    static let shared = Result { try TestChain(keys: TestKeys.shared.get()) }

    private init(keys: TestKeys) throws {
        self.keys = keys
        root = try .issue(Self.rootTemplate, subjectKey: keys.root.publicKey, issuer: nil, issuerKey: keys.root)
        intermediate = try .issue(Self.intermediateTemplate, subjectKey: keys.intermediate.publicKey, issuer: root, issuerKey: keys.root)
        leaf = try .issue(Self.leafTemplate(), subjectKey: keys.leaf.publicKey, issuer: intermediate, issuerKey: keys.intermediate)
        var sha1IntermediateTemplate = Self.intermediateTemplate
        sha1IntermediateTemplate.signatureDigest = .sha1
        sha1IntermediateTemplate.serialNumber = [0x03]
        sha1Intermediate = try .issue(sha1IntermediateTemplate, subjectKey: keys.intermediate.publicKey, issuer: root, issuerKey: keys.root)
        sha1Leaf = try .issue(
            Self.leafTemplate(signatureDigest: .sha1), subjectKey: keys.leaf.publicKey, issuer: sha1Intermediate,
            issuerKey: keys.intermediate)
        storeKit = try .issue(Self.storeKitTemplate, subjectKey: keys.storeKit.publicKey, issuer: nil, issuerKey: keys.storeKit)
    }

    /// Issues a leaf under ``intermediate`` from a variant of the standard leaf template.
    func issueLeaf(_ template: CertificateTemplate) throws -> X509Certificate {
        try .issue(template, subjectKey: keys.leaf.publicKey, issuer: intermediate, issuerKey: keys.intermediate)
    }
}
