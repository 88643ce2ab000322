import Foundation
import ReceiptForge
import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// While a folder is staged (`vectors generate`, `make --count`), SIGINT, SIGTERM or SIGHUP discard the staging
/// folder before forge exits 128 + the signal's number: the target stays the old folder, and nothing of the new
/// one is left beside it. A second signal meanwhile exits at once.
final class StagedOutputInterrupts {
    private let sources: [any DispatchSourceSignal]
    private let folder = FolderBox()

    init() {
        let folder = self.folder
        sources = [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)  // the source below sees it instead of the default action
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                for other in [SIGINT, SIGTERM, SIGHUP] { signal(other, SIG_DFL) }  // a second signal: no waiting
                let outcome = folder.value.withLock { $0 }?.discard() == false ? "the output was already complete" : "nothing was written"
                FileHandle.standardError.write(Data("\nforge: interrupted (signal \(number)); \(outcome)\n".utf8))
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }

    /// The folder to discard on a signal from now on.
    func guarding(_ staged: StagedFolder) { folder.value.withLock { $0 = staged } }

    private final class FolderBox: Sendable { let value = Mutex<StagedFolder?>(nil) }
}
