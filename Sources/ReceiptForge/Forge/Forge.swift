public import Foundation
public import ForgeCrypto
public import ReceiptModel
import Synchronization

/// A receipt the forge made, with everything needed to check or reproduce it.
public struct ForgedReceipt: Sendable {
    /// The PKCS#7 bytes.
    public let bytes: [UInt8]
    /// The signed payload (the eContent).
    public let payload: [UInt8]
    public let preset: Preset
    public let now: Date
    public let seed: UInt64
    public let deviceID: DeviceID
    public let bundleID: String
    public let appVersion: String
    public let environment: String
    public let transactions: [Transaction]
    /// Renewal state and refunds as of the receipt's creation (the scenario's timeline).
    public let history: SubscriptionHistory
    /// The role of the certificate a validator must trust to accept this receipt.
    public let trustAnchorRole: CertificateRole
    let pki: TestPKI
    /// The certificate a validator must trust to accept this receipt (parsed when asked: making a receipt
    /// does not need it).
    public var trustAnchor: X509Certificate { pki.certificate(trustAnchorRole) }
}

/// Makes receipts: valid by default, in the shape of a preset, signed by the test PKI.
///
/// The forge builds the payload and the SignedData itself and asks OpenSSL only for the raw RSA
/// signature, because `openssl cms -sign` adds signed attributes and re-sorts certificates, which
/// real receipts never show (receipt-facts §b.1). Nothing here reads the clock or an unseeded
/// random source: `now` and the seed are inputs.
public struct Forge: Sendable {
    public let pki: TestPKI
    /// What signing in each preset's shape needs (the key, the embedded certificates, the SignerInfo id),
    /// worked out on the first receipt of that preset: a process making one receipt parses one chain.
    private let signing = SigningCache()

    private final class SigningCache: Sendable {
        let entries = Mutex<[Preset: Signing]>([:])
    }

    private struct Signing: Sendable {
        let key: RSAPrivateKey
        let certificates: [[UInt8]]
        let identity: CertificateIdentity
    }

    public init(pki: TestPKI) throws(ForgeError) {
        self.pki = pki
    }

    private func setup(for preset: Preset) throws(ForgeError) -> Signing {
        if let known = signing.entries.withLock({ $0[preset] }) { return known }
        let certificates = preset.chain.map { pki.certificateDER($0) }
        let identity = try ForgeError.encoding("reading the \(preset.chain[0].fileStem) certificate") { () throws(ReceiptDecodingError) in
            try CertificateIdentity(derEncoded: certificates[0])
        }
        let key = pki.privateKey(preset.chain[0])
        let setup = Signing(
            key: key, certificates: certificates, identity: identity)
        signing.entries.withLock { $0[preset] = setup }
        return setup
    }

