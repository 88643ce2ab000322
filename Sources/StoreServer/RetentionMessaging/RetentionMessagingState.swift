/// What the developer configured through the Retention Messaging API, per environment and app (a token's `bid`;
/// `--no-auth` is one app): images, messages, default messages, the realtime URL and the performance tests.
///
/// Bounded in bytes: Apple's 2000 images an app, as many messages [guess: Apple documents the message limit on a page
/// this machine has no copy of], and only what the API answers is kept of each (identifiers, states, which images a
/// message uses; neither the PNG nor the text), so an account holds at most ≈ 3 MB (with its 2000 default messages); ``maximumAccounts`` of them.
/// In memory only: the `--state` file does not keep it (a restart starts with nothing configured).
package struct RetentionMessagingState: Sendable {
    /// Apple's: "The maximum number of images you can configure for each app is 2000" (…/upload-image).
    package static let maximumImages = 2000
    /// [guess] as many as images.
    package static let maximumMessages = 2000
    /// Default messages (product × locale) an account keeps.
    package static let maximumDefaults = 2000
    /// Performance test results an account keeps (the oldest finished one makes room).
    package static let maximumTests = 16
    /// Accounts (environment × app) kept; the one least recently changed makes room.
    package static let maximumAccounts = 32

    /// Apple's `ImageState` and `MessageState`: forge approves at upload (Apple reviews in App Store Connect, which has
    /// no API), so every image and message is `APPROVED` from the answer that uploaded it.
    package enum Approval: String, Sendable, Codable {
        case pending = "PENDING"
        case approved = "APPROVED"
        case rejected = "REJECTED"
    }

    /// Apple's `ImageSize`.
    package enum ImageSize: String, Sendable, Codable, CaseIterable {
        case fullSize = "FULL_SIZE"
        case bulletPoint = "BULLET_POINT"
    }

    package struct Image: Sendable, Hashable {
        package var size: ImageSize
        package var state: Approval
    }

    package struct Message: Sendable, Hashable {
        package var state: Approval
        /// The images the message shows (its image and its bullet points'): they cannot be deleted while it exists.
        package var images: Set<String>
    }

    /// A performance test: its configuration and target as initiated, its outcome once every request is answered.
    package struct PerformanceTest: Sendable {
        package var target: String
        package var configuration: PerformanceTestConfig
        package var outcome: RealtimeLoadTest.Outcome?
    }

    package struct Key: Hashable, Sendable {
        package var environment: ServerAPIEnvironment
        package var app: String
    }

    /// One app's configuration in one environment; identifiers are UUIDs in lower case, listed in upload order.
    package struct Account: Sendable {
        package var images: [String: Image] = [:]
        package var imageOrder: [String] = []
        package var messages: [String: Message] = [:]
        package var messageOrder: [String] = []
        /// Message identifier by "productId\nlocale".
        package var defaults: [String: String] = [:]
        package var realtimeURL: String?
        package var tests: [String: PerformanceTest] = [:]
        package var testOrder: [String] = []
        /// Whether a performance test has passed here: what a production realtime URL needs (4030026).
        package var passedTest = false

        /// The test still running, if any: one at a time (4000213).
        package var runningTest: String? { testOrder.first { tests[$0]?.outcome == nil } }

        mutating func add(_ test: PerformanceTest, id: String) {
            tests[id] = test
            testOrder.append(id)
            // The oldest finished test makes room; a running one is never dropped.
            while testOrder.count > RetentionMessagingState.maximumTests, let index = testOrder.firstIndex(where: { tests[$0]?.outcome != nil }) {
                tests[testOrder.remove(at: index)] = nil
            }
        }
    }

    private(set) var accounts: [Key: Account] = [:]
    /// Keys, least recently changed first.
    private var order: [Key] = []
    /// How many performance tests were initiated: the seed of the next request id.
    private(set) var testsInitiated: UInt64 = 0

    package init() {}

    package func account(_ key: Key) -> Account { accounts[key] ?? Account() }

    /// Changes the account at `key` (made when first changed); the least recently changed one goes past ``maximumAccounts``.
    mutating func change<T>(_ key: Key, _ change: (inout Account) throws(ServerAPIError) -> T) throws(ServerAPIError) -> T {
        var account = accounts[key] ?? Account()
        let result = try change(&account)
        accounts[key] = account
        order.removeAll { $0 == key }
        order.append(key)
        while order.count > Self.maximumAccounts { accounts[order.removeFirst()] = nil }
        return result
    }

    /// Records a performance test's outcome, if its account (and the test) is still kept; a pass opens production's URL.
    mutating func finish(_ id: String, in key: Key, outcome: RealtimeLoadTest.Outcome, passed: Bool) {
        guard accounts[key]?.tests[id] != nil else { return }
        accounts[key]?.tests[id]?.outcome = outcome
        if passed { accounts[key]?.passedTest = true }
    }

    /// The number of the next performance test, counted.
    mutating func nextTest() -> UInt64 {
        testsInitiated += 1
        return testsInitiated
    }
}

/// Apple's `PerformanceTestConfig`: what Initiate Performance Test says it will do and Get Performance Test Results repeats.
package struct PerformanceTestConfig: Codable, Hashable, Sendable {
    package var maxConcurrentRequests: Int
    package var totalRequests: Int
    /// Milliseconds the test may run at most: every request's deadline, the requests in waves of `maxConcurrentRequests`.
    package var totalDuration: Int64
    package var responseTimeThreshold: Int
    package var successRateThreshold: Int

    /// forge's test: Apple's 700 ms threshold; the rest are choices [guess: Apple documents neither its concurrency,
    /// its request count nor its success threshold], small enough for a developer's machine.
    package static let forge = PerformanceTestConfig(
        maxConcurrentRequests: 5, totalRequests: 50, totalDuration: Int64((50 + 4) / 5 * requestTimeoutSeconds * 1000),
        responseTimeThreshold: RealtimeLoadTest.responseTimeThreshold, successRateThreshold: 95)

    /// Seconds before an unanswered request is abandoned (TIMED_OUT, as one answered after the threshold).
    package static let requestTimeoutSeconds = 5
}
