/// Apple's `billingPlanType` in transactions (`BillingPlanType`, App Store Server API 1.21, 2026-04-27): how the
/// customer pays a subscription, the whole period up front or month by month over a 12-month commitment.
public enum BillingPlanType: String, Sendable, Hashable, CaseIterable, Codable {
    case billedUpfront = "BILLED_UPFRONT"
    case monthly = "MONTHLY"
}

/// Apple's `renewalBillingPlanType` and `commitmentRenewalBillingPlanType` in renewal info: Apple's libraries give
/// them an enum of their own (`RenewalBillingPlanType`) with the same two values, so forge names them with one type.
public typealias RenewalBillingPlanType = BillingPlanType