    /// Makes one receipt.
    /// - Parameters:
    ///   - scenario: what the receipt says; validated first.
    ///   - now: the creation time; relative options (`expired`…) follow it.
    ///   - naming: how problems name fields (flags for the CLI, keys for spec files).
    ///   - mutations: named defects applied on top of the valid receipt, in order (see ``Mutation``).
    ///   - sign: false resolves the scenario and encodes the payload only (``ForgedReceipt/bytes`` is empty).
    ///   - reissuedAt: a receipt issued again later, as `latest_receipt` is: the purchases as they were at
    ///     `now` (same ids), the timeline's events up to this instant, and this creation date.
    public func make(
        _ scenario: Scenario, now: Date, naming: FieldNaming = .specKeys,
        mutations: [MutationStep] = [], reissuedAt: Date? = nil, sign: Bool = true
    ) throws(ForgeError) -> ForgedReceipt {
        guard mutations.count <= MutationBounds.maxSteps else {
            throw ForgeError(.invalidRecipe, "\(mutations.count) mutation steps; at most \(MutationBounds.maxSteps) are allowed")
        }
        let steps = try mutations.enumerated().map { (index, step) throws(ForgeError) in
            do throws(ForgeError) { return (number: index + 1, mutation: try Mutation.named(step.mutation), parameters: step.parameters) } catch {
                var located = error
                located.step = index + 1
                throw located
            }
        }
        var plan = try ReceiptPlan(scenario, now: now, naming: naming, reissuedAt: reissuedAt)
        let preset = plan.preset
        let setup = try setup(for: preset)
        var stages = ForgeStages(
            pki: pki, preset: preset, attributes: try plan.attributes(), ordering: preset.setOrdering, payload: [],
            signerKey: setup.key, signerIdentity: setup.identity, hashAlgorithm: preset.digest,
            signerDigestOID: preset.digest.dottedOID, digestAlgorithmOIDs: [preset.digest.dottedOID],
            signatureAlgorithmOID: preset.signatureAlgorithmOID, signedAttributes: nil, certificates: setup.certificates,
            layout: preset.layout, signers: [], bytes: [])
        func run(_ stage: Mutation.Stage) throws(ForgeError) {
            for (number, mutation, parameters) in steps where mutation.stage == stage {
                do throws(ForgeError) { try mutation.apply(to: &stages, parameters) } catch {
                    var located = error
                    located.step = number
                    throw located
                }
            }
        }
        try run(.attributes)
        stages.payload = ReceiptPayload(stages.attributes).encoded(ordering: stages.ordering)
        // The container adds the certificates and the signature: a few KiB.
        if steps.isEmpty, stages.payload.count > ReceiptLimits.maximumInputSize - (64 << 10) {
            throw ForgeError(
                .invalidScenario,
                "the receipt would be over \(stages.payload.count) bytes; validators read at most \(ReceiptLimits.maximumInputSize) (16 MiB)")
        }
        try run(.payload)
        guard sign else {
            // What the scenario resolves to, without the signature (JWS built from the same scenario need no receipt).
            return ForgedReceipt(
                bytes: [], payload: stages.payload, preset: preset, now: plan.now, seed: plan.seed, deviceID: plan.deviceID,
                bundleID: plan.bundleID, appVersion: plan.appVersion, environment: plan.environment, transactions: plan.transactions,
                history: plan.history, trustAnchorRole: preset.trustAnchor, pki: pki)
        }
        try run(.signing)
        try stages.sign()
        try run(.signed)
        let draft = SignedDataDraft(
            digestAlgorithmOIDs: stages.digestAlgorithmOIDs, payload: stages.payload,
            certificates: stages.certificates, signers: stages.signers, layout: stages.layout)
        stages.bytes = try ForgeError.encoding("encoding the container") { () throws(ReceiptDecodingError) in try draft.encoded() }
        try run(.encoded)
        return ForgedReceipt(
            bytes: stages.bytes, payload: stages.payload, preset: preset, now: plan.now, seed: plan.seed,
            deviceID: plan.deviceID, bundleID: plan.bundleID, appVersion: plan.appVersion,
            environment: plan.environment, transactions: plan.transactions, history: plan.history, trustAnchorRole: preset.trustAnchor,
            pki: pki)
    }
}

/// Everything between a scenario and the receipt's bytes, in the order the forge builds it. Each
/// field is what one kind of defect edits: mutations receive it at their stage (see ``Mutation``).
public struct ForgeStages: Sendable {
    /// The PKI the receipt is signed from, for mutations that issue variant certificates.
    public let pki: TestPKI
    public let preset: Preset
    /// Payload attributes, before encoding (stage `.attributes`).
    public var attributes: [ReceiptAttribute]
    public var ordering: SetOrdering
    /// The encoded payload, the eContent (stage `.payload`).
    public var payload: [UInt8]
    /// Signing setup (stage `.signing`): the key that signs, the SignerInfo's certificate id, the digest
    /// actually computed, the OIDs written, signed attributes, embedded certificates, layout.
    public var signerKey: RSAPrivateKey
    public var signerIdentity: CertificateIdentity
    public var hashAlgorithm: DigestAlgorithm
    public var signerDigestOID: String
    public var digestAlgorithmOIDs: [String]
    public var signatureAlgorithmOID: String
    /// nil: none (as Apple). Otherwise signed attributes are written, with this messageDigest (nil: the correct one).
    public var signedAttributes: SignedAttributesChoice?
    public var certificates: [[UInt8]]
    public var layout: ContainerLayout
    /// The SignerInfos (stage `.signed`).
    public var signers: [SignerInfoDraft]
    /// The final bytes (stage `.encoded`).
    public var bytes: [UInt8]

    public struct SignedAttributesChoice: Sendable {
        /// Replaces the correct messageDigest, to test that validators compare it with the content.
        public var messageDigest: [UInt8]?
        public init(messageDigest: [UInt8]? = nil) { self.messageDigest = messageDigest }
    }

    mutating func sign() throws(ForgeError) {
        var signedBytes = payload
        var attributes: [UInt8]?
        if let choice = signedAttributes {
            let payloadDigest = try ForgeError.wrapping("hashing the payload") { [payload, hashAlgorithm] in try hashAlgorithm.digest(payload) }
            let encoded = try ForgeError.encoding("encoding signed attributes") { () throws(ReceiptDecodingError) in
                try SignedAttributes.encode(messageDigest: choice.messageDigest ?? payloadDigest, signingTime: nil)
            }
            attributes = encoded
            signedBytes = encoded
        }
        let key = signerKey, algorithm = hashAlgorithm
        let signature = try ForgeError.wrapping("signing the payload") {
            try key.signature(forDigest: try algorithm.digest(signedBytes), algorithm: algorithm)
        }
        signers = [
            SignerInfoDraft(
                identity: signerIdentity, digestAlgorithmOID: signerDigestOID, signatureAlgorithmOID: signatureAlgorithmOID,
                signedAttributes: attributes, signature: signature)
        ]
    }
}

