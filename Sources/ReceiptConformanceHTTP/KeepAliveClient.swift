import _ForgeSupport
import ForgeTLS
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import ReceiptConformance
import Synchronization

/// The runner's HTTP/1.1 client: one origin, at most `connections` keep-alive connections, one exchange at a
/// time on each, each exchange bounded by a deadline from its start to its body's last byte.
///
/// It replaces AsyncHTTPClient on the runner's path because the runner needs none of its generality (redirects,
/// many hosts, streaming) and paid for it: a general pool, and a task group racing a timer around every request,
/// cost more CPU than the validator under test (issue 24). Here the deadline is a timer on the connection's own
/// event loop, and an exchange is one write, one read and one resumption of the caller.
final class KeepAliveClient: Sendable {
    struct Response: Sendable {
        let status: Int
        let body: ByteBuffer
    }

    /// How an exchange failed. `answered` says whether any of the response had arrived: only an exchange
    /// that got no answer is retried, since validating is idempotent but an answer is the validator's.
    enum Failure: Error, CustomStringConvertible {
        case timedOut
        case overlong
        case transport(String, answered: Bool)

        var description: String {
            switch self {
            case .timedOut: "timed out"
            case .overlong: HarnessLimits.overlong("a response body")
            case .transport(let reason, _): reason
            }
        }
    }

    struct Origin: Sendable {
        let host: String
        let port: Int
        let tls: Bool
        /// The target's path, without a trailing slash; requests append theirs.
        let path: String

        /// `http://host[:port][/path]` or `https://…` (``HTTPURL``: a port from 1 to 65535); nil for anything else.
        init?(_ url: String) {
            guard let checked = try? HTTPURL(url), let components = URLComponents(string: checked.text) else { return nil }
            self.tls = checked.scheme == .https
            self.host = checked.host
            self.port = checked.port
            self.path = components.percentEncodedPath.hasSuffix("/") ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        }

        /// The Host header: the name as the URL wrote it, and the port unless it is the scheme's.
        var hostHeader: String {
            let name = host.contains(":") ? "[\(host)]" : host
            return port == (tls ? 443 : 80) ? name : "\(name):\(port)"
        }
    }

    let origin: Origin
    private let maximumConnections: Int
    private let tls: TLSContext?
    private let group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    private let pool = Mutex(Pool())

    /// What a caller is given: an idle connection, the right to open one, or nothing (shut down).
    private enum Grant {
        case channel(any Channel)
        case open
        case closed
    }

    private struct Pool {
        var idle: [any Channel] = []
        /// Connections open, opening or lent out.
        var count = 0
        var waiters: [EventLoopPromise<Grant>] = []
        var closed = false

        /// A grant if one can be given now; nil when every connection is lent out. An idle connection on `loop`
        /// (the caller's own, when it runs on an event loop) comes first: the exchange then needs no other thread.
        mutating func take(maximum: Int, preferring loop: any EventLoop) -> Grant? {
            if closed { return .closed }
            if let index = idle.lastIndex(where: { $0.eventLoop === loop && $0.isActive }) { return .channel(idle.remove(at: index)) }
            while let channel = idle.popLast() {
                if channel.isActive { return .channel(channel) }
                count -= 1
            }
            guard count < maximum else { return nil }
            count += 1
            return .open
        }
    }

    /// - Parameter trustRoots: for `https://`, the PEM file of the CAs the server must chain to; nil trusts the
    ///   system's roots.
    init(origin: Origin, connections: Int, trustRoots: String?) throws {
        self.origin = origin
        self.maximumConnections = max(1, connections)
        if origin.tls {
            let roots = try trustRoots.map { path in
                guard let bytes = FileBytes.read(path) else { throw TLSError(.configuration, "cannot read \(path)") }
                return String(decoding: bytes, as: UTF8.self)
            }
            tls = try TLSContext.client(trustedRootsPEM: roots, systemRoots: roots == nil)
        } else {
            tls = nil
        }
    }

