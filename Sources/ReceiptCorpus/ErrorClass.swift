/// A dotted error class of the corpus taxonomy (DESIGN §5), owned here once: the reference validator
/// reports them, vectors expect them, the manifest's `errorTaxonomy` lists them (derived from ``all``) and
/// the runner matches them by prefix, so a validator that only says `chain` still matches an expectation
/// of `chain.untrusted` at coarse granularity.
public struct ErrorClass: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The first component: `input`, `container`, `signature`, `chain`, `payload`, `binding`, `policy`, `resource`.
    public var family: String { String(rawValue.prefix { $0 != "." }) }

    /// Whether `self` is `other` or one of its descendants (`chain.untrusted` is within `chain`).
    public func isWithin(_ other: ErrorClass) -> Bool { rawValue == other.rawValue || rawValue.hasPrefix(other.rawValue + ".") }

    public static let input = ErrorClass(rawValue: "input")
    public static let container = ErrorClass(rawValue: "container")
    public static let signature = ErrorClass(rawValue: "signature")
    public static let chain = ErrorClass(rawValue: "chain")
    public static let payload = ErrorClass(rawValue: "payload")
    public static let binding = ErrorClass(rawValue: "binding")
    public static let policy = ErrorClass(rawValue: "policy")
    public static let resource = ErrorClass(rawValue: "resource")

    public static let inputEmpty = ErrorClass(rawValue: "input.empty")
    public static let inputTooLarge = ErrorClass(rawValue: "input.too-large")
    public static let inputEncoding = ErrorClass(rawValue: "input.encoding")
    public static let containerMalformed = ErrorClass(rawValue: "container.malformed")
    public static let containerContentType = ErrorClass(rawValue: "container.content-type")
    public static let containerNoContent = ErrorClass(rawValue: "container.no-content")
    public static let containerSignerCount = ErrorClass(rawValue: "container.signer-count")
    public static let containerTrailingBytes = ErrorClass(rawValue: "container.trailing-bytes")
    public static let signatureSignerNotFound = ErrorClass(rawValue: "signature.signer-not-found")
    public static let signatureUnsupportedAlgorithm = ErrorClass(rawValue: "signature.unsupported-algorithm")
    public static let signatureAlgorithmMismatch = ErrorClass(rawValue: "signature.algorithm-mismatch")
    public static let signatureMessageDigest = ErrorClass(rawValue: "signature.message-digest")
    public static let signatureInvalid = ErrorClass(rawValue: "signature.invalid")
    public static let chainUntrusted = ErrorClass(rawValue: "chain.untrusted")
    public static let chainExpired = ErrorClass(rawValue: "chain.expired")
    public static let chainNotYetValid = ErrorClass(rawValue: "chain.not-yet-valid")
    public static let chainInvalid = ErrorClass(rawValue: "chain.invalid")
    public static let chainLength = ErrorClass(rawValue: "chain.length")
    public static let chainLeafMarker = ErrorClass(rawValue: "chain.leaf-marker-missing")
    public static let chainIntermediateMarker = ErrorClass(rawValue: "chain.intermediate-marker-missing")
    public static let chainRevoked = ErrorClass(rawValue: "chain.revoked")
    public static let chainRevocationUnknown = ErrorClass(rawValue: "chain.revocation-unknown")
    public static let chainRevocationUnavailable = ErrorClass(rawValue: "chain.revocation-unavailable")
    public static let payloadMalformed = ErrorClass(rawValue: "payload.malformed")
    public static let payloadMissingField = ErrorClass(rawValue: "payload.missing-field")
    public static let payloadInvalidField = ErrorClass(rawValue: "payload.invalid-field")
    public static let bindingBundleID = ErrorClass(rawValue: "binding.bundle-id")
    public static let bindingAppVersion = ErrorClass(rawValue: "binding.app-version")
    public static let bindingDeviceHash = ErrorClass(rawValue: "binding.device-hash")
    public static let bindingEnvironment = ErrorClass(rawValue: "binding.environment")
    public static let policyExpired = ErrorClass(rawValue: "policy.expired")
    public static let bindingAppAppleID = ErrorClass(rawValue: "binding.app-apple-id")
    public static let jws = ErrorClass(rawValue: "jws")
    public static let jwsFormat = ErrorClass(rawValue: "jws.format")
    public static let jwsHeader = ErrorClass(rawValue: "jws.header")
    public static let jwsAlgorithm = ErrorClass(rawValue: "jws.algorithm")
    public static let jwsX5C = ErrorClass(rawValue: "jws.x5c")
    public static let jwsSignature = ErrorClass(rawValue: "jws.signature")
    public static let jwsNested = ErrorClass(rawValue: "jws.nested")

    /// Every class of the taxonomy, families included, with what it means: the manifest's `errorTaxonomy`.
    public static let all: KeyValuePairs<ErrorClass, String> = [
        .input: "The bytes are not a receipt at all.",
        .inputEmpty: "No bytes.",
        .inputTooLarge: "Larger than any receipt.",
        .inputEncoding: "Neither DER nor a known text encoding of it.",
        .container: "The PKCS#7 structure.",
        .containerMalformed: "ASN.1 that does not parse as ContentInfo(SignedData).",
        .containerContentType: "The eContentType is not id-data.",
        .containerNoContent: "No eContent (detached).",
        .containerSignerCount: "Not exactly one SignerInfo.",
        .containerTrailingBytes: "Bytes after the ContentInfo.",
        .signature: "The signer and its signature.",
        .signatureSignerNotFound: "No embedded certificate matches the SignerInfo.",
        .signatureUnsupportedAlgorithm: "A digest or signature algorithm receipts do not use.",
        .signatureAlgorithmMismatch: "Algorithms named in the container contradict each other.",
        .signatureMessageDigest: "The messageDigest signed attribute does not match the content.",
        .signatureInvalid: "The signature does not verify.",
        .chain: "Trust in the signer.",
        .chainUntrusted: "No path to a trusted root.",
        .chainExpired: "A certificate had expired at the evaluation time.",
        .chainNotYetValid: "A certificate was not yet valid at the evaluation time.",
        .chainInvalid: "The path is broken otherwise.",
        .chainLength: "Not the three-certificate shape of Apple's chain.",
        .chainLeafMarker: "The signer lacks 1.2.840.113635.100.6.11.1.",
        .chainIntermediateMarker: "The intermediate lacks 1.2.840.113635.100.6.2.1.",
        .chainRevoked: "OCSP says a certificate of the chain is revoked.",
        .chainRevocationUnknown:
            "OCSP gave no usable status: unknown, a response status other than successful, a stale or unsigned answer, a signer that is not the issuer's responder, or a certificate naming no responder.",
        .chainRevocationUnavailable: "The OCSP responder could not be reached or answered HTTP other than 200: retryable.",
        .payload: "The signed attributes themselves.",
        .payloadMalformed: "The payload is not a SET OF ReceiptAttribute.",
        .payloadMissingField: "A required attribute is absent.",
        .payloadInvalidField: "An attribute is present but unusable or ambiguous.",
        .binding: "The receipt belongs to another app, version, device or environment.",
        .bindingBundleID: "Another bundle id.",
        .bindingAppVersion: "Another app version.",
        .bindingDeviceHash: "The hash does not match the device.",
        .bindingEnvironment: "Another receipt type.",
        .policy: "Valid, but no longer usable.",
        .policyExpired: "The receipt's own expiration date (type 21) has passed.",
        .resource: "The validator ran out of time or memory.",
        .bindingAppAppleID: "Another app (a JWS's appAppleId, checked in Production).",
        .jws: "The compact JWS of StoreKit 2 signed data.",
        .jwsFormat: "Not three base64url parts, or a part that is not JSON.",
        .jwsHeader: "The protected header is not a JSON object Apple's verifiers read.",
        .jwsAlgorithm: "An alg other than ES256.",
        .jwsX5C: "x5c missing, not the expected number of certificates, or not base64 DER.",
        .jwsSignature: "The ES256 signature does not verify (r‖s of 64 bytes under the leaf key).",
        .jwsNested: "A signed JWS inside the payload (a notification's transaction or renewal info) fails.",
    ]

    /// ``all`` as the manifest writes it: class → description.
    public static var taxonomy: [String: String] {
        Dictionary(all.map { ($0.key.rawValue, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}
