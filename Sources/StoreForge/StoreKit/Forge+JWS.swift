#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import ForgeCrypto
import ReceiptModel
public import _ForgeSupport
import JWSModel
public import StoreModel
import Synchronization
public import AppStoreVocabulary

/// What a JWS says beyond the scenario: the notification's type, prices, fields set by hand.
public struct JWSOptions: Sendable {
    /// Which purchase (by product id) the transaction, renewal or notification is about; default: the first.
    public var productID: String?
    /// The `environment` claim (an AppTransaction's `receiptType`); nil: the scenario's receipt type's environment.
    /// The preset alone picks the signer, so `.xcode` on an App Store preset is an Xcode claim under the App Store chain.
    public var environment: Environment?
    /// The app's Apple id where Apple's payloads carry one (notification `data`, AppTransaction, realtime); nil: the
    /// receipt's (attribute 1), absent outside Production when that is 0.
    public var appAppleID: Int64?
    /// Apple's (``NotificationType``, ``NotificationSubtype``), or unknown future ones the corpus forges.
    public var notificationType: WireValue<NotificationType>
    public var subtype: WireValue<NotificationSubtype>?
    /// `storefront` (alpha-3), `storefrontId` and `currency`; nil: the scenario's storefront's (default USA, USD).
    public var storefront: String?
    public var storefrontID: String?
    public var currency: String?
    /// Price in milliunits (9990 = 9.99); nil: the product's in the scenario's `products`, else 9990. Offers
    /// defined there keep their own price.
    public var price: Int64?
    public var appAccountToken: String?
    /// Members replaced or added after the payload is built, by RFC 6901 pointer (`/data/appAppleId`).
    public var overrides: [(String, JSONValue)]
    /// Members removed, by pointer.
    public var removals: [String]
    /// Let `overrides` add members Apple's schema (``PayloadSchema``) does not have.
    public var allowUnknownKeys: Bool
    /// Why the customer asked for the refund a `CONSUMPTION_REQUEST` is about (`data.consumptionRequestReason`).
    public var consumptionRequestReason: ConsumptionRequestReason = .unintendedPurchase
    /// An `EXTERNAL_PURCHASE_TOKEN`'s custom link token type (`tokenType`, with its `tokenExpirationDate`); nil: a
    /// token of the older kinds, which carry neither.
    public var tokenType: ExternalPurchaseTokenType?
    /// The scenario's timeline already holds the event the notification reports (`forge jws make --event`): the
    /// pair's state is checked against the store, not added to the timeline a second time.
    public var stateFromTimeline = false

    public init(
        productID: String? = nil, environment: Environment? = nil, appAppleID: Int64? = nil, notificationType: WireValue<NotificationType> = .known(.didRenew),
        subtype: WireValue<NotificationSubtype>? = nil,
        storefront: String? = nil, storefrontID: String? = nil, currency: String? = nil, price: Int64? = nil, appAccountToken: String? = nil,
        overrides: [(String, JSONValue)] = [], removals: [String] = [], allowUnknownKeys: Bool = false
    ) {
        self.productID = productID
        self.environment = environment
        self.appAppleID = appAppleID
        self.notificationType = notificationType
        self.subtype = subtype
        self.storefront = storefront
        self.storefrontID = storefrontID
        self.currency = currency
        self.price = price
        self.appAccountToken = appAccountToken
        self.overrides = overrides
        self.removals = removals
        self.allowUnknownKeys = allowUnknownKeys
    }
}

extension JWSOptions {
    /// The notification's type and subtype as Apple writes them in messages: `EXPIRED/VOLUNTARY`.
    var pair: String { notificationType.rawValue + (subtype.map { "/" + $0.rawValue } ?? "") }
}

/// A forged JWS and what went into it.
public struct ForgedJWS: ForgedArtefact {
    public let kind: JWSKind
    public let compact: String
    public let payload: JSONValue
    /// What the JWS renders (with a notification's state applied).
    public let store: Store
    /// The payload's environment claim.
    public let environment: Environment
    /// Signed by the Xcode certificate (an `xcode-*` preset), whatever the claim.
    public let xcodeSigned: Bool
    public let appAppleID: Int64?
    public var bundleID: String { store.bundleID }
    public var bytes: [UInt8] { Array(compact.utf8) }
    public var artefact: Mutation.Artefact { .jws }
}

