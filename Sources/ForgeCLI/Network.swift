#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptCorpus
package import ReceiptConformance
package import StoreServer
package import ReceiptValidationServer
import Synchronization
import _ForgeSupport
import StoreModel
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `forge-http` links and `forge` does not: the HTTP client of the runner's `http(s)://` targets and
/// the servers (`forge serve`, `forge validate --listen`). Kept out of `forge` so that the first build on
/// a fresh clone compiles no swift-nio or Hummingbird before the first receipt.
package protocol NetworkSupport: Sendable {
    /// Providers for the targets only the network can reach (`http://`, `https://`).
    var targetProviders: [any TargetProvider] { get }
    /// Serves `routes` (the harness protocol) until SIGINT or SIGTERM; `announce` gets the address bound.
    func listen(_ listener: ServerListener, routes: HarnessRoutes, announce: @escaping @Sendable (ServerAddress) async -> Void) async throws
    /// Builds `forge serve` from `configuration` (the one composition root, `ForgeServers.buildServeApplication`) and
    /// serves it until SIGINT or SIGTERM; `announce` gets the address bound. A part that cannot be built throws a
    /// ``ServeError`` whose code says whose fault it is.
    func serve(_ configuration: ServeConfiguration, announce: @escaping @Sendable (ServerAddress) async -> Void) async throws
    /// POSTs to webhooks (`forge notify`, `forge bench realtime`), at most `concurrency` at a time, answered in
    /// order; every failure is an attempt with Apple's result. The requests share their timeout and trust.
    func deliver(_ requests: [WebhookRequest], concurrency: Int) async -> [WebhookAnswer]
}

/// The network support of this process, or the hand-over to `forge-http` when there is none.
enum Network {
    private static let installed = Mutex<(any NetworkSupport)?>(nil)

    static func install(_ support: (any NetworkSupport)?) { installed.withLock { $0 = support } }

    /// The providers of every target kind this process can run.
    static var targetProviders: [any TargetProvider] {
        [ReferenceHarness.provider, ProcessTargets()] + (installed.withLock { $0 }?.targetProviders ?? [])
    }

    /// The network support, or — in `forge`, which does not link it — the same command line run by
    /// `forge-http`, found next to this executable or on PATH. `forge-http` replaces this process (same
    /// pid, same stdin/stdout/stderr), so scripts and signal handling see no difference.
    static func required(for what: String) throws -> any NetworkSupport {
        if let support = installed.withLock({ $0 }) { return support }
        guard let helper = helperPath() else {
            throw fail(
                "\(what) needs forge-http, the part of forge that speaks HTTP, which is not built: run `swift build --product forge-http` (or `swift build`) and put it next to forge or on PATH",
                Exit.unavailable)
        }
        let arguments = [helper] + CommandLine.arguments.dropFirst()
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execv(helper, &argv)
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        throw fail("cannot run \(helper) for \(what): \(reason)", Exit.unavailable)
    }

    static let helperName = "forge-http"

    /// `forge-http` beside this executable (the build directory, an install prefix), else on PATH.
    static func helperPath() -> String? {
        var candidates: [String] = []
        if let executable = CorpusLocation.mainExecutable {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent(helperName).path)
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") where !directory.isEmpty {
            candidates.append(String(directory) + "/" + helperName)
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
