public import AppStoreVocabulary
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport

/// A receipt described declaratively: the app, the device, the purchases, the preset.
///
/// This is the `--spec FILE.json` format; `forge make`'s flags are a shorthand for it. Everything is
/// optional: a missing value takes the preset's default, and the time (`now`) and the seed are the
/// only inputs besides this spec, so the same spec, `now` and seed always give the same bytes. Read by one reader
/// (``decode(json:)``, and `Decodable` for a scenario inside a recipe), whose errors name the key.
public struct Scenario: Codable, Sendable, Hashable {
    public var preset: Preset?
    public var bundleID: String?
    public var appVersion: String?
    public var originalAppVersion: String?
    /// Attribute 0 (receipt type): `Production`, `ProductionSandbox`, `Xcode`, … Defaults to the preset's.
    public var environment: String?
    /// `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX` (iOS identifierForVendor) or `aa:bb:cc:dd:ee:ff` (macOS MAC).
    public var deviceID: String?
    /// The receipt creation time, `YYYY-MM-DDThh:mm:ssZ`; the CLI's `--now` overrides it.
    public var now: String?
    public var seed: UInt64?
    public var appItemID: Int64?
    public var ageRating: String?
    public var purchases: [Purchase]
    /// What happened after the purchases (renewals, refunds, billing retry…); see ``TimelineEvent``.
    public var timeline: [TimelineEvent]?
    /// The app's products as its store defines them (`forge storekit scenario` writes them from a `.storekit`
    /// file): a purchase of one inherits its type, period, group, price and offers.
    public var products: [ProductDefinition]?
    /// The customer's storefront, ISO 3166-1 alpha-3 (`USA`): StoreKit 2's `storefront`, `storefrontId` and currency.
    public var storefront: String?

    public init(
        preset: Preset? = nil, bundleID: String? = nil, appVersion: String? = nil, originalAppVersion: String? = nil,
        environment: String? = nil, deviceID: String? = nil, now: String? = nil, seed: UInt64? = nil,
        appItemID: Int64? = nil, ageRating: String? = nil, purchases: [Purchase] = [], timeline: [TimelineEvent]? = nil,
        products: [ProductDefinition]? = nil, storefront: String? = nil
    ) {
        self.products = products
        self.storefront = storefront
        self.preset = preset
        self.bundleID = bundleID
        self.appVersion = appVersion
        self.originalAppVersion = originalAppVersion
        self.environment = environment
        self.deviceID = deviceID
        self.now = now
        self.seed = seed
        self.appItemID = appItemID
        self.ageRating = ageRating
        self.purchases = purchases
        self.timeline = timeline
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case preset, bundleID = "bundleId", appVersion, originalAppVersion, environment, deviceID = "deviceId", now, seed
        case appItemID = "appItemId", ageRating, purchases, timeline, products, storefront
    }

    /// A scenario inside a `Codable` document (a mutant recipe) is read as ``decode(json:)`` reads a spec: an
    /// `invalidScenario` error naming the key path, never Codable's text.
    public init(from decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        let exactSeed = { (try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(UInt64.self, forKey: .seed)) ?? nil }
        do { try self.init(reading: JSONField(value), exactSeed: exactSeed) } catch {
            throw ForgeError(.invalidScenario, error.message, fields: error.keyPath.isEmpty ? [] : [error.keyPath])
        }
    }

    /// Decodes a spec file. Every key is read by ``JSONField``: an unknown key, a value of the wrong kind, outside
    /// its vocabulary or its range (``ScenarioLimits``), or a malformed date or period is an `invalidScenario`
    /// error naming its key path (`'timeline[0].event'`, also in ``ForgeError/fields``) and what the key takes.
    /// How the values relate (a timeline's product among the purchases…) is checked when a ``Store`` is made.
    public static func decode(json data: Data) throws(ForgeError) -> Scenario {
        let document: JSONValue
        do { document = try JSONValue(parsing: data) } catch {
            throw ForgeError(.invalidScenario, "the scenario is not valid JSON: \(error.reason)")
        }
        do {
            return try Scenario(reading: JSONField(document), exactSeed: { try? JSONDecoder().decode(ExactSeed.self, from: data).seed })
        } catch {
            throw ForgeError(.invalidScenario, error.message, fields: error.keyPath.isEmpty ? [] : [error.keyPath])
        }
    }

    /// ``JSONValue`` holds integers as `Int64`: a seed above `Int64.max` (half the seeds forge derives and reports)
    /// is read exactly from the text by Foundation, after ``JSONField`` found it an integer beyond `Int64`.
    private struct ExactSeed: Decodable { let seed: UInt64 }