    /// One exchange: `method` on the origin's path + `path`. A transport failure before any answer (a refused
    /// connection, a keep-alive connection the server had closed) is retried once within the same deadline.
    ///
    /// Everything up to the answer happens on the event loops, and the caller resumes once: a caller whose
    /// executor is busy (a test process full of blocking tests) then cannot make the exchange late.
    func exchange(_ method: HTTPMethod, _ path: String, headers: [(String, String)], body: ByteBuffer?, timeout: Duration, limit: Int) async throws(Failure)
        -> Response
    {
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: origin.path + path)
        head.headers.add(name: "host", value: origin.hostHeader)
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        if let body { head.headers.replaceOrAdd(name: "content-length", value: String(body.readableBytes)) }
        let request = (head: head, body: body, limit: limit)
        let exchanged = attempt(request, deadline: deadline).flatMapError { error in
            guard case Failure.transport(_, answered: false) = error, NIODeadline.now() < deadline else { return self.group.any().makeFailedFuture(error) }
            return self.attempt(request, deadline: deadline)
        }
        do { return try await exchanged.get() } catch { throw error as? Failure ?? .transport("\(error)", answered: false) }
    }

    private func attempt(_ request: (head: HTTPRequestHead, body: ByteBuffer?, limit: Int), deadline: NIODeadline) -> EventLoopFuture<Response> {
        acquire(deadline: deadline).flatMap { channel in
            let loop = channel.eventLoop
            let promise = loop.makePromise(of: (Response, Bool).self)
            // The deadline ends the exchange whatever state it is in; closing the connection means a late answer
            // can never be taken for the next exchange's. A promise completes once: what comes second is ignored.
            let timer = loop.scheduleTask(deadline: deadline) {
                promise.fail(Failure.timedOut)
                channel.close(promise: nil)
            }
            // A write that never reaches the handler (the connection closed meanwhile) fails the exchange at once.
            let written = loop.makePromise(of: Void.self)
            written.futureResult.whenFailure { error in promise.fail(Failure.transport("\(error)", answered: false)) }
            channel.writeAndFlush(ExchangeHandler.Request(head: request.head, body: request.body, limit: request.limit, promise: promise), promise: written)
            return promise.futureResult.always { result in
                timer.cancel()
                self.release(channel, reusable: (try? result.get())?.1 ?? false)
            }.map(\.0)
        }
    }

    /// An idle connection, a new one, or — when `maximumConnections` are lent out — the next one released.
    /// That wait is bounded by the deadlines of the exchanges holding them.
    private func acquire(deadline: NIODeadline) -> EventLoopFuture<any Channel> {
        let maximum = maximumConnections, loop = group.any()
        let (now, waiter): (Grant?, EventLoopPromise<Grant>?) = pool.withLock { pool in
            if let grant = pool.take(maximum: maximum, preferring: loop) { return (grant, nil) }
            let waiter = loop.makePromise(of: Grant.self)
            pool.waiters.append(waiter)
            return (nil, waiter)
        }
        let granted = now.map { loop.makeSucceededFuture($0) } ?? waiter?.futureResult ?? loop.makeSucceededFuture(.closed)
        return granted.flatMap { grant in
            switch grant {
            case .channel(let channel): return loop.makeSucceededFuture(channel)
            case .closed: return loop.makeFailedFuture(Failure.transport("the client is shut down", answered: false))
            case .open:
                return self.connect(deadline: deadline, on: loop).flatMapErrorThrowing { error in
                    self.release(nil, reusable: false)
                    throw error
                }
            }
        }
    }

    private func connect(deadline: NIODeadline, on loop: any EventLoop) -> EventLoopFuture<any Channel> {
        let remaining = deadline - NIODeadline.now()
        guard remaining > .zero else { return loop.makeFailedFuture(Failure.timedOut) }
        let tls = self.tls, host = origin.host, hostHeader = origin.hostHeader
        // An address is connected to as it is: NIO's resolver runs getaddrinfo on Dispatch's global queue,
        // which a busy process (a test run full of child processes) can keep waiting past the deadline.
        let address = try? SocketAddress(ipAddress: host, port: origin.port)
        let serverName = tls != nil && address == nil ? host : nil
        // ClientBootstrap sets TCP_NODELAY itself (`.tcpOption`); `.socketOption(.tcp_nodelay)` was SOL_SOCKET's
        // option 1, SO_DEBUG, which needs CAP_NET_ADMIN: every connection of a user who is not root failed (EACCES).
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(remaining)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handlers = channel.pipeline.syncOperations
                    if let tls { try handlers.addHandler(try TLSHandler(client: tls, serverHostname: serverName)) }
                    try handlers.addHTTPClientHandlers()
                    try handlers.addHandler(ExchangeHandler())
                }
            }
        let connected = address.map { bootstrap.connect(to: $0) } ?? bootstrap.connect(host: host, port: origin.port)
        return connected.flatMapErrorThrowing { error in throw Failure.transport("cannot connect to \(hostHeader): \(error)", answered: false) }
    }

    /// Returns a connection (nil: a slot whose connection never opened) to the next waiter or the idle list;
    /// a connection that cannot be reused is closed and its slot passed on.
    private func release(_ channel: (any Channel)?, reusable: Bool) {
        let keep = reusable && channel?.isActive == true
        let (waiter, grant, closeIt): (EventLoopPromise<Grant>?, Grant?, Bool) = pool.withLock { pool in
            if keep, let channel {
                if pool.closed { return (nil, nil, true) }
                if !pool.waiters.isEmpty { return (pool.waiters.removeFirst(), .channel(channel), false) }
                pool.idle.append(channel)
                return (nil, nil, false)
            }
            if !pool.waiters.isEmpty && !pool.closed { return (pool.waiters.removeFirst(), .open, true) }
            pool.count -= 1
            return (nil, nil, true)
        }
        if closeIt, let channel { channel.close(promise: nil) }
        if let waiter, let grant { waiter.succeed(grant) }
    }

    /// Closes every idle connection (lent ones close as their exchanges end) and turns waiters away.
    func shutdown() async {
        let (idle, waiters) = pool.withLock { pool in
            pool.closed = true
            defer {
                pool.idle.removeAll()
                pool.waiters.removeAll()
            }
            return (pool.idle, pool.waiters)
        }
        for waiter in waiters { waiter.succeed(.closed) }
        for channel in idle { try? await channel.close() }
    }
}

