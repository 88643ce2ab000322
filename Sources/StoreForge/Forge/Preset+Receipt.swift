public import ForgeCrypto
public import ReceiptModel
public import StoreModel
import _ForgeSupport

/// What each preset's receipts are made of: container layout, algorithms, the chain, SET ordering, the opaque value.
extension Preset {
    public var layout: ContainerLayout { isXcode ? .xcode : .appStore }

    /// The SignerInfo digest (and the digestAlgorithms entry).
    public var digest: DigestAlgorithm { self == .appstoreSHA1 ? .sha1 : .sha256 }

    /// The SignerInfo signature algorithm: plain rsaEncryption everywhere except Xcode from late 2020.
    public var signatureAlgorithmOID: String { self == .xcode2023 ? KnownOID.sha256WithRSAEncryption : KnownOID.rsaEncryption }

    /// Embedded certificates, in embedding order; the first signs.
    public var chain: [CertificateRole] {
        switch self {
        case .appstore, .sandbox: [.leaf, .intermediate, .root]
        case .appstoreSHA1: [.leafSHA1, .intermediateSHA1, .root]
        case .xcode2020, .xcode2023: [.storeKit]
        }
    }

    /// The certificate a validator must trust for receipts of this preset.
    public var trustAnchor: CertificateRole { isXcode ? .storeKit : .root }

    public var setOrdering: SetOrdering { isXcode ? .asGiven : .derSorted }
}