    private init(reading document: JSONField, exactSeed: () -> UInt64?) throws(JSONFieldError) {
        let top = try document.object(known: CodingKeys.allCases.map(\.rawValue))
        preset = try top["preset"]?.oneOf(Preset.self)
        bundleID = try top["bundleId"]?.string()
        appVersion = try top["appVersion"]?.string()
        originalAppVersion = try top["originalAppVersion"]?.string()
        environment = try top["environment"]?.string()
        deviceID = try top["deviceId"]?.string()
        now = try top["now"]?.date()
        if let field = top["seed"] {
            if case .number(let value) = field.value, value >= 0x1p63, value <= 0x1p64, let exact = exactSeed() {
                seed = exact
            } else {
                seed = try field.integer(in: UInt64.min...UInt64.max)
            }
        } else {
            seed = nil
        }
        appItemID = try top["appItemId"]?.integer(in: ScenarioLimits.unsignedJSONInteger)
        ageRating = try top["ageRating"]?.string()
        purchases = try top["purchases"]?.array().map { (element) throws(JSONFieldError) in try Purchase(reading: element) } ?? []
        timeline = try top["timeline"]?.array().map { (element) throws(JSONFieldError) in try TimelineEvent(reading: element) }
        products = try top["products"]?.array().map { (element) throws(JSONFieldError) in try ProductDefinition(reading: element) }
        storefront = try top["storefront"]?.string(expected: Storefront.expected) { Storefront(code: $0) != nil }
    }
}

extension JSONField {
    /// A receipt date (`2025-01-31T12:00:00Z` and the variants ``ReceiptDate/parse(_:)`` reads), kept as written.
    func date() throws(JSONFieldError) -> String {
        try string(expected: "a date like 2025-01-31T12:00:00Z") { ReceiptDate.parse($0) != nil }
    }
}

extension Purchase {
    init(reading field: JSONField) throws(JSONFieldError) {
        let members = try field.object(known: CodingKeys.allCases.map(\.rawValue))
        productID = try members.required("productId").string()
        type = try members["type"]?.oneOf(ProductType.self)
        quantity = try members["quantity"]?.integer(in: ScenarioLimits.quantity)
        purchaseDate = try members["purchaseDate"]?.date()
        expiresDate = try members["expiresDate"]?.date()
        expired = try members["expired"]?.bool()
        renewals = try members["renewals"]?.integer(in: ScenarioLimits.renewals)
        cancelled = try members["cancelled"]?.oneOf(CancellationReason.self)
        trial = try members["trial"]?.bool()
        intro = try members["intro"]?.bool()
        promo = try members["promo"]?.string()
        period = try members["period"]?.string(expected: SubscriptionPeriod.expected) { SubscriptionPeriod($0) != nil }
        let documented = "one of " + OwnershipType.allCases.map(\.rawValue).joined(separator: ", ")
        let ownershipText = try members["ownership"]?.string(expected: documented) { OwnershipType(documented: $0) != nil }
        ownership = ownershipText.flatMap(OwnershipType.init(documented:))
        billingPlan = try members["billingPlan"]?.oneOf(BillingPlanType.self)
    }
}

extension TimelineEvent {
    init(reading field: JSONField) throws(JSONFieldError) {
        let members = try field.object(known: CodingKeys.allCases.map(\.rawValue))
        event = try members.required("event").oneOf(Kind.self)
        at = try members["at"]?.date()
        productID = try members["productId"]?.string()
        count = try members["count"]?.integer(in: ScenarioLimits.renewCount)
        reason = try members["reason"]?.oneOf(CancellationReason.self)
        days = try members["days"]?.integer(in: ScenarioLimits.graceDays)
        consent = try members["consent"]?.oneOf(Consent.self)
        to = try members["to"]?.string()
        token = try members["token"]?.string()
        originalTransactionID = try members["originalTransactionId"]?.string()
        percentage = try members["percentage"]?.integer(in: ScenarioLimits.refundPercentage)
        requestReason = try members["requestReason"]?.oneOf(ConsumptionRequestReason.self)
    }
}

