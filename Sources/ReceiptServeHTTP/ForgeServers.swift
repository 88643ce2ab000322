import Foundation
public import Hummingbird
public import HummingbirdCore
public import Logging
public import NIOCore
import NIOPosix
public import ServiceLifecycle
import Synchronization
import ReceiptModel
import ReceiptForge
public import ReceiptServe
public import ReceiptValidationServer
import ForgeSupport
import StoreModel

/// The package's HTTP servers, on Hummingbird: `forge serve` (Apple's verifyReceipt endpoints, faults,
/// the request log, the control routes) and `forge validate --listen` (the harness protocol).
///
/// Both are bounded the same way (``ServerLimits``): answers are computed on an ``AnswerPool`` off the
/// event loops, request bodies are capped one by one and all together, every read has a deadline
/// (``ReadDeadlineHandler``), and SIGINT or SIGTERM stops accepting and gives the requests in flight the
/// shutdown grace period; then — or at a second signal — the process exits.
///
/// Each server is put together in one place, `build…Application`, into a ``ForgeApplication``: `forge-http`
/// serves it on a socket (``ForgeApplication/serve()``), tests drive it in process (`app.test(.router)`).
public enum ForgeServers {
    /// `forge serve`: Apple's two verifyReceipt endpoints and the control routes (``ControlRoutes``).
    /// `announce` gets the address bound (useful with port 0) once the server accepts. Without
    /// `controlToken` the control routes answer loopback clients that are not a web page (``ControlAccess``); with it,
    /// whoever sends it as `Authorization: Bearer TOKEN`.
    ///
    /// The one place the server is put together: ``ForgeApplication/serve()`` runs it on a socket, and
    /// tests run the same application in process (`app.test(.router)`).
    ///
    /// Notification delivery (to `serverAPI`'s webhooks, its CPU work on `deliveryWorker`, by default a thread of its
    /// own) and the state file's clock checkpoint are services of the application: they run with it, in process as on
    /// a socket, and a graceful shutdown lets the delivery attempt in flight end and writes the clock last.
    public static func buildVerifyReceiptApplication(
        _ listener: ServerListener, service: VerifyReceiptService, serverAPI: ServerAPIService = ServerAPIService(), faults: FaultPlan, log: RequestLog,
        controlToken: String? = nil, ocsp: OCSPService? = nil, deliveryWorker: (any NotificationWorker)? = nil,
        announce: @escaping @Sendable (ServerAddress) async -> Void = { _ in }
    ) throws -> ForgeApplication {
        let background: [any Service] = [NotificationDeliveryService(serverAPI: serverAPI, worker: deliveryWorker), StateCheckpointService(state: serverAPI.state)]
        return try ForgeApplication(listener, services: background, announce: announce) { router, runtime in
            if let ocsp { OCSPRoutes(service: ocsp, log: log, runtime: runtime).register(on: router) }
            let endpoints = VerifyReceiptRoutes(service: service, faults: faults, log: log, runtime: runtime)
            for endpoint in AppleEndpoint.allCases {
                router.post(RouterPath(endpoint.path)) { request, _ in await endpoints.respond(endpoint, request) }
                // Apple: 21000, "the request was not made using the HTTP POST request method".
                router.get(RouterPath(endpoint.path)) { request, _ in await endpoints.respond(endpoint, request) }
            }
            ServerAPIRoutes(service: serverAPI, faults: faults, log: log, runtime: runtime).register(on: router)
            ControlRoutes(
                faults: faults, log: log, runtime: runtime, access: ControlAccess(token: controlToken, listenHost: listener.host), state: serverAPI.state, ocsp: ocsp
            ).register(on: router)
        }
    }

