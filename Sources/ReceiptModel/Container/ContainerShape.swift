import _ForgeSupport
/// The observable shape of a receipt container: what separates an App Store receipt from an Xcode
/// one, and a faithful forgery from a sloppy one (receipt-facts §b.1).
public struct ContainerShape: Sendable, Hashable, Codable {
    /// How the wrapper nodes (ContentInfo … eContent) write their lengths.
    public enum Lengths: Sendable, Hashable, Codable, CustomStringConvertible {
        /// DER: definite and minimal everywhere (App Store).
        case definiteMinimal
        /// Definite, but some length is longer than needed.
        case definiteNonMinimal
        /// Every wrapper indefinite (Xcode).
        case indefinite
        case mixed(indefinite: Int, definite: Int)

        public var description: String {
            switch self {
            case .definiteMinimal: "definite, minimal"
            case .definiteNonMinimal: "definite, some non-minimal"
            case .indefinite: "indefinite (BER)"
            case .mixed(let indefinite, let definite): "mixed (\(indefinite) indefinite, \(definite) definite)"
            }
        }
    }

    /// How the eContent OCTET STRING is written.
    public enum EContentForm: Sendable, Hashable, Codable, CustomStringConvertible {
        case primitive
        case constructed(segments: Int)
        /// No eContent: detached content.
        case absent

        public var description: String {
            switch self {
            case .primitive: "primitive OCTET STRING"
            case .constructed(let segments): "constructed OCTET STRING, \(segments) segment\(segments == 1 ? "" : "s")"
            case .absent: "absent (detached)"
            }
        }
    }

    public var lengths: Lengths
    public var eContent: EContentForm
    public var signedDataVersion: Int64
    public var digestAlgorithmOIDs: [String]
    public var signatureAlgorithmOIDs: [String]
    public var certificateCount: Int
    public var signerCount: Int
    public var hasSignedAttributes: Bool
    public var hasUnsignedAttributes: Bool
    public var hasCRLs: Bool
    public var trailingByteCount: Int

    public init(
        lengths: Lengths, eContent: EContentForm, signedDataVersion: Int64, digestAlgorithmOIDs: [String],
        signatureAlgorithmOIDs: [String], certificateCount: Int, signerCount: Int, hasSignedAttributes: Bool,
        hasUnsignedAttributes: Bool, hasCRLs: Bool, trailingByteCount: Int
    ) {
        self.lengths = lengths
        self.eContent = eContent
        self.signedDataVersion = signedDataVersion
        self.digestAlgorithmOIDs = digestAlgorithmOIDs
        self.signatureAlgorithmOIDs = signatureAlgorithmOIDs
        self.certificateCount = certificateCount
        self.signerCount = signerCount
        self.hasSignedAttributes = hasSignedAttributes
        self.hasUnsignedAttributes = hasUnsignedAttributes
        self.hasCRLs = hasCRLs
        self.trailingByteCount = trailingByteCount
    }
}
