public import Foundation
import ForgeSupport

/// A subscription's renewal state (verifyReceipt's `pending_renewal_info`, StoreKit 2's renewal info): what will happen at the subscription's next renewal.
public struct PendingRenewal: Sendable, Hashable {
    public var originalTransactionID: String
    public var productID: String
    public var autoRenewProductID: String
    public var autoRenewStatus: Bool
    /// 1 the customer cancelled, 2 billing error, 3 price increase not consented, 4 product unavailable, 5 other.
    public var expirationIntent: Int?
    public var isInBillingRetryPeriod: Bool?
    public var gracePeriodExpiresDate: Date?
    /// 0 the customer has not yet consented to a price increase, 1 consented.
    public var priceConsentStatus: Int?
    public var promotionalOfferID: String?

    public init(
        originalTransactionID: String, productID: String, autoRenewProductID: String? = nil, autoRenewStatus: Bool,
        expirationIntent: Int? = nil, isInBillingRetryPeriod: Bool? = nil, gracePeriodExpiresDate: Date? = nil,
        priceConsentStatus: Int? = nil, promotionalOfferID: String? = nil
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
