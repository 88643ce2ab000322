#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
package import Hummingbird
package import HummingbirdCore
package import Logging
package import NIOCore
import NIOPosix
package import ServiceLifecycle
import Synchronization
import StoreServer

/// One of the servers, built by ``ForgeServers``: a Hummingbird application (so a test can drive it in
/// process) that also holds what its socket run needs — the requests in flight, for the note
/// at the end of the shutdown grace period.
///
/// Its one service stops the answer pool's workers once the server has stopped, whether it ran on a socket or in
/// a test; the event loops it made (with `threads`) are shut down by ``serve()`` once everything has returned.
package struct ForgeApplication: ApplicationProtocol {
    package typealias Responder = RouterResponder<ForgeRequestContext>

    private let application: Application<Responder>
    private let runtime: ServerRuntime
    private let limits: ServerLimits
    /// The event loops made for `threads`, nil on the process's.
    private let group: MultiThreadedEventLoopGroup?

    /// The server as configured, with the routes `register` adds after the count of requests in flight.
    init(
        _ listener: ServerListener, services background: [any Service] = [], announce: @escaping @Sendable (ServerAddress) async -> Void,
        register: (Router<ForgeRequestContext>, ServerRuntime) -> Void
    ) throws {
        let http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [ReadDeadlineHandler(seconds: listener.limits.readTimeoutSeconds)])
        // First, so that a certificate OpenSSL refuses leaves no worker or event loop behind.
        let server: HTTPServerBuilder = try listener.tls.map { try .tls(http1, credentials: $0) } ?? .http1(configuration: http1)
        let runtime = ServerRuntime(limits: listener.limits)
        let router = Router(context: ForgeRequestContext.self)
        router.add(middleware: InFlightMiddleware(runtime: runtime))
        register(router, runtime)
        var logger = Logger(label: "forge")
        logger.logLevel = .warning
        let group: MultiThreadedEventLoopGroup? = listener.threads.map { MultiThreadedEventLoopGroup(numberOfThreads: max(1, $0)) }
        application = Application(
            router: router, server: server,
            configuration: ApplicationConfiguration(address: .hostname(listener.host, port: listener.port), serverName: nil),
            services: [ServerResources(runtime: runtime)] + background,
            onServerRunning: { channel in
                let bound = channel.localAddress
                await announce(ServerAddress(host: bound?.ipAddress ?? listener.host, port: bound?.port ?? listener.port))
            },
            eventLoopGroupProvider: group.map { .shared($0) } ?? .singleton, logger: logger)
        self.runtime = runtime
        self.group = group
        limits = listener.limits
    }

    package var responder: Responder { application.responder }
    package var server: HTTPServerBuilder { application.server }
    package var configuration: ApplicationConfiguration { application.configuration }
    package var logger: Logger { application.logger }
    package var eventLoopGroup: any EventLoopGroup { application.eventLoopGroup }
    package var services: [any Service] { application.services }
    package func onServerRunning(_ channel: any Channel) async { await application.onServerRunning(channel) }

    /// Serves on the listener's socket until SIGINT or SIGTERM: the first stops accepting and gives the
    /// requests in flight the shutdown grace period (``ShutdownSignals``).
    package func serve() async throws {
        let services = ServiceGroup(services: [self], logger: logger)
        let runtime = runtime
        let signals = try ShutdownSignals(graceSeconds: limits.shutdownGraceSeconds, unanswered: { runtime.inFlight }) {
            await services.triggerGracefulShutdown()
        }
        let outcome: Result<Void, any Error>
        do { outcome = .success(try await services.run()) } catch { outcome = .failure(error) }
        signals.cancel()
        runtime.pool.stop()
        // The loops go last, once the whole service group has returned: a server that failed to bind still
        // closes its channel on them, and shutting them down in a service made NIO warn on stderr (1 in 40
        // starts on a port in use, with both cores loaded; 1 in 20 when shut down at once after the group).
        if let group {
            // A failed bind's channel is still closing when the service group returns, its callbacks hopping
            // between loops: each loop runs what is queued on it, twice over, before the loops shut down.
            for _ in 0..<2 {
                for loop in group.makeIterator() { try? await loop.submit {}.get() }
            }
            try? await group.shutdownGracefully()
        }
        do { try outcome.get() } catch let error as IOError {
            throw Self.listenFailure(errno: error.errnoCode) ?? error
        } catch is SocketAddressError.UnknownHost {
            throw ServeError(.cannotListen, "the host name does not resolve to an address of this machine")
        } catch is SocketAddressError {
            throw ServeError(.cannotListen, "not an address to listen on")
        }
    }

    /// What a failed `bind` means to the user, or nil for an error that is not about where to listen.
    static func listenFailure(errno code: Int32) -> ServeError? {
        let reason: String
        switch code {
        case EADDRINUSE: reason = "address already in use (another process listens there: pick another port, or port 0 for a free one)"
        case EADDRNOTAVAIL: reason = "not an address of this machine (listen on 127.0.0.1, 0.0.0.0 or an address of one of its interfaces)"
        case EACCES: reason = "permission denied (ports below 1024 need privileges: pick a higher port, or port 0)"
        case EAFNOSUPPORT: reason = "this machine does not support that address family"
        default: return nil
        }
        return ServeError(.cannotListen, reason)
    }
}

/// What a server owns beyond its sockets, given back once it has stopped (Hummingbird stops an
/// application's services after its server, so the requests in flight are answered first).
///
/// Not the event loops made for `threads`: a server that failed to bind is still closing its channel on them when
/// the services stop, so ``ForgeApplication/serve()`` shuts them down after everything has returned.
private struct ServerResources: Service {
    let runtime: ServerRuntime

    func run() async throws {
        // Returns at a graceful shutdown, throws when cancelled (the server could not start): both end here.
        try? await gracefulShutdown()
        runtime.pool.stop()
    }
}

/// What one server shares between its routes: the workers, the body budget, the requests in flight.
final class ServerRuntime: Sendable {
    let pool: AnswerPool
    let bodies = RequestBodies()
    private let requests = Mutex(0)

    init(limits: ServerLimits) { pool = AnswerPool(limits: limits) }

    var inFlight: Int { requests.withLock { $0 } }

    func begin() { requests.withLock { $0 += 1 } }
    func end() { requests.withLock { $0 -= 1 } }
}

/// The request context of both servers: Hummingbird's, plus the client's address (for the control routes).
/// In process (`.router`) there is no client address: the control routes then need
/// the control token, as for any client they cannot place on loopback.
package struct ForgeRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// Counts the requests being answered, for the note at the end of the shutdown grace period.
private struct InFlightMiddleware: RouterMiddleware {
    typealias Context = ForgeRequestContext
    let runtime: ServerRuntime

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        runtime.begin()
        defer { runtime.end() }
        return try await next(request, context)
    }
}
