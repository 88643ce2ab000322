public import Foundation
public import _ForgeSupport

/// Apple's `sendAttemptResult`: how one attempt to deliver a notification to a webhook ended (App Store Server
/// API, `SendAttemptResult`; server-api-facts §2). Apple counts HTTP 200–206 as delivered and everything else,
/// answered or not, as a failed attempt it retries.
public enum SendAttemptResult: String, Sendable, Hashable, CaseIterable, Codable {
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
    public static let delivered = 200...206

    /// The result of an attempt the webhook answered with `status`.
    public init(httpStatus status: Int) { self = Self.delivered.contains(status) ? .success : .unsuccessfulHTTPResponseCode }
}

/// One attempt to deliver a notification: when, how it ended, the HTTP status if one came, how long it took,
/// and what the transport said when it failed.
public struct SendAttempt: Sendable {
    public var date: Date
    public var result: SendAttemptResult
    public var httpStatus: Int?
    public var milliseconds: Int64
    public var detail: String?

    public init(date: Date, result: SendAttemptResult, httpStatus: Int? = nil, milliseconds: Int64, detail: String? = nil) {
        self.date = date
        self.result = result
        self.httpStatus = httpStatus
        self.milliseconds = milliseconds
        self.detail = detail
    }

    /// Apple's `SendAttemptItem`: what Get Notification History and Get Test Notification Status list of an attempt.
    public var item: SendAttemptItem { SendAttemptItem(attemptDate: ReceiptDate.milliseconds(date) ?? 0, sendAttemptResult: result) }

    /// `attemptDate` and `sendAttemptResult` as Apple's history carries them, then what forge adds (`forge notify`).
    public var json: JSONValue {
        var members: JSONObject = [("attemptDate", .integer(ReceiptDate.milliseconds(date) ?? 0)), ("sendAttemptResult", .string(result.rawValue))]
        if let httpStatus { members.append(("httpStatus", .integer(Int64(httpStatus)))) }
        members.append(("latencyMilliseconds", .integer(milliseconds)))
        if let detail { members.append(("detail", .string(detail))) }
        return .object(members)
    }
}

/// One POST of a notification to a webhook, independent of any HTTP library.
public struct WebhookRequest: Sendable {
    /// Checked where it was read (``HTTPURL``), as every URL a redirect leads to is.
    public var url: HTTPURL
    /// The exact bytes: Apple's `{"signedPayload":"…"}`, or a saved body replayed.
    public var body: [UInt8]
    /// An attempt that has no complete answer by then has timed out.
    public var timeoutSeconds: Int
    /// PEM certificates an `https://` webhook may chain to besides the system's (`--notify-ca`).
    public var trustedRootsPEM: String?

    /// How long one attempt may take by default. [guess: Apple's is not documented; developers report about 30 s]
    public static let defaultTimeoutSeconds = 30
    /// The timeouts a command line may ask for.
    public static let timeoutRange = 1...600
    /// The most of a webhook's answer that is read: enough for any acknowledgement; the rest of a flood is not read.
    public static let maximumAnswerBytes = 64 << 10
    /// Redirects followed before the attempt gives up (a cycle is CIRCULAR_REDIRECT at once).
    public static let maximumRedirects = 5

    public init(url: HTTPURL, body: [UInt8], timeoutSeconds: Int = defaultTimeoutSeconds, trustedRootsPEM: String? = nil) {
        self.url = url
        self.body = body
        self.timeoutSeconds = timeoutSeconds
        self.trustedRootsPEM = trustedRootsPEM
    }

    /// Apple's body for `signedPayload`: `{"signedPayload":"…"}` and nothing else.
    public static func body(signedPayload: String) -> [UInt8] {
        Array(JSONValue.object([("signedPayload", .string(signedPayload))]).serialized(pretty: false).utf8)
    }
}

/// An attempt and the start of the webhook's answer (at most ``WebhookRequest/maximumAnswerBytes``).
public struct WebhookAnswer: Sendable {
    public var attempt: SendAttempt
    public var body: [UInt8]

    public init(attempt: SendAttempt, body: [UInt8]) {
        self.attempt = attempt
        self.body = body
    }
}
