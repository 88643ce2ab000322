import ForgeTLS
import HummingbirdCore
import Logging
import NIOCore
import StoreServer

/// A server child channel with ``TLSHandler`` in front of `base`: what HummingbirdTLS does with NIOSSL, over the
/// system's OpenSSL.
struct TLSServerChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let context: TLSContext

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(try TLSHandler(server: context))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension TLSServerChannel: HTTPChannelHandler where Base: HTTPChannelHandler {
    var responder: HTTPChannelHandler.Responder { base.responder }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 behind TLS presenting `credentials`; the context is made here, so a refused certificate or key fails
    /// before anything is started.
    static func tls(_ configuration: HTTP1Channel.Configuration, credentials: ServingCredentials) throws -> HTTPServerBuilder {
        let context = try TLSContext.server(certificateChainDER: credentials.chain, privateKeyPEM: credentials.privateKeyPEM)
        return HTTPServerBuilder { responder in
            TLSServerChannel(base: HTTP1Channel(responder: responder, configuration: configuration), context: context)
        }
    }
}
