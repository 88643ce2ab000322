import _ForgeSupport
@testable import ForgeTLS
import ForgeTestSupport
import Foundation
import NIOCore
import NIOPosix
import NIOTLS
import StoreForge
import StoreServer
import Synchronization
import Testing

/// ``TLSHandler`` on its own, both ends on loopback: the handshake, verification of names and addresses, writes made
/// before the handshake, large transfers, and what a peer that is not TLS (or stops in the middle) leaves behind.
/// `openssl s_client` is the independent client; the servers' own TLS is also exercised end to end by Apple's Python
/// client (`ServerAPITLSTests`), the runner's `--http-ca` (`HTTPCLITests`) and the webhooks (`WebhookTLSTests`).
@Suite("TLS over the system's OpenSSL: verified handshakes, whole transfers, hostile peers", .timeLimit(.minutes(2)))
struct TLSHandlerTests {
    static let rootPEM = Repository.file("Certificates/root.pem")

    static func serverContext() throws -> TLSContext {
        let credentials = try ServingCredentials.issue(for: "127.0.0.1", by: try CertificateSet<CertificateRole>.bundled())
        return try TLSContext.server(certificateChainDER: credentials.chain, privateKeyPEM: credentials.privateKeyPEM)
    }

    static func clientContext(trustingTestRoot: Bool = true) throws -> TLSContext {
        try TLSContext.client(trustedRootsPEM: trustingTestRoot ? try String(contentsOf: rootPEM, encoding: .utf8) : nil, systemRoots: !trustingTestRoot)
    }

    /// A TLS server that echoes what it reads and records each handshake's SNI; it closes (close_notify first) after
    /// echoing a newline.
    final class EchoServer: Sendable {
        let channel: any Channel
        var port: Int { channel.localAddress?.port ?? 0 }

        init(_ context: TLSContext) async throws {
            let box = NamesBox()
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelInitializer { child in
                    child.eventLoop.makeCompletedFuture {
                        let tls = try TLSHandler(server: context)
                        try child.pipeline.syncOperations.addHandler(tls)
                        try child.pipeline.syncOperations.addHandler(Echo(tls: tls, names: box))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            namesBox = box
        }

        private let namesBox: NamesBox
        var serverNames: [String?] { namesBox.names.withLock { $0 } }

        func stop() async { try? await channel.close() }
    }

    final class NamesBox: Sendable { let names = Mutex<[String?]>([]) }

    private final class Echo: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let tls: TLSHandler
        let names: NamesBox

        init(tls: TLSHandler, names: NamesBox) {
            self.tls = tls
            self.names = names
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
                let name = tls.requestedServerName
                names.names.withLock { $0.append(name) }
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            let ends = buffer.readableBytesView.last == UInt8(ascii: "\n")
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
            if ends { context.close(promise: nil) }
        }
    }

    /// Collects plaintext until the peer closes; fails with the first error.
    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let done: EventLoopPromise<[UInt8]>
        private var received: [UInt8] = []
        private var failure: (any Error)?