/// The encoded protected headers of the JWS set: the same for every JWS it signs.
struct JWSHeaders: Sendable {
    let appStore: String
    let xcode: String
}

/// StoreKit 2 payloads, signed as Apple signs them: ES256, compact serialization, `x5c` = leaf, intermediate,
/// root (Xcode: one self-signed certificate and `kid` "Apple_Xcode_Key"). RFC 6979 nonces make the
/// same scenario, time and seed give the same bytes.
extension Forge {
    /// The protected headers, encoded on the first JWS (a receipt-only process never parses the EC set).
    private var jwsHeaders: JWSHeaders {
        if let known = cache.jwsHeaders.withLock({ $0 }) { return known }
        func header(xcode: Bool) -> String {
            let chain = jwsPKI.x5c(xcode: xcode).map { JSONValue.string(Data($0.derRepresentation).base64EncodedString()) }
            let header: JSONValue =
                xcode
                ? .object([("kid", .string("Apple_Xcode_Key")), ("typ", .string("JWT")), ("alg", .string("ES256")), ("x5c", .array(chain))])
                : .object([("alg", .string("ES256")), ("x5c", .array(chain)), ("typ", .string("JWT"))])
            return Base64URL.encode(Array(header.serialized(pretty: false).utf8))
        }
        let headers = JWSHeaders(appStore: header(xcode: false), xcode: header(xcode: true))
        cache.jwsHeaders.withLock { $0 = headers }
        return headers
    }

    /// The compact JWS of `payload`.
    public func sign(_ payload: JSONValue, xcode: Bool) throws(ForgeError) -> String {
        let headers = jwsHeaders
        let input = (xcode ? headers.xcode : headers.appStore) + "." + Base64URL.encode(Array(payload.serialized(pretty: false).utf8))
        let key = jwsPKI.privateKey(xcode ? .xcode : .leaf)
        let signature = try ForgeError.wrapping("signing the JWS") { try key.signature(for: Array(input.utf8), algorithm: .sha256) }
        return input + "." + Base64URL.encode(signature)
    }

    /// Forges one artefact of `scenario` at `now`, consistent with the receipt `forge make` makes of it
    /// (same transaction ids, dates, device and bundle).
    public func make(_ kind: JWSKind, scenario: Scenario, now: Date, options: JWSOptions = JWSOptions()) throws(ForgeError) -> ForgedJWS {
        var scenario = scenario
        var state = NotificationState.unchanged
        if kind == .notification, let type = options.notificationType.known {
            let subtype = options.subtype.map(\.known)
            // Unknown (future) values are the corpus's tolerance cases; a pair of known values must be one Apple sends.
            if subtype != .some(nil), let refusal = type.refusal(of: subtype ?? nil) { throw ForgeError(.conflictingOptions, refusal) }
            // The pair's state goes into the scenario, so the receipt and every JWS of it agree; an unknown subtype claims nothing.
            if subtype != .some(nil) {
                state = type.state(subtype ?? nil)
                if !options.stateFromTimeline { scenario = try scenario.stating(state, pair: options.pair, about: options.productID, now: now) }
            }
        }
        let store = try Store(scenario, now: now)
        let world = try World(store: store, options: options)
        try world.check(state, pair: options.pair)
        if state == .familySharingRevoked, let product = try? world.latest().productID, store.scenario.definition(of: product)?.familyShareable == false {
            throw ForgeError(
                .conflictingOptions, "\(options.pair) is sent when a family member loses a shared purchase; \(product) is not family-shareable in the scenario's products")
        }
        var payload: JSONValue
        switch kind {
        case .transaction: payload = try world.transaction(world.latest())
        case .renewal: payload = try world.renewal()
        case .appTransaction: payload = world.appTransaction()
        case .realtime: payload = try world.realtime()
        case .notification where options.notificationType == .known(.test):
            // Apple's TEST carries no transaction (and needs no purchase): `data` is the app, bundle and environment only.
            payload = world.notification(signedTransaction: nil, signedRenewal: nil)
        case .notification where options.notificationType == .known(.rescindConsent):
            // About the app, not a purchase (and needs none): `appData` carries the AppTransaction, signed alike.
            payload = world.notification(signedTransaction: nil, signedRenewal: nil, signedAppTransaction: try sign(world.appTransaction(), xcode: world.isXcode))
        case .notification:
            let subscription = (try? world.latest())?.type == .autoRenewable
            let signedTransaction = try sign(try world.transaction(world.latest()), xcode: world.isXcode)
            let signedRenewal = subscription ? try sign(try world.renewal(), xcode: world.isXcode) : nil
            payload = world.notification(signedTransaction: signedTransaction, signedRenewal: signedRenewal)
        }
        for (pointer, value) in options.overrides {
            try PayloadSchema.check(pointer, in: kind, allowUnknownKeys: options.allowUnknownKeys)
            guard value.isCarriable else { throw ForgeError(.invalidScenario, "\(pointer): a number JSON cannot carry (out of range or not finite)") }
            try payload.edit(pointer, setting: value)
        }
        for pointer in options.removals { try payload.edit(pointer, setting: nil) }
        return ForgedJWS(
            kind: kind, compact: try sign(payload, xcode: world.isXcode), payload: payload, store: store, environment: world.environment,
            xcodeSigned: world.isXcode, appAppleID: world.appAppleID)
    }
}

