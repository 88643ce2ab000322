import ReceiptModel
package import _ForgeSupport
import StoreModel

/// Why a server did not answer a request as asked, in words a client can act on: the one vocabulary of
/// `forge serve` and `forge validate --listen` for bodies, timeouts, load and the control routes.
/// Compared by code only.
package struct ServerRefusal: CodedError, Sendable {
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// The body is over ``ServerLimits/maximumBody`` (or a route's own limit).
        case bodyTooLarge
        /// The body's framing is broken (e.g. not valid chunked encoding).
        case bodyMalformed
        /// The connection closed before the body ended.
        case bodyIncomplete
        /// The body did not arrive within the read timeout.
        case bodyTimeout
        /// The server already holds ``ServerLimits/maximumBodyBytesInFlight`` of request bodies.
        case bodiesInFlight
        /// Every worker is busy and the queue is full.
        case busy
        /// No answer within ``ServerLimits/answerTimeout``.
        case answerTimeout
        /// The server is stopping.
        case shuttingDown
        /// A control route from another host, for another `Host` or from a web page (`Origin`) while no control token is set.
        case controlForbidden
        /// A control POST that is not `Content-Type: application/json` while no control token is set.
        case controlUnsupportedMediaType
        /// A control route without the control token, or with another one.
        case controlUnauthorized
        package var description: String { rawValue }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The HTTP status that says the same.
    package var httpStatus: Int {
        switch code {
        case .bodyTooLarge: 413
        case .bodyMalformed, .bodyIncomplete: 400
        case .bodyTimeout: 408
        case .bodiesInFlight, .busy, .answerTimeout, .shuttingDown: 503
        case .controlForbidden: 403
        case .controlUnauthorized: 401
        case .controlUnsupportedMediaType: 415
        }
    }

    /// `{"error": code, "message": text}`: the body of a refusal on the harness and control routes.
    package var json: JSONValue { .object([("error", .string(code.rawValue)), ("message", .string(message))]) }

    /// Apple's shape for the verifyReceipt endpoints: a status a client already handles (21000 for a request
    /// that cannot be read, 21005 "temporarily unavailable" for load), with `forge_error` and `forge_message`.
    package var verifyReceiptJSON: JSONValue {
        let status: VerifyReceiptStatus = httpStatus == 503 ? .serverUnavailable : .unreadableRequest
        return .object([("status", .integer(status.rawValue)), ("forge_error", .string(code.rawValue)), ("forge_message", .string(message))])
    }

    package static func bodyTooLarge(limit: Int) -> Self {
        Self(.bodyTooLarge, "the request body is over \(limit) bytes (the limit of this route)")
    }

    package static let bodyNotChunked = Self(.bodyMalformed, "the request body is not valid chunked encoding (or its HTTP/1.1 framing is broken)")

    package static func bodyIncomplete(received: Int, declared: Int?) -> Self {
        let of = declared.map { " of the \($0) announced" } ?? ""
        return Self(.bodyIncomplete, "the connection closed before the request body ended (\(received) bytes\(of))")
    }

    package static func bodyTimeout(seconds: Int) -> Self {
        Self(.bodyTimeout, "the request body did not arrive within \(seconds) s of its headers (\(ServeOption.readTimeout))")
    }

    package static func bodiesInFlight(limit: Int) -> Self {
        Self(.bodiesInFlight, "the server already holds \(limit) bytes of request bodies not yet answered; retry shortly")
    }
}
