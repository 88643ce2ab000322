package import _ForgeSupport
package import StoreModel

/// Apple's Retention Messaging performance test as forge runs it, for `forge bench realtime` and the served Initiate
/// Performance Test alike: POSTs of `{"signedPayload": a realtime request}`, each with its own `requestIdentifier`,
/// judged as Apple judges them. Sending is the caller's (its HTTP client); making the bodies and judging the answers
/// are here, once.
package enum RealtimeLoadTest {
    /// Apple's: "respond within approximately 700 ms" (…/initiate-performance-test).
    package static let responseTimeThreshold = 700

    /// `count` bodies of `payload`, each with the `requestIdentifier` of `seed` and its index (the same seed gives the
    /// same identifiers), signed by `sign`.
    package static func bodies(
        of payload: JSONObject, count: Int, seed: UInt64, sign: (JSONValue) throws(ForgeError) -> String
    ) throws(ForgeError) -> [[UInt8]] {
        var payload = payload
        var bodies: [[UInt8]] = []
        bodies.reserveCapacity(max(0, count))
        for index in 0..<max(0, count) {
            var random = SeededGenerator(seed: UInt64(index) &+ seed)
            payload["requestIdentifier"] = .string(random.uuid().description.lowercased())
            bodies.append(WebhookRequest.body(signedPayload: try sign(.object(payload))))
        }
        return bodies
    }

    /// What a run found: each request succeeds when the answer is HTTP 200-206 within the threshold and its body is a
    /// `RealtimeResponseBody` (``RealtimeResponse/accepts(_:)``); an answer over the threshold is TIMED_OUT, a body
    /// that is not one INVALID_RESPONSE.
    package struct Outcome: Sendable, Hashable {
        package var total: Int
        package var failures: [SendAttemptResult: Int]
        /// Every request's time to its answer (or to its failure), shortest first.
        package var latencies: [Int64]

        package init(_ answers: [WebhookAnswer], thresholdMilliseconds: Int) {
            var failures: [SendAttemptResult: Int] = [:]
            var latencies: [Int64] = []
            for answer in answers {
                latencies.append(answer.attempt.milliseconds)
                var result = answer.attempt.result
                if result == .success, answer.attempt.milliseconds > Int64(thresholdMilliseconds) { result = .timedOut }
                if result == .success, !RealtimeResponse.accepts(answer.body) { result = .invalidResponse }
                if result != .success { failures[result, default: 0] += 1 }
            }
            total = answers.count
            self.failures = failures
            self.latencies = latencies.sorted()
        }

        package var succeeded: Int { total - failures.values.reduce(0, +) }

        /// Percent of the requests that succeeded (0 for none).
        package var successRate: Double { total == 0 ? 0 : Double(succeeded) * 100 / Double(total) }

        /// The latency `permille` thousandths of the requests stay within (nearest rank), in integers only.
        package func percentile(_ permille: Int) -> Int64 {
            guard !latencies.isEmpty else { return 0 }
            let rank = (latencies.count * permille + 999) / 1000
            return latencies[max(0, min(latencies.count - 1, rank - 1))]
        }

        /// The mean latency, rounded down.
        package var average: Int64 { latencies.isEmpty ? 0 : latencies.reduce(0, &+) / Int64(latencies.count) }

        /// The failures in Apple's order of `SendAttemptResult`.
        package var orderedFailures: [(result: SendAttemptResult, count: Int)] {
            SendAttemptResult.allCases.compactMap { result in failures[result].map { (result, $0) } }
        }
    }
}