/// A StoreKit 2 payload rendered from the store: the facts every payload draws on.
struct World {
    let store: Store
    let options: JWSOptions
    let environment: Environment
    let isXcode: Bool
    let appAppleID: Int64?
    let originalApplicationVersion: String
    let appTransactionID: String
    let nonce: String
    let fraction: Double
    let productID: String?

    init(store: Store, options: JWSOptions) throws(ForgeError) {
        self.store = store
        self.options = options
        isXcode = store.preset.isXcode
        guard let environment = options.environment ?? store.environment else {
            let known = Environment.allCases.map(\.rawValue).joined(separator: ", ")
            throw ForgeError(.invalidScenario, "the receipt type '\(store.receiptType)' has no StoreKit 2 environment: give one of \(known)")
        }
        self.environment = environment
        let itemID = options.appAppleID ?? store.appItemID
        appAppleID = environment == .production ? itemID : (itemID == 0 ? nil : itemID)
        originalApplicationVersion = store.originalAppVersion ?? "1.0"
        var random = SeededGenerator(seed: store.seed ^ 0x6A77_735F_666F_7267)  // "jws_forg"
        appTransactionID = isXcode ? "0" : "70" + random.decimalString(digits: 16)
        nonce = random.uuid().description.lowercased()
        fraction = Double(random.below(10_000)) / 10_000
        productID = options.productID
    }

    /// Epoch milliseconds; Xcode writes fractional ones ("dates are not well formed").
    func date(_ date: Date) -> JSONValue {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        return isXcode ? .number(milliseconds + fraction) : .integer(Int64(milliseconds))
    }

    var signedDate: JSONValue { date(store.now) }

    func id(_ value: String) -> JSONValue { .string(isXcode ? "0" : value) }

    func latest() throws(ForgeError) -> Transaction {
        // By index, copying one transaction at the end: a server renders a notification of a store of thousands of
        // periods at each of its instants, and `max(by:)` over the elements copied every one of them each time (in a
        // 10,000-renewal batch, 10⁸ copies). The first of equal purchase dates wins, as with `max(by:)`.
        let transactions = store.transactions
        var best: Int?
        for index in transactions.indices where productID == nil || transactions[index].productID == productID {
            if let current = best, transactions[index].purchaseDate <= transactions[current].purchaseDate { continue }
            best = index
        }
        guard let latest = best.map({ transactions[$0] }) else {
            guard let productID else { throw ForgeError(.invalidScenario, "the scenario has no purchase ('purchases')", fields: ["purchases"]) }
            throw ForgeError(.invalidScenario, "no purchase of \(productID) in the scenario")
        }
        return latest
    }