/// A scenario with every default filled in and every id drawn: what the payload will say.
struct ReceiptPlan {
    let preset: Preset
    let now: Date
    let seed: UInt64
    let bundleID: String
    let appVersion: String
    let originalAppVersion: String?
    let environment: String
    let deviceID: DeviceID
    let transactions: [Transaction]
    let history: SubscriptionHistory
    let scenario: Scenario
    var random: SeededGenerator

    /// Purchases one receipt may hold: what the decoders accept in one payload (``ReceiptLimits/maximumChildren``),
    /// less room for the receipt's own attributes.
    static let maximumTransactions = ReceiptLimits.maximumChildren - 100

    init(_ scenario: Scenario, now anchor: Date, naming: FieldNaming, reissuedAt: Date? = nil) throws(ForgeError) {
        for (index, purchase) in scenario.purchases.enumerated() {
            try purchase.validate(naming: naming, place: "purchases[\(index)].")
        }
        for (index, event) in (scenario.timeline ?? []).enumerated() {
            try event.validate(place: "timeline[\(index)].", products: scenario.purchases)
        }
        // Bounded before anything is made: a receipt validators would refuse is not worth minutes and gigabytes.
        let requested =
            scenario.purchases.reduce(0) { $0 + ($1.renewals ?? 0) + 1 } + (scenario.timeline ?? []).reduce(0) { $0 + ($1.count ?? 1) + 1 }
        guard requested <= Self.maximumTransactions else {
            throw ForgeError(
                .invalidScenario,
                "the scenario asks for up to \(requested) transactions; a receipt holds at most \(Self.maximumTransactions) "
                    + "(validators refuse more than \(ReceiptLimits.maximumChildren) attributes in the payload)")
        }
        let now = reissuedAt ?? anchor
        let preset = scenario.preset ?? .appstore
        if let bundle = scenario.bundleID, bundle.isEmpty {
            throw ForgeError(.invalidScenario, "\(naming.name("bundleId")) must not be empty")
        }
        self.preset = preset
        self.now = now
        self.scenario = scenario
        seed = scenario.seed ?? Self.derivedSeed(scenario, now: anchor)
        random = SeededGenerator(seed: seed)
        bundleID = scenario.bundleID ?? "com.example.app"
        appVersion = scenario.appVersion ?? "1"
        originalAppVersion = preset.isXcode ? scenario.originalAppVersion : (scenario.originalAppVersion ?? "1.0")
        environment = scenario.environment ?? preset.receiptType.rawValue
        if let text = scenario.deviceID {
            guard let parsed = DeviceID(text) else {
                throw ForgeError(.invalidScenario, "\(naming.name("deviceId")) '\(text)' is neither a UUID (8-4-4-4-12 hex) nor a MAC address (aa:bb:cc:dd:ee:ff)")
            }
            deviceID = parsed
        } else {
            deviceID = random.uuid()
        }
        var ids = IDSource(random: random, isXcode: preset.isXcode)
        let base = scenario.purchases.flatMap { $0.transactions(now: anchor, ids: &ids) }
        random = ids.random
        let periods = Dictionary(
            scenario.purchases.map { ($0.productID, $0.period.flatMap(SubscriptionPeriod.init) ?? .month) }, uniquingKeysWith: { first, _ in first })
        (transactions, history) = scenario.history(applyingTo: base, periods: periods, until: now, seed: seed, isXcode: preset.isXcode)
    }

    /// With no explicit seed, the seed is a hash of the scenario and the time: the same inputs give
    /// the same ids, different inputs different ones, and no hidden randomness is involved.
    static func derivedSeed(_ scenario: Scenario, now: Date) -> UInt64 {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let canonical = ((try? encoder.encode(scenario)) ?? Data()) + Data(ReceiptDate.format(now, style: .fractionalZulu).utf8)
        return StableHash.fnv1a(canonical)
    }

    private func date(_ date: Date) -> String { ReceiptDate.format(date, style: preset.dateStyle) }

