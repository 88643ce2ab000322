#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore
import NIOHTTP1
public import ReceiptConformance
import _ForgeSupport

/// The `http://` and `https://` transports: the harness protocol over HTTP (`GET {url}/hello`,
/// `POST {url}/validate` with the same JSON bodies as stdio), or any JSON endpoint through a
/// `ResponseMapping` (`verifyReceipt` built in).
///
/// A transport failure (refused, reset) is retried once, since validating is idempotent; an answer
/// is never retried. The per-vector timeout covers the whole exchange (connect, request, response headers
/// and body, the retry included): past it the vector is TIMEOUT and the connection dropped. A body longer
/// than `HarnessLimits.maximumMessageBytes` is a protocol violation, found while it is read.
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
    /// Nil when `url` is not an http(s) URL, or its TLS setup failed: `setupFailure` says which.
    private let client: KeepAliveClient?
    private let setupFailure: String?

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
        if let origin = KeepAliveClient.Origin(self.url) {
            do {
                client = try KeepAliveClient(origin: origin, connections: connections, trustRoots: trustRoots)
                setupFailure = nil
            } catch {
                client = nil
                setupFailure = "cannot set up TLS for \(self.url) (\(RunOption.httpCA) \(trustRoots ?? "")): \(error)"
            }
        } else {
            client = nil
            setupFailure = "\(self.url) is not an http:// or https:// URL with a host"
        }
    }

    /// Closes the connections; call once the run is over.
    public func shutdown() async {
        await client?.shutdown()
    }

    public func hello() async throws -> HarnessHello {
        switch mode {
        case .mapping(let mapping):
            return HarnessHello(
                implementation: "\(url) (mapping \(mapping.name))", features: mapping.features ?? features, artifacts: mapping.artifacts,
                errorGranularity: mapping.granularity ?? .none, clockInjection: mapping.judgesAtContextTime, maxConcurrency: 256)
        case .protocol:
            let status: Int, body: Data
            do throws(KeepAliveClient.Failure) { (status, body) = try await send(.GET, "/hello", headers: [], body: nil) } catch {
                if case .transport(let reason, _) = error { throw HTTPTransportError("cannot reach \(url)/hello: \(reason)") }
                throw HTTPTransportError("GET \(url)/hello: \(ExchangeFailure(error, timeout: timeout))")
            }
            guard status == 200 else {
                throw HTTPTransportError("GET \(url)/hello answered HTTP \(status): \(String(decoding: body.prefix(HarnessLimits.quotedPrefix), as: UTF8.self))")
            }
            if let violation = checker?.check(body) { throw HTTPTransportError("GET \(url)/hello: \(violation)") }
            do { return try JSONDecoder().decode(HarnessHello.self, from: body) } catch {
                throw HTTPTransportError("GET \(url)/hello did not answer a harness hello: \(error)")
            }
        }
    }

    public func validate(_ request: ValidateRequest) async -> HarnessReply {
        do throws(KeepAliveClient.Failure) {
            switch mode {
            case .protocol:
                let (status, answer) = try await send(.POST, "/validate", headers: [("content-type", "application/json")], body: ByteBuffer(bytes: request.jsonLineBytes))
                if let violation = checker?.check(answer) { return .errored(seq: request.seq, message: violation) }
                guard status == 200 || status == 400 else {
                    return .errored(
                        seq: request.seq, message: "POST \(url)/validate answered HTTP \(status): \(String(decoding: answer.prefix(HarnessLimits.quotedPrefix), as: UTF8.self))")
                }
                do { return try HarnessReply(json: answer) } catch {
                    return .errored(seq: request.seq, message: "not a harness reply: \(String(decoding: answer.prefix(HarnessLimits.quotedPrefix), as: UTF8.self))")
                }
            case .mapping(let mapping):
                let (path, mapped, body) = mapping.request(for: request, password: password, environment: ProcessInfo.processInfo.environment)
                let (status, answer) = try await send(.POST, path, headers: [("content-type", "application/json")] + mapped, body: ByteBuffer(bytes: body))
                return mapping.reply(seq: request.seq, httpStatus: status, body: answer)
            }
        } catch {
            switch error {
            case .timedOut: return .failed(seq: request.seq, failure: .timeout, message: "\(ExchangeFailure.timedOut(timeout)); the connection was dropped")
            case .overlong: return .errored(seq: request.seq, message: "\(ExchangeFailure.overlong)")
            case .transport(let reason, _): return .errored(seq: request.seq, message: "\(url): \(reason)")
            }
        }
    }

    /// One exchange, status and body, within `timeout` from its start to the body's last byte.
    private func send(_ method: HTTPMethod, _ path: String, headers: [(String, String)], body: ByteBuffer?) async throws(KeepAliveClient.Failure) -> (Int, Data) {
        guard let client else { throw .transport(setupFailure ?? url, answered: false) }
        let response = try await client.exchange(
            method, path, headers: headers + self.headers, body: body, timeout: timeout, limit: HarnessLimits.maximumMessageBytes)
        return (response.status, Data(response.body.readableBytesView))
    }
}

/// How an exchange failed on the runner's side of the protocol: it took too long, or its body was too long.
enum ExchangeFailure: Error, CustomStringConvertible {
    case timedOut(Duration)
    case overlong

    init(_ failure: KeepAliveClient.Failure, timeout: Duration) {
        self = if case .overlong = failure { .overlong } else { .timedOut(timeout) }
    }

    var description: String {
        switch self {
        case .timedOut(let limit): "no complete answer within \(limit) (the time limit covers connect, request, headers and body)"
        case .overlong: HarnessLimits.overlong("a response body")
        }
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
