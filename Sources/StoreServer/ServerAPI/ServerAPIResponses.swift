public import StoreModel
public import AppStoreVocabulary

/// An App Store Server API answer with a body: one of Apple's response models, named and shaped as Apple's
/// libraries name them (app-store-server-library `Models/`), written by ``JSONValue/init(encoding:)`` in the order
/// its members are declared. That order is the one `forge serve` has always answered in; where Apple's libraries
/// declare another (StatusResponse puts `environment` first) the served bytes win, as a client reads members by name.
/// Dates are milliseconds since 1970 (`Int64`), as Apple's JSON carries them; an optional that is nil is left out.
protocol ServerAPIAnswer: Encodable, Sendable {
    /// The request log's `count`: the transactions a page holds, or the subscription groups of a status; nil for none.
    var loggedCount: Int? { get }
}

extension ServerAPIAnswer {
    var loggedCount: Int? { nil }
}

// MARK: - Transactions

/// Get Transaction Info.
public struct TransactionInfoResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    public var signedTransactionInfo: String
}

/// Get Transaction History (v1 and v2): one page of at most ``ServerAPIService/pageSize`` transactions.
public struct HistoryResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    /// Where the next page starts (``HistoryRevision``).
    public var revision: String
    public var hasMore: Bool
    public var bundleId: String
    /// Left out where the store has none (the sandbox's).
    public var appAppleId: Int64?
    public var environment: Environment
    public var signedTransactions: [String]

    var loggedCount: Int? { signedTransactions.count }
}

/// Get Refund History v2: one page of refunded and revoked transactions.
public struct RefundHistoryResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    public var signedTransactions: [String]
    public var revision: String
    public var hasMore: Bool

    var loggedCount: Int? { signedTransactions.count }
}

/// Look Up Order ID.
public struct OrderLookupResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    public var status: OrderLookupStatus
    /// Empty when the order is unknown.
    public var signedTransactions: [String]

    var loggedCount: Int? { signedTransactions.count }
}

/// Apple's `OrderLookupStatus`: whether the order id names an order.
public enum OrderLookupStatus: Int64, Codable, Hashable, Sendable {
    case valid = 0
    case invalid = 1
}

/// Get App Transaction Info.
public struct AppTransactionInfoResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    public var signedAppTransactionInfo: String
}

// MARK: - Subscriptions

/// Get All Subscription Statuses.
public struct StatusResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    public var bundleId: String
    public var appAppleId: Int64?
    public var environment: Environment
    /// By subscription group identifier, in its order.
    public var data: [SubscriptionGroupIdentifierItem]

    var loggedCount: Int? { data.count }
}

/// The subscriptions of one group, each by its latest transaction.
public struct SubscriptionGroupIdentifierItem: Codable, Hashable, Sendable {
    public var subscriptionGroupIdentifier: String
    public var lastTransactions: [LastTransactionsItem]
}

/// One subscription (original transaction) by its latest transaction.
public struct LastTransactionsItem: Codable, Hashable, Sendable {
    /// Apple's `Status`, encoded as its integer (``StoreRendering/subscriptionStatus(_:)``).
    public var status: SubscriptionStatus
    public var originalTransactionId: String
    public var signedTransactionInfo: String
    public var signedRenewalInfo: String
}

/// Extend a Subscription Renewal Date; kept (``ServerState``) so that a retried request identifier gets it again.
public struct ExtendRenewalDateResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    public var originalTransactionId: String
    public var webOrderLineItemId: String
    public var success: Bool
    /// When the extended period now ends.
    public var effectiveDate: Int64

    public init(originalTransactionId: String, webOrderLineItemId: String, success: Bool, effectiveDate: Int64) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}

/// Extend Subscription Renewal Dates for All Active Subscribers.
public struct MassExtendRenewalDateResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    public var requestIdentifier: String
}

/// Get Status of Subscription Renewal Date Extensions. forge completes a mass extension at once.
public struct MassExtendRenewalDateStatusResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    public var requestIdentifier: String
    public var complete: Bool
    public var completeDate: Int64
    public var succeededCount: Int64
    public var failedCount: Int64
}

// MARK: - Notifications

/// Request a Test Notification.
public struct SendTestNotificationResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    public var testNotificationToken: String
}

/// Get Test Notification Status.
public struct CheckTestNotificationResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    public var signedPayload: String
    public var sendAttempts: [SendAttemptItem]
}

/// Get Notification History: one page of at most ``ServerAPIService/pageSize`` notifications.
public struct NotificationHistoryResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    /// The next page's token; left out on the last page.
    public var paginationToken: String?
    public var hasMore: Bool
    public var notificationHistory: [NotificationHistoryResponseItem]
}

/// One notification of the history, with the attempts to deliver it.
public struct NotificationHistoryResponseItem: Codable, Hashable, Sendable {
    public var signedPayload: String
    public var sendAttempts: [SendAttemptItem]
}

/// One attempt to deliver a notification, as Apple's history lists it.
public struct SendAttemptItem: Codable, Hashable, Sendable {
    public var attemptDate: Int64
    public var sendAttemptResult: SendAttemptResult
}
