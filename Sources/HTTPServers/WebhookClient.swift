import _ForgeSupport
import ForgeTLS
#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
package import StoreServer
import Synchronization

/// Delivers notifications to webhooks as Apple does: a POST of `{"signedPayload":"…"}` with
/// `Content-Type: application/json`, redirects followed (each `Location` checked) but not in a circle, one time
/// limit over the whole attempt (connect, TLS, request, head, body and redirects), and every way it can end named by
/// Apple's `sendAttemptResult`.
///
/// On SwiftNIO itself: one connection per exchange (`Connection: close`; attempts are rare), NIO's HTTP/1.1 encoder
/// and decoder, ``TLSHandler`` (the system's OpenSSL) for `https://`. An attempt runs on one event loop from its first connection to its last byte,
/// under one timer that ends whatever it is doing and closes its connection; the caller only awaits the end. What
/// the webhook answers is judged here, status by status, so no answer can trap a general client's state machine
/// (AsyncHTTPClient 1.37 did, on a status below 100 with a body).
package final class WebhookClient: Sendable {
    private let timeoutSeconds: Int
    /// The `--notify-ca` certificates, trusted besides the system's.
    private let extraRoots: String?
    /// Made when an attempt first reaches an `https://` URL (reading the system's roots is file I/O, done on NIO's
    /// thread pool), then shared: a webhook that is never https costs no TLS set-up, nor fails on a system without roots.
    private let tls = Mutex<TLSContext?>(nil)
    private let group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton

    /// The statuses whose `Location` is followed (those of RFC 9110 that move a resource; not 304 or 305).
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
    /// Interim (1xx) answers skipped before the answer; more is INVALID_RESPONSE rather than a loop fed until the deadline.
    static let maximumInterimAnswers = 8
    static let userAgent = "receipt-forge (App Store Server Notifications V2 stand-in)"

    /// A client for attempts of at most `timeoutSeconds` each, trusting `trustedRootsPEM` besides the system's.
    package init(timeoutSeconds: Int, trustedRootsPEM: String?) throws {
        self.timeoutSeconds = timeoutSeconds
        // Parsed now, so a file that holds no certificate fails every attempt at once rather than at the first https.
        if let trustedRootsPEM { _ = try TLSContext.client(trustedRootsPEM: trustedRootsPEM, systemRoots: false) }
        extraRoots = trustedRootsPEM
    }

    /// `requests`, at most `concurrency` at a time, each answered (in order) by its attempt and the start of the
    /// webhook's answer. Never throws: every failure is an attempt with its result.
    package static func deliver(_ requests: [WebhookRequest], concurrency: Int) async -> [WebhookAnswer] {
        guard let first = requests.first else { return [] }
        let client: WebhookClient
        do { client = try WebhookClient(timeoutSeconds: first.timeoutSeconds, trustedRootsPEM: first.trustedRootsPEM) } catch {
            let attempt = SendAttempt(date: Date(), result: .tlsIssue, milliseconds: 0, detail: "the trusted certificates are not PEM: \(error)")
            return requests.map { _ in WebhookAnswer(attempt: attempt, body: []) }
        }
        var answers = [WebhookAnswer?](repeating: nil, count: requests.count)
        await withTaskGroup(of: (Int, WebhookAnswer).self) { group in
            var next = 0
            func start() {
                guard next < requests.count else { return }
                let index = next, request = requests[index]
                next += 1
                group.addTask { (index, await client.deliver(request)) }
            }
            for _ in 0..<max(1, concurrency) { start() }
            for await (index, answer) in group {
                answers[index] = answer
                start()
            }
        }
        return answers.map { $0 ?? WebhookAnswer(attempt: SendAttempt(date: Date(), result: .other, milliseconds: 0), body: []) }
    }

    /// One attempt: POST `request.body` to `request.url`, and follow what it redirects to. Cancelling the caller
    /// ends it at once (OTHER).
    package func deliver(_ request: WebhookRequest, at date: Date = Date()) async -> WebhookAnswer {
        let loop = group.any(), timeoutSeconds = timeoutSeconds
        let started = NIODeadline.now()
        let deadline = started + .seconds(Int64(timeoutSeconds))
        // Fails every exchange of the attempt still under way: at the deadline, or when the caller is cancelled.
        let abort = loop.makePromise(of: Void.self)
        let timer = loop.scheduleTask(deadline: deadline) { abort.fail(Failure(.timedOut, "no complete answer within \(timeoutSeconds) s")) }
        let attempt = Attempt(loop: loop, deadline: deadline, abort: abort.futureResult)
        let ended = follow(request.url, method: .POST, body: request.body, visited: [request.url.text], in: attempt)
            .map { Result<Answer, Failure>.success($0) }
            .recover { .failure($0 as? Failure ?? Failure(.other, "\($0)")) }
            .always { _ in
                timer.cancel()
                abort.succeed(())
            }
            .map { ($0, NIODeadline.now() - started) }
        let outcome = await withTaskCancellationHandler {
            try? await ended.get()
        } onCancel: {
            abort.fail(Failure(.other, "the attempt was cancelled"))
        }
        let (result, elapsed) = outcome ?? (.failure(Failure(.other, "the attempt was cancelled")), NIODeadline.now() - started)
        let milliseconds = elapsed.nanoseconds / 1_000_000
        switch result {
        case .success(let answer):
            let detail = answer.complete ? nil : "an answer longer than \(WebhookRequest.maximumAnswerBytes) bytes, not read to its end"
            return WebhookAnswer(
                attempt: SendAttempt(
                    date: date, result: SendAttemptResult(httpStatus: answer.status), httpStatus: answer.status, milliseconds: milliseconds, detail: detail),
                body: answer.body)
        case .failure(let failure):
            return WebhookAnswer(
                attempt: SendAttempt(date: date, result: failure.result, httpStatus: failure.status, milliseconds: milliseconds, detail: failure.detail), body: [])
        }
    }

    /// The exchange at `url` and the redirects it leads to, followed here rather than by a library so that every
    /// `Location` is checked as a user's URL is (``HTTPURL``: http or https, a host, a port from 1 to 65535)
    /// before anything connects: a webhook that redirects to port 70000 is a failed attempt (OTHER), never a trap
    /// in the socket library. At most ``WebhookRequest/maximumRedirects``, none to a URL already visited
    /// (CIRCULAR_REDIRECT); 303, and 301 or 302 after a POST, continue as a GET without the body, as browsers do.
    private func follow(_ url: HTTPURL, method: HTTPMethod, body: [UInt8]?, visited: Set<String>, in attempt: Attempt) -> EventLoopFuture<Answer> {
        exchange(url, method: method, body: body, in: attempt).flatMapThrowing { answer -> (Answer, HTTPURL?) in
            let status = answer.status
            guard Self.redirectStatuses.contains(status), let location = answer.location else { return (answer, nil) }
            let next: HTTPURL
            do { next = try url.resolving(location) } catch {
                throw Failure(.other, "HTTP \(status) redirected to a URL that is not followed: \(error)", status: status)
            }
            guard !visited.contains(next.text) else { throw Failure(.circularRedirect, "HTTP \(status) redirected back to \(next)", status: status) }
            guard visited.count <= WebhookRequest.maximumRedirects else {
                throw Failure(.other, "more than \(WebhookRequest.maximumRedirects) redirects (the last to \(next))", status: status)
            }
            return (answer, next)
        }.flatMap { answer, next in
            guard let next else { return attempt.loop.makeSucceededFuture(answer) }
            let get = answer.status == 303 || (answer.status == 301 || answer.status == 302) && method == .POST
            return self.follow(next, method: get ? .GET : method, body: get ? nil : body, visited: visited.union([next.text]), in: attempt)
        }
    }

    /// One request on a connection of its own, answered at the answer's end, or at its head when it redirects.
    private func exchange(_ url: HTTPURL, method: HTTPMethod, body: [UInt8]?, in attempt: Attempt) -> EventLoopFuture<Answer> {
        let loop = attempt.loop
        let answered = loop.makePromise(of: Answer.self)
        attempt.abort.whenFailure { answered.fail($0) }
        let request = AnswerReader.Request(head: Self.head(url, method: method, body: body), body: body.map { ByteBuffer(bytes: $0) }, answered: answered)
        tlsContext(for: url, on: loop).flatMap { tls in self.connect(url, tls: tls, deadline: attempt.deadline, on: loop) }.whenComplete { connected in
            switch connected {
            case .success(let channel):
                // Whatever ends the exchange closes its connection; one that opens after the end is closed at once.
                answered.futureResult.whenComplete { _ in channel.close(promise: nil) }
                let written = loop.makePromise(of: Void.self)
                written.futureResult.whenFailure { answered.fail(Failure(.noResponse, "the connection closed before the request was sent: \($0)")) }
                channel.writeAndFlush(request, promise: written)
            case .failure(let error):
                answered.fail(error as? Failure ?? Self.failure(error, answered: false))
            }
        }
        return answered.futureResult
    }

    private func connect(_ url: HTTPURL, tls: TLSContext?, deadline: NIODeadline, on loop: any EventLoop) -> EventLoopFuture<any Channel> {
        // An address is connected to as it is (no resolver), and named to TLS only as the peer address TLS checks
        // the certificate against; a host name is resolved, sent as SNI and checked against the certificate.
        let address = try? SocketAddress(ipAddress: url.host, port: url.port)
        let serverName = address == nil ? url.host : nil
        // ClientBootstrap sets TCP_NODELAY itself (`.tcpOption`); `.socketOption(.tcp_nodelay)` would be SOL_SOCKET's
        // option 1, SO_DEBUG, which needs CAP_NET_ADMIN: every attempt of a user who is not root would fail.
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(max(deadline - .now(), .milliseconds(1)))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handlers = channel.pipeline.syncOperations
                    if let tls { try handlers.addHandler(try TLSHandler(client: tls, serverHostname: serverName)) }
                    // NIO's decoder bounds the head (80 KiB); interim 1xx heads are passed on, to be counted.
                    try handlers.addHandler(HTTPRequestEncoder())
                    try handlers.addHandler(ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)))
                    try handlers.addHandler(AnswerReader())
                }
            }
        return address.map { bootstrap.connect(to: $0) } ?? bootstrap.connect(host: url.host, port: url.port)
    }

    /// nil for `http://`; for `https://` the client's TLS context, made on NIO's thread pool the first time.
    private func tlsContext(for url: HTTPURL, on loop: any EventLoop) -> EventLoopFuture<TLSContext?> {
        guard url.scheme == .https else { return loop.makeSucceededFuture(nil) }
        if let made = tls.withLock({ $0 }) { return loop.makeSucceededFuture(made) }
        let roots = extraRoots
        return NIOThreadPool.singleton.runIfActive(eventLoop: loop) {
            try TLSContext.client(trustedRootsPEM: roots, systemRoots: true)
        }.map { made in
            self.tls.withLock { kept in
                if kept == nil { kept = made }
                return kept
            }
        }.flatMapErrorThrowing { error in
            throw Failure(.tlsIssue, "no TLS client could be made (the system's trusted certificates, \(ServeOption.notifyCA)): \(error)")
        }
    }

    /// The request's head: the URL's path and query, its host, and the body's type and length.
    private static func head(_ url: HTTPURL, method: HTTPMethod, body: [UInt8]?) -> HTTPRequestHead {
        let components = URLComponents(url: url.url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? ""
        if !target.hasPrefix("/") { target = "/" + target }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: target)
        let host = url.host.contains(":") ? "[\(url.host)]" : url.host
        head.headers.add(name: "Host", value: url.port == url.scheme.defaultPort ? host : "\(host):\(url.port)")
        head.headers.add(name: "User-Agent", value: userAgent)
        if let body {
            head.headers.add(name: "Content-Type", value: "application/json")
            head.headers.add(name: "Content-Length", value: String(body.count))
        }
        head.headers.add(name: "Connection", value: "close")
        return head
    }

    /// Apple's name for a transport failure; `answered` when the head of the answer had arrived (then a closed or
    /// reset connection cut the answer short: PREMATURE_CLOSE).
    static func failure(_ error: any Error, answered: Bool) -> Failure {
        switch error {
        case let error as TLSError: return Failure(.tlsIssue, "\(error)")
        case is HTTPParserError, is NIOHTTPDecoderError: return Failure(.invalidResponse, "the answer is not HTTP/1.1: \(error)")
        case ChannelError.connectTimeout: return Failure(.timedOut, "no connection within the time limit")
        case let error as IOError where [ECONNRESET, EPIPE].contains(error.errnoCode):
            return answered ? Failure(.prematureClose, "the connection was reset in the middle of the answer") : Failure(.noResponse, "the connection was reset before any answer")
        case is NIOConnectionError, is IOError, is ChannelError, is SocketAddressError: return Failure(.socketIssue, "cannot connect: \(error)")
        default: return Failure(.other, "\(error)")
        }
    }

    /// Where an attempt runs and what ends it: every exchange and redirect of it on `loop`, and `abort` failed at
    /// `deadline` (or when the caller is cancelled).
    private struct Attempt: Sendable {
        let loop: any EventLoop
        let deadline: NIODeadline
        let abort: EventLoopFuture<Void>
    }

    /// An answer the webhook gave in full (or its first ``WebhookRequest/maximumAnswerBytes``), or the head of a redirect.
    struct Answer: Sendable {
        var status: Int
        var location: String?
        var body: [UInt8] = []
        /// False when the body ran past ``WebhookRequest/maximumAnswerBytes``: it was not read to its end, and is not kept.
        var complete = true
    }

    /// How an attempt failed, in Apple's words and forge's.
    struct Failure: Error {
        var result: SendAttemptResult
        var detail: String
        var status: Int?

        init(_ result: SendAttemptResult, _ detail: String, status: Int? = nil) {
            self.result = result
            self.detail = detail
            self.status = status
        }
    }
}

