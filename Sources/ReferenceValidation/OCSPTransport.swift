import _ForgeSupport
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How the online check's OCSP requests reach their responders (RFC 6960 Appendix A: a POST of
/// `application/ocsp-request`): one exchange, its answer read to its end and bounded, within one deadline. The
/// default is a socket of its own (``SocketOCSPTransport``); a test, or an app with an HTTP client of its own,
/// injects another through ``OnlineRevocation/transport``.
package protocol OCSPTransport: Sendable {
    /// POSTs the DER `request` to the responder at `url`: the answer's HTTP status and body (at most `maximumBytes`),
    /// or why there is none within `timeout`, connection to last byte.
    func post(_ request: [UInt8], to url: String, timeout: Duration, maximumBytes: Int) async throws(OCSPTransportFailure) -> OCSPHTTPAnswer
}

/// A responder's HTTP answer: its status and body.
package struct OCSPHTTPAnswer: Sendable, Hashable {
    package var status: Int
    package var body: [UInt8]

    package init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

/// Why a transport brought back no answer: `chain.revocation-unavailable`, which Apple's libraries call retryable.
package struct OCSPTransportFailure: CodedError {
    package enum Code: String, Sendable, Hashable, CustomStringConvertible {
        /// The URL is not one the transport can reach (`http://` only).
        case url
        /// Resolution, connection, sending or receiving failed.
        case network
        /// The deadline passed first.
        case deadline
        /// The answer is larger than allowed.
        case oversized
        /// What came back is not an HTTP answer.
        case malformed

        package var description: String { rawValue }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// The default transport: one HTTP/1.0 POST over a socket of its own (``OneShotHTTP``), its blocking `poll` waits on
/// a thread of its own, never on a thread of Swift's cooperative pool (or an event loop the caller runs on); the
/// caller suspends until the answer or the deadline.
package struct SocketOCSPTransport: OCSPTransport {
    package init() {}

    package func post(_ request: [UInt8], to url: String, timeout: Duration, maximumBytes: Int) async throws(OCSPTransportFailure) -> OCSPHTTPAnswer {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<OCSPHTTPAnswer, OCSPTransportFailure>, Never>) in
            DetachedThread.start(name: "forge-ocsp") {
                continuation.resume(
                    returning: OneShotHTTP.post(url, contentType: "application/ocsp-request", body: request, timeout: timeout, maximumBytes: maximumBytes))
            }
        }
        return try result.get()
    }
}