    /// The product's subscription group: the scenario's definition's, else a stable id per product.
    func groupIdentifier(_ product: String) -> String { store.subscriptionGroupIdentifier(of: product) }

    var storefront: String { options.storefront ?? store.storefront.code }
    var currency: String { options.currency ?? store.storefront.currency }

    /// The price of a period at the product's full price: --price, the product's definition, or 9.99.
    func fullPrice(_ product: String) -> Int64 { options.price ?? store.scenario.definition(of: product)?.priceMilliunits ?? 9990 }

    /// A 12-month commitment's price: the product's (``ProductDefinition/commitmentPriceMilliunits``), else twelve
    /// periods at the full price.
    func commitmentPrice(_ product: String) -> Int64 {
        store.scenario.definition(of: product)?.commitmentPriceMilliunits ?? Int64(Commitment.billingPeriods) * (options.price ?? 9990)
    }

    /// The price of one billing period: a commitment's share (or --price), else the full price.
    func periodPrice(_ product: String, commitment: Commitment?) -> Int64 {
        guard let commitment else { return fullPrice(product) }
        return options.price ?? commitmentPrice(product) / Int64(max(1, commitment.totalBillingPeriods))
    }

    func transaction(_ t: Transaction) throws(ForgeError) -> JSONValue {
        var members: JSONObject = [
            ("originalTransactionId", id(t.originalTransactionID)), ("transactionId", id(t.transactionID)),
        ]
        let subscription = t.type == .autoRenewable
        if subscription { members.append(("webOrderLineItemId", id(String(t.webOrderLineItemID)))) }
        members += [("bundleId", .string(store.bundleID)), ("productId", .string(t.productID))]
        if subscription { members.append(("subscriptionGroupIdentifier", .string(groupIdentifier(t.productID)))) }
        members += [("purchaseDate", date(t.purchaseDate)), ("originalPurchaseDate", date(t.originalPurchaseDate))]
        if let expires = t.expiresDate { members.append(("expiresDate", date(expires))) }
        members += [("quantity", .integer(Int64(t.quantity))), ("type", .string(t.type.transactionType))]
        if let token = t.appAccountToken ?? options.appAccountToken { members.append(("appAccountToken", .string(token))) }
        members += [("inAppOwnershipType", .string(t.ownership.rawValue)), ("signedDate", signedDate)]
        if let revoked = t.cancellationDate {
            members += [("revocationReason", .integer((t.cancellationReason?.revocationReason ?? .other).rawValue)), ("revocationDate", date(revoked))]
        }
        if t.isUpgraded { members.append(("isUpgraded", .bool(true))) }
        // The offer in force: the product's defined one (its kind, payment mode, period and price), else what the
        // purchase says alone (a trial, an intro period, a promotional offer id).
        let definition = store.scenario.definition(of: t.productID)
        let introductory = t.isTrialPeriod || t.isInIntroOfferPeriod
        let offer = introductory ? definition?.introductoryOffer : t.promotionalOfferID.flatMap { definition?.offer(id: $0) }
        if introductory {
            members.append(("offerType", .integer(OfferType.introductory.rawValue)))
        } else if let promo = t.promotionalOfferID {
            members += [("offerType", .integer((offer?.kind.offerType ?? .promotional).rawValue)), ("offerIdentifier", .string(promo))]
        }
        let price = t.isTrialPeriod ? 0 : offer?.priceMilliunits ?? periodPrice(t.productID, commitment: t.commitment)
        members += [
            ("environment", .string(environment.rawValue)), ("storefront", .string(storefront)),
            ("storefrontId", .string(options.storefrontID ?? store.storefront.id)),
            // An upgrade is a purchase the customer made, not a renewal.
            ("transactionReason", .string((t.transactionID == t.originalTransactionID || t.upgradedFrom != nil ? TransactionReason.purchase : .renewal).rawValue)),
            ("currency", .string(currency)), ("price", .integer(price)),
        ]
        if let offer {
            members.append(("offerDiscountType", .string(offer.paymentMode.offerDiscountType.rawValue)))
        } else if t.isTrialPeriod {
            members.append(("offerDiscountType", .string(OfferDiscountType.freeTrial.rawValue)))
        } else if t.isInIntroOfferPeriod {
            members.append(("offerDiscountType", .string(OfferDiscountType.payAsYouGo.rawValue)))
        }
        members.append(("appTransactionId", .string(appTransactionID)))
        if let period = offer?.offerPeriod {
            members.append(("offerPeriod", .string(period)))
        } else if introductory {
            members.append(("offerPeriod", .string("P1M")))
        }
        if let revocation = t.revocationType {
            members.append(("revocationType", .string(revocation.rawValue)))
            if let share = t.refundedPercentage, revocation == .refundProrated { members.append(("revocationPercentage", .integer(share))) }
        }
        if let plan = t.billingPlan { members.append(("billingPlanType", .string(plan.rawValue))) }
        if let commitment = t.commitment {
            members.append(
                (
                    "commitmentInfo",
                    .object([
                        ("billingPeriodNumber", .integer(Int64(commitment.billingPeriodNumber))), ("commitmentExpiresDate", date(commitment.expiresDate)),
                        ("commitmentPrice", .integer(commitmentPrice(t.productID))), ("totalBillingPeriods", .integer(Int64(commitment.totalBillingPeriods))),
                    ])
                ))
        }
        return .object(members)
    }

