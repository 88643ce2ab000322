/// The App Store's environments, with Apple's raw values (app-store-server-library `Environment`): what a StoreKit 2
/// payload's `environment` (an AppTransaction's `receiptType`) says.
public enum Environment: String, Sendable, Hashable, CaseIterable, Codable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"

    /// The environment of a receipt type (attribute 0, verifyReceipt's `receipt_type`): `ProductionSandbox` → sandbox.
    /// Its own raw values are read too (a spec may say `Sandbox`); nil for anything else.
    public init?(receiptType: String) {
        if let known = ReceiptType(rawValue: receiptType) {
            self = known.environment
        } else if let environment = Environment(rawValue: receiptType) {
            self = environment
        } else {
            return nil
        }
    }

    /// The receipt type a receipt of this environment carries.
    public var receiptType: ReceiptType {
        switch self {
        case .production: .production
        case .sandbox: .productionSandbox
        case .xcode: .xcode
        case .localTesting: .localTesting
        }
    }
}

/// The receipt types (attribute 0) Apple writes, verifyReceipt's `receipt_type` plus Xcode's and local testing's.
/// A scenario may still carry any text there (the corpus forges odd ones); these are the ones the CLI offers.
public enum ReceiptType: String, Sendable, Hashable, CaseIterable, Codable {
    case production = "Production"
    case productionSandbox = "ProductionSandbox"
    case productionVPP = "ProductionVPP"
    case productionVPPSandbox = "ProductionVPPSandbox"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"

    public var environment: Environment {
        switch self {
        case .production, .productionVPP: .production
        case .productionSandbox, .productionVPPSandbox: .sandbox
        case .xcode: .xcode
        case .localTesting: .localTesting
        }
    }
}

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
