public import AppStoreVocabulary
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport

/// Where one transaction of a subscription billed `MONTHLY` stands in its 12-month commitment (App Store Server API
/// 1.21, Apple's `TransactionCommitmentInfo`): the product is a yearly subscription the customer pays month by
/// month, each month a transaction of its own, and commits to a year of them. After the 12th the commitment itself
/// renews: a new one, numbered from 1 again. [guess: Apple documents the fields, not the plan's rules; forge models
/// a commitment as one period of a yearly product, which is what `commitmentRenewalBillingPlanType` `BILLED_UPFRONT`,
/// the next year paid at once, implies]
public struct Commitment: Sendable, Hashable {
    /// This transaction's billing period, 1 to ``totalBillingPeriods`` (Apple's `billingPeriodNumber`).
    public var billingPeriodNumber: Int
    /// The commitment's billing periods (Apple's `totalBillingPeriods`).
    public var totalBillingPeriods: Int
    /// When the commitment ends, and renews (`commitmentExpiresDate`; renewal info's `commitmentRenewalDate`).
    public var expiresDate: Date

    /// The billing periods of a commitment: twelve months.
    public static let billingPeriods = 12
    /// One billing period of a commitment.
    public static let billingPeriod = SubscriptionPeriod.month
    /// The only subscription period billed monthly: a year, the commitment.
    public static let commitmentPeriod = "P1Y"

    public init(billingPeriodNumber: Int, totalBillingPeriods: Int = Commitment.billingPeriods, expiresDate: Date) {
        self.billingPeriodNumber = billingPeriodNumber
        self.totalBillingPeriods = totalBillingPeriods
        self.expiresDate = expiresDate
    }

    /// The commitment of the billing period that starts at `start`, after this one: the next period of the same
    /// commitment, or the first of the commitment's renewal, which runs twelve months from `start`.
    public func next(startingAt start: Date) -> Commitment {
        guard billingPeriodNumber >= totalBillingPeriods else {
            return Commitment(billingPeriodNumber: billingPeriodNumber + 1, totalBillingPeriods: totalBillingPeriods, expiresDate: expiresDate)
        }
        return Commitment(
            billingPeriodNumber: 1, totalBillingPeriods: totalBillingPeriods, expiresDate: Self.billingPeriod.advance(start, by: totalBillingPeriods))
    }
}

/// A billing plan a subscription product offers (a scenario product's `billingPlans`, a `.storekit` subscription's):
/// how it is paid, and for `MONTHLY` what the whole 12-month commitment costs.
public struct BillingPlan: Encodable, Sendable, Hashable {
    public var billingPlanType: BillingPlanType
    /// The price of the whole commitment, as a decimal (`"119.88"`): StoreKit 2's `commitmentPrice` in milliunits,
    /// each monthly transaction's `price` a twelfth of it.
    public var commitmentPrice: String?

    public init(billingPlanType: BillingPlanType, commitmentPrice: String? = nil) {
        self.billingPlanType = billingPlanType
        self.commitmentPrice = commitmentPrice
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case billingPlanType, commitmentPrice }

    init(reading field: JSONField) throws(JSONFieldError) {
        let members = try field.object(known: CodingKeys.allCases.map(\.rawValue))
        billingPlanType = try members.required("billingPlanType").oneOf(BillingPlanType.self)
        commitmentPrice = try members["commitmentPrice"]?.string(expected: Price.expected) { Price.milliunits($0) != nil }
    }
}

extension ProductDefinition {
    /// What a 12-month commitment of this product costs, in milliunits: its `MONTHLY` plan's commitment price, else
    /// its price (a year paid up front). nil when the product says neither.
    public var commitmentPriceMilliunits: Int64? {
        billingPlans?.first { $0.billingPlanType == .monthly }?.commitmentPrice.flatMap(Price.milliunits) ?? priceMilliunits
    }
}

extension Purchase {
    /// How long one transaction of this purchase lasts: a month billed monthly, else its period (default a month).
    var billingPeriod: SubscriptionPeriod { billingPlan == .monthly ? Commitment.billingPeriod : period.flatMap(SubscriptionPeriod.init) ?? .month }

    /// Checks a billing plan against the rest of the purchase: `MONTHLY` bills a yearly subscription over a
    /// commitment, which forge does not combine with an offer.
    func validateBillingPlan(place: String) throws(ForgeError) {
        guard billingPlan == .monthly else { return }
        let name = "'\(place)billingPlan' MONTHLY"
        if let period, period != Commitment.commitmentPeriod {
            throw ForgeError(
                .conflictingOptions,
                "\(name) bills a yearly subscription month by month over a 12-month commitment: '\(place)period' must be \(Commitment.commitmentPeriod), not \(period)",
                fields: [place + "billingPlan", place + "period"])
        }
        let offers = [("trial", trial == true), ("intro", intro == true), ("promo", promo != nil)].filter(\.1).map(\.0)
        if !offers.isEmpty {
            throw ForgeError(
                .conflictingOptions,
                "\(name) conflicts with \(offers.map { "'\(place)\($0)'" }.joined(separator: ", ")): forge does not model an offer inside a commitment",
                fields: [place + "billingPlan"] + offers.map { place + $0 })
        }
    }
}

/// What renewal info says of a commitment (Apple's `RenewalCommitmentInfo`): whether and as what the commitment
/// renews at its end. Its price is the renderer's, from the product (``ProductDefinition/commitmentPriceMilliunits``).
public struct RenewalCommitment: Sendable, Hashable {
    /// The product the commitment renews as (`commitmentAutoRenewProductId`).
    public var autoRenewProductID: String
    /// Whether it renews (`commitmentAutoRenewStatus`): the subscription's auto-renew status.
    public var autoRenewStatus: Bool
    /// How the renewed commitment is paid (`commitmentRenewalBillingPlanType`): as this one.
    public var billingPlanType: BillingPlanType
    /// When it renews (`commitmentRenewalDate`): the commitment's end.
    public var renewalDate: Date
}

extension Store {
    /// The commitment renewal of the subscription whose latest transaction is `last`; nil when it has no commitment.
    public func renewalCommitment(of last: Transaction) -> RenewalCommitment? {
        guard let commitment = last.commitment, let plan = last.billingPlan else { return nil }
        let state = history.renewal(of: last.originalTransactionID)
        return RenewalCommitment(
            autoRenewProductID: state?.autoRenewProductID ?? last.productID, autoRenewStatus: state?.autoRenewStatus ?? true, billingPlanType: plan,
            renewalDate: commitment.expiresDate)
    }
}
