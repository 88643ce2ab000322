import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
public import ReceiptValidation
import ReceiptValidationServer

/// `forge validate --listen`: the reference validator as an HTTP service, so the runner's `http://`
/// transport is tested end to end against a real second process, and so load generators have an
/// endpoint to compare the runner with. Routes are in `HarnessRoutes`.
///
/// Validation is CPU work of a few hundred microseconds, so it runs on the event loop that read the
/// request: one loop per core is the whole concurrency model, with no hop to another thread pool.
public final class HarnessServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    /// The bound port (useful with port 0).
    public let port: Int

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, port: Int) {
        self.group = group
        self.channel = channel
        self.port = port
    }

    /// Binds `host:port` (0 picks a free port) and starts serving.
    public static func start(host: String, port: Int, harness: ReferenceHarness, threads: Int) async throws -> HarnessServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        let routes = HarnessRoutes(harness: harness)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(.maxMessagesPerRead, value: 16)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                        try pipeline.addHandler(NIOHTTPServerRequestAggregator(maxContentLength: HarnessRoutes.maximumBody))
                        try pipeline.addHandler(HarnessHTTPHandler(routes: routes))
                    }
                }
                .bind(host: host, port: port).get()
            guard let bound = channel.localAddress?.port else { throw ServerError("the listening socket has no port") }
            return HarnessServer(group: group, channel: channel, port: bound)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Returns when the server is closed (by `stop()` or a signal handler calling it).
    public func waitUntilClosed() async throws {
        try await channel.closeFuture.get()
    }

    public func stop() async throws {
        try? await channel.close()
        try await group.shutdownGracefully()
    }
}

/// A failure to start serving.
public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Writes each aggregated request's response; closes the connection when the client asked.
private final class HarnessHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = NIOHTTPServerRequestFull
    typealias OutboundOut = HTTPServerResponsePart

    private let routes: HarnessRoutes

    init(routes: HarnessRoutes) { self.routes = routes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let request = unwrapInboundIn(data)
        let body = request.body.map { Array($0.readableBytesView) } ?? []
        let headers = Dictionary(request.head.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        let response = routes.respond(method: request.head.method.rawValue, path: request.head.uri, headers: headers, body: body)

        var responseHeaders = HTTPHeaders()
        responseHeaders.add(name: "content-type", value: response.contentType)
        responseHeaders.add(name: "content-length", value: String(response.body.count))
        let keepAlive = request.head.isKeepAlive
        if !keepAlive { responseHeaders.add(name: "connection", value: "close") }
        let head = HTTPResponseHead(version: request.head.version, status: HTTPResponseStatus(statusCode: response.status), headers: responseHeaders)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }
}
