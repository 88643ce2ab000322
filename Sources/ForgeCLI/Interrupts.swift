import Foundation
import ReceiptConformance
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C or a CI runner's SIGTERM must not leave harnesses behind: they lead process groups of their
/// own, which the terminal's signal does not reach. On SIGINT, SIGTERM or SIGHUP, every harness group
/// is killed and forge exits 128 + the signal's number; the run's reports are not written.
enum Interrupts {
    static func stopHarnessesOnSignal() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)  // the source below sees it instead of the default action
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                HarnessProcesses.killAll()
                FileHandle.standardError.write(Data("\nforge: interrupted (signal \(number)); harness processes stopped, no reports written\n".utf8))
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }
}
