#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import AppStoreVocabulary

/// `notificationType` of App Store Server Notifications V2, with Apple's raw values (storekit2-facts §3.1; Apple's
/// `notificationType` documentation).
public enum NotificationType: String, Sendable, Hashable, CaseIterable, Codable {
    case subscribed = "SUBSCRIBED"
    case didChangeRenewalPref = "DID_CHANGE_RENEWAL_PREF"
    case didChangeRenewalStatus = "DID_CHANGE_RENEWAL_STATUS"
    case offerRedeemed = "OFFER_REDEEMED"
    case didRenew = "DID_RENEW"
    case expired = "EXPIRED"
    case didFailToRenew = "DID_FAIL_TO_RENEW"
    case gracePeriodExpired = "GRACE_PERIOD_EXPIRED"
    case priceIncrease = "PRICE_INCREASE"
    case refund = "REFUND"
    case refundDeclined = "REFUND_DECLINED"
    case consumptionRequest = "CONSUMPTION_REQUEST"
    case renewalExtended = "RENEWAL_EXTENDED"
    case revoke = "REVOKE"
    case test = "TEST"
    case renewalExtension = "RENEWAL_EXTENSION"
    case refundReversed = "REFUND_REVERSED"
    case externalPurchaseToken = "EXTERNAL_PURCHASE_TOKEN"
    case oneTimeCharge = "ONE_TIME_CHARGE"
    case rescindConsent = "RESCIND_CONSENT"
    case metadataUpdate = "METADATA_UPDATE"
    case migration = "MIGRATION"
    case priceChange = "PRICE_CHANGE"

    /// The subtypes Apple sends with this type; `nil` in the list means "no subtype". The one table of valid pairs
    /// (Apple's `subtype` documentation: each subtype names the types it applies to).
    public var subtypes: [NotificationSubtype?] {
        switch self {
        case .subscribed: [.initialBuy, .resubscribe]
        case .didChangeRenewalPref: [.upgrade, .downgrade, nil]
        case .didChangeRenewalStatus: [.autoRenewEnabled, .autoRenewDisabled]
        case .offerRedeemed: [.initialBuy, .resubscribe, .upgrade, .downgrade, nil]
        case .didRenew: [.billingRecovery, nil]
        case .expired: [.voluntary, .billingRetry, .priceIncrease, .productNotForSale]
        case .didFailToRenew: [.gracePeriod, nil]
        case .priceIncrease: [.pending, .accepted]
        case .renewalExtension: [.summary, .failure]
        case .externalPurchaseToken: [.unreported, .activeTokenReminder, .created]
        case .gracePeriodExpired, .refund, .refundDeclined, .consumptionRequest, .renewalExtended, .revoke, .test, .refundReversed, .oneTimeCharge,
            .rescindConsent, .metadataUpdate, .migration, .priceChange:
            [nil]
        }
    }

    /// The state Apple is in when it sends this pair: the one table of what each notification says happened
    /// (Apple's `notificationType` and `subtype` documentation). Unknown subtypes claim nothing.
    public func state(_ subtype: NotificationSubtype?) -> NotificationState {
        switch (self, subtype) {
        case (.didChangeRenewalPref, .downgrade?): .downgradePending
        case (.subscribed, _), (.offerRedeemed, _), (.renewalExtended, _), (.didChangeRenewalPref, _),
            (.didChangeRenewalStatus, .autoRenewEnabled?):
            .active
        case (.didChangeRenewalStatus, _): .autoRenewOff
        case (.priceIncrease, .accepted?): .priceIncrease(.accepted)
        case (.priceIncrease, _): .priceIncrease(.pending)
        case (.didRenew, .billingRecovery?): .recovered
        case (.didRenew, _): .renewed
        case (.expired, .billingRetry?): .expired(.billingError)
        case (.expired, .priceIncrease?): .expired(.priceIncreaseDeclined)
        case (.expired, .productNotForSale?): .expired(.productUnavailable)
        case (.expired, _): .expired(.voluntary)
        case (.didFailToRenew, .gracePeriod?): .gracePeriod
        case (.didFailToRenew, _): .billingRetry
        case (.gracePeriodExpired, _): .gracePeriodExpired
        case (.refund, _): .revoked
        case (.revoke, _): .familySharingRevoked
        case (.oneTimeCharge, _): .oneTimePurchase
        case (.refundDeclined, _), (.refundReversed, _), (.consumptionRequest, _), (.test, _), (.renewalExtension, _), (.externalPurchaseToken, _),
            (.rescindConsent, _), (.metadataUpdate, _), (.migration, _), (.priceChange, _):
            .unchanged
        }
    }

    /// Why Apple never sends this pair, or nil when it does.
    public func refusal(of subtype: NotificationSubtype?) -> String? {
        guard !subtypes.contains(subtype) else { return nil }
        let allowed = subtypes.map { $0?.rawValue ?? "no subtype" }.joined(separator: ", ")
        return "Apple never sends \(rawValue) with \(subtype.map { "subtype \($0.rawValue)" } ?? "no subtype"); \(rawValue) takes: \(allowed)"
    }
}

