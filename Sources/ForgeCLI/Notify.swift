import AppStoreVocabulary
import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import StoreForge
import StoreServer
import _ForgeSupport
import JWSModel
import StoreModel

/// `forge notify`: one App Store Server Notification V2, signed and POSTed to a webhook as Apple sends it.
struct Notify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "Sign one App Store Server Notification V2 and POST it to your webhook as Apple does; print how the attempt ended.",
        discussion: """
            The notification is `forge jws make notification` of the same flags (--notification-type, --subtype, --event, the scenario), sent as Apple's body {"signedPayload":"…"} with Content-Type: application/json. Redirects are followed, at most \(WebhookRequest.maximumRedirects), each Location checked before anything connects (a cycle is CIRCULAR_REDIRECT; a sixth redirect, or one to a URL that is not http(s) with a host and a port from 1 to 65535, is OTHER); the attempt has --timeout seconds in all (connect, request, answer), and at most \(WebhookRequest.maximumAnswerBytes) bytes of the answer are read.

            It prints one line: Apple's sendAttemptResult (SUCCESS for HTTP 200-206, UNSUCCESSFUL_HTTP_RESPONSE_CODE, TIMED_OUT, TLS_ISSUE, SOCKET_ISSUE (nothing listens), NO_RESPONSE (closed before answering), PREMATURE_CLOSE (closed mid-answer), INVALID_RESPONSE (not HTTP), CIRCULAR_REDIRECT, OTHER), the HTTP status and the latency; --json prints {attemptDate, sendAttemptResult, httpStatus, latencyMilliseconds, detail, url, notificationType, subtype}. Exit 0 when delivered (SUCCESS), 1 when the attempt failed.

            --save FILE writes the exact body sent; --replay FILE sends a saved body again, byte for byte (duplicate delivery, as Apple's retries send the same notification). An https:// webhook is verified against the system's roots and --notify-ca.

            Examples:
              forge notify http://127.0.0.1:8000/apple --notification-type DID_RENEW --product pro.monthly --renewals 1 --preset sandbox --save n.json
              forge notify http://127.0.0.1:8000/apple --replay n.json
              forge notify https://hooks.example.test/apple --notify-ca ca.pem --spec examples/serve-history.json --event 2 --json
            """)

    @Argument(help: ArgumentHelp("The webhook: http:// or https://.", valueName: "url"))
    var url: String
    @OptionGroup var jws: JWSMakeOptions
    @OptionGroup(title: "Scenario") var scenarioOptions: ScenarioOptions
    @Option(help: ArgumentHelp("Send this saved body (from --save) byte for byte instead of signing a new notification.", valueName: "file"))
    var replay: String?
    @Option(help: ArgumentHelp("Write the exact body sent to this file (all or nothing).", valueName: "file"))
    var save: String?
    @Option(help: ArgumentHelp("Seconds the whole attempt may take (\(WebhookRequest.timeoutRange.lowerBound)-\(WebhookRequest.timeoutRange.upperBound)).", valueName: "s"))
    var timeout = WebhookRequest.defaultTimeoutSeconds
    @Option(help: ArgumentHelp("PEM certificates an https:// webhook may chain to, besides the system's.", valueName: "file"))
    var notifyCa: String?
    @Flag(help: "Print the attempt as JSON.")
    var json = false

    func validate() throws {
        _ = try HTTPURL.argument(url)
        guard WebhookRequest.timeoutRange.contains(timeout) else {
            throw ValidationError("--timeout \(WebhookRequest.timeoutRange.requirement), not \(timeout)")
        }
        if replay != nil, jws.notificationType != nil || jws.subtype != nil || jws.event != nil {
            throw ValidationError("--replay sends a saved body as it is: leave out --notification-type, --subtype and --event")
        }
    }

    func run() async throws {
        let target = try HTTPURL.argument(url)
        var pair: (type: String?, subtype: String?) = (nil, nil)
        let body: [UInt8]
        if let replay {
            body = try readInput(replay, kind: .json).bytes
        } else {
            let forged = try jws.forged(.notification, scenario: scenarioOptions)
            pair = (forged.payload["notificationType"]?.stringValue, forged.payload["subtype"]?.stringValue)
            body = WebhookRequest.body(signedPayload: forged.compact)
        }
        if let save { try writeOutput(Data(body), to: save) }
        let trust = try notifyCa.map { String(decoding: try readInput($0, kind: .certificate).bytes, as: UTF8.self) }
        let network = try Network.required(for: "forge notify")
        let answers = await network.deliver([WebhookRequest(url: target, body: body, timeoutSeconds: timeout, trustedRootsPEM: trust)], concurrency: 1)
        guard let attempt = answers.first?.attempt else { throw fail("no attempt was made", Exit.software) }
        if json {
            var members = attempt.json.objectValue ?? []
            members += [("url", .string(url)), ("notificationType", pair.type.map(JSONValue.string) ?? .null), ("subtype", pair.subtype.map(JSONValue.string) ?? .null)]
            print(JSONValue.object(members).serialized(pretty: false))
        } else {
            let status = attempt.httpStatus.map { "HTTP \($0)" } ?? "no HTTP status"
            print("\(attempt.result.rawValue)  \(status)  \(attempt.milliseconds) ms  \(url)\(attempt.detail.map { "  (\($0))" } ?? "")")
        }
        if attempt.result != .success { throw Exit.invalid }
    }
}
