#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport
import StoreModel

/// Every bound `forge serve` and `forge validate --listen` put on what a client can make them hold (time,
/// memory, workers), in one place: the defaults here, the ones a user may change surfaced as flags in both
/// commands' `--help`.
package struct ServerLimits: Sendable, Hashable {
    /// The largest request body: a receipt at its 16 MiB limit in base64 (≈ 21.3 MiB) with room for the JSON around it.
    package static let maximumBody = 32 << 20
    /// Request-body bytes held at once over every connection (read, not yet answered): three bodies at their limit.
    package static let maximumBodyBytesInFlight = 96 << 20
    /// The largest body of a control route (`POST /_forge/faults`).
    package static let maximumControlBody = 64 << 10
    /// The most seconds one `POST /_forge/clock` `advance` moves the clock: 100 years.
    package static let maximumClockAdvance: Int64 = 100 * 366 * 86_400
    /// Seconds to wait for a request's headers (from the connection's opening or the previous answer), and
    /// again for its body (from the headers).
    package static let defaultReadTimeout = 30
    /// Seconds the requests in flight get after SIGINT or SIGTERM; a second signal exits at once.
    package static let defaultShutdownGrace = 10
    /// Seconds a connection is still read (and the bytes dropped) after a refusal that closes it, so the client
    /// reads the refusal instead of a reset.
    package static let lingerSeconds = 2
    /// Seconds a request waits for its answer (for a worker, then for the work) before it is told so.
    package static let answerTimeout = 60
    /// Requests that may wait for a worker, per worker; past that a request is refused as busy.
    package static let queuedAnswersPerWorker = 16
    /// Entries `GET /_forge/log` keeps (a ring: the oldest go first; ≈ 300 bytes each).
    package static let defaultLogCapacity = 10_000
    /// Faults in force at once (each request looks through them).
    package static let maximumFaults = 1_000

    /// What the flags accept.
    package static let readTimeoutRange = 1...3_600
    package static let shutdownGraceRange = 0...3_600
    package static let workersRange = 1...64
    package static let logCapacityRange = 1...1_000_000

    /// See ``defaultReadTimeout``.
    package var readTimeoutSeconds: Int
    /// See ``defaultShutdownGrace``.
    package var shutdownGraceSeconds: Int
    /// Answers computed at once, off the event loops (validation is CPU work).
    package var workers: Int

    package init(
        readTimeoutSeconds: Int = Self.defaultReadTimeout, shutdownGraceSeconds: Int = Self.defaultShutdownGrace, workers: Int? = nil
    ) {
        self.readTimeoutSeconds = readTimeoutSeconds
        self.shutdownGraceSeconds = shutdownGraceSeconds
        self.workers = workers ?? Self.defaultWorkers
    }

    /// One per core, at least two: one heavy request never makes a light one wait.
    package static var defaultWorkers: Int { max(2, ProcessInfo.processInfo.activeProcessorCount) }

    /// Requests that may wait for a worker before one is refused.
    package var queuedAnswers: Int { workers * Self.queuedAnswersPerWorker }
}
