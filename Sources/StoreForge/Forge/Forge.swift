public import AppStoreVocabulary
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ForgeCrypto
public import ReceiptModel
import Synchronization
import _ForgeSupport
public import StoreModel

/// What every forged artefact carries, whichever encoder rendered the store.
public protocol ForgedArtefact: Sendable {
    /// The artefact as a file holds it: a receipt's PKCS#7 DER, a JWS's compact serialization.
    var bytes: [UInt8] { get }
    /// What it renders: the resolved scenario at its creation time.
    var store: Store { get }
    var artefact: Mutation.Artefact { get }
}

/// A receipt the forge made, with everything needed to check or reproduce it.
public struct ForgedReceipt: ForgedArtefact {
    /// The PKCS#7 bytes.
    public let bytes: [UInt8]
    /// The signed payload (the eContent).
    public let payload: [UInt8]
    /// What the receipt renders: the resolved scenario at the receipt's creation time.
    public let store: Store
    public var artefact: Mutation.Artefact { .receipt }
    public var preset: Preset { store.preset }
    public var now: Date { store.now }
    public var seed: UInt64 { store.seed }
    public var deviceID: DeviceID { store.deviceID }
    public var bundleID: String { store.bundleID }
    public var appVersion: String { store.appVersion }
    /// The receipt type (attribute 0).
    public var environment: String { store.receiptType }
    public var transactions: [Transaction] { store.transactions }
    /// Renewal state and refunds as of the receipt's creation (the scenario's timeline).
    public var history: SubscriptionHistory { store.history }
    /// The role of the certificate a validator must trust to accept this receipt.
    public let trustAnchorRole: CertificateRole
    let pki: CertificateSet<CertificateRole>
    /// The certificate a validator must trust to accept this receipt (parsed when asked: making a receipt
    /// does not need it).
    public var trustAnchor: X509Certificate { pki.certificate(trustAnchorRole) }
}

/// Renders the one ``Store`` as signed artefacts: a receipt (``ReceiptEncoder``, signed by the RSA set) or a
/// StoreKit 2 JWS (``World``, signed by the EC set). Valid by default, in the shape of a preset; a new artefact
/// is a new encoder, not a new forge.
///
/// The forge builds the payload and the SignedData itself and asks OpenSSL only for the raw RSA
/// signature, because `openssl cms -sign` adds signed attributes and re-sorts certificates, which
/// real receipts never show (receipt-facts §b.1). Nothing here reads the clock or an unseeded
/// random source: `now` and the seed are inputs.
public struct Forge: Sendable {
    /// Signs receipts.
    public let receiptPKI: CertificateSet<CertificateRole>
    /// Signs JWS.
    public let jwsPKI: CertificateSet<JWSRole>
    /// Signs version 2 transaction receipts (version 3 is signed from ``receiptPKI``); always the compiled-in set.
    public let transactionReceiptPKI: CertificateSet<TransactionReceiptRole>
    /// What signing needs, worked out on first use: per preset the key, the embedded certificates and the
    /// SignerInfo id (a process making one receipt parses one chain), and the JWS protected headers.
    let cache = Cache()

    final class Cache: Sendable {
        fileprivate let signing = Mutex<[Preset: Signing]>([:])
        let jwsHeaders = Mutex<JWSHeaders?>(nil)
    }

    fileprivate struct Signing: Sendable {
        let key: RSAPrivateKey
        let certificates: [[UInt8]]
        let identity: CertificateIdentity
    }

    /// A forge over a receipt set and a JWS set; without one, the compiled-in EC set signs JWS, so a user's own
    /// receipt set (`forge make --certificates DIR`) needs no JWS set on disk.
    public init(receiptPKI: CertificateSet<CertificateRole>, jwsPKI: CertificateSet<JWSRole>? = nil) throws(ForgeError) {
        self.receiptPKI = receiptPKI
        if let jwsPKI { self.jwsPKI = jwsPKI } else { self.jwsPKI = try .bundled() }
        self.transactionReceiptPKI = try .bundled()
    }

