internal import CTLS
package import NIOCore
import NIOTLS

/// TLS for one NIO channel: ciphertext below, plaintext `ByteBuffer`s above, over an OpenSSL `SSL` whose two memory
/// BIOs this handler fills and drains (OpenSSL never touches the socket).
///
/// A client starts the handshake when the channel is active and verifies the server's chain and the name it was
/// given, or else the address it connected to. Writes made before the handshake completes wait for it, in order.
/// Each read is decrypted at once and passed on record by record, so what waits in the input BIO is at most one
/// read and one partial record. A close sends close_notify; a peer that closes without one after the handshake is
/// reported as ``TLSError/Code/uncleanShutdown`` before `channelInactive`. Every failure is reported once, then the
/// channel is closed.
package final class TLSHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer

    private enum State { case idle, handshaking, active, closed }

    private let connection: Connection
    private let role: TLSContext.Role
    /// Whether the client was given a name to verify; otherwise it verifies the peer's IP address.
    private let verifiesName: Bool
    private var state = State.idle
    private var pendingWrites: [(ByteBuffer, EventLoopPromise<Void>?)] = []
    private var pendingFlush = false
    private var receivedCloseNotify = false

    /// A server end of a connection that `context` (a server context) answers.
    package init(server context: TLSContext) throws {
        guard context.role == .server else { throw TLSError(.configuration, "a server connection needs a server context") }
        connection = try Connection(context)
        role = .server
        verifiesName = false
        SSL_set_accept_state(connection.ssl)
    }

    /// A client end that verifies the server as `serverHostname` (a DNS name, sent as SNI, or an IP literal); nil
    /// verifies the address the channel is connected to.
    package init(client context: TLSContext, serverHostname: String?) throws {
        guard context.role == .client else { throw TLSError(.configuration, "a client connection needs a client context") }
        connection = try Connection(context)
        role = .client
        SSL_set_connect_state(connection.ssl)
        if let serverHostname {
            verifiesName = true
            try connection.expect(serverHostname)
        } else {
            verifiesName = false
        }
    }

    /// On a server, once the handshake is done: the name the client sent as SNI (nil: none).
    package var requestedServerName: String? {
        guard role == .server, state == .active, let name = SSL_get_servername(connection.ssl, TLSEXT_NAMETYPE_host_name) else { return nil }
        return String(cString: name)
    }

    // MARK: Inbound

    package func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    package func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard state == .handshaking || state == .active else { return }
        guard connection.receive(buffer) else {
            fail(context, TLSError(.protocolViolation, "the input buffer refused \(buffer.readableBytes) bytes\(OpenSSLErrors.drained())"))
            return
        }
        if state == .handshaking { advanceHandshake(context) }
        if state == .active { readPlaintext(context) }
    }

    package func channelInactive(context: ChannelHandlerContext) {
        let was = state
        state = .closed
        failPendingWrites(TLSError(.closed, "the connection closed"))
        switch was {
        case .handshaking: context.fireErrorCaught(TLSError(.handshake, "the connection closed during the handshake"))
        case .active where !receivedCloseNotify: context.fireErrorCaught(TLSError(.uncleanShutdown, "the peer closed without close_notify"))
        default: break
        }
        context.fireChannelInactive()
    }

    // MARK: Outbound

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let buffer = unwrapOutboundIn(data)
        switch state {
        case .idle, .handshaking: pendingWrites.append((buffer, promise))
        case .active: encrypt(context, buffer, promise: promise)
        case .closed: promise?.fail(TLSError(.closed, "write after the connection closed"))
        }
    }

    package func flush(context: ChannelHandlerContext) {
        if state == .active { context.flush() } else { pendingFlush = true }
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all else { return context.close(mode: mode, promise: promise) }
        if state == .active {
            ERR_clear_error()
            _ = SSL_shutdown(connection.ssl)  // queues close_notify; the peer's is not waited for
            sendOutput(context, flush: true)
        }
        state = .closed
        failPendingWrites(TLSError(.closed, "the connection was closed"))
        context.close(mode: mode, promise: promise)
    }

    // MARK: The state machine

    private func start(_ context: ChannelHandlerContext) {
        guard state == .idle else { return }
        state = .handshaking
        if role == .client && !verifiesName {
            guard let address = context.channel.remoteAddress?.ipAddress else {
                return fail(context, TLSError(.configuration, "no server name given and no peer address to verify"))
            }
            do { try connection.expect(address) } catch { return fail(context, error as? TLSError ?? TLSError(.configuration, "\(error)")) }
        }
        advanceHandshake(context)
    }

    private func advanceHandshake(_ context: ChannelHandlerContext) {
        ERR_clear_error()
        let result = SSL_do_handshake(connection.ssl)
        sendOutput(context, flush: true)
        guard result == 1 else {
            let error = SSL_get_error(connection.ssl, result)
            if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return }
            return fail(context, connection.handshakeFailure())
        }
        state = .active
        context.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: nil))
        let waiting = pendingWrites
        pendingWrites = []
        for (buffer, promise) in waiting {
            guard state == .active else {
                promise?.fail(TLSError(.closed, "the connection closed"))
                continue
            }
            encrypt(context, buffer, promise: promise)
        }
        if pendingFlush && state == .active {
            pendingFlush = false
            context.flush()
        }
    }

    /// Decrypts everything the input holds, passing each record's plaintext on as it comes.
    private func readPlaintext(_ context: ChannelHandlerContext) {
        while state == .active {
            var plaintext = context.channel.allocator.buffer(capacity: Connection.recordSize)
            ERR_clear_error()
            var result: Int32 = 0
            plaintext.writeWithUnsafeMutableBytes(minimumWritableBytes: Connection.recordSize) { space in
                result = SSL_read(connection.ssl, space.baseAddress, Int32(clamping: space.count))
                return max(0, Int(result))
            }
            if result > 0 {
                context.fireChannelRead(wrapInboundOut(plaintext))
                continue
            }
            switch SSL_get_error(connection.ssl, result) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                sendOutput(context, flush: true)  // post-handshake messages (a key update's answer)
                return
            case SSL_ERROR_ZERO_RETURN:
                receivedCloseNotify = true
                context.close(promise: nil)
                return
            default:
                return fail(context, TLSError(.protocolViolation, "the records did not decrypt\(OpenSSLErrors.drained())"))
            }
        }
    }

    private func encrypt(_ context: ChannelHandlerContext, _ buffer: ByteBuffer, promise: EventLoopPromise<Void>?) {
        var buffer = buffer
        ERR_clear_error()
        while buffer.readableBytes > 0 {
            let written = buffer.withUnsafeReadableBytes { bytes in
                SSL_write(connection.ssl, bytes.baseAddress, Int32(clamping: min(bytes.count, Connection.recordSize)))
            }
            guard written > 0 else {
                let error = TLSError(.protocolViolation, "the write was refused\(OpenSSLErrors.drained())")
                promise?.fail(error)
                return fail(context, error)
            }
            buffer.moveReaderIndex(forwardBy: Int(written))
        }
        context.write(wrapOutboundOut(connection.takeOutput(allocator: context.channel.allocator)), promise: promise)
    }

    /// Writes what OpenSSL produced (handshake messages, alerts, close_notify) to the channel.
    private func sendOutput(_ context: ChannelHandlerContext, flush: Bool) {
        guard connection.hasOutput else { return }
        let output = connection.takeOutput(allocator: context.channel.allocator)
        if flush { context.writeAndFlush(wrapOutboundOut(output), promise: nil) } else { context.write(wrapOutboundOut(output), promise: nil) }
    }

    private func fail(_ context: ChannelHandlerContext, _ error: TLSError) {
        guard state != .closed else { return }
        sendOutput(context, flush: true)  // the alert OpenSSL queued, if any
        state = .closed
        failPendingWrites(error)
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }

    private func failPendingWrites(_ error: TLSError) {
        let waiting = pendingWrites
        pendingWrites = []
        for (_, promise) in waiting { promise?.fail(error) }
    }
}

