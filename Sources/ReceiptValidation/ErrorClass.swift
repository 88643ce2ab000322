/// A dotted error class from the corpus taxonomy (DESIGN §5): matched by prefix, so a validator that
/// only says `chain` still matches an expectation of `chain.untrusted` at coarse granularity.
public struct ErrorClass: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The first component: `input`, `container`, `signature`, `chain`, `payload`, `binding`, `policy`, `resource`.
    public var family: String { String(rawValue.prefix { $0 != "." }) }

    // input: the bytes are not a receipt at all.
    public static let inputEmpty = ErrorClass(rawValue: "input.empty")
    public static let inputTooLarge = ErrorClass(rawValue: "input.too-large")
    public static let inputEncoding = ErrorClass(rawValue: "input.encoding")
    // container: the PKCS#7 structure.
    public static let containerMalformed = ErrorClass(rawValue: "container.malformed")
    public static let containerContentType = ErrorClass(rawValue: "container.content-type")
    public static let containerNoContent = ErrorClass(rawValue: "container.no-content")
    public static let containerSignerCount = ErrorClass(rawValue: "container.signer-count")
    public static let containerTrailingBytes = ErrorClass(rawValue: "container.trailing-bytes")
    // signature: the signer and its signature.
    public static let signatureSignerNotFound = ErrorClass(rawValue: "signature.signer-not-found")
    public static let signatureUnsupportedAlgorithm = ErrorClass(rawValue: "signature.unsupported-algorithm")
    public static let signatureAlgorithmMismatch = ErrorClass(rawValue: "signature.algorithm-mismatch")
    public static let signatureMessageDigest = ErrorClass(rawValue: "signature.message-digest")
    public static let signatureInvalid = ErrorClass(rawValue: "signature.invalid")
    // chain: trust in the signer.
    public static let chainUntrusted = ErrorClass(rawValue: "chain.untrusted")
    public static let chainExpired = ErrorClass(rawValue: "chain.expired")
    public static let chainNotYetValid = ErrorClass(rawValue: "chain.not-yet-valid")
    public static let chainInvalid = ErrorClass(rawValue: "chain.invalid")
    public static let chainLength = ErrorClass(rawValue: "chain.length")
    public static let chainLeafMarker = ErrorClass(rawValue: "chain.leaf-marker-missing")
    public static let chainIntermediateMarker = ErrorClass(rawValue: "chain.intermediate-marker-missing")
    // payload: the signed attributes themselves.
    public static let payloadMalformed = ErrorClass(rawValue: "payload.malformed")
    public static let payloadMissingField = ErrorClass(rawValue: "payload.missing-field")
    public static let payloadInvalidField = ErrorClass(rawValue: "payload.invalid-field")
    // binding: the receipt belongs to another app, version, device or environment.
    public static let bindingBundleID = ErrorClass(rawValue: "binding.bundle-id")
    public static let bindingAppVersion = ErrorClass(rawValue: "binding.app-version")
    public static let bindingDeviceHash = ErrorClass(rawValue: "binding.device-hash")
    public static let bindingEnvironment = ErrorClass(rawValue: "binding.environment")
    // policy: valid but no longer usable.
    public static let policyExpired = ErrorClass(rawValue: "policy.expired")
}
