import Dispatch
import Foundation
import StoreServer
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport

/// The servers' answer pool, in process: the bounds a socket test cannot hit on demand (a worker held as
/// long as the test likes). The work that holds a worker waits on a semaphore: it runs on the pool's own thread
/// (CPU work's stand-in), never on the cooperative pool, and its wait has a deadline past the test's.
@Suite("Answer pool", .timeLimit(.minutes(2)))
struct AnswerPoolTests {
    @Test("Past its workers and queue a request is refused as busy at once; a queued one runs when a worker frees")
    func busy() async throws {
        let pool = AnswerPool(workers: 1, maximumQueued: 1)
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        // Deadlines far past the test: on a loaded machine the test's own task may wait long for a thread.
        async let held = pool.answer(within: 600) {
            _ = gate.wait(timeout: .now() + 150)
            return 1
        }
        try await eventually("the first request runs") { pool.load.running == 1 }
        async let queued = pool.answer(within: 600) { 2 }
        try await eventually("the second request waits") { pool.load.waiting == 1 }
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
                _ = gate.wait(timeout: .now() + 150)
                return 0
            }
        }
        gate.signal()
        #expect(try await pool.answer { 7 } == 7)
    }

    @Test("A stopped pool refuses")
    func stopped() async {
        let pool = AnswerPool(workers: 2, maximumQueued: 0)
        pool.stop()
        await #expect(throws: ServerRefusal(.shuttingDown, "")) { try await pool.answer { 1 } }
    }
}
