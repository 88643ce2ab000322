import AppStoreVocabulary
public import _ForgeSupport

/// An Xcode StoreKit configuration file (`.storekit`: JSON, versions 2, 3 and 4), read into the products the scenario
/// model defines (``ProductDefinition``). Apple does not document the format (server-api-facts §4): keys this reader
/// does not use are passed over, as Apple adds them; a known key of the wrong type or an impossible value is refused
/// with its JSON path.
public struct StoreKitConfiguration: Sendable {
    public struct Group: Sendable, Hashable {
        public let id: String
        public let name: String
        /// Its subscriptions' product ids, in the file's order.
        public let productIDs: [String]

        public init(id: String, name: String, productIDs: [String]) {
            self.id = id
            self.name = name
            self.productIDs = productIDs
        }
    }

    /// `version.major`: 2, 3 or 4.
    public let version: Int
    /// Every product: `products`, then `nonRenewingSubscriptions`, then each group's `subscriptions`.
    public let products: [ProductDefinition]
    public let groups: [Group]
    /// `settings._storefront`, ISO 3166-1 alpha-3.
    public let storefront: String?
    /// `settings._timeRate` (or the older `_compatibilityTimeRate`).
    public let timeRate: XcodeTimeRate?
    /// The product's name for people: its first localization's display name, else its reference name.
    public let names: [String: String]
    /// Each product's place in ``products``, and each subscription's group's place in ``groups``: lookups by id are
    /// constant time, so reading and listing a file of 100,000 products stays linear.
    private let productIndex: [String: Int]
    private let groupOfProduct: [String: Int]

    public static let versions = 2...4

    /// Reads a file's bytes.
    public static func read(_ bytes: [UInt8]) throws(StoreKitFileError) -> StoreKitConfiguration {
        let document: JSONValue
        do { document = try JSONValue(parsing: bytes) } catch {
            throw StoreKitFileError(.notJSON, "not a .storekit file: not JSON (\(error.reason))", keyPath: "")
        }
        do { return try StoreKitConfiguration(reading: JSONField(document)) } catch {
            throw StoreKitFileError(.invalid, error.message, keyPath: error.keyPath)
        }
    }

    /// The definitions of `ids`, in that order; an id the file does not define is refused, listing the ones it does
    /// (the first 20 of a larger catalogue, and how many there are).
    public func products(named ids: [String]) throws(StoreKitFileError) -> [ProductDefinition] {
        try ids.map { (id) throws(StoreKitFileError) in
            guard let index = productIndex[id] else {
                let listed = products.prefix(20).map(\.productID).joined(separator: ", ") + (products.count > 20 ? ", … (\(products.count) in all)" : "")
                throw StoreKitFileError(.unknownProduct, "no product \(JSONValue.quoted(id)) in the file; its products: \(listed)", keyPath: "")
            }
            return products[index]
        }
    }

    /// The subscription group that lists `productID`, if any.
    public func group(of productID: String) -> Group? { groupOfProduct[productID].map { groups[$0] } }

    /// A scenario with every product of the file as its catalogue and its storefront, and a purchase of each of
    /// `ids`; without ids, a purchase of every product but the first subscription of each group only (a customer
    /// holds one subscription of a group at a time).
    public func scenario(purchasing ids: [String]) throws(StoreKitFileError) -> Scenario {
        let bought =
            ids.isEmpty ? products.filter { product in group(of: product.productID).map { $0.productIDs.first == product.productID } ?? true } : try products(named: ids)
        return Scenario(purchases: bought.map { Purchase(productID: $0.productID) }, products: products, storefront: storefront)
    }

