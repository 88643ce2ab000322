import Dispatch
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Synchronization
import _ForgeSupport
import StoreModel

/// Where the servers compute answers (validation, JSON in and out: CPU work that grows with the request),
/// off the event loops so that a heavy request never holds the others: a fixed set of worker threads and a
/// bounded queue. A request past the queue is refused as busy at once; one that waits longer than its
/// deadline is told so (its work, once started, runs to its end on its worker: CPU work cannot be
/// interrupted, and the worker count bounds what it takes).
package final class AnswerPool: @unchecked Sendable {
    /// One request's work; `run` is nil once taken or abandoned.
    private final class Job: @unchecked Sendable {
        var run: (@Sendable () -> Void)?
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Guards `queue`, `stopped` and `busyWorkers` (the `@unchecked Sendable` above: nothing else is mutable).
    private let condition = ConditionLock()
    private var queue: [Job] = []
    private var stopped = false
    /// Workers running a job; a request a free worker will take at once does not count as queued.
    private var busyWorkers = 0
    package let workers: Int
    package let maximumQueued: Int

    package init(workers: Int, maximumQueued: Int) {
        self.workers = max(1, workers)
        self.maximumQueued = max(0, maximumQueued)
        for index in 0..<self.workers {
            DetachedThread.start(name: "forge-answer-\(index + 1)") { [self] in work() }
        }
    }

    package convenience init(limits: ServerLimits) {
        self.init(workers: limits.workers, maximumQueued: limits.queuedAnswers)
    }

    /// Requests being answered, and waiting for a worker.
    package var load: (running: Int, waiting: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (busyWorkers, queue.count)
    }

    /// Ends the worker threads once the queue is empty; later requests are refused.
    package func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// The answer `work` computes on a worker, or why there is none: ``ServerRefusal/Code/busy`` when the queue
    /// is full, ``ServerRefusal/Code/answerTimeout`` after `seconds`.
    package func answer<T: Sendable>(within seconds: Int = ServerLimits.answerTimeout, _ work: @escaping @Sendable () -> T) async throws(ServerRefusal) -> T {
        let result: Result<T, ServerRefusal> = await withCheckedContinuation { continuation in
            let once = Once(continuation)
            let job = Job { once.resume(.success(work())) }
            condition.lock()
            let refusal: ServerRefusal? =
                stopped
                ? ServerRefusal(.shuttingDown, "the server is stopping")
                : queue.count >= maximumQueued + workers - busyWorkers ? busy() : nil
            if refusal == nil {
                queue.append(job)
                condition.signal()
            }
            condition.unlock()
            if let refusal {
                once.resume(.failure(refusal))
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { [self] in
                guard once.resume(.failure(timedOut(seconds))) else { return }
                // Still queued: its place goes to the next request.
                condition.lock()
                job.run = nil
                queue.removeAll { $0 === job }
                condition.unlock()
            }
        }
        return try result.get()
    }

    private func busy() -> ServerRefusal {
        ServerRefusal(
            .busy, "the server is busy: \(workers) requests are being answered and \(maximumQueued) more wait already; retry shortly")
    }

    private func timedOut(_ seconds: Int) -> ServerRefusal {
        ServerRefusal(
            .answerTimeout, "no answer within \(seconds) s: the server is overloaded or the request is too heavy for it (\(workers) workers)")
    }

    private func work() {
        while true {
            condition.lock()
            while queue.isEmpty, !stopped { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            let job = queue.removeFirst()
            let run = job.run
            job.run = nil
            busyWorkers += 1
            condition.unlock()
            run?()
            condition.lock()
            busyWorkers -= 1
            condition.unlock()
        }
    }
}

/// Resumes a continuation once, whoever comes first (the answer or the deadline).
private final class Once<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Result<T, ServerRefusal>, Never>?>

    init(_ continuation: CheckedContinuation<Result<T, ServerRefusal>, Never>) { self.continuation = Mutex(continuation) }

    /// Whether this call resumed it.
    @discardableResult
    func resume(_ result: Result<T, ServerRefusal>) -> Bool {
        guard let continuation = continuation.withLock({ $0.take() }) else { return false }
        continuation.resume(returning: result)
        return true
    }
}
