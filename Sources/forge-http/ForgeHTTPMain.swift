import Dispatch
import ForgeCLI
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore
import NIOPosix
import ReceiptConformance
import ReceiptConformanceHTTP
import StoreServer
import HTTPServers
import ReceiptValidationServer
import _ForgeSupport
import StoreModel

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

    func listen(_ listener: ServerListener, routes: HarnessRoutes, announce: @escaping @Sendable (ServerAddress) async -> Void) async throws {
        try await ForgeServers.buildHarnessApplication(listener, routes: routes, announce: announce).serve()
    }

    func serve(_ configuration: ServeConfiguration, announce: @escaping @Sendable (ServerAddress) async -> Void) async throws {
        try await ForgeServers.buildServeApplication(configuration, announce: announce).serve()
    }

    func deliver(_ requests: [WebhookRequest], concurrency: Int) async -> [WebhookAnswer] {
        await WebhookClient.deliver(requests, concurrency: concurrency)
    }
}