    func renewal() throws(ForgeError) -> JSONValue { try renewal(of: latest()) }

    /// The renewal info of `last`'s subscription (`last` is its latest transaction).
    func renewal(of last: Transaction) throws(ForgeError) -> JSONValue {
        guard last.type == .autoRenewable else { throw ForgeError(.invalidScenario, "renewal info needs an auto-renewable subscription; \(last.productID) is not one") }
        let state = store.history.renewal(of: last.originalTransactionID)
        var members = JSONObject()
        if let intent = state?.expirationIntent { members.append(("expirationIntent", .integer(Int64(intent.rawValue)))) }
        members += [
            ("originalTransactionId", id(last.originalTransactionID)), ("autoRenewProductId", .string(state?.autoRenewProductID ?? last.productID)),
            ("productId", .string(last.productID)), ("autoRenewStatus", .integer((state?.autoRenewStatus == false ? AutoRenewStatus.off : .on).rawValue)),
            ("isInBillingRetryPeriod", .bool(state?.isInBillingRetryPeriod ?? false)),
        ]
        if let consent = state?.priceConsentStatus { members.append(("priceIncreaseStatus", .integer(Int64(consent.rawValue)))) }
        if let grace = state?.gracePeriodExpiresDate { members.append(("gracePeriodExpiresDate", date(grace))) }
        members += [("signedDate", signedDate), ("environment", .string(environment.rawValue))]
        let first =
            store.transactions.lazy.filter { $0.originalTransactionID == last.originalTransactionID }.map(\.purchaseDate).min() ?? last.purchaseDate
        members.append(("recentSubscriptionStartDate", date(first)))
        if let renewal = last.expiresDate { members.append(("renewalDate", date(renewal))) }
        let renewsAs = state?.autoRenewProductID ?? last.productID
        members += [("currency", .string(currency)), ("renewalPrice", .integer(periodPrice(renewsAs, commitment: last.commitment)))]
        // A lapsed subscription is offered its product's win-back offers (Apple's eligibleWinBackOfferIds).
        let winBack = (store.scenario.definition(of: last.productID)?.offers ?? []).filter { $0.kind == .winBack }.compactMap(\.id)
        if state?.expirationIntent != nil, !winBack.isEmpty { members.append(("eligibleWinBackOfferIds", .array(winBack.map(JSONValue.string)))) }
        if let token = last.appAccountToken { members.append(("appAccountToken", .string(token))) }
        members.append(("appTransactionId", .string(appTransactionID)))
        if let commitment = store.renewalCommitment(of: last) {
            members.append(
                (
                    "commitmentInfo",
                    .object([
                        ("commitmentAutoRenewProductId", .string(commitment.autoRenewProductID)),
                        ("commitmentAutoRenewStatus", .integer((commitment.autoRenewStatus ? AutoRenewStatus.on : .off).rawValue)),
                        ("commitmentRenewalBillingPlanType", .string(commitment.billingPlanType.rawValue)),
                        ("commitmentRenewalDate", date(commitment.renewalDate)), ("commitmentRenewalPrice", .integer(commitmentPrice(commitment.autoRenewProductID))),
                    ])
                ))
        }
        if let plan = last.billingPlan { members.append(("renewalBillingPlanType", .string(plan.rawValue))) }
        return .object(members)
    }

