import Dispatch
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Synchronization
import _ForgeSupport
import StoreServer
import StoreModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a server stops: the first SIGINT or SIGTERM begins a graceful shutdown (no new connections; the
/// requests in flight are answered) and starts the grace period; when it ends, or at a second signal, the
/// process exits at once — a client that never finishes its request cannot keep the server alive.
///
/// Exits: 0 when the grace period ends (the stop was asked for; stderr names the requests cut off),
/// 128 + the signal's number at a second signal. A shutdown that completes in time returns normally.
final class ShutdownSignals: Sendable {
    private let watch: SignalWatch

    init(graceSeconds: Int, unanswered: @escaping @Sendable () -> Int, begin: @escaping @Sendable () async -> Void) throws(SignalWatch.Failure) {
        // Its own queue: the worker threads and event loops never hold it up.
        let queue = DispatchQueue(label: "forge.shutdown-signals")
        let received = Mutex(0)
        watch = try SignalWatch([SIGINT, SIGTERM], queue: queue) { number in
            let count = received.withLock {
                $0 += 1
                return $0
            }
            guard count == 1 else {
                Self.say("signal \(number) again: exiting at once")
                exit(128 + number)
            }
            Task { await begin() }
            queue.asyncAfter(deadline: .now() + .seconds(graceSeconds)) {
                let open = unanswered()
                Self.say(
                    "stopped after the \(graceSeconds) s shutdown grace period (\(ServeOption.shutdownGrace))"
                        + (open > 0 ? " with \(open) request\(open == 1 ? "" : "s") unanswered" : ""))
                exit(0)
            }
        }
    }

    /// Stops watching (the server has stopped); the signals get their default actions back.
    func cancel() { watch.cancel() }

    private static func say(_ message: String) {
        StandardStream.error.write("forge: \(message)\n")
    }
}
