public import Foundation
import ForgeSupport

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
