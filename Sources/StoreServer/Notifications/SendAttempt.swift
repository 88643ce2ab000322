#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import _ForgeSupport

/// Apple's `sendAttemptResult`: how one attempt to deliver a notification to a webhook ended (App Store Server
/// API, `SendAttemptResult`; server-api-facts §2). Apple counts HTTP 200–206 as delivered and everything else,
/// answered or not, as a failed attempt it retries.
package enum SendAttemptResult: String, Sendable, Hashable, CaseIterable, Codable {
    case success = "SUCCESS"
    case timedOut = "TIMED_OUT"
    case tlsIssue = "TLS_ISSUE"
    case circularRedirect = "CIRCULAR_REDIRECT"
    case noResponse = "NO_RESPONSE"
    case socketIssue = "SOCKET_ISSUE"
    case unsupportedCharset = "UNSUPPORTED_CHARSET"
    case invalidResponse = "INVALID_RESPONSE"
    case prematureClose = "PREMATURE_CLOSE"
    case unsuccessfulHTTPResponseCode = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
    case other = "OTHER"

    /// The statuses Apple counts as delivered.
    package static let delivered = 200...206

    /// The result of an attempt the webhook answered with `status`.
    package init(httpStatus status: Int) { self = Self.delivered.contains(status) ? .success : .unsuccessfulHTTPResponseCode }
}

/// One attempt to deliver a notification: when, how it ended, the HTTP status if one came, how long it took,
/// and what the transport said when it failed.
package struct SendAttempt: Sendable {
    package var date: Date
    package var result: SendAttemptResult
    package var httpStatus: Int?
    package var milliseconds: Int64
    package var detail: String?

    package init(date: Date, result: SendAttemptResult, httpStatus: Int? = nil, milliseconds: Int64, detail: String? = nil) {
        self.date = date
        self.result = result
        self.httpStatus = httpStatus
        self.milliseconds = milliseconds
        self.detail = detail
    }

    /// Apple's `SendAttemptItem`: what Get Notification History and Get Test Notification Status list of an attempt.
    package var item: SendAttemptItem { SendAttemptItem(attemptDate: ReceiptDate.milliseconds(date) ?? 0, sendAttemptResult: result) }

    /// `attemptDate` and `sendAttemptResult` as Apple's history carries them, then what forge adds (`forge notify`).
    package var json: JSONValue {
        var members: JSONObject = [("attemptDate", .integer(ReceiptDate.milliseconds(date) ?? 0)), ("sendAttemptResult", .string(result.rawValue))]
        if let httpStatus { members.append(("httpStatus", .integer(Int64(httpStatus)))) }
        members.append(("latencyMilliseconds", .integer(milliseconds)))
        if let detail { members.append(("detail", .string(detail))) }
        return .object(members)
    }
}

/// One POST of a notification to a webhook, independent of any HTTP library.
package struct WebhookRequest: Sendable {
    /// Checked where it was read (``HTTPURL``), as every URL a redirect leads to is.
    package var url: HTTPURL
    /// The exact bytes: Apple's `{"signedPayload":"…"}`, or a saved body replayed.
    package var body: [UInt8]
    /// An attempt that has no complete answer by then has timed out.
    package var timeoutSeconds: Int
    /// PEM certificates an `https://` webhook may chain to besides the system's (`--notify-ca`).
    package var trustedRootsPEM: String?

    /// How long one attempt may take by default. [guess: Apple's is not documented; developers report about 30 s]
    package static let defaultTimeoutSeconds = 30
    /// The timeouts a command line may ask for.
    package static let timeoutRange = 1...600
    /// The most of a webhook's answer that is read: enough for any acknowledgement; the rest of a flood is not read.
    package static let maximumAnswerBytes = 64 << 10
    /// Redirects followed before the attempt gives up (a cycle is CIRCULAR_REDIRECT at once).
    package static let maximumRedirects = 5

    package init(url: HTTPURL, body: [UInt8], timeoutSeconds: Int = defaultTimeoutSeconds, trustedRootsPEM: String? = nil) {
        self.url = url
        self.body = body
        self.timeoutSeconds = timeoutSeconds
        self.trustedRootsPEM = trustedRootsPEM
    }

    /// Apple's body for `signedPayload`: `{"signedPayload":"…"}` and nothing else.
    package static func body(signedPayload: String) -> [UInt8] {
        Array(JSONValue.object([("signedPayload", .string(signedPayload))]).serialized(pretty: false).utf8)
    }
}

/// An attempt and the start of the webhook's answer (at most ``WebhookRequest/maximumAnswerBytes``).
package struct WebhookAnswer: Sendable {
    package var attempt: SendAttempt
    package var body: [UInt8]

    package init(attempt: SendAttempt, body: [UInt8]) {
        self.attempt = attempt
        self.body = body
    }
}
