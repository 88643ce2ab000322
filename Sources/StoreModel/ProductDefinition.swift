public import AppStoreVocabulary
import _ForgeSupport

/// A product as the app's store defines it (App Store Connect, an Xcode `.storekit` file): what every purchase of it
/// inherits unless the purchase says otherwise. The scenario's `products`; `forge storekit scenario` writes them.
public struct ProductDefinition: Encodable, Sendable, Hashable {
    public var productID: String
    public var type: ProductType
    /// An auto-renewable subscription's renewal period (ISO 8601).
    public var period: String?
    /// The subscription group (`subscriptionGroupIdentifier`); products of one group replace each other.
    public var group: String?
    /// Rank in the group, 1 the highest service: moving to a lower number is an upgrade (Xcode's `groupNumber`).
    public var groupLevel: Int?
    /// The price in the storefront's currency, as a decimal (`"9.99"`).
    public var price: String?
    public var familyShareable: Bool?
    public var introductoryOffer: SubscriptionOffer?
    /// Promotional, offer-code and win-back offers; a purchase names one by id (`promo`).
    public var offers: [SubscriptionOffer]?
    /// The billing plans a purchase may choose (`billingPlan`): `MONTHLY`, a 12-month commitment (``Commitment``).
    public var billingPlans: [BillingPlan]?

    public init(
        productID: String, type: ProductType, period: String? = nil, group: String? = nil, groupLevel: Int? = nil, price: String? = nil,
        familyShareable: Bool? = nil, introductoryOffer: SubscriptionOffer? = nil, offers: [SubscriptionOffer]? = nil, billingPlans: [BillingPlan]? = nil
    ) {
        self.billingPlans = billingPlans
        self.productID = productID
        self.type = type
        self.period = period
        self.group = group
        self.groupLevel = groupLevel
        self.price = price
        self.familyShareable = familyShareable
        self.introductoryOffer = introductoryOffer
        self.offers = offers
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case productID = "productId", type, period, group, groupLevel, price, familyShareable, introductoryOffer, offers, billingPlans
    }

    /// The offer a purchase names by id, if this product has it.
    public func offer(id: String) -> SubscriptionOffer? { offers?.first { $0.id == id } }

    /// The price in milliunits (9990 for 9.99), as StoreKit 2 payloads carry it.
    public var priceMilliunits: Int64? { price.flatMap(Price.milliunits) }
}

/// A subscription offer: its kind, how it is paid and for how long.
public struct SubscriptionOffer: Encodable, Sendable, Hashable {
    /// The kind of offer, as a scenario names it; Apple's `offerType` is ``offerType``.
    public enum Kind: String, Codable, Sendable, Hashable, CaseIterable {
        case introductory
        case promotional
        case offerCode = "offer-code"
        case winBack = "win-back"
        /// Offered to a customer about to leave, through the Retention Messaging API (`offerType` 5, WWDC26).
        case retention

        public var offerType: OfferType {
            switch self {
            case .introductory: .introductory
            case .promotional: .promotional
            case .offerCode: .offerCode
            case .winBack: .winBack
            case .retention: .retention
            }
        }
    }

    /// How the customer pays during the offer; Apple's `offerDiscountType`.
    public enum PaymentMode: String, Codable, Sendable, Hashable, CaseIterable {
        case freeTrial = "free-trial"
        case payAsYouGo = "pay-as-you-go"
        case payUpFront = "pay-up-front"
        /// An offer code on a one-time purchase (consumable, non-consumable, non-renewing; 2025-10-29): one
        /// discounted price, no period.
        case oneTime = "one-time"

        public var offerDiscountType: OfferDiscountType {
            switch self {
            case .freeTrial: .freeTrial
            case .payAsYouGo: .payAsYouGo
            case .payUpFront: .payUpFront
            case .oneTime: .oneTime
            }
        }
    }

    public var kind: Kind
    /// The offer's identifier (`offerIdentifier`); an introductory offer has none.
    public var id: String?
    public var paymentMode: PaymentMode
    /// One offer period (ISO 8601); a one-time offer has none.
    public var period: String?
    /// Offer periods (`numberOfPeriods`): pay-as-you-go bills each one; a free trial and pay-up-front cover them in one.
    public var periods: Int?
    /// The price of one offer period (pay-as-you-go) or of the whole offer (pay-up-front); a free trial is 0.
    public var price: String?