    /// The forge over both compiled-in sets.
    public static func bundled() throws(ForgeError) -> Forge { try Forge(receiptPKI: .bundled()) }

    private func setup(for preset: Preset) throws(ForgeError) -> Signing {
        if let known = cache.signing.withLock({ $0[preset] }) { return known }
        let certificates = preset.chain.map { receiptPKI.certificateDER($0) }
        let identity = try ForgeError.encoding("reading the \(preset.chain[0].fileStem) certificate") { () throws(ReceiptDecodingError) in
            try CertificateIdentity(derEncoded: certificates[0])
        }
        let key = receiptPKI.privateKey(preset.chain[0])
        let setup = Signing(
            key: key, certificates: certificates, identity: identity)
        cache.signing.withLock { $0[preset] = setup }
        return setup
    }

    /// Makes one receipt.
    /// - Parameters:
    ///   - scenario: what the receipt says; validated first.
    ///   - now: the creation time; relative options (`expired`…) follow it.
    ///   - mutations: named defects applied on top of the valid receipt, in order (see ``Mutation``).
    ///   - reissuedAt: a receipt issued again later, as `latest_receipt` is: the purchases as they were at
    ///     `now` (same ids), the timeline's events up to this instant, and this creation date.
    public func make(
        _ scenario: Scenario, now: Date,
        mutations: [MutationStep] = [], reissuedAt: Date? = nil
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
        let store = try Store(scenario, now: now, reissuedAt: reissuedAt)
        var encoder = ReceiptEncoder(store)
        let preset = store.preset
        let setup = try setup(for: preset)
        var stages = ForgeStages(
            pki: receiptPKI, preset: preset, attributes: try encoder.attributes(), ordering: preset.setOrdering, payload: [],
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
        try run(.signing)
        try stages.sign()
        try run(.signed)
        let draft = SignedDataDraft(
            digestAlgorithmOIDs: stages.digestAlgorithmOIDs, payload: stages.payload,
            certificates: stages.certificates, signers: stages.signers, layout: stages.layout)
        stages.bytes = try ForgeError.encoding("encoding the container") { () throws(ReceiptDecodingError) in try draft.encoded() }
        try run(.encoded)
        return ForgedReceipt(
            bytes: stages.bytes, payload: stages.payload, store: store, trustAnchorRole: preset.trustAnchor, pki: receiptPKI)
    }
}

/// Everything between a scenario and the receipt's bytes, in the order the forge builds it. Each
/// field is what one kind of defect edits: mutations receive it at their stage (see ``Mutation``).
public struct ForgeStages: Sendable {
    /// The PKI the receipt is signed from, for mutations that issue variant certificates.
    public let pki: CertificateSet<CertificateRole>
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

/// The receipt's payload rendered from the store: attributes laid out as the preset's real receipts lay them out.
struct ReceiptEncoder {
    let store: Store
    /// Continues the store's sequence: the bytes only receipts carry (attributes 6 and 7).
    var random: SeededGenerator

    init(_ store: Store) {
        self.store = store
        random = store.random
    }

    private var preset: Preset { store.preset }

    private func date(_ date: Date) -> String { ReceiptDate.format(date, style: preset.dateStyle) }

