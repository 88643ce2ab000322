#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import Dispatch
import Synchronization
public import StoreModel
import _ForgeSupport

/// Many receipts of one scenario in one process: what a load test or a fuzz corpus needs, without paying a
/// process start per receipt. Receipt `i` (0-based) is the scenario made with seed `base + i`, where `base` is
/// the scenario's seed or the one derived from it and `now` (as for a single receipt): different ids, device
/// and bytes per receipt, and the same bytes for the same inputs, whatever `jobs` is.
public enum ReceiptBatch {
    /// The seed of receipt `index`.
    public static func seed(of index: Int, scenario: Scenario, now: Date) -> UInt64 {
        (scenario.seed ?? Store.derivedSeed(scenario, now: now)) &+ UInt64(index)
    }

    /// Makes `count` receipts on `jobs` threads, handing each to `deliver` (on the thread that made it, in no
    /// particular order; `index` says which). The first error (from the forge or from `deliver`) stops the batch
    /// and is thrown; receipts already delivered stay delivered.
    public static func make(
        _ scenario: Scenario, now: Date, count: Int, jobs: Int, forge: Forge,
        deliver: @Sendable (_ index: Int, ForgedReceipt) throws -> Void
    ) throws {
        let failure = Mutex<(index: Int, error: any Error)?>(nil)
        let workers = max(1, min(jobs, count))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for index in stride(from: worker, to: count, by: workers) {
                if failure.withLock({ $0 != nil }) { return }
                var seeded = scenario
                seeded.seed = seed(of: index, scenario: scenario, now: now)
                do {
                    try deliver(index, try forge.make(seeded, now: now))
                } catch {
                    failure.withLock { first in if index < first?.index ?? Int.max { first = (index, error) } }
                    return
                }
            }
        }
        if let (_, error) = failure.withLock({ $0 }) { throw error }
    }
}
