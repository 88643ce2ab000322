public import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import UnixSignals
public import ReceiptModel
public import ReceiptServe
public import ReceiptValidationServer

/// The package's HTTP servers, on Hummingbird: `forge serve` (Apple's verifyReceipt endpoints, faults,
/// the request log, the control routes) and `forge validate --listen` (the harness protocol). Each runs
/// until SIGINT or SIGTERM, then stops accepting, finishes the requests in flight and returns.
public enum ForgeServers {
    /// Where to listen, and the certificate to serve HTTPS with (HTTP when nil).
    public struct Listener: Sendable {
        public var host: String
        public var port: Int
        public var tls: ServingCredentials?
        /// Event-loop threads; nil shares the process's (one per core).
        public var threads: Int?

        public init(host: String, port: Int, tls: ServingCredentials? = nil, threads: Int? = nil) {
            self.host = host
            self.port = port
            self.tls = tls
            self.threads = threads
        }
    }

    /// `forge serve`. `announce` gets the bound port (useful with port 0) once the server accepts.
    public static func serveVerifyReceipt(
        _ listener: Listener, service: VerifyReceiptService, faults: FaultPlan, log: RequestLog,
        announce: @escaping @Sendable (Int) async -> Void
    ) async throws {
        let router = Router()
        let endpoints = VerifyReceiptRoutes(service: service, faults: faults, log: log)
        for endpoint in AppleEndpoint.allCases {
            router.post(RouterPath(endpoint.path)) { request, _ in try await endpoints.respond(endpoint, request) }
            // Apple: 21000, "the request was not made using the HTTP POST request method".
            router.get(RouterPath(endpoint.path)) { request, _ in try await endpoints.respond(endpoint, request) }
        }
        ControlRoutes(faults: faults, log: log).register(on: router)
        try await run(router, listener, announce: announce)
    }

    /// `forge validate --listen`: every request goes to the socket-free ``HarnessRoutes``.
    public static func serveHarness(
        _ listener: Listener, routes: HarnessRoutes, announce: @escaping @Sendable (Int) async -> Void
    ) async throws {
        let router = Router()
        router.add(middleware: HarnessMiddleware(routes: routes))
        try await run(router, listener, announce: announce)
    }

    private static func run(
        _ router: Router<BasicRequestContext>, _ listener: Listener, announce: @escaping @Sendable (Int) async -> Void
    ) async throws {
        var logger = Logger(label: "forge")
        logger.logLevel = .warning
        let group: MultiThreadedEventLoopGroup? = listener.threads.map { MultiThreadedEventLoopGroup(numberOfThreads: max(1, $0)) }
        let server: HTTPServerBuilder = try listener.tls.map { try .tls(.http1(), tlsConfiguration: try $0.configuration()) } ?? .http1()
        let application = Application(
            router: router, server: server,
            configuration: ApplicationConfiguration(address: .hostname(listener.host, port: listener.port), serverName: nil),
            onServerRunning: { channel in await announce(channel.localAddress?.port ?? listener.port) },
            eventLoopGroupProvider: group.map { .shared($0) } ?? .singleton, logger: logger)
        do {
            try await application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            try? await group?.shutdownGracefully()
            throw error
        }
        try? await group?.shutdownGracefully()
    }
}

extension ServingCredentials {
    func configuration() throws -> TLSConfiguration {
        let certificates = try chain.map { try NIOSSLCertificate(bytes: $0, format: .der) }
        let key = try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)
        return TLSConfiguration.makeServerConfiguration(certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(key))
    }
}

/// Both verifyReceipt endpoints: a fault if one applies, else the service's answer; each request logged.
private struct VerifyReceiptRoutes: Sendable {
    let service: VerifyReceiptService
    let faults: FaultPlan
    let log: RequestLog