    /// `forge validate --listen`: the routes of ``HarnessRoutes`` (which also words the 404 and 405 of
    /// the paths it does not route). Put together once, like ``buildVerifyReceiptApplication(_:service:faults:log:controlToken:announce:)``.
    public static func buildHarnessApplication(
        _ listener: ServerListener, routes: HarnessRoutes, announce: @escaping @Sendable (ServerAddress) async -> Void = { _ in }
    ) throws -> ForgeApplication {
        try ForgeApplication(listener, announce: announce) { router, runtime in
            let endpoints = HarnessEndpoints(routes: routes, runtime: runtime)
            router.add(middleware: UnroutedMiddleware(endpoints: endpoints))
            for route in HarnessRoutes.routes {
                guard let method = HTTPRequest.Method(route.method) else { continue }
                router.on(RouterPath(route.path), method: method) { request, _ in await endpoints.respond(request) }
            }
        }
    }
}

/// One of the servers, built by ``ForgeServers``: a Hummingbird application (so a test can drive it in
/// process) that also holds what its socket run needs — the requests in flight, for the note
/// at the end of the shutdown grace period.
///
/// Its one service stops the answer pool's workers once the server has stopped, whether it ran on a socket or in
/// a test; the event loops it made (with `threads`) are shut down by ``serve()`` once everything has returned.
public struct ForgeApplication: ApplicationProtocol {
    public typealias Responder = RouterResponder<ForgeRequestContext>

    private let application: Application<Responder>
    private let runtime: ServerRuntime
    private let limits: ServerLimits
    /// The event loops made for `threads`, nil on the process's.
    private let group: MultiThreadedEventLoopGroup?

