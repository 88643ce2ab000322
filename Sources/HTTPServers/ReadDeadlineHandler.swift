import Hummingbird
import NIOCore
import NIOHTTPTypes
import ReceiptModel
import StoreServer
import _ForgeSupport
import StoreModel

/// Every wait for a client has a deadline: a request's headers must arrive within the read timeout of the
/// connection's opening (or of the previous answer), its body within the read timeout of its headers;
/// otherwise the connection is closed — after a 408 with a JSON reason when a body was cut off and no
/// answer has begun. Also closes the connection once an answer that says `Connection: close` is sent, so
/// a refused body is not read to its end: first its output (the client reads the answer, not a reset), then
/// all of it ``ServerLimits/lingerSeconds`` later.
///
/// It sees the parts as they come off the socket (before the application reads them), so pipelined
/// requests are counted, not assumed one at a time.
final class ReadDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    private let seconds: Int
    /// Heads and ends read; heads and ends of answers written.
    private var headsRead = 0
    private var endsRead = 0
    private var answersBegun = 0
    private var answersEnded = 0
    /// When the current wait began: the head of the body being read, or the last answer (or the opening).
    private var waitingSince = NIODeadline.now()
    private var closeAfterAnswer = false
    /// The output is closed; the connection ends soon.
    private var closing = false
    private var scheduled: Scheduled<Void>?

    init(seconds: Int) {
        self.seconds = seconds
        timeout = .seconds(Int64(seconds))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { rearm(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { cancel() }

    func channelActive(context: ChannelHandlerContext) {
        waitingSince = .now()
        rearm(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            headsRead += 1
            waitingSince = .now()
            rearm(context)
        case .body:
            break
        case .end:
            endsRead += 1
            if answersEnded >= headsRead { waitingSince = .now() }
            rearm(context)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            answersBegun += 1
            if head.headerFields[.connection]?.lowercased() == "close" { closeAfterAnswer = true }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            answersEnded += 1
            if closeAfterAnswer {
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.assumeIsolated().whenComplete { [self] _ in closeSoon(context) }
                written.futureResult.cascade(to: promise)
                context.writeAndFlush(data, promise: written)
                return
            }
            if answersEnded >= headsRead, endsRead >= headsRead {
                waitingSince = .now()
                rearm(context)
            }
            context.write(data, promise: promise)
        }
    }

    /// What the connection waits for now: a body, an answer (no deadline: the server's own work), or the next request.
    private enum Wait { case body, answer, request }

    private var wait: Wait {
        if endsRead < headsRead { return .body }
        if answersEnded < headsRead { return .answer }
        return .request
    }

    private func rearm(_ context: ChannelHandlerContext) {
        guard !closing else { return }
        cancel()
        guard wait != .answer else { return }
        scheduled = context.eventLoop.assumeIsolated().scheduleTask(deadline: waitingSince + timeout) { [self] in expired(context) }
    }

    private func cancel() {
        scheduled?.cancel()
        scheduled = nil
    }

    /// Closes the output now (falling back to the whole connection), and the rest after the lingering time.
    private func closeSoon(_ context: ChannelHandlerContext) {
        guard !closing else { return }
        closing = true
        cancel()
        let halfClosed = context.eventLoop.makePromise(of: Void.self)
        halfClosed.futureResult.assumeIsolated().whenFailure { _ in context.close(promise: nil) }
        context.close(mode: .output, promise: halfClosed)
        scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(Int64(ServerLimits.lingerSeconds))) {
            context.close(promise: nil)
        }
    }

    private func expired(_ context: ChannelHandlerContext) {
        scheduled = nil
        guard !closing else { return context.close(promise: nil) }
        switch wait {
        case .answer:
            return
        case .request:
            context.close(promise: nil)
        case .body:
            // An answer to this request has begun (a refusal before its body ended): just close.
            guard answersBegun < headsRead else { return context.close(promise: nil) }
            let refusal = ServerRefusal.bodyTimeout(seconds: seconds)
            let body = ByteBuffer(bytes: Array((refusal.json.serialized(pretty: false) + "\n").utf8))
            let head = HTTPResponse(
                status: .init(code: refusal.httpStatus),
                headerFields: [.contentType: "application/json", .contentLength: String(body.readableBytes), .connection: "close"])
            answersBegun += 1
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { [self] _ in closeSoon(context) }
        }
    }
}