    func appTransaction() -> JSONValue {
        var members: JSONObject = [("receiptType", .string(environment.rawValue))]
        if let appAppleID { members.append(("appAppleId", .integer(appAppleID))) }
        members += [
            ("bundleId", .string(store.bundleID)), ("applicationVersion", .string(store.appVersion)),
            ("versionExternalIdentifier", .integer(environment == .production ? 840_000_000 + Int64(store.seed % 100_000) : 0)),
            ("receiptCreationDate", date(store.now)),
            // Xcode writes year 1 (-62135769600000); the others the first download, before any purchase.
            (
                "originalPurchaseDate",
                isXcode
                    ? .integer(-62_135_769_600_000)
                    : date(store.transactions.map(\.originalPurchaseDate).min().map { $0.addingTimeInterval(-86_400) } ?? store.now.addingTimeInterval(-86_400))
            ),
            ("originalApplicationVersion", .string(originalApplicationVersion)),
            ("deviceVerification", .string(deviceVerification)), ("deviceVerificationNonce", .string(nonce)),
            ("appTransactionId", .string(appTransactionID)), ("originalPlatform", .string(PurchasePlatform.iOS.rawValue)), ("signedDate", signedDate),
        ]
        return .object(members)
    }

    /// base64(SHA-384(nonce ‖ device id)), both as lowercase text. [guess: Apple documents the inputs, not the byte layout]
    var deviceVerification: String {
        let input = Array((nonce + store.deviceID.description.lowercased()).utf8)
        return Data((try? DigestAlgorithm.sha384.digest(input)) ?? []).base64EncodedString()
    }

    /// A notification; without a signed transaction, Apple's TEST shape (`data` = appAppleId, bundleId, environment).
    /// RESCIND_CONSENT's is `appData` instead of `data`: the same members and the signed AppTransaction.
    func notification(signedTransaction: String?, signedRenewal: String?, signedAppTransaction: String? = nil) -> JSONValue {
        let t = try? latest()
        var data: JSONObject = []
        if let appAppleID { data.append(("appAppleId", .integer(appAppleID))) }
        data.append(("bundleId", .string(store.bundleID)))
        if signedTransaction != nil { data.append(("bundleVersion", .string(store.appVersion))) }
        data.append(("environment", .string(environment.rawValue)))
        if let signedTransaction { data.append(("signedTransactionInfo", .string(signedTransaction))) }
        if let signedRenewal { data.append(("signedRenewalInfo", .string(signedRenewal))) }
        if signedTransaction != nil, let t, t.type == .autoRenewable { data.append(("status", .integer(store.subscriptionStatus(of: t).rawValue))) }
        if options.notificationType == .known(.consumptionRequest) {
            data.append(("consumptionRequestReason", .string(options.consumptionRequestReason.rawValue)))
        }
        var members: JSONObject = [("notificationType", .string(options.notificationType.rawValue))]
        if let subtype = options.subtype { members.append(("subtype", .string(subtype.rawValue))) }
        members.append(("notificationUUID", .string(uuid(salt: 1))))
        switch (options.notificationType, options.subtype) {
        case (.known(.renewalExtension), .known(.summary)?):
            // The outcome of a mass renewal-date extension: `summary` instead of `data`.
            var summary: JSONObject = [("requestIdentifier", .string(uuid(salt: 3))), ("environment", .string(environment.rawValue))]
            if let appAppleID { summary.append(("appAppleId", .integer(appAppleID))) }
            summary += [
                ("bundleId", .string(store.bundleID)), ("productId", .string(t?.productID ?? "")),
                ("storefrontCountryCodes", .array([.string(storefront)])), ("succeededCount", .integer(1)), ("failedCount", .integer(0)),
            ]
            members.append(("summary", .object(summary)))
        case (.known(.externalPurchaseToken), _):
            // No `data`: the environment is read from the id's SANDBOX prefix.
            var token: JSONObject = [
                ("externalPurchaseId", .string((environment == .production ? "" : "SANDBOX_") + uuid(salt: 4))),
                ("tokenCreationDate", date(store.now)),
            ]
            if let type = options.tokenType {
                token += [("tokenType", .string(type.rawValue)), ("tokenExpirationDate", date(store.now.addingTimeInterval(Self.customLinkTokenLifetime)))]
            }
            if let appAppleID { token.append(("appAppleId", .integer(appAppleID))) }
            token.append(("bundleId", .string(store.bundleID)))
            members.append(("externalPurchaseToken", .object(token)))
        case (.known(.rescindConsent), _):
            // Parental consent revoked (Texas SB 2420): `appData` instead of `data` (Apple's AppData).
            var app = data
            if let signedAppTransaction { app.append(("signedAppTransactionInfo", .string(signedAppTransaction))) }
            members.append(("appData", .object(app)))
        default:
            members.append(("data", .object(data)))
        }
        members += [("version", .string("2.0")), ("signedDate", signedDate)]
        return .object(members)
    }

