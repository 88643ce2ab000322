#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import _ForgeSupport
public import AppStoreVocabulary

/// A scenario with every default filled in and every id drawn: what Apple's store knows at one instant.
///
/// The one model every artefact renders: the receipt encoder, the JWS encoder, verifyReceipt's JSON (and the
/// servers) read it; none of them decodes another's output. Every value is drawn from one seeded sequence in one
/// order, so the same scenario, time and seed give the same ids in every artefact.
public struct Store: Sendable {
    public let scenario: Scenario
    public let preset: Preset
    /// The instant the store is looked at: a receipt's creation date, a JWS's `signedDate`.
    public private(set) var now: Date
    public let seed: UInt64
    public let bundleID: String
    /// The app of a scenario that names none.
    public static let defaultBundleID = "com.example.app"
    public let appVersion: String
    public let originalAppVersion: String?
    /// The receipt type (attribute 0) as the scenario gives it: one of Apple's (``ReceiptType``) or, in the corpus, any text.
    public let receiptType: String
    public let deviceID: DeviceID
    /// Every transaction up to ``now``: the purchases' and the timeline's.
    public private(set) var transactions: [Transaction]
    /// Renewal state and refunds at ``now``.
    public private(set) var history: SubscriptionHistory
    /// The per-install opaque value (receipt attribute 4).
    public let opaqueValue: [UInt8]
    /// Attribute 1710 of each transaction, in ``transactions`` order: an id only production receipts show (0 elsewhere).
    public private(set) var undocumented1710: [Int64]
    /// The app's Apple id (`appAppleId`, receipt attribute 1): the scenario's, else drawn in production, else 0.
    public let appItemID: Int64
    public let developerID: Int64
    public let downloadID: Int64
    public let versionExternalIdentifier: Int64
    /// The sequence after the store's draws: what an encoder draws the bytes only it writes from.
    public let random: SeededGenerator
    /// What does not depend on the instant the store is looked at, kept so that ``reissued(at:)`` need not make it again.
    private let made: Made

    /// The purchases' transactions as made at the anchor, the subscriptions' periods, and attribute 1710 of each
    /// purchase transaction: drawn from the store's sequence, whatever the instant.
    private struct Made: Sendable {
        let base: [Transaction]
        let periods: [String: SubscriptionPeriod]
        let identifiers: [Int64]
    }

    /// Purchases one store may hold: what the receipt decoders accept in one payload (``InputLimits/maximumElements``),
    /// less room for the receipt's own attributes.
    public static let maximumTransactions = InputLimits.maximumElements - 100

    /// The environment a StoreKit 2 payload claims for this store: the receipt type's, nil for a type Apple never writes.
    public var environment: Environment? { Environment(receiptType: receiptType) }

    /// The status at ``now`` of the subscription whose latest transaction is `latest`.
    public func subscriptionStatus(of latest: Transaction) -> SubscriptionStatus { history.status(of: latest, at: now) }