    private init(reading document: JSONField) throws(JSONFieldError) {
        let top = try document.object()
        let versionField = try top.required("version").object()
        let major = try versionField.required("major").integer(in: 0...Int.max)
        guard Self.versions.contains(major) else {
            throw JSONFieldError(
                .invalidValue, "'version.major' is \(major); forge reads .storekit versions \(Self.versions.lowerBound) to \(Self.versions.upperBound)",
                keyPath: "version.major")
        }
        version = major
        var products: [ProductDefinition] = []
        var productIndex: [String: Int] = [:]
        var names: [String: String] = [:]
        /// Reads one product and appends it; returns its id.
        func add(_ field: JSONField, types: [XcodeProductType], group: (id: String, field: String)? = nil) throws(JSONFieldError) -> String {
            let definition = try product(field, types: types, group: group)
            productIndex[definition.productID] = products.count
            products.append(definition)
            return definition.productID
        }
        func product(_ field: JSONField, types: [XcodeProductType], group: (id: String, field: String)?) throws(JSONFieldError) -> ProductDefinition {
            let members = try field.object()
            let id = try members.required("productID").string(expected: "a product id") { !$0.isEmpty }
            let typeField = try members.required("type")
            let type = try typeField.oneOf(XcodeProductType.self)
            guard types.contains(type) else {
                throw JSONFieldError(
                    .invalidValue, "\(typeField.name) is \(type.rawValue); this list holds \(types.map(\.rawValue).joined(separator: " or "))", keyPath: typeField.keyPath)
            }
            guard productIndex[id] == nil else {
                throw JSONFieldError(.invalidValue, "'\(field.keyPath).productID' \(JSONValue.quoted(id)) is defined twice", keyPath: "\(field.keyPath).productID")
            }
            let localized = try members["localizations"]?.array().first.map { (first) throws(JSONFieldError) in try first.object()["displayName"]?.string() } ?? nil
            let reference = try members["referenceName"]?.string()
            names[id] = localized ?? reference
            var definition = ProductDefinition(
                productID: id, type: type.productType, price: try members["displayPrice"]?.string(expected: Price.expected) { Price.milliunits($0) != nil },
                familyShareable: try members["familyShareable"]?.bool())
            guard type == .recurringSubscription, let group else { return definition }
            definition.period = try members.required("recurringSubscriptionPeriod").string(expected: SubscriptionPeriod.expected) { SubscriptionPeriod($0) != nil }
            definition.group = group.id
            if let stated = try members["subscriptionGroupID"]?.string(), stated != group.id {
                throw JSONFieldError(
                    .invalidValue, "'\(field.keyPath).subscriptionGroupID' is \(JSONValue.quoted(stated)) inside group \(JSONValue.quoted(group.id)) (\(group.field))",
                    keyPath: "\(field.keyPath).subscriptionGroupID")
            }
            definition.groupLevel = try members["groupNumber"]?.integer(in: ScenarioLimits.groupLevel)
            definition.introductoryOffer = try members["introductoryOffer"].map { (offer) throws(JSONFieldError) in try Self.offer(offer, kind: .introductory) }
            var offers: [SubscriptionOffer] = []
            for (key, kind) in [("adHocOffers", SubscriptionOffer.Kind.promotional), ("codeOffers", .offerCode), ("winbackOffers", .winBack)] {
                for element in try members[key]?.array() ?? [] { offers.append(try Self.offer(element, kind: kind)) }
            }
            definition.offers = offers.isEmpty ? nil : offers
            let plans = try members["billingPlans"]?.array().map { (plan) throws(JSONFieldError) in try Self.billingPlan(plan) } ?? []
            definition.billingPlans = plans.isEmpty ? nil : plans
            return definition
        }
        for element in try top["products"]?.array() ?? [] { _ = try add(element, types: [.consumable, .nonConsumable]) }
        for element in try top["nonRenewingSubscriptions"]?.array() ?? [] { _ = try add(element, types: [.nonRenewingSubscription]) }
        var groups: [Group] = []
        var groupOfProduct: [String: Int] = [:]
        // Where each group id was first seen: a second group with it would merge two groups' upgrade ladders.
        var groupPlaces: [String: String] = [:]
        for groupField in try top["subscriptionGroups"]?.array() ?? [] {
            let members = try groupField.object()
            let idField = try members.required("id")
            let id = try idField.string(expected: "a group id") { !$0.isEmpty }
            if let first = groupPlaces[id] {
                throw JSONFieldError(.invalidValue, "\(idField.name) \(JSONValue.quoted(id)) is already the id of \(first)", keyPath: idField.keyPath)
            }
            groupPlaces[id] = groupField.keyPath
            let name = try members["name"]?.string() ?? id
            var ids: [String] = []
            for element in try members["subscriptions"]?.array() ?? [] {
                let productID = try add(element, types: [.recurringSubscription], group: (id, groupField.keyPath))
                ids.append(productID)
                groupOfProduct[productID] = groups.count
            }
            groups.append(Group(id: id, name: name, productIDs: ids))
        }
        self.products = products
        self.productIndex = productIndex
        self.groups = groups
        self.groupOfProduct = groupOfProduct
        self.names = names
        let settings = try top["settings"]?.object()
        storefront = try settings?["_storefront"]?.string(expected: Storefront.expected) { Storefront(code: $0) != nil }
        let rate = settings?["_timeRate"] ?? settings?["_compatibilityTimeRate"]
        if let rate {
            let value = try rate.integer(in: Int.min...Int.max)
            guard let known = XcodeTimeRate(rawValue: value) else {
                let values = XcodeTimeRate.allCases.map { String($0.rawValue) }.joined(separator: ", ")
                throw JSONFieldError(.invalidValue, "\(rate.name) is \(value), not one of StoreKit Test's time rates (\(values))", keyPath: rate.keyPath)
            }
            timeRate = known
        } else {
            timeRate = nil
        }
    }

