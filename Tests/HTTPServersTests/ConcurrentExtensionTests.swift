import Foundation
import Dispatch
import _ForgeSupport
import StoreServer
import StoreModel
import Synchronization
import Testing

/// Extensions of one subscription at once: each answer's `effectiveDate` is that of the state the extension was made
/// on, so two never answer the same date while the subscription moved by both.
@Suite("Concurrent extensions answer from the state they change", .timeLimit(.minutes(2)))
struct ConcurrentExtensionTests {
    /// `count` calls of `work`, all started at once on as many threads as there are (Dispatch's own threads, never
    /// the cooperative pool's), the answers in call order; the test's task waits without holding a thread.
    static func atOnce<T: Sendable>(_ count: Int, _ work: @escaping @Sendable (Int) -> T) async -> [T] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let answers = Mutex([T?](repeating: nil, count: count))
                DispatchQueue.concurrentPerform(iterations: count) { index in
                    let answer = work(index)
                    answers.withLock { $0[index] = answer }
                }
                continuation.resume(returning: answers.withLock { $0.compactMap(\.self) })
            }
        }
    }

    @Test("50 extensions at once, 16 rounds: the effective dates answered are distinct, and the last is the expiresDate rendered after")
    func distinctEffectiveDates() async throws {
        // 35 years of monthly renewals: a store that takes a while to render, as a customer of long standing does.
        let scenario = try Scenario.decode(
            json: Data(
                #"{"preset":"sandbox","bundleId":"com.example.race","now":"2025-01-01T00:00:00Z","purchases":[{"productId":"pro.monthly","purchaseDate":"1990-01-15T00:00:00Z","period":"P1M","renewals":419}]}"#
                    .utf8))
        let original = try #require(try StateFixtures.ids(scenario)["pro.monthly"]?.first)
        for round in 1...16 {
            let service = try StateFixtures.service([scenario])
            let answers = await Self.atOnce(50) { request in
                StateFixtures.call(
                    service, .extendRenewalDate, "\(original)",
                    body: #"{"extendByDays":30,"extendReasonCode":1,"requestIdentifier":"round\#(round)-\#(request)"}"#)
            }
            #expect(answers.count == 50)
            let effective = answers.filter { $0.status == 200 }.compactMap { StateFixtures.json($0)?["effectiveDate"]?.integerValue }
            #expect(effective.count == 2, "twice in 365 days: round \(round)")
            #expect(Set(effective).count == effective.count, "round \(round): \(effective)")
            let status = StateFixtures.json(StateFixtures.call(service, .subscriptionStatuses, "\(original)"))
            let latest = status?["data"]?.arrayValue?.first?["lastTransactions"]?.arrayValue?.first?["signedTransactionInfo"]
            let expires = StateFixtures.payload(latest)?["expiresDate"]?.integerValue
            #expect(expires != nil && expires == effective.max(), "round \(round): rendered \(String(describing: expires)), answered \(effective)")
        }
    }
}
