public import ReceiptCorpus
import ReceiptModel
import _ForgeSupport
import JWSModel
public import StoreModel
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import AppStoreVocabulary

/// One conformance vector as the forge describes it, whatever the artefact: which artefact (a receipt or a
/// StoreKit 2 JWS kind), how to make its bytes (scenario, seed, time, recipe steps) and what a correct
/// validator must answer, in which context.
///
/// The corpus generator turns each spec into a file and a manifest entry whose provenance records
/// everything that makes the bytes, so a recipe replays from the manifest alone. Everything is pinned:
/// the time, the seed (derived from the id), the keys; so generating twice gives the same bytes.
public struct VectorSpec: Sendable {
    /// Whose Apple id a JWS verifier is configured with.
    public enum AppID: Sendable { case artefact, none, value(Int64) }

    /// `family::name`.
    public let id: String
    /// Bumped whenever the bytes, the context, the expectation or the provenance change (the tests hold a
    /// ledger of fingerprints per revision), so results name exactly what was judged.
    public var revision: Int
    public let description: String
    /// What the file holds: a receipt, or a StoreKit 2 JWS of one kind.
    public let artifact: ArtifactKind
    public var scenario: Scenario
    /// The recipe: mutation steps of the artefact's kind (receipt or `jws.` mutations).
    public var mutations: [MutationStep]
    public var verdict: Verdict
    public var errorClasses: [ErrorClass]
    public var flags: [String]
    public var severity: Severity
    public var features: [String]
    public var canary: Bool
    /// The time the vector is judged at (`context.now`); the artefact is made at `made ?? now`.
    public var now: String
    public var made: String?
    /// Every random choice derives from it: the corpus seed mixed with the id, so adding a vector never
    /// changes another's bytes.
    public var seed: UInt64
    /// Trust anchor id in the manifest; nil: the one the forged JWS's signer implies.
    public var trustAnchor: String?
    public var bundleID: String?
    public var appVersion: String?
    public var deviceID: String?
    /// The environment the validator expects; nil: for a JWS, the artefact's own.
    public var environment: Environment?
    /// A notification's type and subtype (wire values).
    public var notificationType = "DID_RENEW"
    public var subtype: String?
    public var appAppleID: AppID = .artefact
    /// The file extension: `der` for bytes, `b64`/`txt` for transport vectors, `jws` for StoreKit 2, `plist` for an
    /// iOS 6 transaction receipt.
    public var fileExtension: String
    /// An iOS 6 transaction receipt's signature version; nil for every other artefact.
    public var transactionReceiptVersion: TransactionReceiptVersion?

    /// The id cut into its family (the vector's folder) and name (its file's).
    public var vectorID: VectorID { VectorID(id) }

    /// A receipt vector. Revisions start at 2: issue 20 recorded the seed and the scenario in every provenance.
    init(
        _ id: String, _ description: String, scenario: Scenario = VectorCatalogue.baseScenario, mutations: [MutationStep] = [],
        verdict: Verdict, errorClasses: [ErrorClass] = [], flags: [String] = [], severity: Severity = .medium, features: [String] = [],
        canary: Bool = false, made: String? = nil, trustAnchor: String? = nil, bundleID: String? = VectorCatalogue.bundleID,
        appVersion: String? = nil, deviceID: String? = nil, environment: Environment? = nil, fileExtension: String = "der", revision: Int = 2,
        artifact: ArtifactKind = .receipt
    ) {
        self.id = id
        self.revision = revision
        self.description = description
        self.artifact = artifact
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
        self.seed = Self.seed(of: id)
        self.trustAnchor = trustAnchor ?? ((scenario.preset ?? .appstore).isXcode ? TrustAnchorID.forgeStoreKit : TrustAnchorID.forgeRoot)
        self.bundleID = bundleID
        self.appVersion = appVersion
        self.deviceID = deviceID
        self.environment = environment
        self.fileExtension = fileExtension
    }

    /// A StoreKit 2 vector: a JWS of `kind` forged from `scenario`, its trust anchor the one its signer implies. No
    /// `jws` feature: the artefact kind is the selection (`forge run --artifacts`).
    init(
        jws id: String, _ description: String, kind: JWSKind, scenario: Scenario, mutations: [MutationStep], verdict: Verdict, errorClasses: [ErrorClass],
        severity: Severity, environment: Environment?, bundleID: String, appAppleID: AppID, flags: [String], revision: Int
    ) {
        self.init(
            id, description, scenario: scenario, mutations: mutations, verdict: verdict, errorClasses: errorClasses, flags: flags, severity: severity,
            bundleID: bundleID, environment: environment, fileExtension: "jws", revision: revision, artifact: kind.artifact)
        self.trustAnchor = nil
        self.appAppleID = appAppleID
    }
}

extension VectorSpec {
    /// The one seed all corpus randomness derives from (recorded in the manifest).
    public static let corpusSeed: UInt64 = 2_025_061_5

    static func seed(of id: String) -> UInt64 { StableHash.fnv1a(id.utf8, basis: StableHash.offsetBasis ^ corpusSeed) }