    /// The payload attributes, laid out as the preset's real receipts lay them out.
    mutating func attributes() throws(ForgeError) -> [ReceiptAttribute] {
        let opaque = random.bytes(preset.opaqueValue.length)
        let bundleAttribute = ReceiptAttribute.utf8(AttributeType.bundleID, bundleID)
        let hashInput = deviceID.bytes + opaque + bundleAttribute.value
        let hash = try ForgeError.wrapping("computing the device hash") { try DigestAlgorithm.sha1.digest(hashInput) }
        let purchases = transactions.map { ReceiptAttribute(type: AttributeType.inAppPurchase, value: inAppPayload($0)) }
        var attributes: [ReceiptAttribute]
        if preset.isXcode {
            // Ascending type order, only the fields Xcode writes (no 18, no 19).
            attributes = [
                .utf8(0, environment), .integer(1, 0), bundleAttribute, .utf8(3, appVersion),
                .raw(4, opaque, version: preset.opaqueValue.version), .raw(5, hash), .ia5(8, ""), .ia5(12, date(now)),
            ]
            if let originalAppVersion { attributes.append(.utf8(19, originalAppVersion)) }
            attributes += purchases
            attributes.append(.ia5(21, date(ReceiptDate.sentinel)))
        } else {
            let sandbox = preset.isSandbox
            let firstPurchase = transactions.map(\.originalPurchaseDate).min() ?? now
            let originalPurchase = sandbox ? Preset.sandboxOriginalPurchaseDate : date(min(firstPurchase, now).addingTimeInterval(-30 * 86_400))
            let appItemID = scenario.appItemID ?? (sandbox ? 0 : Int64(random.below(1_900_000_000) + 100_000_000))
            let developerID: Int64 = sandbox ? 0 : Int64(random.below(0x7FFF_FFFF))
            let downloadID: Int64 = sandbox ? 0 : Int64(random.below(0x7FFF_FFFF_FFFF))
            let versionID: Int64 = sandbox ? 0 : Int64(random.below(0x7FFF_FFFF))
            attributes = [
                .utf8(0, environment), .integer(1, appItemID), bundleAttribute, .utf8(3, appVersion),
                .raw(4, opaque, version: preset.opaqueValue.version), .raw(5, hash),
                .raw(6, random.bytes(57 + Int(random.below(23)))), .raw(7, random.bytes(60 + Int(random.below(25)))),
                .ia5(8, sandbox ? "" : date(now)), ReceiptAttribute(type: 9, value: ASN1Value.integer(content: Array("P305".utf8))),
                .ia5(10, scenario.ageRating ?? "4+"), .integer(11, developerID), .ia5(12, date(now)), .integer(13, 180_602),
                .integer(14, 229), .integer(15, downloadID), .integer(16, versionID), .ia5(18, originalPurchase),
                .utf8(20, ""), .integer(25, 3),
            ]
            if let originalAppVersion { attributes.append(.utf8(19, originalAppVersion)) }
            attributes += purchases
        }
        return attributes
    }

    private mutating func inAppPayload(_ transaction: Transaction) -> [UInt8] {
        let isSubscription = transaction.type == .autoRenewable
        var fields: [ReceiptAttribute]
        if preset.isXcode {
            fields = [
                .integer(1701, Int64(transaction.quantity)), .utf8(1702, transaction.productID), .utf8(1703, transaction.transactionID),
                .ia5(1704, date(transaction.purchaseDate)), .ia5(1708, transaction.expiresDate.map(date) ?? ""),
                .integer(1719, transaction.isInIntroOfferPeriod ? 1 : 0),
            ]
            if let promo = transaction.promotionalOfferID { fields.append(.utf8(1721, promo)) }
        } else {
            fields = [
                .integer(1701, Int64(transaction.quantity)), .utf8(1702, transaction.productID), .utf8(1703, transaction.transactionID),
                .ia5(1704, date(transaction.purchaseDate)), .utf8(1705, transaction.originalTransactionID),
                .ia5(1706, date(transaction.originalPurchaseDate)), .integer(1707, transaction.type.code),
                .ia5(1708, transaction.expiresDate.map(date) ?? ""), .utf8(1709, ""),
                .integer(1710, preset.isSandbox ? 0 : Int64(random.below(0x7FFF_FFFF))),
                .integer(1711, transaction.webOrderLineItemID), .ia5(1712, transaction.cancellationDate.map(date) ?? ""),
                .integer(1713, transaction.isTrialPeriod ? 1 : 0),
                .utf8(1714, ""), .utf8(1715, ""), .utf8(1716, ""), .utf8(1717, ""), .utf8(1718, ""),
            ]
            // 1719 appears on subscriptions only; 1722 from 2023 on (so not in SHA-1-era receipts).
            if isSubscription { fields.append(.integer(1719, transaction.isInIntroOfferPeriod ? 1 : 0)) }
            if let promo = transaction.promotionalOfferID { fields.append(.utf8(1721, promo)) }
            if preset != .appstoreSHA1 { fields.append(.integer(1722, 0)) }
        }
        return ReceiptPayload(fields).encoded(ordering: preset.setOrdering)
    }
}