    /// - Parameters:
    ///   - now: the anchor relative options (`expired`…) follow.
    ///   - reissuedAt: the store looked at later (a receipt issued again, as `latest_receipt` is): the purchases as
    ///     they were at `now` (same ids), the timeline's events up to this instant.
    public init(_ given: Scenario, now anchor: Date, reissuedAt: Date? = nil) throws(ForgeError) {
        let scenario = try given.applyingCatalogue()
        for (index, purchase) in scenario.purchases.enumerated() {
            try purchase.validate(place: "purchases[\(index)].")
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
                    + "(validators refuse more than \(InputLimits.maximumElements) attributes in the payload)")
        }
        let now = reissuedAt ?? anchor
        let preset = scenario.preset ?? .appstore
        if let bundle = scenario.bundleID, bundle.isEmpty {
            throw ForgeError(.invalidScenario, "'bundleId' must not be empty", fields: ["bundleId"])
        }
        self.preset = preset
        self.now = now
        self.scenario = scenario
        // From the scenario as given, as a server that pins it computes it.
        seed = scenario.seed ?? Self.derivedSeed(given, now: anchor)
        var random = SeededGenerator(seed: seed)
        bundleID = scenario.bundleID ?? Self.defaultBundleID
        appVersion = scenario.appVersion ?? "1"
        originalAppVersion = preset.isXcode ? scenario.originalAppVersion : (scenario.originalAppVersion ?? "1.0")
        receiptType = scenario.environment ?? preset.receiptType.rawValue
        if let text = scenario.deviceID {
            guard let parsed = DeviceID(text) else {
                throw ForgeError(
                    .invalidScenario, "'deviceId' '\(text)' is neither a UUID (8-4-4-4-12 hex) nor a MAC address (aa:bb:cc:dd:ee:ff)", fields: ["deviceId"])
            }
            deviceID = parsed
        } else {
            deviceID = random.uuid()
        }
        for instant in [anchor, now] where !ReceiptDate.writable.contains(instant) {
            throw ForgeError(.invalidScenario, "'now' \(ReceiptDate.format(instant)) is \(ReceiptDate.outsideWritable)", fields: ["now"])
        }
        var ids = IDSource(random: random, isXcode: preset.isXcode)
        var base: [Transaction] = []
        for (index, purchase) in scenario.purchases.enumerated() {
            let made = purchase.transactions(now: anchor, ids: &ids, introductory: scenario.definition(of: purchase.productID)?.introductoryOffer)
            try purchase.checkDates(of: made, place: "purchases[\(index)].")
            base += made
        }
        random = ids.random
        let periods = Dictionary(
            scenario.purchases.map { ($0.productID, $0.billingPeriod) }, uniquingKeysWith: { first, _ in first })
        // The order receipts have always drawn these in, so a receipt's bytes do not depend on who else renders the store.
        opaqueValue = random.bytes(preset.opaqueValue.length)
        let production = !preset.isXcode && !preset.isSandbox
        // The purchases' from the store's sequence (the timeline's each from its own id: ``look(at:)``), so that the
        // app's ids drawn next (its Apple id above all) stay the same however many periods the clock has passed.
        let identifiers = base.map { _ in preset.isXcode || preset.isSandbox ? 0 : Int64(random.below(0x7FFF_FFFF)) }
        made = Made(base: base, periods: periods, identifiers: identifiers)
        appItemID = scenario.appItemID ?? (production ? Int64(random.below(1_900_000_000) + 100_000_000) : 0)
        developerID = production ? Int64(random.below(0x7FFF_FFFF)) : 0
        downloadID = production ? Int64(random.below(0x7FFF_FFFF_FFFF)) : 0
        versionExternalIdentifier = production ? Int64(random.below(0x7FFF_FFFF)) : 0
        self.random = random
        transactions = base
        history = SubscriptionHistory(pendingRenewals: [], cancellationReasons: [:], accountDeletedAt: nil)
        undocumented1710 = identifiers
        try look(at: now)
    }

    /// The same store looked at `instant`: what `Store(scenario, now: anchor, reissuedAt: instant)` makes, without
    /// making the purchases again (a server renders one store at many instants: each notification at its own).
    public func reissued(at instant: Date) throws(ForgeError) -> Store {
        var store = self
        try store.look(at: instant)
        return store
    }

    /// Applies the timeline up to `instant` to the purchases: every part of the store that depends on the instant.
    private mutating func look(at instant: Date) throws(ForgeError) {
        if !ReceiptDate.writable.contains(instant) {
            throw ForgeError(.invalidScenario, "'now' \(ReceiptDate.format(instant)) is \(ReceiptDate.outsideWritable)", fields: ["now"])
        }
        now = instant
        let addedBy: [Int]
        (transactions, history, addedBy) = scenario.history(applyingTo: made.base, periods: made.periods, until: now, seed: seed, isXcode: preset.isXcode)
        try Self.checkDates(transactions: transactions[made.base.count...], addedBy: addedBy, history: history, now: now)
        // Only production receipts show the attribute: 0 elsewhere.
        let zero = preset.isXcode || preset.isSandbox
        undocumented1710 =
            made.identifiers
            + transactions[made.base.count...].map { transaction in
                guard !zero else { return 0 }
                var own = SeededGenerator(seed: seed ^ StableHash.fnv1a(Data(("1710:" + transaction.transactionID).utf8)))
                return Int64(own.below(0x7FFF_FFFF))
            }
        if !ReceiptDate.writable.contains(appOriginalPurchaseDate) {
            throw ForgeError(
                .invalidScenario,
                "the app's original purchase date, 30 days before the first purchase, is \(ReceiptDate.format(appOriginalPurchaseDate)), "
                    + "\(ReceiptDate.outsideWritable): move the first purchase or 'now' later",
                fields: ["now"])
        }
    }

    /// The customer's storefront: the scenario's, else the United States.
    public var storefront: Storefront { scenario.storefront.flatMap(Storefront.init(code:)) ?? .unitedStates }

    /// The `subscriptionGroupIdentifier` of a subscription product: its group in ``Scenario/products``, else a
    /// stable id of digits (like Apple's) per product.
    public func subscriptionGroupIdentifier(of productID: String) -> String {
        scenario.definition(of: productID)?.group ?? "2" + String(StableHash.fnv1a(Data(productID.utf8)) % 10_000_000).leftPadded(7)
    }

    /// The order id of `t`, as on the customer's e-mailed receipt (Apple's Look Up Order ID): ten capital letters
    /// and digits from the seed and the transaction id, so drawing it moves no other value of the store.
    /// [guess: the alphabet and length follow Apple's samples, e.g. MK5TTTVWJH]
    public func orderID(of t: Transaction) -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789")
        var random = SeededGenerator(seed: seed ^ StableHash.fnv1a(Data(("order:" + t.transactionID).utf8)))
        return String((0..<10).map { _ in alphabet[Int(random.below(UInt64(alphabet.count)))] })
    }

    /// When the app was first bought: 30 days before the first purchase (or before `now`, if earlier). A receipt's
    /// attribute 18 outside the sandbox; an AppTransaction's `originalPurchaseDate` is a day before the first purchase.
    public var appOriginalPurchaseDate: Date {
        min(transactions.map(\.originalPurchaseDate).min() ?? now, now).addingTimeInterval(-30 * 86_400)
    }

    /// Refuses a date the timeline reaches outside ``ReceiptDate/writable`` (a renewal or recovery period, a grace
    /// period, the app's original purchase), naming the event that put it there: no artefact of a Store writes one.
    private static func checkDates(
        transactions added: ArraySlice<Transaction>, addedBy: [Int], history: SubscriptionHistory, now: Date
    ) throws(ForgeError) {
        for (transaction, event) in zip(added, addedBy) {
            for date in [transaction.purchaseDate, transaction.expiresDate, transaction.commitment?.expiresDate].compactMap(\.self)
            where !ReceiptDate.writable.contains(date) {
                throw ForgeError(
                    .invalidScenario,
                    "'timeline[\(event)]' adds a period of \(transaction.productID) from \(ReceiptDate.format(transaction.purchaseDate)) to "
                        + "\(transaction.expiresDate.map { ReceiptDate.format($0) } ?? "?"), \(ReceiptDate.outsideWritable)",
                    fields: ["timeline[\(event)]"])
            }
        }
        for renewal in history.pendingRenewals {
            if let grace = renewal.gracePeriodExpiresDate, !ReceiptDate.writable.contains(grace) {
                throw ForgeError(
                    .invalidScenario, "the grace period of \(renewal.productID) ends at \(ReceiptDate.format(grace)), \(ReceiptDate.outsideWritable)")
            }
        }
    }

    /// With no explicit seed, the seed is a hash of the scenario and the time: the same inputs give
    /// the same ids, different inputs different ones, and no hidden randomness is involved.
    public static func derivedSeed(_ scenario: Scenario, now: Date) -> UInt64 {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let canonical = ((try? encoder.encode(scenario)) ?? Data()) + Data(ReceiptDate.format(now, style: .fractionalZulu).utf8)
        return StableHash.fnv1a(canonical)
    }
}