    func respond(_ endpoint: AppleEndpoint, _ request: Request) async throws -> Response {
        var entry: JSONObject = [("endpoint", .string(endpoint.rawValue)), ("method", .string(request.method.rawValue)), ("path", .string(request.uri.path))]
        let fault = faults.next(for: endpoint)
        if let fault, fault.latencyMilliseconds > 0 { try await Task.sleep(for: .milliseconds(fault.latencyMilliseconds)) }
        entry.append(("fault", fault.map { .string($0.spec) } ?? .null))

        func json(_ status: VerifyReceiptStatus, _ body: JSONValue, summary: JSONObject = []) -> Response {
            entry += [("httpStatus", .integer(200)), ("status", .integer(status.rawValue))]
            entry += summary
            log.record(entry)
            return Self.response(.ok, contentType: "application/json", Array(body.serialized(pretty: false).utf8))
        }
        switch fault?.action {
        case .status(let status, let retryable)?:
            return json(status, VerifyReceiptService.status(status, retryable: retryable))
        case .http(let code)?:
            entry += [("httpStatus", .integer(Int64(code))), ("status", .null)]
            log.record(entry)
            return Self.response(.init(code: code), contentType: "text/plain", Array("forge serve: fault http=\(code)\n".utf8))
        case .notJSON?:
            entry += [("httpStatus", .integer(200)), ("status", .null)]
            log.record(entry)
            let page = "<html><head><title>503 Service Temporarily Unavailable</title></head><body>Service Unavailable</body></html>\n"
            return Self.response(.ok, contentType: "text/html", Array(page.utf8))
        case .close?:
            entry += [("httpStatus", .integer(200)), ("status", .null)]
            log.record(entry)
            // The headers promise a whole body; half of it is sent, then the connection is closed.
            let body = Array(#"{"status":0,"environment":"Production","forge_fault":"the connection closes before this body ends"}"#.utf8)
            let half = ByteBuffer(bytes: body.prefix(body.count / 2))
            return Response(
                status: .ok, headers: [.contentType: "application/json", .contentLength: String(body.count)],
                body: ResponseBody(contentLength: body.count) { writer in
                    try await writer.write(half)
                    throw ClosedOnPurpose()
                })
        case .none?, nil:
            break
        }
        guard request.method == .post else { return json(.unreadableRequest, VerifyReceiptService.status(.unreadableRequest)) }
        let body: ByteBuffer
        do { body = try await request.body.collect(upTo: HarnessRoutes.maximumBody) } catch {
            return json(.unreadableRequest, VerifyReceiptService.status(.unreadableRequest, message: "the body is over \(HarnessRoutes.maximumBody) bytes"))
        }
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let answer = service.answer(endpoint: endpoint, body: Array(body.readableBytesView), overrides: .init(headers: headers))
        return json(answer.status, answer.body, summary: answer.summary)
    }

    static func response(_ status: HTTPResponse.Status, contentType: String, _ body: [UInt8]) -> Response {
        Response(status: status, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    struct ClosedOnPurpose: Error {}
}

/// `/_forge/…`: change faults while the server runs, read or clear the request log.
///
/// | route | does |
/// |---|---|
/// | `GET /_forge/faults` | the faults in force, one spec per line |
/// | `POST /_forge/faults` | adds a fault: a JSON object (`{"endpoint":"production","status":21005,"count":2}`) or a spec line |
/// | `DELETE /_forge/faults` | removes every fault |
/// | `GET /_forge/log` | the request log so far, JSON Lines |
/// | `DELETE /_forge/log` | empties the in-memory log (the `--log` file keeps everything) |
private struct ControlRoutes: Sendable {
    let faults: FaultPlan
    let log: RequestLog

    func register(on router: Router<BasicRequestContext>) {
        router.get("/_forge/faults") { _, _ in text(faults.faults.map { $0.spec + "\n" }.joined()) }
        router.delete("/_forge/faults") { _, _ in
            faults.clear()
            return text("")
        }
        router.post("/_forge/faults") { request, _ in
            let body = try await request.body.collect(upTo: 64 << 10)
            let bytes = Array(body.readableBytesView)
            do throws(ServeError) {
                let fault: Fault
                if let value = try? JSONValue(parsing: bytes) {
                    fault = try Fault(json: value)
                } else {
                    fault = try Fault(parsing: String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
                }
                faults.add(fault)
                return text(fault.spec + "\n", status: .created)
            } catch {
                return text(error.message + "\n", status: .badRequest)
            }
        }
        router.get("/_forge/log") { _, _ in
            VerifyReceiptRoutes.response(.ok, contentType: "application/x-ndjson", Array(log.jsonLines.utf8))
        }
        router.delete("/_forge/log") { _, _ in
            log.clear()
            return text("")
        }
    }

    private func text(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        VerifyReceiptRoutes.response(status, contentType: "text/plain", Array(body.utf8))
    }
}

/// Hands every request to ``HarnessRoutes``, which owns the routing and the 404/405 texts.
private struct HarnessMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let routes: HarnessRoutes

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let body = try await request.body.collect(upTo: HarnessRoutes.maximumBody)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let answer = routes.respond(method: request.method.rawValue, path: request.uri.path, headers: headers, body: Array(body.readableBytesView))
        return VerifyReceiptRoutes.response(.init(code: answer.status), contentType: answer.contentType, answer.body)
    }
}