    /// Refuses a forged state other than the one the notification's pair implies: the scenario's own dates or
    /// timeline won over the pair, so the notification would say one thing and carry another.
    func check(_ state: NotificationState, pair: String) throws(ForgeError) {
        guard state != .unchanged, let t = try? latest() else { return }
        func refuse(_ implied: String, _ actual: String) -> ForgeError {
            ForgeError(.conflictingOptions, "\(pair) implies \(implied), but the scenario's own dates or timeline make \(t.productID) \(actual) at now")
        }
        if [.revoked, .familySharingRevoked].contains(state), t.cancellationDate == nil { throw refuse("a revoked transaction", "not revoked") }
        if state == .familySharingRevoked, t.ownership != .familyShared { throw refuse("a transaction shared through Family Sharing", t.ownership.rawValue) }
        guard t.type == .autoRenewable else { return }
        if let implied = state.status {
            let actual = store.subscriptionStatus(of: t)
            if actual != implied { throw refuse("status \(implied.rawValue) (\(implied.name))", "status \(actual.rawValue) (\(actual.name))") }
        }
        let renewal = store.history.renewal(of: t.originalTransactionID)
        switch state {
        case .active where renewal?.autoRenewStatus == false: throw refuse("auto-renew on", "auto-renew off")
        case .autoRenewOff where renewal?.autoRenewStatus != false: throw refuse("auto-renew off", "auto-renew on")
        case .downgradePending where (renewal?.autoRenewProductID ?? t.productID) == t.productID:
            throw refuse("renewal as another product", "renewing as itself")
        case .renewed where t.transactionID == t.originalTransactionID && !isXcode: throw refuse("a renewal transaction", "a first purchase")
        default: break
        }
    }

    func realtime() throws(ForgeError) -> JSONValue {
        let t = try latest()
        // Apple's model requires appAppleId here in every environment; sandbox receipts carry 0, so one is derived.
        let appID = appAppleID ?? Int64(100_000_000 + store.seed % 1_800_000_000)
        var members: JSONObject = [("originalTransactionId", id(t.originalTransactionID)), ("appAppleId", .integer(appID))]
        members += [
            ("productId", .string(t.productID)), ("userLocale", .string("en-US")), ("requestIdentifier", .string(uuid(salt: 2))),
            ("environment", .string(environment.rawValue)), ("signedDate", signedDate),
        ]
        return .object(members)
    }

    /// How long a custom link token lasts. [guess: Apple documents `tokenExpirationDate`, not the lifetime]
    static let customLinkTokenLifetime: TimeInterval = 30 * 86_400

    func uuid(salt: UInt64) -> String {
        var random = SeededGenerator(seed: store.seed &+ salt &* 0x9E37_79B9_7F4A_7C15)
        return random.uuid().description.lowercased()
    }
}
