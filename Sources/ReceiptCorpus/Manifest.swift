#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import _ForgeSupport
public import AppStoreVocabulary

/// The corpus index (`Vectors/manifest.json`): every vector with its expected outcome, plus the
/// vocabularies (notes, features, error taxonomy, trust anchors, profiles) the vectors refer to by key.
public struct Manifest: Codable, Sendable, Hashable {
    /// Format of this file; readers reject versions they do not know.
    public var schemaVersion: Int
    public var suite: Suite
    public var generator: Generator
    /// Trust anchor id → certificate; vectors name the one to trust in `context.trustAnchor`.
    public var trustAnchors: [String: TrustAnchor]
    /// Flag → why vectors carrying it are interesting.
    public var notes: [String: Note]
    /// Feature id → description; a validator skips vectors needing features it lacks.
    public var features: [String: String]
    /// Dotted error class (and each family, e.g. "chain") → description.
    public var errorTaxonomy: [String: String]
    /// Profile name ("strict", "apple-compatible", "lenient") → how it resolves `acceptable` vectors.
    public var profiles: [String: Profile]
    public var vectors: [Vector]

    public init(
        schemaVersion: Int, suite: Suite, generator: Generator, trustAnchors: [String: TrustAnchor],
        notes: [String: Note], features: [String: String], errorTaxonomy: [String: String],
        profiles: [String: Profile], vectors: [Vector]
    ) {
        self.schemaVersion = schemaVersion
        self.suite = suite
        self.generator = generator
        self.trustAnchors = trustAnchors
        self.notes = notes
        self.features = features
        self.errorTaxonomy = errorTaxonomy
        self.profiles = profiles
        self.vectors = vectors
    }

    /// The format version this library reads and writes.
    public static let currentSchemaVersion = 1
}

/// Which corpus this is, so results can cite it.
public struct Suite: Codable, Sendable, Hashable {
    public var name: String
    public var version: String

    public init(name: String, version: String) {
        self.name = name
        self.version = version
    }
}

/// What produced the corpus; with the seed, enough to regenerate it byte for byte.
public struct Generator: Codable, Sendable, Hashable {
    public var name: String
    public var version: String
    /// Decimal text of the UInt64 seed: JSON numbers lose precision above 2^53.
    public var seed: String

    public init(name: String, version: String, seed: String) {
        self.name = name
        self.version = version
        self.seed = seed
    }
}

/// A root certificate vectors may be validated against.
public struct TrustAnchor: Codable, Sendable, Hashable {
    /// Path relative to `Vectors/`.
    public var file: String
    /// Lowercase hex SHA-256 of the certificate DER (the file's bytes).
    public var sha256: String
    /// True for the corpus's own TEST roots, which must never be trusted in production.
    public var testOnly: Bool
    public var description: String

    public init(file: String, sha256: String, testOnly: Bool, description: String) {
        self.file = file
        self.sha256 = sha256
        self.testOnly = testOnly
        self.description = description
    }
}

/// The one explanation of a flag, so vectors stay short and consistent.
public struct Note: Codable, Sendable, Hashable {
    /// The kind of validator bug the flagged vectors probe.
    public var bugClass: String
    public var description: String
    /// What goes wrong in a validator that gets it wrong, when worth saying.
    public var effect: String?
    public var links: [String]

    public init(bugClass: String, description: String, effect: String? = nil, links: [String]) {
        self.bugClass = bugClass
        self.description = description
        self.effect = effect
        self.links = links
    }
}

/// A policy for `acceptable` vectors: each profile turns a flag into `valid`, `invalid`, or `acceptable`
/// (either verdict passes: the profile takes no side on that quirk).
public struct Profile: Codable, Sendable, Hashable {
    public var description: String
    /// Flag → verdict for acceptable vectors carrying that flag.
    public var acceptable: [String: Verdict]
    /// Verdict for flags `acceptable` does not list.
    public var otherwise: Verdict

    public init(description: String, acceptable: [String: Verdict], otherwise: Verdict) {
        self.description = description
        self.acceptable = acceptable
        self.otherwise = otherwise
    }

    /// The verdict an acceptable vector with these flags demands: `invalid` if any flag resolves to
    /// invalid (one disqualifying quirk is enough), `valid` if every flag resolves to valid, and
    /// `acceptable` (either verdict passes) otherwise.
    public func resolve(_ flags: [String]) -> Verdict {
        let verdicts = flags.map { acceptable[$0] ?? otherwise }
        if verdicts.contains(.invalid) { return .invalid }
        return !verdicts.isEmpty && verdicts.allSatisfy { $0 == .valid } ? .valid : .acceptable
    }
}

