#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
import Synchronization

/// Apple's per-app, per-endpoint request rates (`--rate-limits apple`), the sandbox at 10 % of production's
/// (server-api-facts §1.3, "Identifying rate limits"). A request over its endpoint's rate in the current second
/// is refused with 429, `4290000` and `Retry-After`: the UNIX time in milliseconds when the next second starts,
/// as Apple's documentation says (not RFC 9110's seconds).
///
/// The second is the wall clock's: never a request's `X-Forge-Now` (a client would choose its own second, and a new
/// one for every request), nor `--now`, which pins the server's clock and would hold every request in one second
/// forever. A test in process gives a clock of its own.
package final class ServerAPIRateLimits: Sendable {
    /// One window: the second it counts, and the requests counted in it.
    private struct Window {
        var second: Int64
        var count: Int
    }

    private struct Key: Hashable {
        let environment: ServerAPIEnvironment
        let app: String
        let family: String
    }

    private let windows = Mutex<[Key: Window]>([:])
    private let clock: @Sendable () -> Date

    /// - Parameter clock: what the seconds are counted on; the wall clock unless a test gives its own.
    package init(clock: @escaping @Sendable () -> Date = { Date() }) { self.clock = clock }

    /// Counts one request of `endpoint` for `app` in `environment` now; the instant the caller may retry at
    /// when it is over the rate, else nil.
    func admit(_ endpoint: ServerAPIService.Endpoint, app: String, environment: ServerAPIEnvironment) -> Date? {
        let now = clock()
        let (family, perSecond) = endpoint.rateLimit
        let allowed = environment == .sandbox ? max(1, perSecond / 10) : perSecond
        let milliseconds = (now.timeIntervalSince1970 * 1000).rounded(.down)
        // A clock outside ±2^53 ms is not a date; nothing is counted on it.
        guard milliseconds.magnitude < 9_007_199_254_740_992 else { return nil }
        let second = Int64(milliseconds) / 1000
        let key = Key(environment: environment, app: app, family: family)
        let over = windows.withLock { windows -> Bool in
            var window = windows[key] ?? Window(second: second, count: 0)
            if window.second != second { window = Window(second: second, count: 0) }
            window.count += 1
            windows[key] = window
            return window.count > allowed
        }
        return over ? Date(timeIntervalSince1970: TimeInterval(second + 1)) : nil
    }
}

extension ServerAPIService.Endpoint {
    /// The endpoint's rate family (endpoints Apple counts together share one) and its production requests per second.
    var rateLimit: (family: String, perSecond: Int) {
        switch self {
        case .transactionInfo, .subscriptionStatuses, .appTransactionInfo, .finishTransaction, .notificationHistory: (rawValue, 50)
        case .transactionHistory, .transactionHistoryV1: ("transactionHistory", 50)
        case .consumptionV1, .consumptionV2: ("consumption", 50)
        case .extendRenewalDate, .setAppAccountToken: (rawValue, 20)
        case .refundHistory, .orderLookup: (rawValue, 10)
        case .massExtendRenewalDate, .massExtensionStatus, .requestTestNotification, .testNotificationStatus: (rawValue, 1)
        // [guess: Apple's Retention Messaging pages give no rate] one family, at the common 50.
        case .uploadImage, .deleteImage, .imageList, .uploadMessage, .deleteMessage, .messageList, .configureDefaultMessage, .deleteDefaultMessage,
            .defaultMessage, .configureRealtimeURL, .deleteRealtimeURL, .realtimeURL, .initiatePerformanceTest, .performanceTestResults:
            ("retentionMessaging", 50)
        }
    }
}
