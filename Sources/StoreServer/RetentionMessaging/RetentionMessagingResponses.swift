/// The Retention Messaging API's answers with a body, named and shaped as Apple's Python client's `models/` (3.1.2).

/// Get Image List.
package struct GetImageListResponse: Encodable, Hashable, Sendable, ServerAPIAnswer {
    package var imageIdentifiers: [GetImageListResponseItem]

    var loggedCount: Int? { imageIdentifiers.count }
}

package struct GetImageListResponseItem: Encodable, Hashable, Sendable {
    package var imageIdentifier: String
    /// Apple's `ImageState`.
    package var imageState: String
    /// Apple's `ImageSize`.
    package var imageSize: String
}

/// Get Message List.
package struct GetMessageListResponse: Encodable, Hashable, Sendable, ServerAPIAnswer {
    package var messageIdentifiers: [GetMessageListResponseItem]

    var loggedCount: Int? { messageIdentifiers.count }
}

package struct GetMessageListResponseItem: Encodable, Hashable, Sendable {
    package var messageIdentifier: String
    /// Apple's `MessageState`.
    package var messageState: String
}

/// Get Default Message.
package struct DefaultConfigurationResponse: Encodable, Hashable, Sendable, ServerAPIAnswer {
    package var messageIdentifier: String
}

/// Get Realtime URL.
package struct RealtimeUrlResponse: Encodable, Hashable, Sendable, ServerAPIAnswer {
    package var realtimeURL: String
}

/// Initiate Performance Test.
package struct PerformanceTestResponse: Encodable, Hashable, Sendable, ServerAPIAnswer {
    package var config: PerformanceTestConfig
    package var requestId: String
}

/// Get Performance Test Results: while the test runs, `result` is `PENDING` and only the configuration, the target and
/// `numPending` are given.
package struct PerformanceTestResultResponse: Encodable, Hashable, Sendable, ServerAPIAnswer {
    package var config: PerformanceTestConfig
    package var target: String
    /// Apple's `PerformanceTestStatus`: PENDING, PASS or FAIL.
    package var result: String
    /// Percent, rounded down.
    package var successRate: Int?
    package var numPending: Int
    package var responseTimes: PerformanceTestResponseTimes?
    package var failures: FailureCounts?
}

/// Apple's `PerformanceTestResponseTimes`, in milliseconds.
package struct PerformanceTestResponseTimes: Encodable, Hashable, Sendable {
    package var average: Int64
    package var p50: Int64
    package var p90: Int64
    package var p95: Int64
    package var p99: Int64
}

/// Apple's `failures`: a count by `SendAttemptResult`, written in the order given.
package struct FailureCounts: Encodable, Hashable, Sendable {
    package var counts: [String: Int]
    private var order: [String]

    init(_ pairs: [(String, Int)]) {
        counts = Dictionary(pairs, uniquingKeysWith: +)
        order = pairs.map(\.0)
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for name in order { try container.encode(counts[name] ?? 0, forKey: Key(stringValue: name)) }
    }
}
