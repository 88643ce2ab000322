import ForgeTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

/// `app.test(.router)` and `app.test(.live)` in HummingbirdTesting's shape, on Hummingbird's public API alone:
/// HummingbirdTesting links AsyncHTTPClient and NIOSSL, whose BoringSSL alone is ~115 CPU-seconds of every debug
/// build, for two modes these tests use. `.router` hands requests to the application's responder (its services
/// running, as a server would run them); `.live` serves it on a loopback port and speaks HTTP over the socket.
enum TestingSetup: Sendable {
    case router
    case live
}

/// An answer: the head and the whole body.
struct TestResponse: Sendable {
    var head: HTTPResponse
    var body: ByteBuffer
    var status: HTTPResponse.Status { head.status }
    var headers: HTTPFields { head.headerFields }
}

protocol TestClientProtocol: Sendable {
    func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse
    /// The port of a `.live` server; nil in process.
    var port: Int? { get }
}

extension TestClientProtocol {
    func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> TestResponse {
        try await execute(uri: uri, method: method, headers: headers, body: body)
    }
}

extension ApplicationProtocol {
    /// Runs `test` against the application, its services running beside it; they are shut down gracefully after.
    func test<Value>(_ setup: TestingSetup, _ test: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        switch setup {
        case .router:
            let client = RouterClient(responder: try await responder, logger: logger)
            return try await withServices(services, logger: logger) { try await test(client) }
        case .live:
            let served = LiveApplication(base: self)
            return try await withServices([served], logger: logger) {
                try await test(LiveClient(port: try await served.port.value(within: .seconds(60))))
            }
        }
    }
}

/// Runs `services` in a service group while `body` runs, then shuts the group down gracefully and waits for it.
private func withServices<Value>(_ services: [any Service], logger: Logger, _ body: () async throws -> Value) async throws -> Value {
    let started = Latch<Void>()
    let group = ServiceGroup(configuration: .init(services: services + [Started(latch: started)], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        // A graceful shutdown requested before the group runs would be lost (hummingbird#871): wait for it to run.
        try await started.value(within: .seconds(60))
        do {
            let value = try await body()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return value
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
    }
}

private struct Started: Service {
    let latch: Latch<Void>
    func run() async throws {
        latch.set(())
        try? await gracefulShutdown()
    }
}

/// A value set once and awaited with a deadline.
private final class Latch<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, waiting: [CheckedContinuation<Value?, Never>])>((nil, []))

    func set(_ value: Value) {
        let waiting = state.withLock { state -> [CheckedContinuation<Value?, Never>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume(returning: value) }
    }

    func value(within limit: Duration) async throws -> Value {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let ready = self.state.withLock { state -> Value? in
                        if let value = state.value { return value }
                        state.waiting.append(continuation)
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                // The deadline passed: resume the waiter, so the group can end.
                let waiting = state.withLock { state in
                    defer { state.waiting = [] }
                    return state.waiting
                }
                for continuation in waiting { continuation.resume(returning: nil) }
                throw ConditionNotMet(what: "the application started", within: limit)
            }
            return value
        }
    }
}

/// Requests handed to the responder as the server would hand them, with a fresh context per request.
private struct RouterClient<Responder: HTTPResponder>: TestClientProtocol where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    let responder: Responder
    let logger: Logger
    var port: Int? { nil }

    func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
        var headers = headers
        if let body { headers[.contentLength] = String(body.readableBytes) }
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: uri, headerFields: headers),
            body: RequestBody(buffer: body ?? ByteBuffer()))
        let context = Responder.Context(source: ApplicationRequestContextSource(channel: NIOAsyncTestingChannel(), logger: logger))
        let response: Response
        do { response = try await responder.respond(to: request, context: context) } catch { response = Response(status: .internalServerError) }
        let writer = CollectingWriter()
        try await response.body.write(writer)
        return TestResponse(head: response.head, body: writer.body.withLock { $0 })
    }
}

private final class CollectingWriter: ResponseBodyWriter, Sendable {
    let body = Mutex(ByteBuffer())
    func write(_ buffer: ByteBuffer) async throws { _ = body.withLock { $0.writeImmutableBuffer(buffer) } }
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

/// Requests over a loopback socket: one connection per request (`Connection: close`), the head exactly as given
/// (`Host` is `authority`), the answer read to its end within `timeout`.
struct LiveClient: TestClientProtocol {
    let port: Int?
    var timeout: Duration = .seconds(100)

    func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
        try await execute(uri: uri, method: method, authority: "localhost", headers: headers, body: body)
    }

    func execute(uri: String, method: HTTPRequest.Method, authority: String, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> TestResponse {
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method.rawValue), uri: uri)
        head.headers.add(name: "Host", value: authority)
        for field in headers { head.headers.add(name: field.name.rawName, value: field.value) }
        if let body { head.headers.replaceOrAdd(name: "Content-Length", value: String(body.readableBytes)) }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let answered = loop.makePromise(of: TestResponse.self)
        let deadline = loop.scheduleTask(in: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000)) {
            answered.fail(ConditionNotMet(what: "\(method) \(uri) answered", within: timeout))
        }
        answered.futureResult.whenComplete { _ in deadline.cancel() }
        let channel = try await ClientBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(AnswerCollector(answered: answered))
                }
            }
            .connect(host: "127.0.0.1", port: port ?? 0).get()
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        defer { channel.close(promise: nil) }
        return try await answered.futureResult.get()
    }
}

/// Gathers one answer: its head and whole body; a connection that closes first fails it.
private final class AnswerCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    let answered: EventLoopPromise<TestResponse>
    private var head: HTTPResponse?
    private var body = ByteBuffer()

    init(answered: EventLoopPromise<TestResponse>) { self.answered = answered }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let received):
            var response = HTTPResponse(status: .init(code: Int(received.status.code), reasonPhrase: received.status.reasonPhrase))
            for (name, value) in received.headers { if let name = HTTPField.Name(name) { response.headerFields.append(HTTPField(name: name, value: value)) } }
            head = response
        case .body(var part): body.writeBuffer(&part)
        case .end:
            if let head { answered.succeed(TestResponse(head: head, body: body)) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        answered.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        answered.fail(ConditionNotMet(what: "an answer before the connection closed", within: .zero))
    }
}

/// The application on loopback port 0, telling the port it was given.
private struct LiveApplication<Base: ApplicationProtocol>: ApplicationProtocol, Service {
    typealias Responder = Base.Responder
    let base: Base
    let port = Latch<Int>()

    var responder: Responder { get async throws { try await base.responder } }
    var server: HTTPServerBuilder { base.server }
    var eventLoopGroup: any EventLoopGroup { base.eventLoopGroup }
    var configuration: ApplicationConfiguration { base.configuration.with(address: .hostname("127.0.0.1", port: 0)) }
    var logger: Logger { base.logger }
    var services: [any Service] { base.services }
    var processesRunBeforeServerStart: [@Sendable () async throws -> Void] { base.processesRunBeforeServerStart }

    @Sendable func onServerRunning(_ channel: any Channel) async {
        await base.onServerRunning(channel)
        if let bound = channel.localAddress?.port { port.set(bound) }
    }
}