/// Sends the one request of its connection and reads the answer: interim 1xx heads skipped (a few), any other status
/// outside 200–599 INVALID_RESPONSE, a redirect at its head, the body up to ``WebhookRequest/maximumAnswerBytes``.
/// How the connection ended names the rest: closed before a head NO_RESPONSE, after it PREMATURE_CLOSE.
private final class AnswerReader: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Request
    typealias OutboundOut = HTTPClientRequestPart

    struct Request: Sendable {
        let head: HTTPRequestHead
        let body: ByteBuffer?
        let answered: EventLoopPromise<WebhookClient.Answer>
    }

    private var answered: EventLoopPromise<WebhookClient.Answer>?
    private var status: Int?
    private var interim = 0
    private var body: [UInt8] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        guard answered == nil, context.channel.isActive else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        answered = request.answered
        context.write(wrapOutboundOut(.head(request.head)), promise: nil)
        if let body = request.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        // A write that fails closes the connection: channelInactive names the result.
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        promise?.succeed(())
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard answered != nil else { return }  // nothing was asked
        switch unwrapInboundIn(data) {
        case .head(let head):
            let code = Int(head.status.code)
            if (100...199).contains(code), code != 101 {
                interim += 1
                if interim > WebhookClient.maximumInterimAnswers {
                    finish(.failure(.init(.invalidResponse, "more than \(WebhookClient.maximumInterimAnswers) interim (1xx) answers")), context)
                }
                return
            }
            guard (200...599).contains(code) else {
                let why = code == 101 ? "HTTP 101 switches protocols, which nothing asked for" : "status \(Self.threeDigits(code)) is not an HTTP status (100-599)"
                finish(.failure(.init(.invalidResponse, why)), context)
                return
            }
            status = code
            if WebhookClient.redirectStatuses.contains(code), let location = head.headers.first(name: "Location") {
                finish(.success(.init(status: code, location: location)), context)
            }
        case .body(let part):
            guard let status else { return }
            guard part.readableBytes <= WebhookRequest.maximumAnswerBytes - body.count else {
                finish(.success(.init(status: status, complete: false)), context)
                return
            }
            body += part.readableBytesView
        case .end:
            guard let status else { return }
            finish(.success(.init(status: status, body: body)), context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case let error as TLSError where error.code == .uncleanShutdown:
            break  // closed without TLS's close_notify: channelInactive says whether the answer was whole
        case HTTPParserError.invalidEOFState:
            finish(.failure(status.map(cutShort) ?? .init(.prematureClose, "the connection closed in the middle of the answer's head")), context)
        default:
            finish(.failure(WebhookClient.failure(error, answered: status != nil)), context)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let status {
            finish(.failure(cutShort(status)), context)
        } else if interim > 0 {
            finish(.failure(.init(.prematureClose, "the connection closed after an interim (1xx) answer, before the answer")), context)
        } else {
            finish(.failure(.init(.noResponse, "the connection closed before any answer")), context)
        }
        context.fireChannelInactive()
    }

    private func cutShort(_ status: Int) -> WebhookClient.Failure {
        .init(.prematureClose, "the connection closed in the middle of the answer (HTTP \(status), \(body.count) bytes of its body)", status: status)
    }

    private func finish(_ result: Result<WebhookClient.Answer, WebhookClient.Failure>, _ context: ChannelHandlerContext) {
        guard let answered else { return }
        self.answered = nil
        answered.completeWith(result.mapError { $0 })
        context.close(promise: nil)
    }

    /// A status code as its line wrote it (`002`, not `2`).
    private static func threeDigits(_ code: Int) -> String {
        let digits = String(code)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }
}
