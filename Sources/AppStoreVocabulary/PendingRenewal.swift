#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A subscription's renewal state (verifyReceipt's `pending_renewal_info`, StoreKit 2's renewal info): what will happen at the subscription's next renewal.
public struct PendingRenewal: Sendable, Hashable {
    public var originalTransactionID: String
    public var productID: String
    public var autoRenewProductID: String
    public var autoRenewStatus: Bool
    /// Why the subscription expired; nil while it has not.
    public var expirationIntent: ExpirationIntent?
    public var isInBillingRetryPeriod: Bool?
    public var gracePeriodExpiresDate: Date?
    /// The customer's consent to a price increase; nil when there is none.
    public var priceConsentStatus: PriceConsentStatus?
    public var promotionalOfferID: String?

    public init(
        originalTransactionID: String, productID: String, autoRenewProductID: String? = nil, autoRenewStatus: Bool,
        expirationIntent: ExpirationIntent? = nil, isInBillingRetryPeriod: Bool? = nil, gracePeriodExpiresDate: Date? = nil,
        priceConsentStatus: PriceConsentStatus? = nil, promotionalOfferID: String? = nil
    ) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.autoRenewProductID = autoRenewProductID ?? productID
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.priceConsentStatus = priceConsentStatus
        self.promotionalOfferID = promotionalOfferID
    }
}

/// Renewal info's `expirationIntent` (verifyReceipt's `expiration_intent`), with Apple's raw values.
public enum ExpirationIntent: Int, Sendable, Hashable, CaseIterable, Codable {
    case voluntary = 1
    case billingError = 2
    case priceIncreaseDeclined = 3
    case productUnavailable = 4
    case other = 5
}

/// Renewal info's `priceIncreaseStatus` (verifyReceipt's `price_consent_status`), with Apple's raw values: whether
/// the customer has consented to a price increase (a declined one ends the subscription, with intent 3).
public enum PriceConsentStatus: Int, Sendable, Hashable, CaseIterable, Codable {
    case notYetConsented = 0
    case consented = 1
}
