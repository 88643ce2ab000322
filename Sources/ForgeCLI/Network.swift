import Foundation
public import ReceiptConformance
public import ReceiptValidation
import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `forge-http` links and `forge` does not: the HTTP client of the runner's `http(s)://` targets and
/// the listeners (`forge validate --listen`). Kept out of `forge` so that the first build on a fresh clone
/// compiles no swift-nio, BoringSSL or async-http-client before the first receipt.
public protocol NetworkSupport: Sendable {
    /// Providers for the targets only the network can reach (`http://`, `https://`).
    var targetProviders: [any TargetProvider] { get }
    /// Starts serving `harness` over HTTP on `host:port` (0: any free port).
    func listen(host: String, port: Int, harness: ReferenceHarness, threads: Int) async throws -> any ListeningServer
}

/// A server started by ``NetworkSupport/listen(host:port:harness:threads:)``.
public protocol ListeningServer: Sendable {
    /// The bound port (useful with port 0).
    var port: Int { get }
    /// Returns when the server is closed.
    func waitUntilClosed() async throws
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
    private static func helperPath() -> String? {
        var candidates: [String] = []
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent(helperName).path)
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") where !directory.isEmpty {
            candidates.append(String(directory) + "/" + helperName)
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