/// One product bought, and for subscriptions its history.
public struct Purchase: Encodable, Sendable, Hashable {
    public var productID: String
    public var type: ProductType?
    public var quantity: Int?
    /// When the (first) purchase happened; subscriptions chain their periods forward from it.
    public var purchaseDate: String?
    /// When the latest subscription period ends.
    public var expiresDate: String?
    /// The latest period ended one day before `now`.
    public var expired: Bool?
    /// Renewals after the first period: N renewals make N + 1 transactions.
    public var renewals: Int?
    /// Refunded or cancelled; the value is the verifyReceipt `cancellation_reason`.
    public var cancelled: CancellationReason?
    /// The first period is a free trial (1713).
    public var trial: Bool?
    /// The first period is an introductory offer (1719).
    public var intro: Bool?
    /// Promotional offer id on the latest period (1721).
    public var promo: String?
    /// Subscription period as ISO 8601 (`P1W`, `P1M`, `P1Y`, …); default `P1M`.
    public var period: String?
    /// `FAMILY_SHARED`: a family member bought it and shares it with the customer; default `PURCHASED`. Every
    /// transaction of the purchase carries it (``Transaction/ownership``).
    public var ownership: OwnershipType?
    /// How the customer pays (Apple's `billingPlanType`): `BILLED_UPFRONT`, or `MONTHLY`, a yearly subscription paid
    /// month by month over a 12-month commitment (``Commitment``), each month a transaction (`renewals` counts them).
    public var billingPlan: BillingPlanType?

    public init(
        productID: String, type: ProductType? = nil, quantity: Int? = nil, purchaseDate: String? = nil,
        expiresDate: String? = nil, expired: Bool? = nil, renewals: Int? = nil, cancelled: CancellationReason? = nil,
        trial: Bool? = nil, intro: Bool? = nil, promo: String? = nil, period: String? = nil, ownership: OwnershipType? = nil,
        billingPlan: BillingPlanType? = nil
    ) {
        self.billingPlan = billingPlan
        self.ownership = ownership
        self.productID = productID
        self.type = type
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.expired = expired
        self.renewals = renewals
        self.cancelled = cancelled
        self.trial = trial
        self.intro = intro
        self.promo = promo
        self.period = period
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case productID = "productId", type, quantity, purchaseDate, expiresDate, expired, renewals, cancelled, trial, intro, promo, period, ownership
        case billingPlan
    }

    /// Whether any field only makes sense for an auto-renewable subscription.
    var hasSubscriptionFields: Bool {
        expired == true || expiresDate != nil || renewals != nil || trial == true || intro == true || promo != nil || period != nil || billingPlan != nil
    }

    /// The type asked for, or auto-renewable when subscription fields are used, else non-consumable.
    public var resolvedType: ProductType { type ?? (hasSubscriptionFields ? .autoRenewable : .nonConsumable) }
}

/// Attribute 1707: 0 non-consumable, 1 consumable, 2 non-renewing, 3 auto-renewable.
public enum ProductType: String, Sendable, Hashable, Codable, CaseIterable {
    case nonConsumable = "non-consumable"
    case consumable
    case nonRenewing = "non-renewing"
    case autoRenewable = "auto-renewable"

    public var code: Int64 {
        switch self {
        case .nonConsumable: 0
        case .consumable: 1
        case .nonRenewing: 2
        case .autoRenewable: 3
        }
    }
}

extension ProductType {
    /// Apple's name of the type in a StoreKit 2 transaction's `type` (Apple's `Type`).
    public var transactionType: String {
        switch self {
        case .consumable: "Consumable"
        case .nonConsumable: "Non-Consumable"
        case .nonRenewing: "Non-Renewing Subscription"
        case .autoRenewable: "Auto-Renewable Subscription"
        }
    }

    /// Apple's name of the type in Get Transaction History's `productType` filter (Apple's
    /// `TransactionHistoryRequest.ProductType`).
    public var historyFilterName: String {
        switch self {
        case .autoRenewable: "AUTO_RENEWABLE"
        case .nonRenewing: "NON_RENEWABLE"
        case .consumable: "CONSUMABLE"
        case .nonConsumable: "NON_CONSUMABLE"
        }
    }

    /// The type Get Transaction History's `productType` filter names, or nil.
    public init?(historyFilterName name: String) {
        guard let type = Self.allCases.first(where: { $0.historyFilterName == name }) else { return nil }
        self = type
    }
}

/// verifyReceipt's `cancellation_reason`: 1 the customer cancelled for an issue in the app, 0 anything else.
public enum CancellationReason: String, Sendable, Hashable, Codable, CaseIterable {
    case other
    case appIssue = "app-issue"

    public var code: Int { Int(revocationReason.rawValue) }

    /// StoreKit 2's `revocationReason`: the same reason.
    public var revocationReason: RevocationReason { self == .appIssue ? .appIssue : .other }

    public init?(argument: String) {
        switch argument {
        case "0", "other": self = .other
        case "1", "app-issue": self = .appIssue
        default: return nil
        }
    }
}