    private static func offer(_ field: JSONField, kind: SubscriptionOffer.Kind) throws(JSONFieldError) -> SubscriptionOffer {
        let members = try field.object()
        let mode = try members.required("paymentMode").oneOf(XcodePaymentMode.self)
        // An offer code's id: its offerID where the file has one, else its reference name. [guess: Xcode's code offers]
        var id: String?
        switch kind {
        case .introductory: break
        case .offerCode:
            id = try members["offerID"]?.string()
            if id == nil { id = try members["referenceName"]?.string() }
            if id == nil { id = try members.required("internalID").string() }
        case .promotional, .winBack, .retention: id = try members.required("offerID").string(expected: "an offer id") { !$0.isEmpty }
        }
        return SubscriptionOffer(
            kind: kind, id: id, paymentMode: mode.paymentMode,
            period: try members.required("subscriptionPeriod").string(expected: SubscriptionPeriod.expected) { SubscriptionPeriod($0) != nil },
            periods: try members["numberOfPeriods"]?.integer(in: ScenarioLimits.offerPeriods),
            price: mode == .free ? nil : try members["displayPrice"]?.string(expected: Price.expected) { Price.milliunits($0) != nil })
    }
}

extension StoreKitConfiguration {
    /// A subscription's `billingPlans` element: `{"billingPlanType": "MONTHLY", "commitmentDisplayPrice": "119.88"}`.
    /// [guess: Xcode's key shape is not public; this is the one a 2026 planning document shows (storekit2-facts §4),
    /// with Apple's wire values; Xcode's camel case (`monthly`, `billedUpfront`) is read too]
    fileprivate static func billingPlan(_ field: JSONField) throws(JSONFieldError) -> BillingPlan {
        let members = try field.object()
        let camelCase: [String: BillingPlanType] = ["monthly": .monthly, "billedUpfront": .billedUpfront]
        func type(_ text: String) -> BillingPlanType? { BillingPlanType(rawValue: text) ?? camelCase[text] }
        let expected = "one of " + BillingPlanType.allCases.map(\.rawValue).joined(separator: ", ")
        let text = try members.required("billingPlanType").string(expected: expected) { type($0) != nil }
        return BillingPlan(
            billingPlanType: type(text) ?? .billedUpfront,
            commitmentPrice: try members["commitmentDisplayPrice"]?.string(expected: Price.expected) { Price.milliunits($0) != nil })
    }
}

/// The `type` values of a `.storekit` product.
enum XcodeProductType: String, CaseIterable {
    case consumable = "Consumable"
    case nonConsumable = "NonConsumable"
    case nonRenewingSubscription = "NonRenewingSubscription"
    case recurringSubscription = "RecurringSubscription"

    var productType: ProductType {
        switch self {
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        case .nonRenewingSubscription: .nonRenewing
        case .recurringSubscription: .autoRenewable
        }
    }
}

/// The `paymentMode` values of a `.storekit` offer.
enum XcodePaymentMode: String, CaseIterable {
    case free, payAsYouGo, payUpFront

    var paymentMode: SubscriptionOffer.PaymentMode {
        switch self {
        case .free: .freeTrial
        case .payAsYouGo: .payAsYouGo
        case .payUpFront: .payUpFront
        }
    }
}