    /// The server as configured, with the routes `register` adds after the count of requests in flight.
    fileprivate init(
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

    public var responder: Responder { application.responder }
    public var server: HTTPServerBuilder { application.server }
    public var configuration: ApplicationConfiguration { application.configuration }
    public var logger: Logger { application.logger }
    public var eventLoopGroup: any EventLoopGroup { application.eventLoopGroup }
    public var services: [any Service] { application.services }
    public func onServerRunning(_ channel: any Channel) async { await application.onServerRunning(channel) }

    /// Serves on the listener's socket until SIGINT or SIGTERM: the first stops accepting and gives the
    /// requests in flight the shutdown grace period (``ShutdownSignals``).
    public func serve() async throws {
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
public struct ForgeRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
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

/// Responses shared by the routes.
enum Responses {
    /// A request's headers by lower-case name, as the socket-free routes take them.
    static func headers(of request: Request) -> [String: String] {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        return headers
    }

    /// `GET /_forge/log`'s counts of what it does not hold.
    static let logDropped = HTTPFields.Element.Name("X-Forge-Log-Dropped")
    static let logEvicted = HTTPFields.Element.Name("X-Forge-Log-Evicted")
    /// With `--log FILE`, the `seq` up to which the file is complete (``RequestLog/written``).
    static let logWritten = HTTPFields.Element.Name("X-Forge-Log-Written")
    static let requestsInFlight = HTTPFields.Element.Name("X-Forge-Requests-In-Flight")
    static let bodyBytesHeld = HTTPFields.Element.Name("X-Forge-Body-Bytes-Held")

    /// What the server is busy with as it answers (`GET /_forge/log`, the harness's `GET /hello`): the other
    /// requests begun and not yet answered, and the bytes of request bodies read and not yet answered. A client
    /// (a test) waits on them to know a request it sent has begun, or that its body has been read, before it acts.
    static func load(of runtime: ServerRuntime) -> HTTPFields {
        var fields: HTTPFields = [:]
        // This request is one of those in flight: the others are counted.
        if let requestsInFlight { fields[requestsInFlight] = String(max(0, runtime.inFlight - 1)) }
        if let bodyBytesHeld { fields[bodyBytesHeld] = String(runtime.bodies.bytesHeld) }
        return fields
    }

    static func bytes(_ status: HTTPResponse.Status, contentType: String, _ body: [UInt8], headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func text(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        bytes(status, contentType: "text/plain", Array(body.utf8))
    }

    /// A refusal: Apple's shape (HTTP 200, `status` 21000 or 21005) on the verifyReceipt endpoints, else
    /// `{"error", "message"}` with the HTTP status that says the same. A refused body is not read on: the
    /// connection closes after the answer.
    static func refusal(_ refusal: ServerRefusal, appleShape: Bool, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        let bodyRefused: Set<ServerRefusal.Code> = [.bodyTooLarge, .bodyMalformed, .bodyIncomplete, .bodiesInFlight]
        if bodyRefused.contains(refusal.code) { fields[.connection] = "close" }
        let json = appleShape ? refusal.verifyReceiptJSON : refusal.json
        return bytes(appleShape ? .ok : .init(code: refusal.httpStatus), contentType: "application/json", Array(json.serialized(pretty: false).utf8), headers: fields)
    }

    /// Whatever a fault waits before answering: its `latency=MS`.
    static func wait(for fault: Fault?) async {
        guard let fault, fault.latencyMilliseconds > 0 else { return }
        try? await Task.sleep(for: .milliseconds(fault.latencyMilliseconds))
    }

    /// The `close` fault on either API: the headers promise the whole `body`, half of it is sent, then the connection is closed.
    static func halfSent(_ status: HTTPResponse.Status, contentType: String, _ body: [UInt8]) -> Response {
        let half = ByteBuffer(bytes: body.prefix(body.count / 2))
        return Response(
            status: status, headers: [.contentType: contentType, .contentLength: String(body.count)],
            body: ResponseBody(contentLength: body.count) { writer in
                try await writer.write(half)
                throw ClosedOnPurpose()
            })
    }

    struct ClosedOnPurpose: Error {}
}

/// Both verifyReceipt endpoints: a fault if one applies, else the service's answer; each request logged.
private struct VerifyReceiptRoutes: Sendable {
    let service: VerifyReceiptService
    let faults: FaultPlan
    let log: RequestLog
    let runtime: ServerRuntime

    func respond(_ endpoint: AppleEndpoint, _ request: Request) async -> Response {
        var entry: JSONObject = [("endpoint", .string(endpoint.rawValue)), ("method", .string(request.method.rawValue)), ("path", .string(request.uri.path))]
        let fault = faults.next(for: .verifyReceipt(endpoint))
        await Responses.wait(for: fault)
        entry.append(("fault", fault.map { .string($0.spec) } ?? .null))

        func json(_ status: VerifyReceiptStatus, _ body: [UInt8], summary: JSONObject = []) -> Response {
            entry += [("httpStatus", .integer(200)), ("status", .integer(status.rawValue))]
            entry += summary
            log.record(entry)
            return Responses.bytes(.ok, contentType: "application/json", body)
        }
        func refused(_ refusal: ServerRefusal) -> Response {
            entry += [("httpStatus", .integer(200)), ("status", refusal.verifyReceiptJSON["status"] ?? .null), ("refused", .string(refusal.code.rawValue))]
            log.record(entry)
            return Responses.refusal(refusal, appleShape: true)
        }
        switch fault?.action {
        case .status(let status, let retryable)?:
            return json(status, Array(VerifyReceiptService.status(status, retryable: retryable).serialized(pretty: false).utf8))
        case .http(let code)?:
            entry += [("httpStatus", .integer(Int64(code))), ("status", .null)]
            log.record(entry)
            return Responses.bytes(.init(code: code), contentType: "text/plain", Fault.httpBody(code))
        case .notJSON?:
            entry += [("httpStatus", .integer(200)), ("status", .null)]
            log.record(entry)
            return Responses.bytes(.ok, contentType: "text/html", Fault.proxyPage)
        case .close?:
            entry += [("httpStatus", .integer(200)), ("status", .null)]
            log.record(entry)
            let body = Array(#"{"status":0,"environment":"Production","forge_fault":"the connection closes before this body ends"}"#.utf8)
            return Responses.halfSent(.ok, contentType: "application/json", body)
        case .serverAPIError?, .none?, nil:
            break
        }
        guard request.method == .post else {
            return json(.unreadableRequest, Array(VerifyReceiptService.status(.unreadableRequest).serialized(pretty: false).utf8))
        }
        let body: HeldBody
        do { body = try await runtime.bodies.collect(request, maximum: ServerLimits.maximumBody) } catch { return refused(error) }
        defer { body.release() }
        let headers = Responses.headers(of: request)
        let service = service
        let bytes = body.bytes
        do {
            let (answer, serialized) = try await runtime.pool.answer {
                let answer = service.answer(endpoint: endpoint, body: bytes, overrides: .init(headers: headers))
                return (answer, Array(answer.body.serialized(pretty: false).utf8))
            }
            return json(answer.status, serialized, summary: answer.summary)
        } catch {
            return refused(error)
        }
    }
}

/// The App Store Server API (``ServerAPIService``): `/inApps/…` for production (or the environment whose Apple host
/// name `Host` carries, ``ServerAPIEnvironment/atRoot(host:)``), `/sandbox/inApps/…` for the sandbox,
/// `/local-testing/inApps/…` for local testing, every method, answered on the pool; each request logged with its
/// environment, endpoint, HTTP status, `errorCode`, the token check's outcome (`kid` accepted or `auth` the rule
/// refused) and the fault applied.
///
/// A fault (``FaultPlan``) applies once the service has admitted the request — after authentication, so a fault never
/// lets an unauthenticated client through, and after the rate limit, so a 429 does not spend a counted fault — and
/// before the endpoint runs, so a faulted request changes nothing. Its latency is waited here, off the pool.
private struct ServerAPIRoutes: Sendable {
    let service: ServerAPIService
    let faults: FaultPlan
    let log: RequestLog
    let runtime: ServerRuntime

    /// Every request under a mount's `/inApps/`, whatever its method: one the API does not take is a 405 naming
    /// those it does (`Allow`), never a 404 of the router's.
    func register(on router: Router<ForgeRequestContext>) {
        router.add(middleware: ServerAPIMiddleware(routes: self))
    }

    func respond(_ mount: ServerAPIEnvironment, _ request: Request) async -> Response {
        // HTTP/1.1 `Host` becomes the request's authority; a request built in process may carry it as a field.
        let headers = Responses.headers(of: request)
        let host = headers["host"] ?? request.head.authority
        let environment = mount == .production ? ServerAPIEnvironment.atRoot(host: host) : mount
        var entry: JSONObject = [
            ("api", .string("server")), ("environment", .string(environment.rawValue)), ("method", .string(request.method.rawValue)),
            ("path", .string(request.uri.path)),
        ]
        var body: [UInt8] = []
        // The body counts against the budget until the answer is made, as verifyReceipt's does: a flood of slow
        // answers cannot hold more bytes than the budget says.
        var held: HeldBody?
        defer { held?.release() }
        if request.method != .get, request.method != .head {
            do throws(ServerRefusal) {
                let collected = try await runtime.bodies.collect(request, maximum: ServerLimits.maximumBody)
                held = collected
                body = collected.bytes
            } catch {
                // In Apple's shape, so the client keeps a code: an unreadable body is a bad request, a server too
                // busy to read it Apple's retryable internal error.
                let apple: ServerAPIError = error.httpStatus < 500 && error.code != .bodyTimeout ? .generalBadRequest : .generalInternalRetryable
                let answer = ServerAPIResponse.error(apple, endpoint: "unread")
                entry += [("fault", .null), ("httpStatus", .integer(Int64(answer.status))), ("refused", .string(error.code.rawValue))]
                entry += answer.summary
                log.record(entry)
                return Response(
                    status: .init(code: answer.status), headers: [.contentType: ServerAPIService.jsonContentType],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
            }
        }
        let path = String(request.uri.path.dropFirst(mount.prefix.count))
        let call = ServerAPIRequest(
            environment: environment, method: request.method.rawValue, path: path, query: request.uri.query ?? "", body: body,
            now: headers["x-forge-now"].flatMap(ReceiptDate.parse), authorization: headers["authorization"])
        let service = service, faults = faults
        let answer: ServerAPIResponse, fault: Fault?
        do {
            (answer, fault) = try await runtime.pool.answer {
                var fault: Fault?
                let answer = service.respond(call) { endpoint in
                    fault = faults.next(for: .serverAPI(environment, endpoint: endpoint))
                    return fault?.serverAPIAnswer(endpoint: endpoint)
                }
                return (answer, fault)
            }
        } catch {
            // Busy or out of time: Apple's retryable internal error, so the client's retry logic is what runs.
            entry.append(("refused", .string(error.code.rawValue)))
            answer = ServerAPIResponse.error(.generalInternalRetryable, endpoint: "unanswered")
            fault = nil
        }
        await Responses.wait(for: fault)
        entry += [("fault", fault.map { .string($0.spec) } ?? .null), ("httpStatus", .integer(Int64(answer.status)))]
        entry += answer.summary
        log.record(entry)
        if fault?.action == .close { return Responses.halfSent(.init(code: answer.status), contentType: answer.contentType ?? ServerAPIService.jsonContentType, answer.body) }
        var fields: HTTPFields = [:]
        if let contentType = answer.contentType { fields[.contentType] = contentType }
        for header in answer.headers {
            if let name = HTTPFields.Element.Name(header.name) { fields[name] = header.value }
        }
        // HEAD: GET's status and headers, no body (RFC 9110 §9.3.2).
        let bytes = request.method == .head ? [] : answer.body
        return Response(status: .init(code: answer.status), headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// `POST /ocsp[/…]` and `GET /ocsp/…/BASE64` (RFC 6960 Appendix A): the TEST PKIs' OCSP responder
/// (``OCSPService``), each answer logged with the certificates asked about and what was said.
private struct OCSPRoutes: Sendable {
    let service: OCSPService
    let log: RequestLog
    let runtime: ServerRuntime

    func register(on router: Router<ForgeRequestContext>) {
        for path in ["/ocsp", "/ocsp/**"] {
            router.post(RouterPath(path)) { request, _ in await respond(request) }
            router.get(RouterPath(path)) { request, _ in await respond(request) }
        }
    }

    private func respond(_ request: Request) async -> Response {
        let path = String(request.uri.path.dropFirst("/ocsp".count))
        let der: [UInt8]
        var held: HeldBody?
        if request.method == .post {
            do throws(ServerRefusal) { held = try await runtime.bodies.collect(request, maximum: OCSPService.maximumRequestBytes) } catch {
                return Responses.refusal(error, appleShape: false)
            }
            der = held?.bytes ?? []
        } else {
            der = OCSPService.getRequest(path: path) ?? []
        }
        // The body counts against the budget until the answer is made; the answer is signed on the pool, not on
        // the event loop that read the request.
        defer { held?.release() }
        let service = service
        let reply: OCSPResponder.Reply
        do { reply = try await runtime.pool.answer { service.respond(path: path, request: der) } } catch {
            return Responses.refusal(error, appleShape: false)
        }
        log.record(["endpoint": .string("ocsp"), "path": .string(request.uri.path), "status": .integer(Int64(reply.status)), "answer": .string(reply.summary)])
        if reply.delaySeconds > 0 { try? await Task.sleep(for: .seconds(reply.delaySeconds)) }
        return reply.status == 200
            ? Responses.bytes(.ok, contentType: "application/ocsp-response", reply.body)
            : Responses.bytes(.init(code: reply.status), contentType: "text/plain", reply.body)
    }
}

/// `/_forge/…`: change faults while the server runs, read or clear the request log. For the test that owns the
/// server, never a web page (``ControlAccess``): without a control token, loopback peers only, for a loopback `Host` (or
/// the listen host), with no foreign `Origin`, and POSTs as `Content-Type: application/json`; with a token, any client
/// that sends `Authorization: Bearer TOKEN`, and no client without it. A client without an address (in process,
/// HummingbirdTesting's `.router`) is not loopback: it needs the token too — no switch trusts a peer. Every refusal is
/// logged with the rule it broke.
///
/// | route | does |
/// |---|---|
/// | `GET /_forge/faults` | the faults in force, JSON Lines: one object per line, as `POST` takes it |
/// | `POST /_forge/faults` | adds a fault: a JSON object (`{"endpoint":"production","status":21005,"count":2}`) or a spec line, as a JSON string or bare |
/// | `DELETE /_forge/faults` | removes every fault |
/// | `GET /_forge/log` | the request log in memory, JSON Lines; `X-Forge-Log-Dropped` and `X-Forge-Log-Evicted` count what is missing; `X-Forge-Requests-In-Flight` and `X-Forge-Body-Bytes-Held` what is being answered now (``Responses/load(of:)``) |
/// | `DELETE /_forge/log` | empties the in-memory log (the `--log` file keeps everything) |
/// | `GET /_forge/scenarios` | each customer's scenario as the server holds it: its seed pinned, the changes the Server API made appended to its timeline (`forge make --spec` and `forge jws make --spec` take each element) |
/// | `GET /_forge/clock` | the server clock: `{"now":"2025-02-01T00:00:00Z"}` |
/// | `POST /_forge/clock` | moves it forward: `{"now":"2025-03-01T00:00:00Z"}`, `{"advance":"P1M"}` (a period) or `{"advance":3600}` (seconds) |
/// | `GET /_forge/ocsp` | with `--ocsp`: the OCSP answers set, `SERIAL=ANSWER` lines |
/// | `POST /_forge/ocsp` | sets one: `"jws-leaf=revoked,reason=keyCompromise"` (a name or a serial in hex, an answer), as a JSON string or bare |
/// | `DELETE /_forge/ocsp` | every certificate `good` again |
private struct ControlRoutes: Sendable {
    let faults: FaultPlan
    let log: RequestLog
    let runtime: ServerRuntime
    let access: ControlAccess
    let state: ServerState
    let ocsp: OCSPService?

    func register(on router: Router<ForgeRequestContext>) {
        if let ocsp {
            router.get("/_forge/ocsp") { request, context in
                await guarded(request, context) { Responses.text(ocsp.table.map { $0 + "\n" }.joined()) }
            }
            router.post("/_forge/ocsp") { request, context in
                await posted(request, context) { (body) throws(ServeError) in
                    let spec = Self.specLine(body)
                    do throws(ForgeError) { try ocsp.set(spec: spec) } catch { throw ServeError(.invalidFault, error.message) }
                    return Responses.text(spec + "\n", status: .created)
                }
            }
            router.delete("/_forge/ocsp") { request, context in
                await guarded(request, context) {
                    ocsp.reset()
                    return Responses.text("")
                }
            }
        }
        router.get("/_forge/scenarios") { request, context in
            await guarded(request, context) {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
                let body = (try? encoder.encode(state.customers.map(\.scenario))) ?? Data("[]".utf8)
                return Responses.bytes(.ok, contentType: "application/json", Array(body) + [0x0A])
            }
        }
        router.get("/_forge/clock") { request, context in
            await guarded(request, context) { clockAnswer() }
        }
        router.post("/_forge/clock") { request, context in
            await posted(request, context) { (body) throws(ServeError) in
                try state.setClock(to: try Self.clockTarget(body, from: state.now()))
                return clockAnswer()
            }
        }
        router.get("/_forge/faults") { request, context in
            await guarded(request, context) {
                let lines = faults.faults.map { $0.json.serialized(pretty: false) + "\n" }.joined()
                return Responses.bytes(.ok, contentType: "application/x-ndjson", Array(lines.utf8))
            }
        }
        router.delete("/_forge/faults") { request, context in
            await guarded(request, context) {
                faults.clear()
                return Responses.text("")
            }
        }
        router.post("/_forge/faults") { request, context in
            await posted(request, context) { (body) throws(ServeError) in
                let fault: Fault
                if let value = try? JSONValue(parsing: body), value.objectValue != nil {
                    fault = try Fault(json: value)
                } else {
                    fault = try Fault(parsing: Self.specLine(body))
                }
                try faults.add(fault)
                return Responses.text(fault.spec + "\n", status: .created)
            }
        }
        router.get("/_forge/log") { request, context in
            await guarded(request, context) {
                var headers: HTTPFields = [:]
                if let dropped = Responses.logDropped { headers[dropped] = String(log.dropped) }
                if let evicted = Responses.logEvicted { headers[evicted] = String(log.evicted) }
                if let name = Responses.logWritten, let written = log.written { headers[name] = String(written) }
                headers += Responses.load(of: runtime)
                return Responses.bytes(.ok, contentType: "application/x-ndjson", Array(log.jsonLines.utf8), headers: headers)
            }
        }
        router.delete("/_forge/log") { request, context in
            await guarded(request, context) {
                log.clear()
                return Responses.text("")
            }
        }
    }

    private func clockAnswer() -> Response {
        let body: JSONValue = .object([("now", .string(ReceiptDate.format(state.now())))])
        return Responses.bytes(.ok, contentType: "application/json", Array(body.serialized(pretty: false).utf8))
    }

    /// Where `POST /_forge/clock` moves the clock: `{"now": DATE}`, `{"advance": "P1M"}` or `{"advance": SECONDS}`.
    static func clockTarget(_ body: [UInt8], from now: Date) throws(ServeError) -> Date {
        let usage = #"send {"now":"2025-03-01T00:00:00Z"}, {"advance":"P1M"} or {"advance":3600}"#
        guard let request = try? JSONValue(parsing: body), request.objectValue != nil else { throw ServeError(.invalidClock, "the body is not a JSON object: \(usage)") }
        if let text = request["now"]?.stringValue {
            guard let date = ReceiptDate.parse(text) else { throw ServeError(.invalidClock, "'now' \(text) is not a date like 2025-03-01T00:00:00Z") }
            return date
        }
        if let seconds = request["advance"]?.integerValue, (0...ServerLimits.maximumClockAdvance).contains(seconds) {
            return now.addingTimeInterval(TimeInterval(seconds))
        }
        if let text = request["advance"]?.stringValue, let period = SubscriptionPeriod(text) {
            return period.advance(now, by: 1)
        }
        throw ServeError(.invalidClock, "\(usage) (seconds from 0 to \(ServerLimits.maximumClockAdvance))")
    }

    /// A spec line as a control POST sends it: a JSON string (`"any:close,count=1"`), or the bare line.
    static func specLine(_ body: [UInt8]) -> String {
        let text = (try? JSONValue(parsing: body))?.stringValue ?? String(decoding: body, as: UTF8.self)
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A control POST: refused, or its body (at most ``ServerLimits/maximumControlBody``) handed to `answer`, whose
    /// error is a 400 with its message (409 when the faults are full).
    private func posted(
        _ request: Request, _ context: ForgeRequestContext, _ answer: @escaping @Sendable ([UInt8]) throws(ServeError) -> Response
    ) async -> Response {
        if let refusal = refusal(request, context) { return refusal }
        let body: HeldBody
        do throws(ServerRefusal) { body = try await runtime.bodies.collect(request, maximum: ServerLimits.maximumControlBody) } catch {
            return Responses.refusal(error, appleShape: false)
        }
        defer { body.release() }
        let bytes = body.bytes
        let outcome: Result<Response, ServeError>
        do throws(ServerRefusal) { outcome = try await runtime.pool.answer { Result { () throws(ServeError) in try answer(bytes) } } } catch {
            return Responses.refusal(error, appleShape: false)
        }
        switch outcome {
        case .success(let response): return response
        case .failure(let error): return Responses.text(error.message + "\n", status: error.code == .tooManyFaults ? .conflict : .badRequest)
        }
    }

    /// `answer` for a client the control routes admit, made on the pool: the log and the scenarios can be megabytes
    /// to encode, and a state file to write, none of it for an event loop.
    private func guarded(_ request: Request, _ context: ForgeRequestContext, _ answer: @escaping @Sendable () -> Response) async -> Response {
        if let refused = refusal(request, context) { return refused }
        do throws(ServerRefusal) { return try await runtime.pool.answer(answer) } catch { return Responses.refusal(error, appleShape: false) }
    }

    /// Nil when the client may use the control routes; else the refusal to send (``ControlAccess``), logged with the rule
    /// it broke. A refused request's body is not read: the connection closes after the answer.
    private func refusal(_ request: Request, _ context: ForgeRequestContext) -> Response? {
        let host = HTTPFields.Element.Name("Host")
        let said = ControlAccess.Request(
            method: request.method.rawValue, peer: context.remoteAddress?.ipAddress,
            hosts: [request.head.authority].compactMap { $0 } + (host.map { request.headers[values: $0] } ?? []),
            origins: request.headers[values: .origin], contentTypes: request.headers[values: .contentType], authorization: request.headers[.authorization])
        guard let refused = access.refusal(said) else { return nil }
        log.record([
            ("endpoint", .string("control")), ("method", .string(request.method.rawValue)), ("path", .string(request.uri.path)),
            ("httpStatus", .integer(Int64(refused.refusal.httpStatus))), ("refused", .string(refused.refusal.code.rawValue)), ("rule", .string(refused.rule.rawValue)),
        ])
        var headers: HTTPFields = [.connection: "close"]
        if refused.refusal.code == .controlUnauthorized { headers[.wwwAuthenticate] = #"Bearer realm="forge""# }
        return Responses.refusal(refused.refusal, appleShape: false, headers: headers)
    }
}

/// The harness routes as the router reaches them: GETs answered at once, POSTs on the pool (validation is
/// the heavy part) once their body is read.
private struct HarnessEndpoints: Sendable {
    let routes: HarnessRoutes
    let runtime: ServerRuntime

    func respond(_ request: Request) async -> Response {
        let headers = Responses.headers(of: request)
        let method = request.method.rawValue, path = request.uri.path
        guard request.method == .post else {
            var response = Self.response(routes.respond(method: method, path: path, headers: headers, body: []))
            if path == "/hello" { response.headers += Responses.load(of: runtime) }
            return response
        }
        let appleShape = HarnessRoutes.answersLikeApple(path: path)
        let body: HeldBody
        do { body = try await runtime.bodies.collect(request, maximum: ServerLimits.maximumBody) } catch {
            return Responses.refusal(error, appleShape: appleShape)
        }
        defer { body.release() }
        let routes = routes, bytes = body.bytes
        do {
            return Self.response(try await runtime.pool.answer { routes.respond(method: method, path: path, headers: headers, body: bytes) })
        } catch {
            return Responses.refusal(error, appleShape: appleShape)
        }
    }

    /// What the router does not route (another path, another method): ``HarnessRoutes``' 404 or 405, at
    /// once and without reading the body.
    func unrouted(_ request: Request) -> Response {
        Self.response(routes.respond(method: request.method.rawValue, path: request.uri.path, headers: Responses.headers(of: request), body: []))
    }

    private static func response(_ answer: HarnessRoutes.Response) -> Response {
        Responses.bytes(.init(code: answer.status), contentType: answer.contentType, answer.body)
    }
}

/// Gives the router's "not found" (its answer to any path and method it was not given) to
/// ``HarnessEndpoints/unrouted(_:)``, so the harness server words its 404 and 405 as ``HarnessRoutes`` does.
/// Hands every request under `/inApps/`, `/sandbox/inApps/` or `/local-testing/inApps/` to the Server API.
private struct ServerAPIMiddleware: RouterMiddleware {
    typealias Context = ForgeRequestContext
    let routes: ServerAPIRoutes

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard let mount = ServerAPIEnvironment.allCases.first(where: { path.hasPrefix($0.prefix + "/inApps/") }) else {
            return try await next(request, context)
        }
        return await routes.respond(mount, request)
    }
}

private struct UnroutedMiddleware: RouterMiddleware {
    typealias Context = ForgeRequestContext
    let endpoints: HarnessEndpoints

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do { return try await next(request, context) } catch let error as HTTPError where error.status == .notFound {
            return endpoints.unrouted(request)
        }
    }
}
