import AsyncHTTPClient
import ForgeSupport
public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
public import ReceiptServe

/// Delivers notifications to webhooks as Apple does: a POST of `{"signedPayload":"…"}` with
/// `Content-Type: application/json`, redirects followed (each `Location` checked) but not in a circle, one time
/// limit over the whole attempt (connect, request, headers and body), and every way it can end named by Apple's `sendAttemptResult`.
public final class WebhookClient: Sendable {
    private let client: HTTPClient
    private let timeoutSeconds: Int

    /// A client for attempts of at most `timeoutSeconds` each, trusting `trustedRootsPEM` besides the system's.
    public init(timeoutSeconds: Int, trustedRootsPEM: String?) throws {
        var configuration = HTTPClient.Configuration()
        // Followed by ``exchange(_:client:deadline:)``, each Location checked before anything connects.
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.timeout = .init(connect: .seconds(Int64(timeoutSeconds)))
        // A refused or failed handshake is the attempt's result, not retried until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        if let pem = trustedRootsPEM {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))]
            configuration.tlsConfiguration = tls
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.timeoutSeconds = timeoutSeconds
    }

    /// Closes the connections.
    public func shutdown() async { try? await client.shutdown() }

    /// `requests`, at most `concurrency` at a time, each answered (in order) by its attempt and the start of the
    /// webhook's answer. Never throws: every failure is an attempt with its result.
    public static func deliver(_ requests: [WebhookRequest], concurrency: Int) async -> [WebhookAnswer] {
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
        await client.shutdown()
        return answers.map { $0 ?? WebhookAnswer(attempt: SendAttempt(date: Date(), result: .other, milliseconds: 0), body: []) }
    }

    /// One attempt: POST `request.body` to `request.url`, and follow what it redirects to.
    public func deliver(_ request: WebhookRequest, at date: Date = Date()) async -> WebhookAnswer {
        let started = ContinuousClock.now
        func attempt(_ result: SendAttemptResult, status: Int? = nil, detail: String? = nil, body: [UInt8] = []) -> WebhookAnswer {
            let elapsed = ContinuousClock.now - started
            let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
            return WebhookAnswer(attempt: SendAttempt(date: date, result: result, httpStatus: status, milliseconds: milliseconds, detail: detail), body: body)
        }
        let client = client, timeoutSeconds = timeoutSeconds
        let deadline = NIODeadline.now() + .seconds(Int64(timeoutSeconds))
        let outcome: Outcome? = await withTaskGroup(of: Outcome?.self) { group in
            group.addTask { await Self.exchange(request, client: client, deadline: deadline) }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeoutSeconds))
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        switch outcome {
        case .answered(let status, let detail, let body)?: return attempt(SendAttemptResult(httpStatus: status), status: status, detail: detail, body: body)
        case .failed(let result, let detail, let status)?: return attempt(result, status: status, detail: detail)
        case nil: return attempt(.timedOut, detail: "no complete answer within \(timeoutSeconds) s")
        }
    }

    /// The statuses whose `Location` is followed (AsyncHTTPClient's, less 304 and 305, which move nothing).
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The POST and the redirects it leads to, followed here rather than by AsyncHTTPClient so that every
    /// `Location` is checked as a user's URL is (``HTTPURL``: http or https, a host, a port from 1 to 65535)
    /// before anything connects: a webhook that redirects to port 70000 is a failed attempt (OTHER), never a
    /// trap in the socket library. At most ``WebhookRequest/maximumRedirects``, none to a URL already visited
    /// (CIRCULAR_REDIRECT); 303, and 301 or 302 after a POST, continue as a GET without the body, as
    /// AsyncHTTPClient and browsers do.
    private static func exchange(_ request: WebhookRequest, client: HTTPClient, deadline: NIODeadline) async -> Outcome {
        var url = request.url
        var visited: Set<String> = [url.text]
        var method = HTTPMethod.POST
        var body: [UInt8]? = request.body
        while true {
            var exchange = HTTPClientRequest(url: url.text)
            exchange.method = method
            if let body {
                exchange.headers.add(name: "Content-Type", value: "application/json")
                exchange.body = .bytes(ByteBuffer(bytes: body))
            }
            exchange.headers.add(name: "User-Agent", value: "receipt-forge (App Store Server Notifications V2 stand-in)")
            let response: HTTPClientResponse
            do { response = try await client.execute(exchange, deadline: deadline) } catch {
                return .failed(Self.result(of: error, answered: false), "\(error)")
            }
            let status = Int(response.status.code)
            if redirectStatuses.contains(status), let location = response.headers.first(name: "Location") {
                // The redirect's own body is not the answer: read what a bounded answer may hold, then let it go.
                _ = try? await response.body.collect(upTo: WebhookRequest.maximumAnswerBytes)
                let next: HTTPURL
                do throws(HTTPURL.Problem) { next = try url.resolving(location) } catch {
                    return .failed(.other, "HTTP \(status) redirected to a URL that is not followed: \(error)", status: status)
                }
                guard visited.insert(next.text).inserted else {
                    return .failed(.circularRedirect, "HTTP \(status) redirected back to \(next)", status: status)
                }
                guard visited.count <= WebhookRequest.maximumRedirects + 1 else {
                    return .failed(.other, "more than \(WebhookRequest.maximumRedirects) redirects (the last to \(next))", status: status)
                }
                if status == 303 || (status == 301 || status == 302) && method == .POST {
                    method = .GET
                    body = nil
                }
                url = next
                continue
            }
            do {
                let collected = try await response.body.collect(upTo: WebhookRequest.maximumAnswerBytes)
                return .answered(status, nil, Array(buffer: collected))
            } catch is NIOTooManyBytesError {
                return .answered(status, "an answer longer than \(WebhookRequest.maximumAnswerBytes) bytes, not read to its end", [])
            } catch {
                return .failed(Self.result(of: error, answered: true), "the answer (HTTP \(status)) was cut off: \(error)", status: status)
            }
        }
    }

    private enum Outcome: Sendable {
        case answered(Int, String?, [UInt8])
        case failed(SendAttemptResult, String, status: Int? = nil)
    }

    /// Apple's name for a transport failure; `answered` when the status line had arrived (then any failure cut
    /// the answer short: PREMATURE_CLOSE).
    static func result(of error: any Error, answered: Bool) -> SendAttemptResult {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout: return .timedOut
            default: break
            }
        }
        if answered { return .prematureClose }
        if let error = error as? HTTPClientError, error == .remoteConnectionClosed { return .noResponse }
        if error is NIOSSLError || error is BoringSSLError { return .tlsIssue }
        if error is HTTPParserError { return .invalidResponse }
        // Connected, then reset or broken before any answer: NO_RESPONSE; never connected: SOCKET_ISSUE.
        if let error = error as? IOError, [ECONNRESET, EPIPE].contains(error.errnoCode) { return .noResponse }
        if error is NIOConnectionError || error is IOError || error is ChannelError { return .socketIssue }
        return .other
    }
}