/// The outcome a validator must reach; `acceptable` means either, as a profile decides.
public enum Verdict: String, Codable, Sendable, Hashable, CaseIterable {
    case valid, invalid, acceptable
}

/// How much harm a validator that gets the vector wrong would do.
public enum Severity: String, Codable, Sendable, Hashable, CaseIterable, Comparable {
    case low, medium, high, critical

    /// Ordered by harm: low < medium < high < critical.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }

    private var rank: Int {
        switch self {
        case .low: 0
        case .medium: 1
        case .high: 2
        case .critical: 3
        }
    }
}

/// One receipt file and what a validator must conclude about it.
public struct Vector: Codable, Sendable, Hashable {
    /// Stable slug "family::name"; never positional, never reused.
    public var id: VectorID
    /// Bumped when the bytes or the expectation change, so results can be matched to what was run.
    public var revision: Int
    public var description: String
    /// Path relative to `Vectors/`, e.g. "chain/foreign-root.der".
    public var file: String
    /// Lowercase hex SHA-256 of the file's bytes.
    public var sha256: String
    /// Keys of `Manifest.notes`.
    public var flags: [String]
    public var severity: Severity
    /// Keys of `Manifest.features` a validator needs to run this vector.
    public var features: [String]
    /// A vector every validator must accept; a run that rejects it is misconfigured, not strict.
    public var canary: Bool
    public var context: Context
    public var expected: Expectation
    public var provenance: Provenance

    public init(
        id: VectorID, revision: Int, description: String, file: String, sha256: String, flags: [String],
        severity: Severity, features: [String], canary: Bool, context: Context, expected: Expectation,
        provenance: Provenance
    ) {
        self.id = id
        self.revision = revision
        self.description = description
        self.file = file
        self.sha256 = sha256
        self.flags = flags
        self.severity = severity
        self.features = features
        self.canary = canary
        self.context = context
        self.expected = expected
        self.provenance = provenance
    }
}

/// What a validator is told alongside the receipt bytes.
public struct Context: Codable, Sendable, Hashable {
    /// The pinned validation time, "YYYY-MM-DDThh:mm:ssZ": vectors never depend on the real clock.
    public var now: String
    /// Key of `Manifest.trustAnchors`.
    public var trustAnchor: String
    public var bundleId: String?
    public var appVersion: String?
    /// UUID (iOS identifierForVendor) or MAC address (macOS) text, for the device hash check.
    public var deviceId: String?
    /// The environment the app expects. Written in the artefact's own vocabulary (``wireEnvironment``): a receipt's
    /// type (attribute 0, `ProductionSandbox`), a JWS's `environment` claim (`Sandbox`); either is read.
    public var environment: Environment?
    /// What the file is; absent for an app receipt, so receipt harnesses need not know it. A value that names no
    /// ``ArtifactKind`` fails to decode (the manifest is invalid), never reads as a receipt.
    public var artifact: ArtifactKind?
    /// The app's Apple id a JWS verifier is configured with (checked in Production).
    public var appAppleId: Int64?
    /// An `online` vector's OCSP responder and what it answers for each certificate; the runner starts it.
    public var ocsp: OCSPContext?

    public init(
        now: String, trustAnchor: String, bundleId: String? = nil, appVersion: String? = nil,
        deviceId: String? = nil, environment: Environment? = nil, artifact: ArtifactKind? = nil, appAppleId: Int64? = nil, ocsp: OCSPContext? = nil
    ) {
        self.ocsp = ocsp
        self.now = now
        self.trustAnchor = trustAnchor
        self.bundleId = bundleId
        self.appVersion = appVersion
        self.deviceId = deviceId
        self.environment = environment
        self.artifact = artifact
        self.appAppleId = appAppleId
    }

    /// The artefact kind, receipt when unnamed.
    public var artifactKind: ArtifactKind { artifact ?? .receipt }

    /// ``environment`` as the manifest and the harness protocol spell it: the receipt type for a receipt
    /// (`ProductionSandbox`), Apple's environment for a JWS (`Sandbox`).
    public var wireEnvironment: String? {
        environment.map { artifactKind == .receipt ? $0.receiptType.rawValue : $0.rawValue }
    }