    /// The scenario a vector of this artefact starts from: what the provenance leaves out when unchanged.
    var baseScenario: Scenario {
        switch artifact {
        case .receipt: VectorCatalogue.baseScenario
        case .transactionReceipt: VectorCatalogue.transactionReceiptScenario
        case .jwsTransaction, .jwsRenewal, .jwsAppTransaction, .jwsNotification, .jwsRealtime: VectorCatalogue.jwsScenario
        }
    }

    /// The vector's bytes, made with the given forge at the pinned time.
    public func bytes(forge: Forge) throws(ForgeError) -> [UInt8] { try make(forge: forge).bytes }

    /// The vector's bytes and the context a validator judges them in.
    public func make(forge: Forge) throws(ForgeError) -> (bytes: [UInt8], context: Context) {
        var pinned = scenario
        pinned.seed = seed
        guard let time = ReceiptDate.parse(made ?? now) else { throw ForgeError(.invalidScenario, "\(id): bad date \(made ?? now)") }
        guard mutations.count <= MutationBounds.maxSteps else {
            throw ForgeError(.invalidRecipe, "\(mutations.count) steps; at most \(MutationBounds.maxSteps) are allowed")
        }
        if let version = transactionReceiptVersion {
            let draft = try forge.transactionReceiptDraft(pinned, now: time, version: version)
            guard mutations.count <= 1 else { throw ForgeError(.invalidRecipe, "\(id): a transaction receipt takes at most one defect, not \(mutations.count)") }
            let forged: ForgedTransactionReceipt
            if let step = mutations.first {
                guard let defect = TransactionReceiptDefect(mutationID: step.mutation), step.parameters.isEmpty else {
                    throw ForgeError(.invalidRecipe, "\(id): \(step.mutation) is not a transaction-receipt step (transaction-receipt.<defect>, no parameters)")
                }
                forged = try defect.apply(to: draft, forge: forge)
            } else {
                forged = try draft.signed()
            }
            let anchor = version == .v2 ? TrustAnchorID.forgeITunesStoreCA : TrustAnchorID.forgeWWDRSHA1
            let context = Context(
                now: now, trustAnchor: trustAnchor ?? anchor, bundleId: bundleID, environment: environment ?? draft.store.environment, artifact: artifact)
            return (forged.bytes, context)
        }
        guard let kind = artifact.jwsKind else {
            let bytes = try forge.make(pinned, now: time, mutations: mutations).bytes
            let context = Context(
                now: now, trustAnchor: trustAnchor ?? TrustAnchorID.forgeRoot, bundleId: bundleID, appVersion: appVersion, deviceId: deviceID,
                environment: environment)
            return (bytes, context)
        }
        let options = JWSOptions(notificationType: WireValue(notificationType), subtype: subtype.map(WireValue.init))
        let forged = try forge.make(kind, scenario: pinned, now: time, options: options, steps: mutations)
        let environment = environment ?? forged.environment
        // A server configured for Production always knows its app's Apple id (Apple's verifiers require it).
        let appID: Int64? =
            switch appAppleID {
            case .artefact: forged.appAppleID ?? (environment == .production ? 1_000_000_001 : nil)
            case .none: nil
            case .value(let id): id
            }
        let anchor =
            trustAnchor ?? (forged.xcodeSigned || environment == .xcode ? TrustAnchorID.forgeJWSXcode : TrustAnchorID.forgeJWSRoot)
        let context = Context(
            now: now, trustAnchor: anchor, bundleId: bundleID, environment: environment, artifact: artifact, appAppleId: appID, ocsp: ocspContext)
        return (forged.bytes, context)
    }

    /// The responder and answers a `jws.ocsp` step points the chain at: what the runner starts for the vector.
    var ocspContext: OCSPContext? {
        guard let step = mutations.last(where: { $0.mutation == MutationID.jwsOCSP.rawValue }) else { return nil }
        let good = OCSPPointer.answer(.good).rawValue
        return OCSPContext(responder: OCSPContext.bundledResponder, leaf: step.parameters["leaf"] ?? good, intermediate: step.parameters["intermediate"] ?? good)
    }

    /// What makes the bytes, as the manifest records it: the preset, the steps, the time made, the seed,
    /// the scenario when it is not the artefact's base scenario, and a notification's type and subtype.
    public func provenance() throws(ForgeError) -> Provenance {
        let prefix = artifact.isJWS ? "jws-" : transactionReceiptVersion.map { "transaction-receipt-v\($0.rawValue)-" } ?? ""
        let preset = prefix + (scenario.preset ?? .appstore).rawValue
        var recorded: JSONValue?
        if scenario != baseScenario {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            guard let data = try? encoder.encode(scenario), let value = try? JSONValue(parsing: Array(data)) else {
                throw ForgeError(.encodingFailed, "\(id): the scenario does not encode as JSON")
            }
            recorded = value
        }
        let notification = artifact == .jwsNotification
        return Provenance(
            preset: preset, recipe: mutations.map { RecipeStep(mutation: $0.mutation, parameters: $0.parameters) }, made: made, seed: String(seed),
            scenario: recorded, notificationType: notification ? notificationType : nil, subtype: notification ? subtype : nil)
    }
}