/// Xcode's `settings._timeRate`: StoreKit Test's `SKTestTimeRate` raw values, as the file stores them. [guess: the
/// file's integer is the enum's raw value; the values are the SDK header's]
public enum XcodeTimeRate: Int, Sendable, Hashable, CaseIterable {
    case realTime = 0
    case oneHourIsOneDay = 1
    case thirtyMinutesIsOneDay = 2
    case fiveMinutesIsOneDay = 3
    case oneMinuteIsOneDay = 4
    case thirtySecondsIsOneDay = 5
    case oneSecondIsOneDay = 6
    case monthlyRenewalEveryHour = 10
    case monthlyRenewalEveryThirtyMinutes = 11
    case monthlyRenewalEveryFifteenMinutes = 12
    case monthlyRenewalEveryFiveMinutes = 13
    case monthlyRenewalEveryThirtySeconds = 15
    case oneRenewalEveryFifteenMinutes = 1000
    case oneRenewalEveryFiveMinutes = 1001
    case oneRenewalEveryMinute = 1002
    case oneRenewalEveryThirtySeconds = 1003
    case oneRenewalEveryTenSeconds = 1004
    case oneRenewalEveryTwoSeconds = 1005

    /// Store seconds per wall second (`forge serve --time-rate`). Monthly rates count a month as 30 days; the
    /// "one renewal every …" rates renew any period in that time, which one clock cannot do, so they run a month in
    /// it (a weekly subscription then renews four times as often as in Xcode).
    public var storeSecondsPerSecond: Double {
        let day = 86_400.0, month = 30 * 86_400.0
        return switch self {
        case .realTime: 1
        case .oneHourIsOneDay: day / 3_600
        case .thirtyMinutesIsOneDay: day / 1_800
        case .fiveMinutesIsOneDay: day / 300
        case .oneMinuteIsOneDay: day / 60
        case .thirtySecondsIsOneDay: day / 30
        case .oneSecondIsOneDay: day
        case .monthlyRenewalEveryHour: month / 3_600
        case .monthlyRenewalEveryThirtyMinutes: month / 1_800
        case .monthlyRenewalEveryFifteenMinutes: month / 900
        case .monthlyRenewalEveryFiveMinutes, .oneRenewalEveryFiveMinutes: month / 300
        case .monthlyRenewalEveryThirtySeconds, .oneRenewalEveryThirtySeconds: month / 30
        case .oneRenewalEveryFifteenMinutes: month / 900
        case .oneRenewalEveryMinute: month / 60
        case .oneRenewalEveryTenSeconds: month / 10
        case .oneRenewalEveryTwoSeconds: month / 2
        }
    }
}

extension Scenario {
    /// The scenario with a `.storekit` file's catalogue and storefront, by one rule every command shares (`forge make`,
    /// `jws make`, `notify`, `serve`): what the scenario says wins, the file fills what it leaves unsaid. The file
    /// is the app's catalogue and its `_storefront` a default, as in Xcode, where a test's `SKTestSession.storefront`
    /// overrides the configuration's; a scenario is one customer. So a scenario's own storefront stays, a product it
    /// defines keeps its definition, and the file's other products join after the scenario's, in the file's order.
    public func applying(_ configuration: StoreKitConfiguration) -> Scenario {
        var merged = self
        let own = products ?? []
        let defined = Set(own.map(\.productID))
        merged.products = own + configuration.products.filter { !defined.contains($0.productID) }
        merged.storefront = storefront ?? configuration.storefront
        return merged
    }
}

/// Why a `.storekit` file cannot be used: `notJSON` and `invalid` are the file's fault (exit 65), `unknownProduct`
/// the command's (64).
public struct StoreKitFileError: CodedError, Sendable {
    public enum Code: String, Hashable, Sendable, CustomStringConvertible {
        case notJSON, invalid, unknownProduct
        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String
    /// The JSON path of the refused value (`subscriptionGroups[0].subscriptions[1].introductoryOffer.paymentMode`).
    public let keyPath: String

    public init(_ code: Code, _ message: String, keyPath: String) {
        self.code = code
        self.message = message
        self.keyPath = keyPath
    }
}
