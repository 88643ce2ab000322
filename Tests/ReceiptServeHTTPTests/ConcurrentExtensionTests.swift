import Foundation
import ForgeSupport
import ReceiptServe
import StoreModel
import Synchronization
import Testing

/// Extensions of one subscription at once: each answer's `effectiveDate` is that of the state the extension was made
/// on, so two never answer the same date while the subscription moved by both.
@Suite("Concurrent extensions answer from the state they change")
struct ConcurrentExtensionTests {
    /// Holds each task until `count` have arrived (or a second has passed), so the first ones call the service at once
    /// on as many threads as there are; on one thread they take turns, and the outcome is checked all the same.
    final class StartLine: Sendable {
        private let arrived = Atomic<Int>(0)
        let count: Int

        init(count: Int) { self.count = count }

        func wait() {
            arrived.add(1, ordering: .relaxed)
            let deadline = Date().addingTimeInterval(1)
            while arrived.load(ordering: .relaxed) < count, Date() < deadline {}
        }
    }

    @Test("50 extensions at once, 16 rounds: the effective dates answered are distinct, and the last is the expiresDate rendered after", .timeLimit(.minutes(2)))
    func distinctEffectiveDates() async throws {
        // 35 years of monthly renewals: a store that takes a while to render, as a customer of long standing does.
        let scenario = try Scenario.decode(
            json: Data(
                #"{"preset":"sandbox","bundleId":"com.example.race","now":"2025-01-01T00:00:00Z","purchases":[{"productId":"pro.monthly","purchaseDate":"1990-01-15T00:00:00Z","period":"P1M","renewals":419}]}"#
                    .utf8))
        let original = try #require(try StateFixtures.ids(scenario)["pro.monthly"]?.first)
        for round in 1...16 {
            let service = try StateFixtures.service([scenario])
            let start = StartLine(count: min(ProcessInfo.processInfo.activeProcessorCount, 4))
            let answers = await withTaskGroup(of: ServerAPIResponse.self, returning: [ServerAPIResponse].self) { group in
                for request in 0..<50 {
                    group.addTask {
                        start.wait()
                        return StateFixtures.call(
                            service, "PUT", "/inApps/v1/subscriptions/extend/\(original)",
                            body: #"{"extendByDays":30,"extendReasonCode":1,"requestIdentifier":"round\#(round)-\#(request)"}"#)
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let effective = answers.filter { $0.status == 200 }.compactMap { StateFixtures.json($0)?["effectiveDate"]?.integerValue }
            #expect(effective.count == 2, "twice in 365 days: round \(round)")
            #expect(Set(effective).count == effective.count, "round \(round): \(effective)")
            let status = StateFixtures.json(StateFixtures.call(service, "GET", "/inApps/v1/subscriptions/\(original)"))
            let latest = status?["data"]?.arrayValue?.first?["lastTransactions"]?.arrayValue?.first?["signedTransactionInfo"]
            let expires = StateFixtures.payload(latest)?["expiresDate"]?.integerValue
            #expect(expires != nil && expires == effective.max(), "round \(round): rendered \(String(describing: expires)), answered \(effective)")
        }
    }
}
