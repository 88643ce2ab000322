import Foundation
import ReceiptConformance
import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C or a CI runner's SIGTERM must not leave harnesses behind: they lead process groups of their
/// own, which the terminal's signal does not reach. On SIGINT, SIGTERM or SIGHUP, every harness group
/// is killed and forge exits 128 + the signal's number; the run's reports are not written.
///
/// Whether a run was interrupted or wrote its reports is decided once, under a lock, by whichever comes
/// first: an interrupt marks the run before it kills a harness, so the deaths it causes can never reach a
/// report as CRASH; and once the reports are being written, a signal no longer ends the run, which finishes
/// as it would have. An interrupted run writes no report; a run that reports was not interrupted.
enum Interrupts {
    private enum Stage { case running, interrupted, reporting }
    private static let stage = Mutex(Stage.running)

    static func stopHarnessesOnSignal() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)  // the source below sees it instead of the default action
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { interrupted(by: number) }
            source.resume()
            return source
        }
    }

    private static func interrupted(by number: Int32) {
        let first = stage.withLock { stage in
            guard stage == .running else { return false }
            stage = .interrupted
            return true
        }
        // A second signal, or one after the reports began: the first handler, or the run itself, ends forge.
        guard first else { return }
        HarnessProcesses.killAll()
        FileHandle.standardError.write(Data("\nforge: interrupted (signal \(number)); harness processes stopped, no reports written\n".utf8))
        exit(128 + number)
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
}