        init(done: EventLoopPromise<[UInt8]>) { self.done = done }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) { received += unwrapInboundIn(data).readableBytesView }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if failure == nil { failure = error }
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            if let failure { done.fail(failure) } else { done.succeed(received) }
        }
    }

    /// Connects to `port` through a TLS client verifying `name` (nil: the address), writes `payload` at once (before
    /// the handshake has completed) and returns all the plaintext read until the server closes.
    static func exchange(port: Int, name: String?, context: TLSContext, payload: [UInt8]) async throws -> [UInt8] {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let done = loop.makePromise(of: [UInt8].self)
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(try TLSHandler(client: context, serverHostname: name))
                    try channel.pipeline.syncOperations.addHandler(Collector(done: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        channel.writeAndFlush(ByteBuffer(bytes: payload), promise: nil)
        // A hang would end as a close at the deadline: the collector then reports what it had, or the error.
        let deadline = loop.scheduleTask(in: .seconds(60)) { channel.close(promise: nil) }
        defer { deadline.cancel() }
        return try await done.futureResult.get()
    }

    @Test("Our client and server: 1 MiB written before the handshake comes back whole, verified by name (sent as SNI) and by address (no SNI)")
    func roundTrip() async throws {
        let server = try await EchoServer(try Self.serverContext())
        defer { Task { await server.stop() } }
        var payload = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        payload = payload.map { $0 == UInt8(ascii: "\n") ? 0 : $0 } + [UInt8(ascii: "\n")]
        let client = try Self.clientContext()
        for name in ["localhost", nil, "127.0.0.1"] as [String?] {
            let echoed = try await Self.exchange(port: server.port, name: name, context: client, payload: payload)
            #expect(echoed == payload, "\(name ?? "the address"): \(echoed.count) of \(payload.count) bytes")
        }
        #expect(server.serverNames == ["localhost", nil, nil], "SNI only for a DNS name")
    }

    @Test("Verification fails as a certificate error: a name or an address the certificate does not hold, a root not trusted")
    func refused() async throws {
        let server = try await EchoServer(try Self.serverContext())
        defer { Task { await server.stop() } }
        let cases: [(String?, TLSContext)] = [
            ("forge.example", try Self.clientContext()), ("10.0.0.1", try Self.clientContext()), ("localhost", try Self.clientContext(trustingTestRoot: false)),
        ]
        for (name, context) in cases {
            do {
                _ = try await Self.exchange(port: server.port, name: name, context: context, payload: Array("x\n".utf8))
                Issue.record("\(name ?? "-"): verified")
            } catch let error as TLSError {
                #expect(error.code == .certificate, "\(name ?? "-"): \(error)")
            }
        }
    }

    @Test("openssl s_client verifies the server's chain and name against the TEST root and gets its bytes echoed", .requires(.openssl))
    func opensslClient() async throws {
        let server = try await EchoServer(try Self.serverContext())
        defer { Task { await server.stop() } }
        let result = try await openssl(
            [
                "s_client", "-connect", "127.0.0.1:\(server.port)", "-servername", "localhost", "-verify_hostname", "localhost", "-CAfile", Self.rootPEM.path,
                "-verify_return_error", "-quiet", "-ign_eof",
            ], stdin: Data("ping from openssl\n".utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text == "ping from openssl\n", "\(result.stderr)")
        #expect(server.serverNames == ["localhost"])
    }

    @Test("A peer that is not TLS, or stops in the middle of a handshake, gets its connection closed; the server goes on serving")
    func hostilePeers() async throws {
        let server = try await EchoServer(try Self.serverContext())
        defer { Task { await server.stop() } }
        let hello = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + [UInt8](repeating: 0x41, count: 40)
        let garbage: [[UInt8]] = [Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), hello, [0x16, 0x03], [UInt8](repeating: 0xFF, count: 70_000)]
        for bytes in garbage {
            let closed = try await Self.sendRaw(bytes, to: server.port)
            #expect(closed, "\(bytes.prefix(8)): the connection stayed open")
        }
        let echoed = try await Self.exchange(port: server.port, name: "localhost", context: try Self.clientContext(), payload: Array("still here\n".utf8))
        #expect(echoed == Array("still here\n".utf8))
    }

    @Test("A server that closes during the handshake is a handshake error (or the reset that closing with the hello unread may send), not a hang")
    func closedDuringHandshake() async throws {
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { child in child.close() }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { silent.close(promise: nil) }
        do {
            _ = try await Self.exchange(port: silent.localAddress?.port ?? 0, name: "localhost", context: try Self.clientContext(), payload: Array("x".utf8))
            Issue.record("no error")
        } catch let error as TLSError {
            #expect(error.code == .handshake, "\(error)")
        } catch let error as IOError {
            // The server closed with the ClientHello unread: the kernel may answer with a reset, which comes first.
            #expect(error.errnoCode == ECONNRESET, "\(error)")
        }
    }

    @Test("Every context refuses TLS 1.2 renegotiation: a peer cannot make us sign handshake after handshake (openssl s_client's R gets `no renegotiation`)")
    func renegotiationRefused() throws {
        #expect(try Self.serverContext().refusesRenegotiation)
        #expect(try Self.clientContext().refusesRenegotiation)
    }

    @Test("Contexts refuse what OpenSSL refuses, with a configuration error: a key that is not PEM, a chain that is not DER, roots that hold no certificate")
    func badConfiguration() throws {
        let credentials = try ServingCredentials.issue(for: "127.0.0.1", by: try CertificateSet<CertificateRole>.bundled())
        for attempt in [
            { _ = try TLSContext.server(certificateChainDER: credentials.chain, privateKeyPEM: "not a key") },
            { _ = try TLSContext.server(certificateChainDER: [[0x30, 0x03, 0x02, 0x01, 0x00]], privateKeyPEM: credentials.privateKeyPEM) },
            { _ = try TLSContext.server(certificateChainDER: [], privateKeyPEM: credentials.privateKeyPEM) },
            { _ = try TLSContext.client(trustedRootsPEM: "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n", systemRoots: false) },
            { _ = try TLSContext.client(trustedRootsPEM: "", systemRoots: false) },
        ] as [() throws -> Void] {
            #expect { try attempt() } throws: { ($0 as? TLSError)?.code == .configuration }
        }
    }

    /// Sends `bytes` over plain TCP, then the end of its output, and reports whether the server closed the
    /// connection within the deadline (else it is closed here).
    static func sendRaw(_ bytes: [UInt8], to port: Int) async throws -> Bool {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let channel = try await ClientBootstrap(group: loop).channelOption(.allowRemoteHalfClosure, value: true).connect(host: "127.0.0.1", port: port).get()
        let timedOut = Mutex(false)
        let deadline = loop.scheduleTask(in: .seconds(60)) {
            timedOut.withLock { $0 = true }
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
        try? await channel.close(mode: .output)
        try await channel.closeFuture.get()
        return !timedOut.withLock { $0 }
    }
}
