public import ForgeCrypto
import _ForgeSupport
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import ReceiptCorpus
public import StoreModel

/// The trust anchors compiled into forge, by the name `--root` takes (`--root jws`) and `forge ca export` writes
/// out: the one list of what a validator under test may be told to trust, and for what.
public enum BundledAnchor: String, CaseIterable, Sendable {
    /// The RSA TEST root of App Store-shaped receipts (plays Apple Root CA).
    case receipt
    /// The Xcode-like self-signed StoreKit certificate that signs `xcode-*` receipts.
    case storekit
    /// The EC TEST root of StoreKit 2 JWS (plays Apple Root CA - G3).
    case jws
    /// The Xcode-like self-signed EC certificate that signs Xcode JWS (kid Apple_Xcode_Key).
    case jwsXcode = "jws-xcode"
    /// The iTunes Store CA-like authority that issues version 2 transaction receipts' signer (their two-certificate chain's anchor).
    case transactionReceiptV2 = "transaction-receipt-v2"
    /// The SHA-1-era WWDR-like intermediate that issues version 3 transaction receipts' signer (their anchor).
    case transactionReceiptV3 = "transaction-receipt-v3"

    /// The names, for help texts and errors: `receipt, storekit, jws, jws-xcode, transaction-receipt-v2, transaction-receipt-v3`.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The file stem in `Certificates/` (or `Certificates/jws/`, `Certificates/transaction-receipt/`), kept by `forge ca
    /// export`: `root`, `storekit`, `jws-root-g3`, `jws-xcode`, `itunes-store-ca`, `wwdr-sha1`.
    public var fileStem: String {
        switch self {
        case .receipt: CertificateRole.root.fileStem
        case .storekit: CertificateRole.storeKit.fileStem
        case .jws: JWSRole.root.fileStem
        case .jwsXcode: JWSRole.xcode.fileStem
        case .transactionReceiptV2: TransactionReceiptRole.iTunesStoreCA.fileStem
        case .transactionReceiptV3: CertificateRole.intermediateSHA1.fileStem
        }
    }

    /// Where the same certificate is in a clone of the repository.
    public var repositoryPath: String {
        let folder =
            switch self {
            case .jws, .jwsXcode: "jws/"
            case .transactionReceiptV2: "transaction-receipt/"
            case .receipt, .storekit, .transactionReceiptV3: ""
            }
        return "Certificates/" + folder + fileStem + ".pem"
    }

    /// The corpus's id of the same anchor (a vector's `context.trustAnchor`).
    public var corpusID: String {
        switch self {
        case .receipt: TrustAnchorID.forgeRoot
        case .storekit: TrustAnchorID.forgeStoreKit
        case .jws: TrustAnchorID.forgeJWSRoot
        case .jwsXcode: TrustAnchorID.forgeJWSXcode
        case .transactionReceiptV2: TrustAnchorID.forgeITunesStoreCA
        case .transactionReceiptV3: TrustAnchorID.forgeWWDRSHA1
        }
    }

    /// What to trust it for, one line (the export's README, `forge ca export --help`).
    public var use: String {
        switch self {
        case .receipt:
            "receipts forged by `forge make` (App Store, sandbox presets): the root an on-device or server receipt validator trusts in place of Apple Root CA"
        case .storekit:
            "receipts forged with an xcode-* preset: the self-signed certificate a validator pins in place of Xcode's StoreKit certificate"
        case .jws:
            "StoreKit 2 JWS forged by `forge jws make`: the root a server passes to Apple's SignedDataVerifier (root_certificates) in place of Apple Root CA - G3"
        case .jwsXcode:
            "JWS forged with an xcode-* preset (kid Apple_Xcode_Key): the self-signed certificate a verifier pins for Xcode-signed data (Apple's SignedDataVerifier skips verification for Xcode)"
        case .transactionReceiptV2:
            "iOS 6 transaction receipts of signature version 2: the issuer of the embedded certificate, which Apple's VerificationController anchors on in place of Apple iTunes Store Certification Authority"
        case .transactionReceiptV3:
            "iOS 6 transaction receipts of signature version 3: the issuer of the embedded certificate, anchored on in place of Apple Worldwide Developer Relations Certification Authority (not a root: trust it as a partial chain)"
        }
    }

    /// The compiled-in certificate.
    public func certificate() throws(ForgeError) -> X509Certificate {
        switch self {
        case .receipt: try CertificateSet<CertificateRole>.bundled().certificate(.root)
        case .storekit: try CertificateSet<CertificateRole>.bundled().certificate(.storeKit)
        case .jws: try CertificateSet<JWSRole>.bundled().certificate(.root)
        case .jwsXcode: try CertificateSet<JWSRole>.bundled().certificate(.xcode)
        case .transactionReceiptV2: try CertificateSet<TransactionReceiptRole>.bundled().certificate(.iTunesStoreCA)
        case .transactionReceiptV3: try CertificateSet<CertificateRole>.bundled().certificate(.intermediateSHA1)
        }
    }

    /// What exporting this anchor writes, `<stem>.pem` and `<stem>.der`, and what a reader is told of it: its
    /// subject, validity and SHA-256 fingerprint (`forge ca export` words the README entry).
    public func exported() throws(ForgeError) -> AnchorExport {
        let certificate = try certificate()
        let fingerprint = certificate.sha256Fingerprint.map { String($0, radix: 16, uppercase: true).leftPadded(2) }.joined(separator: ":")
        return AnchorExport(
            files: [(fileStem + ".pem", Data(certificate.pemRepresentation.utf8)), (fileStem + ".der", Data(certificate.derRepresentation))],
            subject: certificate.subject, notBefore: certificate.notBefore, notAfter: certificate.notAfter, sha256Fingerprint: fingerprint)
    }
}

/// A bundled anchor as exported: its files and the facts a README gives of it.
public struct AnchorExport: Sendable {
    public let files: [(name: String, contents: Data)]
    public let subject: String
    public let notBefore: Date
    public let notAfter: Date
    /// Colon-separated uppercase hex, as `openssl x509 -fingerprint -sha256` prints it.
    public let sha256Fingerprint: String
}