@available(*, unavailable)
extension TLSHandler: Sendable {}

/// One connection's `SSL` and its two memory BIOs, freed together when the handler goes.
private final class Connection {
    /// The largest TLS record's plaintext: what one `SSL_read` can return and one `SSL_write` is given.
    static let recordSize = 16_384

    let ssl: OpaquePointer
    /// Ciphertext from the network, read by OpenSSL; owned by `ssl`.
    private let input: OpaquePointer
    /// Ciphertext OpenSSL wrote for the network; owned by `ssl`.
    private let output: OpaquePointer

    init(_ context: TLSContext) throws {
        ERR_clear_error()
        guard let ssl = SSL_new(context.pointer) else { throw TLSError(.configuration, "SSL_new failed\(OpenSSLErrors.drained())") }
        guard let input = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError(.configuration, "BIO_new failed")
        }
        guard let output = BIO_new(BIO_s_mem()) else {
            BIO_free(input)
            SSL_free(ssl)
            throw TLSError(.configuration, "BIO_new failed")
        }
        CTLS_BIO_set_mem_eof_return(input, -1)
        SSL_set_bio(ssl, input, output)  // ssl owns both from here
        self.ssl = ssl
        self.input = input
        self.output = output
    }

    deinit { SSL_free(ssl) }

    /// Sets what the peer's certificate must name: an IP literal is matched against its addresses, anything else is
    /// sent as SNI and matched against its DNS names.
    func expect(_ name: String) throws {
        ERR_clear_error()
        if Self.isIPAddress(name) {
            guard let parameters = SSL_get0_param(ssl), X509_VERIFY_PARAM_set1_ip_asc(parameters, name) == 1 else {
                throw TLSError(.configuration, "cannot verify the address \(name)\(OpenSSLErrors.drained())")
            }
        } else {
            guard CTLS_SSL_set_tlsext_host_name(ssl, name) == 1, SSL_set1_host(ssl, name) == 1 else {
                throw TLSError(.configuration, "cannot verify the name \(name)\(OpenSSLErrors.drained())")
            }
        }
    }

    func receive(_ buffer: ByteBuffer) -> Bool {
        buffer.withUnsafeReadableBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let chunk = min(bytes.count - offset, 1 << 20)
                guard BIO_write(input, bytes.baseAddress.map { $0 + offset }, Int32(chunk)) == Int32(chunk) else { return false }
                offset += chunk
            }
            return true
        }
    }

    var hasOutput: Bool { CTLS_BIO_pending(output) > 0 }

    func takeOutput(allocator: ByteBufferAllocator) -> ByteBuffer {
        let pending = Int(clamping: CTLS_BIO_pending(output))
        var buffer = allocator.buffer(capacity: pending)
        guard pending > 0 else { return buffer }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: pending) { space in
            Int(max(0, BIO_read(output, space.baseAddress, Int32(clamping: pending))))
        }
        return buffer
    }

    /// The handshake's failure: the certificate's verdict when that is what failed, else OpenSSL's reasons.
    func handshakeFailure() -> TLSError {
        let verdict = SSL_get_verify_result(ssl)
        if verdict != Int(X509_V_OK), let reason = X509_verify_cert_error_string(verdict) {
            ERR_clear_error()
            return TLSError(.certificate, "the peer's certificate did not verify: \(String(cString: reason))")
        }
        let reasons = OpenSSLErrors.drained()
        return TLSError(.handshake, reasons.isEmpty ? "the handshake failed" : "the handshake failed" + reasons)
    }

    private static func isIPAddress(_ text: String) -> Bool { (try? SocketAddress(ipAddress: text, port: 0)) != nil }
}