    /// The payload attributes, laid out as the preset's real receipts lay them out.
    mutating func attributes() throws(ForgeError) -> [ReceiptAttribute] {
        let now = store.now, environment = store.receiptType, appVersion = store.appVersion, transactions = store.transactions
        let opaque = store.opaqueValue
        let bundleAttribute = ReceiptAttribute.utf8(AttributeType.bundleID, store.bundleID)
        let hashInput = store.deviceID.bytes + opaque + bundleAttribute.value
        let hash = try ForgeError.wrapping("computing the device hash") { try DigestAlgorithm.sha1.digest(hashInput) }
        let purchases = zip(transactions, store.undocumented1710).map { ReceiptAttribute(type: AttributeType.inAppPurchase, value: inAppPayload($0, $1)) }
        var attributes: [ReceiptAttribute]
        if preset.isXcode {
            // Ascending type order, only the fields Xcode writes (no 18, no 19).
            attributes = [
                .utf8(0, environment), .integer(1, 0), bundleAttribute, .utf8(3, appVersion),
                .raw(4, opaque, version: preset.opaqueValue.version), .raw(5, hash), .ia5(8, ""), .ia5(12, date(now)),
            ]
            if let originalAppVersion = store.originalAppVersion { attributes.append(.utf8(19, originalAppVersion)) }
            attributes += purchases
            attributes.append(.ia5(21, date(ReceiptDate.sentinel)))
        } else {
            let sandbox = preset.isSandbox
            let originalPurchase = sandbox ? Preset.sandboxOriginalPurchaseDate : date(store.appOriginalPurchaseDate)
            attributes = [
                .utf8(0, environment), .integer(1, store.appItemID), bundleAttribute, .utf8(3, appVersion),
                .raw(4, opaque, version: preset.opaqueValue.version), .raw(5, hash),
                .raw(6, random.bytes(57 + Int(random.below(23)))), .raw(7, random.bytes(60 + Int(random.below(25)))),
                .ia5(8, sandbox ? "" : date(now)), ReceiptAttribute(type: 9, value: ASN1Value.integer(content: Array("P305".utf8))),
                .ia5(10, store.scenario.ageRating ?? "4+"), .integer(11, store.developerID), .ia5(12, date(now)), .integer(13, 180_602),
                .integer(14, 229), .integer(15, store.downloadID), .integer(16, store.versionExternalIdentifier), .ia5(18, originalPurchase),
                .utf8(20, ""), .integer(25, 3),
            ]
            if let originalAppVersion = store.originalAppVersion { attributes.append(.utf8(19, originalAppVersion)) }
            attributes += purchases
        }
        return attributes
    }

    private func inAppPayload(_ transaction: Transaction, _ undocumented1710: Int64) -> [UInt8] {
        let isSubscription = transaction.type == .autoRenewable
        var fields: [ReceiptAttribute]
        if preset.isXcode {
            fields = [
                .integer(1701, Int64(transaction.quantity)), .utf8(1702, transaction.productID), .utf8(1703, transaction.transactionID),
                .ia5(1704, date(transaction.purchaseDate)), .ia5(1708, transaction.expiresDate.map(date) ?? ""),
                .integer(1719, transaction.isInIntroOfferPeriod ? 1 : 0),
            ]
            if isSubscription, let promo = transaction.promotionalOfferID { fields.append(.utf8(1721, promo)) }
        } else {
            fields = [
                .integer(1701, Int64(transaction.quantity)), .utf8(1702, transaction.productID), .utf8(1703, transaction.transactionID),
                .ia5(1704, date(transaction.purchaseDate)), .utf8(1705, transaction.originalTransactionID),
                .ia5(1706, date(transaction.originalPurchaseDate)), .integer(1707, transaction.type.code),
                .ia5(1708, transaction.expiresDate.map(date) ?? ""), .utf8(1709, ""),
                .integer(1710, undocumented1710),
                .integer(1711, transaction.webOrderLineItemID), .ia5(1712, transaction.cancellationDate.map(date) ?? ""),
                .integer(1713, transaction.isTrialPeriod ? 1 : 0),
                .utf8(1714, ""), .utf8(1715, ""), .utf8(1716, ""), .utf8(1717, ""), .utf8(1718, ""),
            ]
            // 1719 and 1721 appear on subscriptions only (an offer code on a one-time purchase is StoreKit 2's alone); 1722
            // from 2023 on (so not in SHA-1-era receipts).
            if isSubscription { fields.append(.integer(1719, transaction.isInIntroOfferPeriod ? 1 : 0)) }
            if isSubscription, let promo = transaction.promotionalOfferID { fields.append(.utf8(1721, promo)) }
            if preset != .appstoreSHA1 { fields.append(.integer(1722, 0)) }
        }
        return ReceiptPayload(fields).encoded(ordering: preset.setOrdering)
    }
}

extension ForgedReceipt {
    /// What verifyReceipt reports of this receipt, from the store it was encoded from: nothing is decoded. The
    /// fields the preset's receipts carry, each date as the instant its written text names, the purchases in the
    /// payload's order; `forge make --format json` renders it, and it equals what reading the bytes back gives.
    public var verifyReceipt: VerifyReceiptJSON.Receipt { ReceiptEncoder(store).verifyReceipt() }