    private enum CodingKeys: String, CodingKey { case now, trustAnchor, bundleId, appVersion, deviceId, environment, artifact, appAppleId, ocsp }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        now = try container.decode(String.self, forKey: .now)
        trustAnchor = try container.decode(String.self, forKey: .trustAnchor)
        bundleId = try container.decodeIfPresent(String.self, forKey: .bundleId)
        appVersion = try container.decodeIfPresent(String.self, forKey: .appVersion)
        deviceId = try container.decodeIfPresent(String.self, forKey: .deviceId)
        if let text = try container.decodeIfPresent(String.self, forKey: .artifact) {
            guard let artifact = ArtifactKind(rawValue: text) else {
                let known = ArtifactKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw DecodingError.dataCorruptedError(forKey: .artifact, in: container, debugDescription: "'\(text)' is not one of \(known)")
            }
            self.artifact = artifact
        }
        appAppleId = try container.decodeIfPresent(Int64.self, forKey: .appAppleId)
        ocsp = try container.decodeIfPresent(OCSPContext.self, forKey: .ocsp)
        if let text = try container.decodeIfPresent(String.self, forKey: .environment) {
            guard let environment = Environment(receiptType: text) else {
                let known = (Environment.allCases.map(\.rawValue) + ReceiptType.allCases.map(\.rawValue)).joined(separator: ", ")
                throw DecodingError.dataCorruptedError(forKey: .environment, in: container, debugDescription: "'\(text)' is not one of \(known)")
            }
            self.environment = environment
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(now, forKey: .now)
        try container.encode(trustAnchor, forKey: .trustAnchor)
        try container.encodeIfPresent(bundleId, forKey: .bundleId)
        try container.encodeIfPresent(appVersion, forKey: .appVersion)
        try container.encodeIfPresent(deviceId, forKey: .deviceId)
        try container.encodeIfPresent(wireEnvironment, forKey: .environment)
        // As text, like the environment: the schemas (generated by encoding) keep the artefact a string.
        try container.encodeIfPresent(artifact?.rawValue, forKey: .artifact)
        try container.encodeIfPresent(appAppleId, forKey: .appAppleId)
        try container.encodeIfPresent(ocsp, forKey: .ocsp)
    }
}

/// Where an `online` vector's certificates send OCSP and what the responder says there: the leaf's and the
/// intermediate's AIA name `responder` + `/ocsp/` + their answer, so one responder (`forge serve --ocsp`, which
/// `forge run` starts) serves every vector at once. An answer of `none` means the certificate names no responder.
public struct OCSPContext: Codable, Sendable, Hashable {
    /// The fixed loopback responder the certificates name (`http://127.0.0.1:6960`).
    public var responder: String
    public var leaf: String
    public var intermediate: String

    public init(responder: String, leaf: String, intermediate: String) {
        self.responder = responder
        self.leaf = leaf
        self.intermediate = intermediate
    }

    /// The port every `online` vector's certificates name: 6960, after RFC 6960, and below every system's ephemeral range
    /// (Linux 32768–60999, BSD and Windows 49152–65535), so no outgoing connection or `:0` listener of the host takes it by chance.
    public static let port = 6960
    public static let bundledResponder = "http://127.0.0.1:\(port)"
}

/// What a vector's file holds: an app receipt (PKCS#7), one of StoreKit 2's signed JWS, or iOS 6's transaction receipt.
public enum ArtifactKind: String, Codable, Sendable, Hashable, CaseIterable {
    case receipt
    case jwsTransaction = "jws-transaction"
    case jwsRenewal = "jws-renewal"
    case jwsAppTransaction = "jws-app-transaction"
    case jwsNotification = "jws-notification"
    case jwsRealtime = "jws-realtime"
    /// `SKPaymentTransaction.transactionReceipt`: the old-style plist's bytes (a server is sent their base64).
    case transactionReceipt = "transaction-receipt"

    public var isJWS: Bool { jwsKind != nil }

    /// The JWS kind of a StoreKit 2 artefact; nil for a receipt of either kind.
    public var jwsKind: JWSKind? {
        switch self {
        case .receipt, .transactionReceipt: nil
        case .jwsTransaction: .transaction
        case .jwsRenewal: .renewal
        case .jwsAppTransaction: .appTransaction
        case .jwsNotification: .notification
        case .jwsRealtime: .realtime
        }
    }
}

extension JWSKind {
    /// The manifest's name for a JWS of this kind.
    public var artifact: ArtifactKind {
        switch self {
        case .transaction: .jwsTransaction
        case .renewal: .jwsRenewal
        case .appTransaction: .jwsAppTransaction
        case .notification: .jwsNotification
        case .realtime: .jwsRealtime
        }
    }
}

/// The expected outcome of validating a vector.
public struct Expectation: Codable, Sendable, Hashable {
    public var verdict: Verdict
    /// Keys of `Manifest.errorTaxonomy` any of which a rejecting validator may report. A class the taxonomy does not
    /// list still reads (lint reports it), so a manifest from a newer generator is judged, not refused.
    public var errorClasses: [ErrorClass]
    /// For valid vectors: the fields a decoding validator must report.
    public var decoded: DecodedReceipt?

