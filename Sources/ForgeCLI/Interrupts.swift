#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Dispatch
import ReceiptConformance
import StoreForge
import Synchronization
import _ForgeSupport
import StoreModel
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGINT, SIGTERM and SIGHUP for the commands that must clean up before they exit (DESIGN §8): the first
/// signal runs the command's stop action and exits 128 + its number; a second one while that runs exits at
/// once. The signals are seen by a ``SignalWatch``, not in a handler, so the stop actions may lock and write.
enum Interrupts {
    /// Watches from now on; `stop` says what the interrupt left behind ("no reports written"). Nil (said on
    /// stderr) when signals cannot be watched: the command then runs without its cleanup on a signal.
    static func onSignal(_ stop: @escaping @Sendable () -> String) -> SignalWatch? {
        let stopping = StopFlag()
        do {
            return try SignalWatch([SIGINT, SIGTERM, SIGHUP], queue: .global()) { number in
                guard !stopping.raised.exchange(true, ordering: .sequentiallyConsistent) else { _exit(128 + number) }
                let outcome = stop()
                StandardStream.error.write("\nforge: interrupted (signal \(number)); \(outcome)\n")
                exit(128 + number)
            }
        } catch {
            StandardStream.error.write("forge: warning: \(error)\n")
            return nil
        }
    }

    private final class StopFlag: Sendable { let raised = Atomic(false) }

    // MARK: forge run

    /// Ctrl-C or a CI runner's SIGTERM must not leave harnesses behind: they lead process groups of their
    /// own, which the terminal's signal does not reach. On a signal every harness group is killed and the
    /// run's reports are not written.
    ///
    /// Whether a run was interrupted or wrote its reports is decided once, under a lock, by whichever comes
    /// first: an interrupt marks the run before it kills a harness, so the deaths it causes can never reach a
    /// report as CRASH; and once the reports are being written, a signal no longer ends the run, which finishes
    /// as it would have. An interrupted run writes no report; a run that reports was not interrupted.
    private enum Stage { case running, interrupted, reporting }
    private static let stage = Mutex(Stage.running)

    static func stopHarnessesOnSignal() -> SignalWatch? {
        onSignal {
            let first = stage.withLock { stage in
                guard stage == .running else { return false }
                stage = .interrupted
                return true
            }
            // The reports began first: the run itself ends forge, as it would have.
            guard first else { while true { sleep(60) } }
            HarnessProcesses.killAll()
            return "harness processes stopped, no reports written"
        }
    }

    /// Runs `finish` (write the reports, print the summary) unless the run was interrupted; from then on an
    /// interrupt no longer ends the run. If it was interrupted, never returns: the interrupt is ending forge.
    static func finishing<T>(_ finish: () throws -> T) rethrows -> T {
        let proceed = stage.withLock { stage in
            guard stage == .running else { return false }
            stage = .reporting
            return true
        }
        guard proceed else {
            while true { sleep(60) }
        }
        return try finish()
    }

    // MARK: staged output

    /// While a folder is staged (`vectors generate`, `make --count`, `ca export`), a signal discards the staging
    /// folder: the target stays the old folder, and nothing of the new one is left beside it. The folder is made
    /// through `slot`, so a signal while it is being made cannot leave it behind either.
    static func discardStagedOnSignal() -> (watch: SignalWatch?, slot: StagingSlot) {
        let slot = StagingSlot()
        let watch = onSignal { slot.stop() == false ? "the output was already complete" : "nothing was written" }
        return (watch, slot)
    }
}

/// `forge serve --stop-at-stdin-eof`: the end of stdin is a parent gone (killed or not), since the parent holds
/// the pipe's other end. A thread of its own (never an event loop or a pool thread) reads stdin to its end and
/// then sends this process `signal`, so the server stops exactly as that signal stops it.
enum EndOfInput {
    static func signalWhenReached(_ signal: Int32) {
        DetachedThread.start(name: "forge.stdin-watch") {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count > 0 || (count < 0 && errno == EINTR) { continue }
                break
            }
            kill(getpid(), signal)
        }
    }
}
