import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL
public import ReceiptConformance

/// The `http://` and `https://` transports: the harness protocol over HTTP (`GET {url}/hello`,
/// `POST {url}/validate` with the same JSON bodies as stdio), or any JSON endpoint through a
/// `ResponseMapping` (`verifyReceipt` built in).
///
/// A transport failure (refused, reset) is retried once, since validating is idempotent; an answer
/// is never retried. Past the per-vector timeout the vector is TIMEOUT and the connection dropped.
public struct HTTPValidator: ReceiptValidator {
    public enum Mode: Sendable {
        case `protocol`
        case mapping(ResponseMapping)
    }

    public let url: String
    public let mode: Mode
    public let timeout: Duration
    /// `--http-header` values, sent with every request (authentication, tenant, …).
    public let headers: [(String, String)]
    /// For mapping mode, where the endpoint has no hello: the corpus features it is credited with.
    public let features: [String]
    public let password: String?
    public let checker: ProtocolViolationCheck?
    private let client: HTTPClient

    /// - Parameter trustRoots: PEM file of the CAs an `https://` target's certificate must chain to, for
    ///   endpoints behind a private CA; nil trusts the system's roots.
    public init(
        url: String, mode: Mode, timeout: Duration = .seconds(2), headers: [(String, String)] = [], features: [String],
        password: String? = nil, connections: Int = 8, checker: ProtocolViolationCheck? = nil, trustRoots: String? = nil
    ) {
        self.url = url.hasSuffix("/") ? String(url.dropLast()) : url
        self.mode = mode
        self.timeout = timeout
        self.headers = headers
        self.features = features
        self.password = password
        self.checker = checker
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(5))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, connections))
        configuration.decompression = .disabled
        if let trustRoots {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(trustRoots)
            configuration.tlsConfiguration = tls
        }
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the connections; call once the run is over.
    public func shutdown() async {
        try? await client.shutdown()
    }

    public func hello() async throws -> HarnessHello {
        switch mode {
        case .mapping(let mapping):
            return HarnessHello(
                implementation: "\(url) (mapping \(mapping.name))", features: mapping.features ?? features,
                errorGranularity: mapping.granularity ?? .none, clockInjection: mapping.judgesAtContextTime, maxConcurrency: 256)
        case .protocol:
            let status: Int, body: Data
            do { (status, body) = try await send(method: .GET, url: url + "/hello", headers: [], body: nil) } catch {
                throw HTTPTransportError("cannot reach \(url)/hello: \(error)")
            }
            guard status == 200 else { throw HTTPTransportError("GET \(url)/hello answered HTTP \(status): \(String(decoding: body.prefix(200), as: UTF8.self))") }
            if let violation = checker?.check(body) { throw HTTPTransportError("GET \(url)/hello: \(violation)") }
            do { return try JSONDecoder().decode(HarnessHello.self, from: body) } catch {
                throw HTTPTransportError("GET \(url)/hello did not answer a harness hello: \(error)")
            }
        }
    }

    public func validate(_ request: ValidateRequest) async -> HarnessReply {
        do {
            switch mode {
            case .protocol:
                let body = request.jsonLine
                let (status, answer) = try await send(method: .POST, url: url + "/validate", headers: [("content-type", "application/json")], body: body)
                if let violation = checker?.check(answer) { return .errored(seq: request.seq, message: violation) }
                guard status == 200 || status == 400 else {
                    return .errored(seq: request.seq, message: "POST \(url)/validate answered HTTP \(status): \(String(decoding: answer.prefix(200), as: UTF8.self))")
                }
                do { return try JSONDecoder().decode(HarnessReply.self, from: answer) } catch {
                    return .errored(seq: request.seq, message: "not a harness reply: \(String(decoding: answer.prefix(200), as: UTF8.self))")
                }
            case .mapping(let mapping):
                let (path, mapped, body) = mapping.request(for: request, password: password, environment: ProcessInfo.processInfo.environment)
                let (status, answer) = try await send(method: .POST, url: url + path, headers: [("content-type", "application/json")] + mapped, body: body)
                return mapping.reply(seq: request.seq, httpStatus: status, body: answer)
            }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return .failed(seq: request.seq, failure: .timeout, message: "no answer within \(timeout)")
        } catch {
            return .errored(seq: request.seq, message: "\(url): \(error)")
        }
    }

    private func send(method: HTTPMethod, url: String, headers: [(String, String)], body: Data?) async throws -> (Int, Data) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers + self.headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(data: body)) }
        let deadline = NIODeadline.now() + .nanoseconds(Int64(timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000))
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, deadline: deadline)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw error
        } catch {
            response = try await client.execute(request, deadline: deadline)  // one retry, for transport errors only
        }
        let collected = try await response.body.collect(upTo: 32 << 20)
        return (Int(response.status.code), Data(buffer: collected))
    }
}

/// The endpoint could not be reached or did not say hello: an infrastructure failure (exit 2).
public struct HTTPTransportError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// `http://` and `https://` targets, contributed by this module so programs that never speak HTTP need not
/// link it.
public struct HTTPTargets: TargetProvider {
    public init() {}

    public func serves(_ target: Target) -> Bool { target.kind == .http }

    public func withValidator<T>(_ target: Target, plan: TargetPlan, _ body: (any ReceiptValidator) async throws -> T) async throws -> T {
        let validator = HTTPValidator(
            url: target.address, mode: plan.mapping.map { .mapping($0) } ?? .protocol, timeout: plan.timeLimit(for: target),
            headers: plan.httpHeaders, features: plan.features, password: plan.sharedSecret, connections: plan.connections,
            checker: plan.checker, trustRoots: plan.httpTrustRoots)
        return try await withRelease(body, validator) { await validator.shutdown() }
    }
}