/// `subtype` of App Store Server Notifications V2, with Apple's raw values. `ACTIVE_TOKEN_REMINDER` and `CREATED`
/// (2025-06) are documented by Apple but not yet modelled by its libraries (server-api-facts, schema drift).
public enum NotificationSubtype: String, Sendable, Hashable, CaseIterable, Codable {
    case initialBuy = "INITIAL_BUY"
    case resubscribe = "RESUBSCRIBE"
    case downgrade = "DOWNGRADE"
    case upgrade = "UPGRADE"
    case autoRenewEnabled = "AUTO_RENEW_ENABLED"
    case autoRenewDisabled = "AUTO_RENEW_DISABLED"
    case voluntary = "VOLUNTARY"
    case billingRetry = "BILLING_RETRY"
    case priceIncrease = "PRICE_INCREASE"
    case gracePeriod = "GRACE_PERIOD"
    case pending = "PENDING"
    case accepted = "ACCEPTED"
    case billingRecovery = "BILLING_RECOVERY"
    case productNotForSale = "PRODUCT_NOT_FOR_SALE"
    case summary = "SUMMARY"
    case failure = "FAILURE"
    case unreported = "UNREPORTED"
    case activeTokenReminder = "ACTIVE_TOKEN_REMINDER"
    case created = "CREATED"
}

/// What a notification says about the purchase it carries, as Apple's documentation of each pair describes it.
/// ``Scenario/stating(_:about:now:)`` brings a scenario into the state through its timeline, so the receipt,
/// verifyReceipt and the JWS all show it.
public enum NotificationState: Sendable, Hashable {
    /// The notification claims nothing about the purchase (TEST, summaries, tokens, consumption requests…).
    case unchanged
    /// A subscription in its period, auto-renew on.
    case active
    /// In its period, auto-renew turned off (`DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED`).
    case autoRenewOff
    /// In its period, a price increase with the customer's consent pending or accepted.
    case priceIncrease(TimelineEvent.Consent)
    /// Renewed: the latest transaction is a renewal (`DID_RENEW`).
    case renewed
    /// Renewed after billing retry (`DID_RENEW/BILLING_RECOVERY`).
    case recovered
    /// Lapsed for good, for this reason.
    case expired(ExpirationIntent)
    /// Lapsed; Apple is retrying the payment (`DID_FAIL_TO_RENEW`).
    case billingRetry
    /// Lapsed, in billing retry, the customer still served until the grace period ends.
    case gracePeriod
    /// Still in billing retry, the grace period over.
    case gracePeriodExpired
    /// Refunded: the transaction carries revocationDate and revocationReason.
    case revoked
    /// No longer shared through Family Sharing (`REVOKE`): revoked, and the transaction's `inAppOwnershipType` is
    /// `FAMILY_SHARED`.
    case familySharingRevoked
    /// In its period, renewing as another product from the next renewal (`DID_CHANGE_RENEWAL_PREF/DOWNGRADE`):
    /// renewal info's `autoRenewProductId` differs from `productId`.
    case downgradePending
    /// A one-time purchase (`ONE_TIME_CHARGE`): a consumable, non-consumable or non-renewing subscription, never an
    /// auto-renewable one.
    case oneTimePurchase

    /// The notification's `data.status`; nil when the state claims nothing.
    public var status: SubscriptionStatus? {
        switch self {
        case .unchanged, .oneTimePurchase: nil
        case .active, .autoRenewOff, .priceIncrease, .renewed, .recovered, .downgradePending: .active
        case .expired: .expired
        case .billingRetry, .gracePeriodExpired: .billingRetry
        case .gracePeriod: .gracePeriod
        case .revoked, .familySharingRevoked: .revoked
        }
    }

    /// Whether only an auto-renewable subscription can be in this state.
    public var needsSubscription: Bool {
        switch self {
        case .unchanged, .revoked, .familySharingRevoked, .oneTimePurchase: false
        default: true
        }
    }

    /// Whether the latest period has ended by the notification (nil: either, or a renewal follows it).
    public var lapsed: Bool? {
        switch self {
        case .expired, .billingRetry, .gracePeriod, .gracePeriodExpired: true
        case .active, .autoRenewOff, .priceIncrease, .downgradePending: false
        case .unchanged, .revoked, .familySharingRevoked, .oneTimePurchase, .renewed, .recovered: nil
        }
    }
}

/// An auto-renewable subscription's status (Apple's `Status`), with Apple's raw values: what Get All Subscription
/// Statuses and a notification's `data.status` say. ``SubscriptionStatus/init(expiresDate:revoked:renewal:at:)`` is
/// the one place it is worked out.
public enum SubscriptionStatus: Int64, Sendable, Hashable, CaseIterable, Codable {
    case active = 1
    case expired = 2
    case billingRetry = 3
    case gracePeriod = 4
    case revoked = 5

    /// The status of a subscription at `date`, from its latest transaction's expiry and revocation and its renewal
    /// state (nil when unknown, as from a receipt alone): revoked before anything else, then the grace period, then
    /// billing retry, then whether the period has ended.
    public init(expiresDate: Date?, revoked: Bool, renewal: PendingRenewal?, at date: Date) {
        self =
            if revoked {
                .revoked
            } else if renewal?.gracePeriodExpiresDate != nil {
                .gracePeriod
            } else if renewal?.isInBillingRetryPeriod == true {
                .billingRetry
            } else if let expiresDate, expiresDate <= date {
                .expired
            } else {
                .active
            }
    }

    /// The status in words, for messages and `forge check`.
    public var name: String {
        switch self {
        case .active: "active"
        case .expired: "expired"
        case .billingRetry: "billing retry"
        case .gracePeriod: "grace period"
        case .revoked: "revoked"
        }
    }
}
