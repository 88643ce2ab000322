import Dispatch
import Foundation
import ReceiptServe
import Testing
import ForgeSupport
import StoreModel

/// The servers' answer pool, in process: the bounds a socket test cannot hit on demand (a worker held as
/// long as the test likes).
@Suite("Answer pool")
struct AnswerPoolTests {
    @Test("Past its workers and queue a request is refused as busy at once; a queued one runs when a worker frees")
    func busy() async throws {
        let pool = AnswerPool(workers: 1, maximumQueued: 1)
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        // Deadlines far past the test: on a loaded machine the test's own task may wait long for a thread.
        async let held = pool.answer(within: 600) {
            gate.wait()
            return 1
        }
        try await Self.until { pool.load.running == 1 }
        async let queued = pool.answer(within: 600) { 2 }
        try await Self.until { pool.load.waiting == 1 }
        var refusal: ServerRefusal?
        do { _ = try await pool.answer { 3 } } catch { refusal = error }
        #expect(refusal?.code == .busy)
        #expect(refusal?.message.contains("busy") == true)
        gate.signal()
        #expect(try await held == 1)
        #expect(try await queued == 2)
    }

    @Test("A request with no answer within its deadline is told so; the pool serves the next ones after")
    func deadline() async throws {
        let pool = AnswerPool(workers: 1, maximumQueued: 4)
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        await #expect(throws: ServerRefusal(.answerTimeout, "")) {
            try await pool.answer(within: 1) {
                gate.wait()
                return 0
            }
        }
        gate.signal()
        #expect(try await pool.answer { 7 } == 7)
    }

    /// Waits (up to 10 s) for a state of the pool's threads.
    static func until(_ condition: () -> Bool) async throws {
        for _ in 0..<1_000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }

    @Test("A stopped pool refuses")
    func stopped() async {
        let pool = AnswerPool(workers: 2, maximumQueued: 0)
        pool.stop()
        await #expect(throws: ServerRefusal(.shuttingDown, "")) { try await pool.answer { 1 } }
    }
}
