public import ReceiptCorpus
import Synchronization

/// What a feature needs besides the harness, started for a run and stopped after it: the OCSP responder that
/// `online` vectors' certificates name. The runner never knows what it is; the CLI (which can start a server)
/// hands it over.
public struct FeatureService: Sendable {
    /// A started service: how to stop it.
    public struct Running: Sendable {
        public let stop: @Sendable () async -> Void
        public init(stop: @escaping @Sendable () async -> Void) { self.stop = stop }
    }

    public let feature: Feature
    /// How a skip reason names it ("the OCSP responder on 127.0.0.1:6960").
    public let name: String
    /// Starts it, or throws why it cannot run: the vectors needing it are then SKIP with that reason.
    public let start: @Sendable () async throws -> Running

    public init(feature: Feature, name: String, start: @escaping @Sendable () async throws -> Running) {
        self.feature = feature
        self.name = name
        self.start = start
    }
}

extension FeatureService {
    /// A service that is a process: `command` is started like a harness (its own process group, ended with the run
    /// or at an interrupt), ready once it writes a first line to stdout within `deadline`, killed when the run ends.
    /// A process that exits first, or stays silent, fails the start with what it wrote to stderr.
    public static func process(feature: Feature, name: String, command: [String], deadline: Duration = .seconds(30)) -> FeatureService {
        FeatureService(feature: feature, name: name) {
            let ready = Mutex(false)
            let child: ChildProcess
            do throws(HarnessStartError) {
                child = try ChildProcess(command) { chunk in
                    if let chunk, chunk.contains(0x0A) { ready.withLock { $0 = true } }
                }
            } catch { throw ServiceStartError(description: error.description) }
            let clock = ContinuousClock()
            let end = clock.now.advanced(by: deadline)
            while !ready.withLock({ $0 }) {
                guard child.isRunning, clock.now < end else {
                    let running = child.isRunning
                    child.kill()
                    await child.settle()
                    let said = child.stderrText
                    throw ServiceStartError(description: running ? "it wrote nothing in \(deadline)" : said.isEmpty ? child.exitDescription : said)
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return Running {
                child.kill()
                _ = await child.exited(within: .seconds(5))
            }
        }
    }
}

/// Why a service process did not start, in its own words.
struct ServiceStartError: Error, CustomStringConvertible {
    let description: String
}