/// One exchange at a time on its connection: writes the request and collects the answer up to its limit.
private final class ExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Request
    typealias OutboundOut = HTTPClientRequestPart

    struct Request: Sendable {
        let head: HTTPRequestHead
        let body: ByteBuffer?
        let limit: Int
        /// The response, and whether the connection may carry another exchange.
        let promise: EventLoopPromise<(KeepAliveClient.Response, Bool)>
    }

    private struct Exchange {
        let promise: EventLoopPromise<(KeepAliveClient.Response, Bool)>
        let limit: Int
        var status: Int?
        var keepAlive = true
        var body: ByteBuffer?
    }

    private var current: Exchange?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        guard current == nil, context.channel.isActive else {
            promise?.fail(KeepAliveClient.Failure.transport(current == nil ? "the connection is closed" : "the connection is busy", answered: false))
            return
        }
        current = Exchange(promise: request.promise, limit: request.limit)
        context.write(wrapOutboundOut(.head(request.head)), promise: nil)
        if let body = request.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard var exchange = current else { return }  // nothing was asked: an unsolicited answer is dropped
        switch unwrapInboundIn(data) {
        case .head(let head):
            exchange.status = Int(head.status.code)
            exchange.keepAlive = head.isKeepAlive
            current = exchange
        case .body(var part):
            let received = exchange.body?.readableBytes ?? 0
            guard part.readableBytes <= exchange.limit - received else {
                finish(.failure(KeepAliveClient.Failure.overlong))
                context.close(promise: nil)
                return
            }
            current = nil  // so the append does not copy the buffer
            if exchange.body == nil { exchange.body = part } else { exchange.body?.writeBuffer(&part) }
            current = exchange
        case .end:
            finish(.success((KeepAliveClient.Response(status: exchange.status ?? 0, body: exchange.body ?? ByteBuffer()), exchange.keepAlive)))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let exchange = current {
            let answered = exchange.status != nil
            finish(.failure(KeepAliveClient.Failure.transport(answered ? "the connection closed mid-answer" : "the connection closed before an answer", answered: answered)))
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let exchange = current {
            finish(.failure(KeepAliveClient.Failure.transport("\(error)", answered: exchange.status != nil)))
        }
        context.close(promise: nil)
    }

    private func finish(_ result: Result<(KeepAliveClient.Response, Bool), any Error>) {
        guard let exchange = current else { return }
        current = nil
        exchange.promise.completeWith(result)
    }
}
