public import ReceiptCorpus
import ReceiptModel
public import ForgeSupport
public import StoreModel

/// One conformance vector as the forge describes it: how to make the bytes (preset, scenario,
/// mutations) and what a correct validator must answer, in which context.
///
/// The corpus generator turns each spec into a file and a manifest entry. Everything is pinned:
/// the time, the seed (derived from the id), the keys; so generating twice gives the same bytes.
public struct VectorSpec: Sendable {
    /// `family::name`.
    public let id: String
    /// Bumped whenever the bytes, the context or the expectation change (the tests hold a ledger of
    /// fingerprints per revision), so results name exactly what was judged.
    public var revision: Int
    public let description: String
    public var scenario: Scenario
    public var mutations: [MutationStep]
    public var verdict: Verdict
    public var errorClasses: [ErrorClass]
    public var flags: [String]
    public var severity: Severity
    public var features: [String]
    public var canary: Bool
    /// The time the vector is judged at (`context.now`); the receipt is made at `made ?? now`.
    public var now: String
    public var made: String?
    /// Trust anchor id in the manifest (`forge-root` or `forge-storekit`).
    public var trustAnchor: String
    public var bundleID: String?
    public var appVersion: String?
    public var deviceID: String?
    public var environment: String?
    /// The file extension: `der` for bytes, `b64`/`txt` for transport vectors.
    public var fileExtension: String

    public var family: String { String(id.prefix { $0 != ":" }) }
    public var name: String { String(id.split(separator: ":").last ?? "") }

    init(
        _ id: String, _ description: String, scenario: Scenario = VectorCatalogue.baseScenario, mutations: [MutationStep] = [],
        verdict: Verdict, errorClasses: [ErrorClass] = [], flags: [String] = [], severity: Severity = .medium, features: [String] = [],
        canary: Bool = false, made: String? = nil, trustAnchor: String? = nil, bundleID: String? = VectorCatalogue.bundleID,
        appVersion: String? = nil, deviceID: String? = nil, environment: String? = nil, fileExtension: String = "der", revision: Int = 1
    ) {
        self.id = id
        self.revision = revision
        self.description = description
        self.scenario = scenario
        self.mutations = mutations
        self.verdict = verdict
        self.errorClasses = errorClasses
        self.flags = flags
        self.severity = severity
        self.features = features
        self.canary = canary
        self.now = VectorCatalogue.now
        self.made = made
        self.trustAnchor = trustAnchor ?? ((scenario.preset ?? .appstore).isXcode ? TrustAnchorID.forgeStoreKit : TrustAnchorID.forgeRoot)
        self.bundleID = bundleID
        self.appVersion = appVersion
        self.deviceID = deviceID
        self.environment = environment
        self.fileExtension = fileExtension
    }
}

extension VectorSpec {
    /// The one seed all corpus randomness derives from (recorded in the manifest).
    public static let corpusSeed: UInt64 = 2_025_061_5

    /// This vector's seed: the corpus seed mixed with the id, so adding a vector never changes another's bytes.
    public var seed: UInt64 {
        StableHash.fnv1a(id.utf8, basis: StableHash.offsetBasis ^ Self.corpusSeed)
    }

    /// The vector's bytes, made with the given forge at the pinned time.
    public func bytes(using forge: Forge) throws(ForgeError) -> [UInt8] {
        var pinned = scenario
        pinned.seed = seed
        guard let time = ReceiptDate.parse(made ?? now) else { throw ForgeError(.invalidScenario, "\(id): bad date \(made ?? now)") }
        return try forge.make(pinned, now: time, mutations: mutations).bytes
    }
}