    public init(kind: Kind, id: String? = nil, paymentMode: PaymentMode, period: String?, periods: Int? = nil, price: String? = nil) {
        self.kind = kind
        self.id = id
        self.paymentMode = paymentMode
        self.period = period
        self.periods = periods
        self.price = price
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case kind, id, paymentMode, period, periods, price }

    /// Transactions the offer covers: one per period for pay-as-you-go, one for the rest.
    public var transactionCount: Int { paymentMode == .payAsYouGo ? max(1, periods ?? 1) : 1 }

    /// How long one of those transactions lasts: the offer period, or all the offer's periods for a free trial or
    /// pay-up-front (three months paid up front is one transaction of P3M).
    public var transactionPeriod: SubscriptionPeriod? {
        guard let one = period.flatMap(SubscriptionPeriod.init) else { return nil }
        return paymentMode == .payAsYouGo ? one : one.times(max(1, periods ?? 1))
    }

    /// The payload's `offerPeriod`: the offer's whole duration. [guess: Apple documents it as "the duration of the
    /// offer"; for pay-as-you-go that is every period, not one]
    public var offerPeriod: String? { period.flatMap(SubscriptionPeriod.init).map { $0.times(max(1, periods ?? 1)).description } }

    /// Price in milliunits: 0 for a free trial.
    public var priceMilliunits: Int64 { paymentMode == .freeTrial ? 0 : price.flatMap(Price.milliunits) ?? 0 }
}

/// Prices as the App Store writes them in files (`"9.99"`) and in StoreKit 2 payloads (milliunits, 9990).
public enum Price {
    /// The largest price read: a billion in any currency.
    public static let maximum: Int64 = 1_000_000_000_000

    /// Milliunits of a non-negative decimal with at most three decimals; nil for anything else.
    public static func milliunits(_ text: String) -> Int64? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 10, whole.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.count <= 3, parts.count == 1 || !fraction.isEmpty, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        guard let units = Int64(whole), let decimals = Int64(fraction + String(repeating: "0", count: 3 - fraction.count)) else { return nil }
        let (value, overflow) = units.multipliedReportingOverflow(by: 1000)
        guard !overflow, value + decimals <= maximum else { return nil }
        return value + decimals
    }

    static let expected = "a price such as \"9.99\" (digits, at most three decimals)"
}

/// App Store storefronts: the ISO 3166-1 alpha-3 code Xcode's `_storefront` and StoreKit 2's `storefront` carry, the
/// numeric `storefrontId`, and the currency its prices are in. [guess: the ids are the storefront ids as commonly
/// published (the iTunes `X-Apple-Store-Front` values); Apple's own library fixtures show only USA, 143441]
public struct Storefront: Sendable, Hashable {
    public let code: String
    public let id: String
    public let currency: String

    public static let known: [Storefront] = [
        ("USA", "143441", "USD"), ("FRA", "143442", "EUR"), ("DEU", "143443", "EUR"), ("GBR", "143444", "GBP"), ("AUT", "143445", "EUR"),
        ("BEL", "143446", "EUR"), ("FIN", "143447", "EUR"), ("GRC", "143448", "EUR"), ("IRL", "143449", "EUR"), ("ITA", "143450", "EUR"),
        ("LUX", "143451", "EUR"), ("NLD", "143452", "EUR"), ("PRT", "143453", "EUR"), ("ESP", "143454", "EUR"), ("CAN", "143455", "CAD"),
        ("SWE", "143456", "SEK"), ("NOR", "143457", "NOK"), ("DNK", "143458", "DKK"), ("CHE", "143459", "CHF"), ("AUS", "143460", "AUD"),
        ("NZL", "143461", "NZD"), ("JPN", "143462", "JPY"), ("CHN", "143465", "CNY"), ("KOR", "143466", "KRW"), ("IND", "143467", "INR"),
        ("MEX", "143468", "MXN"), ("BRA", "143503", "BRL"),
    ].map { Storefront(code: $0.0, id: $0.1, currency: $0.2) }

    /// The storefront a scenario that names none is in.
    public static let unitedStates = Storefront(code: "USA", id: "143441", currency: "USD")

    public init?(code: String) {
        guard let known = Self.known.first(where: { $0.code == code }) else { return nil }
        self = known
    }

