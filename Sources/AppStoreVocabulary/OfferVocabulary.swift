/// Apple's `offerType` in transactions and renewal info (`OfferType`): which kind of offer applied.
public enum OfferType: Int64, Sendable, Hashable, CaseIterable, Codable {
    case introductory = 1
    case promotional = 2
    case offerCode = 3
    case winBack = 4
    /// A retention offer shown by the Retention Messaging API (WWDC26 session 309 shows `"offerType": 5`). Apple's
    /// libraries stop at 4: a verifier must keep the value it does not know, not refuse the transaction.
    case retention = 5
}

/// Apple's `offerDiscountType` (`OfferDiscountType`): how the customer pays while an offer applies. `ONE_TIME` is an
/// offer code on a one-time purchase (2025-10-29).
public enum OfferDiscountType: String, Sendable, Hashable, CaseIterable, Codable {
    case freeTrial = "FREE_TRIAL"
    case payAsYouGo = "PAY_AS_YOU_GO"
    case payUpFront = "PAY_UP_FRONT"
    case oneTime = "ONE_TIME"
}

/// Apple's `transactionReason` (`TransactionReason`): the customer bought it, or a subscription renewed.
public enum TransactionReason: String, Sendable, Hashable, CaseIterable, Codable {
    case purchase = "PURCHASE"
    case renewal = "RENEWAL"
}

/// Apple's `autoRenewStatus` in renewal info (`AutoRenewStatus`).
public enum AutoRenewStatus: Int64, Sendable, Hashable, CaseIterable, Codable {
    case off = 0
    case on = 1
}

/// Apple's `revocationReason` (`RevocationReason`): why the App Store refunded or revoked a transaction, the same
/// 0 and 1 as verifyReceipt's `cancellation_reason`.
public enum RevocationReason: Int64, Sendable, Hashable, CaseIterable, Codable {
    /// Another reason, e.g. a purchase made by mistake.
    case other = 0
    /// An actual or perceived issue within the app.
    case appIssue = 1
}

/// Apple's `revocationType` (`RevocationType`, 2025-12-10): how the App Store took a transaction back.
public enum RevocationType: String, Sendable, Hashable, CaseIterable, Codable {
    /// The whole price refunded.
    case refundFull = "REFUND_FULL"
    /// Part of it refunded; `revocationPercentage` says how much.
    case refundProrated = "REFUND_PRORATED"
    /// A family member lost a purchase shared through Family Sharing.
    case familyRevoke = "FAMILY_REVOKE"
}

/// Apple's `consumptionRequestReason` in a `CONSUMPTION_REQUEST` notification's `data` (`ConsumptionRequestReason`):
/// why the customer asked for the refund Apple wants consumption information about.
public enum ConsumptionRequestReason: String, Sendable, Hashable, CaseIterable, Codable {
    case unintendedPurchase = "UNINTENDED_PURCHASE"
    case fulfillmentIssue = "FULFILLMENT_ISSUE"
    case unsatisfiedWithPurchase = "UNSATISFIED_WITH_PURCHASE"
    case legal = "LEGAL"
    case other = "OTHER"
}

/// Apple's `tokenType` of an external purchase token (2025-06-26): present only for custom link tokens, the type the
/// app asked StoreKit's `ExternalPurchaseCustomLink.token(for:)` for. Apple's libraries do not model it yet.
public enum ExternalPurchaseTokenType: String, Sendable, Hashable, CaseIterable, Codable {
    /// EU: a customer new to the developer.
    case acquisition = "ACQUISITION"
    /// EU: a customer the developer already serves.
    case services = "SERVICES"
    case inApp = "IN_APP"
    case linkOut = "LINK_OUT"
}

/// Apple's `originalPlatform` of an AppTransaction (`PurchasePlatform`): where the customer first got the app.
public enum PurchasePlatform: String, Sendable, Hashable, CaseIterable, Codable {
    case iOS
    case macOS
    case tvOS
    case visionOS
}
