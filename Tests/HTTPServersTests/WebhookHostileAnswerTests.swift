import _ForgeSupport
import ForgeTLS
import Foundation
import NIOCore
import NIOTLS
import NIOPosix
import StoreServer
import HTTPServers
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 36: nothing a webhook sends may crash the server. A webhook answering `HTTP/1.1 002 OK` with a chunked body
/// trapped AsyncHTTPClient 1.37's state machine (a status below 200 read as informational, then a body it could not
/// place) and with it `forge serve --notify`, `forge notify` and `forge bench realtime`. The client now reads answers
/// itself on SwiftNIO: every answer below, sent over loopback by a listener in the test, is an attempt with Apple's
/// result, never a trap.
@Suite("A webhook's hostile answers are failed attempts with Apple's results, never a trap", .timeLimit(.minutes(2)))
struct WebhookHostileAnswerTests {
    /// An answer a webhook sends, and the attempt it must make.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let answer: [UInt8]
        var then: CannedWebhook.Then = .close
        let result: SendAttemptResult
        var status: Int? = nil
        /// Words the attempt's detail holds.
        var detail: String? = nil
        var body: [UInt8] = []
        var testDescription: String { name }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static let cases: [Case] = [
        Case(
            name: "status 002 with a chunked body (the fuzz finding)", answer: bytes("HTTP/1.1 002 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
            result: .invalidResponse, detail: "002"),
        Case(name: "status 099 with a Content-Length body", answer: bytes("HTTP/1.1 099 X\r\nContent-Length: 5\r\n\r\nhello"), result: .invalidResponse, detail: "099"),
        Case(name: "status 000", answer: bytes("HTTP/1.1 000 X\r\nContent-Length: 0\r\n\r\n"), result: .invalidResponse, detail: "000"),
        Case(name: "status 600", answer: bytes("HTTP/1.1 600 X\r\nContent-Length: 2\r\n\r\nok"), result: .invalidResponse, detail: "600"),
        Case(name: "status 999, kept open", answer: bytes("HTTP/1.1 999 X\r\n\r\n"), then: .stayOpen, result: .invalidResponse, detail: "999"),
        Case(
            name: "101 though no upgrade was asked for", answer: bytes("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\nxyz"),
            result: .invalidResponse, detail: "101"),
        Case(name: "100 Continue, then the connection closed", answer: bytes("HTTP/1.1 100 Continue\r\n\r\n"), result: .prematureClose, detail: "interim"),
        Case(
            name: "103 Early Hints, then the answer", answer: bytes("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
            result: .success, status: 200, body: bytes("ok")),
        Case(
            name: "nine interim answers", answer: bytes(String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 9) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
            then: .stayOpen, result: .invalidResponse, detail: "interim"),
        Case(name: "a status line whose code is not digits", answer: bytes("HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n"), result: .invalidResponse),
        Case(name: "bytes that are not HTTP", answer: bytes("this is not HTTP at all\r\n\r\n"), result: .invalidResponse),
        Case(name: "HTTP/2.0 on an HTTP/1.1 connection", answer: bytes("HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n"), result: .invalidResponse),
        Case(
            name: "headers past NIO's bound (100 KiB of one header)",
            answer: bytes("HTTP/1.1 200 OK\r\nX-Big: \(String(repeating: "a", count: 100 << 10))\r\nContent-Length: 0\r\n\r\n"), then: .stayOpen,
            result: .invalidResponse),
        Case(
            name: "a body past maximumAnswerBytes, kept open",
            answer: bytes("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n") + [UInt8](repeating: 0x78, count: 1 << 20), then: .stayOpen, result: .success,
            status: 200, detail: "not read to its end"),
        Case(
            name: "a chunked body past maximumAnswerBytes",
            answer: bytes("HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n")
                + Array(repeating: bytes("4000\r\n") + [UInt8](repeating: 0x79, count: 0x4000) + bytes("\r\n"), count: 8).joined(),
            then: .stayOpen, result: .unsuccessfulHTTPResponseCode, status: 500, detail: "not read to its end"),
        Case(
            name: "a peer that closes mid-body", answer: bytes("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"), result: .prematureClose, status: 200,
            detail: "middle"),
        Case(
            name: "a peer that closes mid-chunk", answer: bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"), result: .prematureClose,
            status: 200),
        Case(name: "a peer that closes mid-head", answer: bytes("HTTP/1.1 200 OK\r\nContent-Le"), result: .prematureClose, detail: "head"),
        Case(name: "a peer that closes without a byte", answer: [], result: .noResponse),
        Case(name: "a peer that resets without a byte", answer: [], then: .reset, result: .noResponse),
        Case(name: "a body to the connection's end", answer: bytes("HTTP/1.1 201 Created\r\n\r\n{\"ok\":true}"), result: .success, status: 201, body: bytes("{\"ok\":true}")),
        Case(name: "302 without a Location is the answer", answer: bytes("HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n"), result: .unsuccessfulHTTPResponseCode, status: 302),
        Case(
            name: "a redirect to port 0", answer: bytes("HTTP/1.1 308 Permanent Redirect\r\nLocation: http://127.0.0.1:0/x\r\nContent-Length: 0\r\n\r\n"), result: .other,
            status: 308, detail: "not 0"),
    ]

    static func notification(_ port: Int, path: String = "/hook", timeout: Int = 10) throws -> WebhookRequest {
        WebhookRequest(url: try HTTPURL("http://127.0.0.1:\(port)\(path)"), body: bytes(#"{"signedPayload":"x"}"#), timeoutSeconds: timeout)
    }

    @Test("Each answer is an attempt with its result", arguments: cases)
    func answer(_ answer: Case) async throws {
        let webhook = try await CannedWebhook.start(answer.answer, then: answer.then)
        let client = try WebhookClient(timeoutSeconds: 10, trustedRootsPEM: nil)
        let delivered = await client.deliver(try Self.notification(webhook.port))
        await webhook.stop()
        let attempt = delivered.attempt
        #expect(attempt.result == answer.result, "\(attempt)")
        #expect(attempt.httpStatus == answer.status, "\(attempt)")
        if let words = answer.detail { #expect(attempt.detail?.contains(words) == true, "\(attempt)") }
        #expect(delivered.body == answer.body, "\(String(decoding: delivered.body.prefix(100), as: UTF8.self))")
        #expect(attempt.milliseconds < 10_000, "ended by the answer, not by the deadline: \(attempt)")
    }

    @Test("The request is one POST of the body: path and query, Host, Content-Type, Content-Length, User-Agent, Connection: close")
    func request() async throws {
        let webhook = try await CannedWebhook.start(Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let client = try WebhookClient(timeoutSeconds: 10, trustedRootsPEM: nil)
        let delivered = await client.deliver(try Self.notification(webhook.port, path: "/apple/hook?environment=Sandbox"))
        await webhook.stop()
        #expect(delivered.attempt.result == .success && delivered.attempt.httpStatus == 200 && delivered.body == Self.bytes("ok"), "\(delivered.attempt)")
        let request = String(decoding: try #require(webhook.requests.first), as: UTF8.self)
        let lines = request.split(separator: "\r\n", omittingEmptySubsequences: false)
        #expect(lines.first == "POST /apple/hook?environment=Sandbox HTTP/1.1", "\(request)")
        let headers = Set(lines.dropFirst().prefix { !$0.isEmpty }.map { $0.lowercased() })
        for expected in ["host: 127.0.0.1:\(webhook.port)", "content-type: application/json", "content-length: 21", "connection: close"] {
            #expect(headers.contains(expected), "\(request)")
        }
        #expect(headers.contains { $0.hasPrefix("user-agent: receipt-forge") }, "\(request)")
        #expect(request.hasSuffix("\r\n\r\n" + #"{"signedPayload":"x"}"#), "\(request)")
    }

    @Test("A peer that never answers is TIMED_OUT at the attempt's deadline (1 s), closed by the client")
    func neverAnswers() async throws {
        let webhook = try await CannedWebhook.start(nil)
        let client = try WebhookClient(timeoutSeconds: 1, trustedRootsPEM: nil)
        let delivered = await client.deliver(try Self.notification(webhook.port, timeout: 1))
        #expect(delivered.attempt.result == .timedOut, "\(delivered.attempt)")
        #expect(delivered.attempt.milliseconds >= 1000, "not before the deadline: \(delivered.attempt)")
        await webhook.waitForClose()
        await webhook.stop()
    }

    @Test("One deadline covers the whole attempt: four redirects answered 0.6 s after each request time out at 1 s, though each hop takes less")
    func deadlineOverRedirects() async throws {
        let webhook = try await CannedWebhook.start(delay: .milliseconds(600)) { port, count in
            Self.bytes(
                count < 4
                    ? "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:\(port)/hop\(count)\r\nContent-Length: 0\r\n\r\n"
                    : "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        }
        let client = try WebhookClient(timeoutSeconds: 1, trustedRootsPEM: nil)
        let delivered = await client.deliver(try Self.notification(webhook.port, timeout: 1))
        await webhook.stop()
        #expect(delivered.attempt.result == .timedOut, "\(delivered.attempt)")
        #expect(delivered.attempt.milliseconds >= 1000, "\(delivered.attempt)")
    }

    @Test("Cancelling the caller ends an attempt at once (a server shutting down does not wait out a hanging webhook)")
    func cancelled() async throws {
        let webhook = try await CannedWebhook.start(nil)
        let client = try WebhookClient(timeoutSeconds: 600, trustedRootsPEM: nil)
        let request = try Self.notification(webhook.port, timeout: 600)
        let attempt = Task { await client.deliver(request) }
        await webhook.waitForRequest()
        attempt.cancel()
        let delivered = await attempt.value
        #expect(delivered.attempt.result == .other && delivered.attempt.detail?.contains("cancelled") == true, "\(delivered.attempt)")
        await webhook.waitForClose()
        await webhook.stop()
    }

    @Test("Nothing listening is SOCKET_ISSUE")
    func refused() async throws {
        let webhook = try await CannedWebhook.start(nil)
        let port = webhook.port
        await webhook.stop()
        let client = try WebhookClient(timeoutSeconds: 10, trustedRootsPEM: nil)
        let delivered = await client.deliver(try Self.notification(port))
        #expect(delivered.attempt.result == .socketIssue, "\(delivered.attempt)")
    }
}

/// A loopback listener on a port of its own that reads each request in full (its head, then Content-Length bytes)
/// and answers it with canned bytes, then closes, stays open or resets as asked; nil bytes: it never answers.
final class CannedWebhook: Sendable {
    enum Then: Sendable {
        case close, stayOpen, reset
    }

    private let channel: any Channel
    private let events: Events
    let port: Int

    /// What the listener saw: the requests, in order, and each connection's close.
    final class Events: Sendable {
        let requests = Mutex<[[UInt8]]>([])
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        let (closes, closed) = AsyncStream.makeStream(of: Void.self)
    }

    var requests: [[UInt8]] { events.requests.withLock { $0 } }

    private init(channel: any Channel, events: Events) {
        self.channel = channel
        self.events = events
        port = channel.localAddress?.port ?? 0
    }

    /// Answers every request with `answer`.
    static func start(
        _ answer: [UInt8]?, then: Then = .close, host: String = "127.0.0.1", tls: TLSContext? = nil, serverNames: WebhookTLSTests.ServerNames? = nil
    ) async throws -> CannedWebhook {
        try await start(then: then, host: host, tls: tls, serverNames: serverNames) { _, _ in answer }
    }

    /// Answers the `count`th request (from 0) with `answer(port, count)`, `delay` after it arrived; over TLS with
    /// `tls`, recording each handshake's SNI in `serverNames`.
    static func start(
        then: Then = .close, delay: TimeAmount = .zero, host: String = "127.0.0.1", tls: TLSContext? = nil, serverNames: WebhookTLSTests.ServerNames? = nil,
        _ answer: @escaping @Sendable (Int, Int) -> [UInt8]?
    ) async throws -> CannedWebhook {
        let events = Events()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    let handlers = child.pipeline.syncOperations
                    if let tls {
                        let handler = try TLSHandler(server: tls)
                        try handlers.addHandler(handler)
                        if let serverNames { try handlers.addHandler(ServerNameRecorder(tls: handler, names: serverNames)) }
                    }
                    try handlers.addHandler(CannedAnswerHandler(then: then, delay: delay, events: events, answer: answer))
                }
            }
            .bind(host: host, port: 0).get()
        return CannedWebhook(channel: channel, events: events)
    }

    func waitForRequest() async {
        for await _ in events.arrivals { return }
    }

    func waitForClose() async {
        for await _ in events.closes { return }
    }

    func stop() async {
        try? await channel.close()
    }
}

/// Records the SNI of each handshake the webhook completes.
private final class ServerNameRecorder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let tls: TLSHandler
    let names: WebhookTLSTests.ServerNames

    init(tls: TLSHandler, names: WebhookTLSTests.ServerNames) {
        self.tls = tls
        self.names = names
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event as? TLSUserEvent ?? .shutdownCompleted {
            let name = tls.requestedServerName
            names.names.withLock { $0.append(name) }
        }
        context.fireUserInboundEventTriggered(event)
    }
}

private final class CannedAnswerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let then: CannedWebhook.Then
    let delay: TimeAmount
    let events: CannedWebhook.Events
    let answer: @Sendable (Int, Int) -> [UInt8]?
    private var received: [UInt8] = []
    private var answered = false

    init(then: CannedWebhook.Then, delay: TimeAmount, events: CannedWebhook.Events, answer: @escaping @Sendable (Int, Int) -> [UInt8]?) {
        self.then = then
        self.delay = delay
        self.events = events
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received += unwrapInboundIn(data).readableBytesView
        guard !answered, let length = Self.requestLength(received) else { return }
        answered = true
        let count = events.requests.withLock {
            $0.append(Array(received.prefix(length)))
            return $0.count - 1
        }
        events.arrived.yield()
        guard let bytes = answer(context.channel.localAddress?.port ?? 0, count) else { return }
        let channel = context.channel, then = then
        if delay > .zero {
            context.eventLoop.scheduleTask(in: delay) { Self.send(bytes, on: channel, then: then) }
        } else {
            Self.send(bytes, on: channel, then: then)
        }
    }

    static func send(_ bytes: [UInt8], on channel: any Channel, then: CannedWebhook.Then) {
        switch then {
        case .stayOpen: channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
        case .close: channel.writeAndFlush(ByteBuffer(bytes: bytes)).whenComplete { _ in channel.close(promise: nil) }
        case .reset:
            // SO_LINGER 0: the close is a TCP reset.
            guard let socket = channel as? any SocketOptionProvider else { return channel.close(promise: nil) }
            socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        events.closed.yield()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// The length of the request in `bytes` once it is all there: its head, then Content-Length bytes.
    static func requestLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4, let end = (0...(bytes.count - 4)).first(where: { bytes[$0..<($0 + 4)].elementsEqual([13, 10, 13, 10]) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
        let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }.flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
        return bytes.count >= end + 4 + length ? end + 4 + length : nil
    }
}