    private init(code: String, id: String, currency: String) {
        self.code = code
        self.id = id
        self.currency = currency
    }

    static var expected: String { "one of the storefronts forge knows (\(known.map(\.code).joined(separator: ", ")))" }
}

extension ProductDefinition {
    init(reading field: JSONField) throws(JSONFieldError) {
        let members = try field.object(known: CodingKeys.allCases.map(\.rawValue))
        productID = try members.required("productId").string()
        type = try members.required("type").oneOf(ProductType.self)
        period = try members["period"]?.string(expected: SubscriptionPeriod.expected) { SubscriptionPeriod($0) != nil }
        group = try members["group"]?.string()
        groupLevel = try members["groupLevel"]?.integer(in: ScenarioLimits.groupLevel)
        price = try members["price"]?.string(expected: Price.expected) { Price.milliunits($0) != nil }
        familyShareable = try members["familyShareable"]?.bool()
        introductoryOffer = try members["introductoryOffer"].map { (field) throws(JSONFieldError) in try SubscriptionOffer(reading: field) }
        offers = try members["offers"]?.array().map { (field) throws(JSONFieldError) in try SubscriptionOffer(reading: field) }
        billingPlans = try members["billingPlans"]?.array().map { (field) throws(JSONFieldError) in try BillingPlan(reading: field) }
    }
}

extension SubscriptionOffer {
    init(reading field: JSONField) throws(JSONFieldError) {
        let members = try field.object(known: CodingKeys.allCases.map(\.rawValue))
        kind = try members.required("kind").oneOf(Kind.self)
        id = try members["id"]?.string()
        paymentMode = try members.required("paymentMode").oneOf(PaymentMode.self)
        // A one-time purchase's offer is one price, with no period to give.
        let periodField = paymentMode == .oneTime ? members["period"] : try members.required("period")
        period = try periodField?.string(expected: SubscriptionPeriod.expected) { SubscriptionPeriod($0) != nil }
        periods = try members["periods"]?.integer(in: ScenarioLimits.offerPeriods)
        price = try members["price"]?.string(expected: Price.expected) { Price.milliunits($0) != nil }
    }
}

extension Scenario {
    /// The definition of `productID` in ``products``, if the scenario defines it.
    public func definition(of productID: String) -> ProductDefinition? { products?.first { $0.productID == productID } }

