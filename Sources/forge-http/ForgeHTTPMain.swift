import Dispatch
import ForgeCLI
import Foundation
import NIOCore
import NIOPosix
import ReceiptConformance
import ReceiptConformanceHTTP
import ReceiptValidation
import ReceiptValidationHTTP

/// `forge-http`: the same command line as `forge`, with the HTTP client and listeners linked in. `forge`
/// runs it for `--target http(s)://…` and `--listen`; it can also be called directly.
@main
enum ForgeHTTPMain {
    /// Swift concurrency runs on swift-nio's event loops here, so an HTTP exchange of the runner does not
    /// hop between the cooperative pool and an event loop twice per request (measured: a third of the
    /// runner's time over HTTP went to those thread switches).
    static func main() {
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        Task {
            await ForgeCLI.main(network: HTTPSupport())
            exit(0)
        }
        dispatchMain()
    }
}

private struct HTTPSupport: NetworkSupport {
    var targetProviders: [any TargetProvider] { [HTTPTargets()] }

    func listen(host: String, port: Int, harness: ReferenceHarness, threads: Int) async throws -> any ListeningServer {
        Listener(server: try await HarnessServer.start(host: host, port: port, harness: harness, threads: threads))
    }
}

private struct Listener: ListeningServer {
    let server: HarnessServer
    var port: Int { server.port }
    func waitUntilClosed() async throws { try await server.waitUntilClosed() }
}