    /// `in_app_ownership_type` of the transactions the customer did not buy (Family Sharing), which the receipt's
    /// bytes do not carry: verifyReceipt's ``VerifyReceiptJSON/Extras/ownership``.
    public var ownership: [String: OwnershipType] {
        Dictionary(transactions.filter { $0.ownership != .purchased }.map { ($0.transactionID, $0.ownership) }, uniquingKeysWith: { first, _ in first })
    }
}

extension ReceiptEncoder {
    /// ``ForgedReceipt/verifyReceipt``: what ``attributes()`` and `inAppPayload` write, field by field.
    fileprivate func verifyReceipt() -> VerifyReceiptJSON.Receipt {
        // A date as the receipt carries it: whole seconds in the preset's style (an empty text reads as absent).
        let written = { (instant: Date) in ReceiptDate.parse(date(instant)) }
        let pairs = Array(zip(store.transactions, store.undocumented1710))
        let order = ReceiptPayload(pairs.map { ReceiptAttribute(type: AttributeType.inAppPurchase, value: inAppPayload($0, $1)) }).wireOrder(preset.setOrdering)
        let inApp = order.map { index in
            let transaction = pairs[index].0
            let xcode = preset.isXcode
            return VerifyReceiptJSON.Purchase(
                quantity: Int64(transaction.quantity), productID: transaction.productID, transactionID: transaction.transactionID,
                originalTransactionID: xcode ? nil : transaction.originalTransactionID, purchaseDate: written(transaction.purchaseDate),
                originalPurchaseDate: xcode ? nil : written(transaction.originalPurchaseDate), productType: xcode ? nil : transaction.type.code,
                expiresDate: transaction.expiresDate.flatMap(written), webOrderLineItemID: xcode ? nil : transaction.webOrderLineItemID,
                cancellationDate: xcode ? nil : transaction.cancellationDate.flatMap(written), isTrialPeriod: xcode ? nil : transaction.isTrialPeriod,
                isInIntroOfferPeriod: xcode || transaction.type == .autoRenewable ? transaction.isInIntroOfferPeriod : nil,
                promotionalOfferID: transaction.type == .autoRenewable ? transaction.promotionalOfferID.flatMap { $0.isEmpty ? nil : $0 } : nil)
        }
        if preset.isXcode {
            return VerifyReceiptJSON.Receipt(
                receiptType: store.receiptType, appItemID: 0, bundleID: store.bundleID, appVersion: store.appVersion, downloadID: nil,
                versionExternalIdentifier: nil, creationDate: written(store.now), requestDate: nil, originalPurchaseDate: nil,
                originalAppVersion: store.originalAppVersion, expirationDate: written(ReceiptDate.sentinel), inApp: inApp)
        }
        let sandbox = preset.isSandbox
        return VerifyReceiptJSON.Receipt(
            receiptType: store.receiptType, appItemID: store.appItemID, bundleID: store.bundleID, appVersion: store.appVersion, downloadID: store.downloadID,
            versionExternalIdentifier: store.versionExternalIdentifier, creationDate: written(store.now), requestDate: sandbox ? nil : written(store.now),
            originalPurchaseDate: sandbox ? ReceiptDate.parse(Preset.sandboxOriginalPurchaseDate) : written(store.appOriginalPurchaseDate),
            originalAppVersion: store.originalAppVersion, expirationDate: nil, inApp: inApp)
    }
}