    /// The purchases with what their products define filled in (type, period, the introductory offer), after the
    /// catalogue itself is checked; a purchase that contradicts its product is refused, naming both.
    func applyingCatalogue() throws(ForgeError) -> Scenario {
        // A one-time purchase names an offer code only of a product defined here (a subscription may name one alone).
        for (index, purchase) in purchases.enumerated() where purchase.promo != nil && definition(of: purchase.productID) == nil {
            if let type = purchase.type, type != .autoRenewable {
                throw ForgeError(
                    .invalidScenario,
                    "'purchases[\(index)].promo' on \(type.rawValue) \(purchase.productID) names an offer code: define it in 'products' (kind offer-code, paymentMode one-time)",
                    fields: ["purchases[\(index)].promo"])
            }
        }
        guard let products else { return self }
        var seen: Set<String> = []
        for (index, product) in products.enumerated() {
            let place = "products[\(index)]"
            guard seen.insert(product.productID).inserted else {
                throw ForgeError(.invalidScenario, "'\(place).productId' \(product.productID) is defined twice", fields: ["\(place).productId"])
            }
            let subscriptionOnly = [
                ("period", product.period != nil), ("group", product.group != nil), ("groupLevel", product.groupLevel != nil),
                ("introductoryOffer", product.introductoryOffer != nil), ("billingPlans", !(product.billingPlans ?? []).isEmpty),
            ]
            if product.type != .autoRenewable, let (field, _) = subscriptionOnly.first(where: \.1) {
                throw ForgeError(
                    .invalidScenario, "'\(place).\(field)' is for auto-renewable subscriptions; \(product.productID) is \(product.type.rawValue)", fields: ["\(place).\(field)"])
            }
            if let offer = product.introductoryOffer, offer.kind != .introductory {
                throw ForgeError(
                    .invalidScenario, "'\(place).introductoryOffer.kind' must be introductory, not \(offer.kind.rawValue)", fields: ["\(place).introductoryOffer.kind"])
            }
            for (offerIndex, offer) in (product.offers ?? []).enumerated() {
                let field = "\(place).offers[\(offerIndex)]"
                if offer.kind == .introductory || offer.id?.isEmpty ?? true {
                    throw ForgeError(
                        .invalidScenario,
                        "'\(field)' must be a promotional, offer-code, win-back or retention offer with an id (the introductory one is 'introductoryOffer')",
                        fields: [field])
                }
                // Apple's one-time offers are offer codes on one-time purchases; subscriptions' offers have periods.
                let oneTimeProduct = product.type != .autoRenewable
                if oneTimeProduct != (offer.paymentMode == .oneTime) || (oneTimeProduct && offer.kind != .offerCode) {
                    throw ForgeError(
                        .invalidScenario,
                        oneTimeProduct
                            ? "'\(field)' of \(product.type.rawValue) \(product.productID) must be an offer code paid one-time (kind offer-code, paymentMode one-time)"
                            : "'\(field).paymentMode' one-time is for offer codes on one-time purchases, not the auto-renewable \(product.productID)",
                        fields: [oneTimeProduct ? field : "\(field).paymentMode"])
                }
            }
        }
        // A change of product stays in the subscription group (up a level is an upgrade, applied at once; down or
        // across, from the next renewal).
        for (index, event) in (timeline ?? []).enumerated() where event.event == .changeProduct {
            guard let from = changedProduct(event), let to = event.to, let source = definition(of: from), let target = definition(of: to) else { continue }
            let place = "timeline[\(index)]"
            if source.group != target.group {
                throw ForgeError(
                    .invalidScenario,
                    "'\(place).to' \(to) is in subscription group \(target.group ?? "none"), \(from) in \(source.group ?? "none"): a change of product stays in its group",
                    fields: ["\(place).to"])
            }
        }
        var scenario = self
        for (index, purchase) in purchases.enumerated() {
            guard let product = definition(of: purchase.productID) else { continue }
            let place = "purchases[\(index)]"
            var resolved = purchase
            if let type = purchase.type, type != product.type {
                throw ForgeError(
                    .conflictingOptions, "'\(place).type' \(type.rawValue) conflicts with \(product.productID)'s type in 'products', \(product.type.rawValue)",
                    fields: ["\(place).type"])
            }
            resolved.type = product.type
            if resolved.period == nil { resolved.period = product.period }
            // Every subscription can be paid up front; a monthly commitment only where the product offers one.
            if let plan = purchase.billingPlan, plan == .monthly, product.type == .autoRenewable,
                !(product.billingPlans ?? []).contains(where: { $0.billingPlanType == plan })
            {
                let offered = (product.billingPlans ?? []).map(\.billingPlanType.rawValue)
                throw ForgeError(
                    .conflictingOptions,
                    "'\(place).billingPlan' \(plan.rawValue) is not a billing plan of \(product.productID) (its 'billingPlans': \(offered.isEmpty ? "none" : offered.joined(separator: ", ")))",
                    fields: ["\(place).billingPlan"])
            }
            // A commitment takes no offer (``Purchase/validateBillingPlan(place:)``): the introductory one is not applied.
            if let offer = product.introductoryOffer, purchase.trial != false, purchase.intro != false, purchase.billingPlan != .monthly {
                let free = offer.paymentMode == .freeTrial
                if purchase.trial == true, !free || purchase.intro == true {
                    throw ForgeError(
                        .conflictingOptions, "'\(place).trial' asks for a free trial; \(product.productID)'s introductory offer is \(offer.paymentMode.rawValue)",
                        fields: ["\(place).trial"])
                }
                if purchase.intro == true, free {
                    throw ForgeError(
                        .conflictingOptions, "'\(place).intro' asks for a paid introductory offer; \(product.productID)'s is a free trial", fields: ["\(place).intro"])
                }
                resolved.trial = free ? true : nil
                resolved.intro = free ? nil : true
            }
            if let promo = purchase.promo, product.offer(id: promo) == nil {
                let known = (product.offers ?? []).compactMap(\.id)
                throw ForgeError(
                    .invalidScenario,
                    "'\(place).promo' \(promo) is not an offer of \(product.productID) (its offers: \(known.isEmpty ? "none" : known.joined(separator: ", ")))",
                    fields: ["\(place).promo"])
            }
            scenario.purchases[index] = resolved
        }
        return scenario
    }
}
