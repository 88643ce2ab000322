/// Apple's `offerType` in transactions and renewal info (`OfferType`): which kind of offer applied.
public enum OfferType: Int64, Sendable, Hashable, CaseIterable, Codable {
    case introductory = 1
    case promotional = 2
    case offerCode = 3
    case winBack = 4
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