    public init(verdict: Verdict, errorClasses: [ErrorClass], decoded: DecodedReceipt? = nil) {
        self.verdict = verdict
        self.errorClasses = errorClasses
        self.decoded = decoded
    }
}

/// How the vector was made, so it can be replayed.
public struct Provenance: Codable, Sendable, Hashable {
    /// The forge preset the valid starting receipt came from.
    public var preset: String
    /// Mutations applied to it, in order.
    public var recipe: [RecipeStep]
    /// When the artefact was made, if not at `context.now` (a receipt made in the past and judged now):
    /// with the preset and the recipe, it determines the bytes.
    public var made: String?
    /// The seed every random choice derived from (a decimal UInt64): with the rest, a replay needs nothing else.
    public var seed: String?
    /// The scenario as JSON, when it is not the catalogue's base scenario for the artefact.
    public var scenario: JSONValue?
    /// A notification's type and subtype, Apple's wire values (notifications only).
    public var notificationType: String?
    public var subtype: String?

    public init(
        preset: String, recipe: [RecipeStep], made: String? = nil, seed: String? = nil, scenario: JSONValue? = nil, notificationType: String? = nil,
        subtype: String? = nil
    ) {
        self.preset = preset
        self.recipe = recipe
        self.made = made
        self.seed = seed
        self.scenario = scenario
        self.notificationType = notificationType
        self.subtype = subtype
    }
}

/// One named mutation with its parameters.
public struct RecipeStep: Codable, Sendable, Hashable {
    public var mutation: String
    public var parameters: [String: String]

    public init(mutation: String, parameters: [String: String]) {
        self.mutation = mutation
        self.parameters = parameters
    }
}

/// What a decoding validator must report for a valid vector. Dates are "YYYY-MM-DDThh:mm:ssZ" text.
public struct DecodedReceipt: Codable, Sendable, Hashable {
    public var bundleId: String
    public var appVersion: String
    public var originalAppVersion: String?
    public var receiptType: String?
    public var creationDate: String
    public var expirationDate: String?
    public var inApp: [DecodedPurchase]

    public init(
        bundleId: String, appVersion: String, originalAppVersion: String? = nil, receiptType: String? = nil,
        creationDate: String, expirationDate: String? = nil, inApp: [DecodedPurchase]
    ) {
        self.bundleId = bundleId
        self.appVersion = appVersion
        self.originalAppVersion = originalAppVersion
        self.receiptType = receiptType
        self.creationDate = creationDate
        self.expirationDate = expirationDate
        self.inApp = inApp
    }
}

/// One in-app purchase record of a decoded receipt.
public struct DecodedPurchase: Codable, Sendable, Hashable {
    public var productId: String
    public var quantity: Int
    public var transactionId: String
    public var originalTransactionId: String?
    public var purchaseDate: String
    public var expiresDate: String?
    public var cancellationDate: String?

    public init(
        productId: String, quantity: Int, transactionId: String, originalTransactionId: String? = nil,
        purchaseDate: String, expiresDate: String? = nil, cancellationDate: String? = nil
    ) {
        self.productId = productId
        self.quantity = quantity
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
    }
}

/// Ids of the trust anchors the bundled corpus defines. The manifest owns the vocabulary (another corpus may
/// define other anchors), so these are the one spelling for code that writes or serves this corpus, not a
/// closed enum.
public enum TrustAnchorID {
    /// The TEST root that plays Apple Root CA.
    public static let forgeRoot = "forge-root"
    /// The TEST StoreKit certificate that plays Xcode's.
    public static let forgeStoreKit = "forge-storekit"
    /// The EC TEST root that plays Apple Root CA - G3 for StoreKit 2 JWS.
    public static let forgeJWSRoot = "forge-jws-root"
    /// The EC TEST certificate that plays Xcode's JWS signing certificate.
    public static let forgeJWSXcode = "forge-jws-xcode"
    /// The RSA TEST authority that plays Apple iTunes Store Certification Authority: version 2 transaction receipts.
    public static let forgeITunesStoreCA = "forge-itunes-store-ca"
    /// The SHA-1-era TEST WWDR-like intermediate, the anchor of version 3 transaction receipts.
    public static let forgeWWDRSHA1 = "forge-wwdr-sha1"
}

/// Ids of the profiles the bundled corpus defines (see ``TrustAnchorID`` for why these are constants).
public enum ProfileID {
    public static let strict = "strict"
    public static let appleCompatible = "apple-compatible"
    public static let lenient = "lenient"
}
