import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
public import ReceiptServe

/// Delivers notifications to webhooks as Apple does: a POST of `{"signedPayload":"…"}` with
/// `Content-Type: application/json`, redirects followed but not in a circle, one time limit over the whole
/// attempt (connect, request, headers and body), and every way it can end named by Apple's `sendAttemptResult`.
public enum WebhookClient {
    /// One attempt; never throws: every failure is an attempt with its result.
    public static func deliver(_ request: WebhookRequest, at date: Date = Date()) async -> SendAttempt {
        let started = ContinuousClock.now
        func attempt(_ result: SendAttemptResult, status: Int? = nil, detail: String? = nil) -> SendAttempt {
            let elapsed = ContinuousClock.now - started
            let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
            return SendAttempt(date: date, result: result, httpStatus: status, milliseconds: milliseconds, detail: detail)
        }
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .follow(max: WebhookRequest.maximumRedirects, allowCycles: false)
        configuration.decompression = .disabled
        configuration.timeout = .init(connect: .seconds(Int64(request.timeoutSeconds)))
        // One attempt is one connection: a refused or failed handshake is the attempt's result, not retried until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        if let pem = request.trustedRootsPEM {
            do {
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))]
                configuration.tlsConfiguration = tls
            } catch {
                return attempt(.tlsIssue, detail: "the trusted certificates are not PEM: \(error)")
            }
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { client.shutdown { _ in } }
        var post = HTTPClientRequest(url: request.url.absoluteString)
        post.method = .POST
        post.headers.add(name: "Content-Type", value: "application/json")
        post.headers.add(name: "User-Agent", value: "receipt-forge (App Store Server Notifications V2 stand-in)")
        post.body = .bytes(ByteBuffer(bytes: request.body))
        let prepared = post
        let limit = Duration.seconds(request.timeoutSeconds)
        let outcome: Outcome? = await withTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                let response: HTTPClientResponse
                do { response = try await client.execute(prepared, deadline: .now() + .seconds(Int64(request.timeoutSeconds))) } catch {
                    return .failed(Self.result(of: error, answered: false), "\(error)")
                }
                let status = Int(response.status.code)
                do {
                    _ = try await response.body.collect(upTo: WebhookRequest.maximumAnswerBytes)
                } catch is NIOTooManyBytesError {
                    return .answered(status, "an answer longer than \(WebhookRequest.maximumAnswerBytes) bytes, not read to its end")
                } catch {
                    return .failed(Self.result(of: error, answered: true), "the answer (HTTP \(status)) was cut off: \(error)", status: status)
                }
                return .answered(status, nil)
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        switch outcome {
        case .answered(let status, let detail)?: return attempt(SendAttemptResult(httpStatus: status), status: status, detail: detail)
        case .failed(let result, let detail, let status)?: return attempt(result, status: status, detail: detail)
        case nil: return attempt(.timedOut, detail: "no complete answer within \(request.timeoutSeconds) s")
        }
    }

    private enum Outcome: Sendable {
        case answered(Int, String?)
        case failed(SendAttemptResult, String, status: Int? = nil)
    }

    /// Apple's name for a transport failure; `answered` when the status line had arrived (then any failure cut
    /// the answer short: PREMATURE_CLOSE).
    static func result(of error: any Error, answered: Bool) -> SendAttemptResult {
        if let error = error as? HTTPClientError {
            switch error {
            case .redirectCycleDetected: return .circularRedirect
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
