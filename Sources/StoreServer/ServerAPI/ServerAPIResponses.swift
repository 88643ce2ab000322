package import StoreModel
package import AppStoreVocabulary

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
package struct TransactionInfoResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    package var signedTransactionInfo: String
}

/// Get Transaction History (v1 and v2): one page of at most ``ServerAPIService/pageSize`` transactions.
package struct HistoryResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    /// Where the next page starts (``HistoryRevision``).
    package var revision: String
    package var hasMore: Bool
    package var bundleId: String
    /// Left out where the store has none (the sandbox's).
    package var appAppleId: Int64?
    package var environment: Environment
    package var signedTransactions: [String]

    var loggedCount: Int? { signedTransactions.count }
}

/// Get Refund History v2: one page of refunded and revoked transactions.
package struct RefundHistoryResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    package var signedTransactions: [String]
    package var revision: String
    package var hasMore: Bool

    var loggedCount: Int? { signedTransactions.count }
}

/// Look Up Order ID.
package struct OrderLookupResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    package var status: OrderLookupStatus
    /// Empty when the order is unknown.
    package var signedTransactions: [String]

    var loggedCount: Int? { signedTransactions.count }
}

/// Apple's `OrderLookupStatus`: whether the order id names an order.
package enum OrderLookupStatus: Int64, Codable, Hashable, Sendable {
    case valid = 0
    case invalid = 1
}

/// Get App Transaction Info.
package struct AppTransactionInfoResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    package var signedAppTransactionInfo: String
}

// MARK: - Subscriptions

/// Get All Subscription Statuses.
package struct StatusResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    package var bundleId: String
    package var appAppleId: Int64?
    package var environment: Environment
    /// By subscription group identifier, in its order.
    package var data: [SubscriptionGroupIdentifierItem]

    var loggedCount: Int? { data.count }
}

/// The subscriptions of one group, each by its latest transaction.
package struct SubscriptionGroupIdentifierItem: Codable, Hashable, Sendable {
    package var subscriptionGroupIdentifier: String
    package var lastTransactions: [LastTransactionsItem]
}

/// One subscription (original transaction) by its latest transaction.
package struct LastTransactionsItem: Codable, Hashable, Sendable {
    /// Apple's `Status`, encoded as its integer (``StoreRendering/subscriptionStatus(_:)``).
    package var status: SubscriptionStatus
    package var originalTransactionId: String
    package var signedTransactionInfo: String
    package var signedRenewalInfo: String
}

/// Extend a Subscription Renewal Date; kept (``ServerState``) so that a retried request identifier gets it again.
package struct ExtendRenewalDateResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    package var originalTransactionId: String
    package var webOrderLineItemId: String
    package var success: Bool
    /// When the extended period now ends.
    package var effectiveDate: Int64

    package init(originalTransactionId: String, webOrderLineItemId: String, success: Bool, effectiveDate: Int64) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}

/// Extend Subscription Renewal Dates for All Active Subscribers.
package struct MassExtendRenewalDateResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    package var requestIdentifier: String
}

/// Get Status of Subscription Renewal Date Extensions. forge completes a mass extension at once.
package struct MassExtendRenewalDateStatusResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    package var requestIdentifier: String
    package var complete: Bool
    package var completeDate: Int64
    package var succeededCount: Int64
    package var failedCount: Int64
}

// MARK: - Notifications

/// Request a Test Notification.
package struct SendTestNotificationResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    package var testNotificationToken: String
}

/// Get Test Notification Status.
package struct CheckTestNotificationResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    package var signedPayload: String
    package var sendAttempts: [SendAttemptItem]
}

/// Get Notification History: one page of at most ``ServerAPIService/pageSize`` notifications.
package struct NotificationHistoryResponse: Codable, Hashable, Sendable, ServerAPIAnswer {
    /// The next page's token; left out on the last page.
    package var paginationToken: String?
    package var hasMore: Bool
    package var notificationHistory: [NotificationHistoryResponseItem]
}

/// One notification of the history, with the attempts to deliver it.
package struct NotificationHistoryResponseItem: Codable, Hashable, Sendable {
    package var signedPayload: String
    package var sendAttempts: [SendAttemptItem]
}

/// One attempt to deliver a notification, as Apple's history lists it.
package struct SendAttemptItem: Codable, Hashable, Sendable {
    package var attemptDate: Int64
    package var sendAttemptResult: SendAttemptResult
}
