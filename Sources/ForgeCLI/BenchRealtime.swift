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

/// `forge bench realtime`: Apple's Retention Messaging performance test, run locally before the sandbox's.
struct BenchRealtime: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realtime",
        abstract: "Load-test your Retention Messaging endpoint as Apple's performance test does: signed realtime requests, the 700 ms threshold, PASS or FAIL.",
        discussion: """
            Sends --requests POSTs of {"signedPayload": a realtime request} (`forge jws make realtime` of the same scenario flags, each with its own requestIdentifier, signed by the TEST JWS PKI: trust jws-root-g3.pem), at most --concurrency at a time. A request succeeds when the answer is HTTP 200-206 within --threshold-ms and its body is a JSON object with exactly one of message, alternateProduct and promotionalOffer (Apple's RealtimeResponseBody). The run passes when at least --success-rate percent succeed. It prints PASS or FAIL, the success rate, latency percentiles (p50, p90, p99, max) and the failures by Apple's sendAttemptResult (an answer over the threshold is TIMED_OUT, a body that is not a RealtimeResponseBody INVALID_RESPONSE); --json prints the same as an object. Exit 0 on PASS, 1 on FAIL. [guess: Apple documents the 700 ms threshold, not its concurrency, request count or success threshold; the defaults here are choices]

            Example:
              forge bench realtime http://127.0.0.1:8000/retention --product pro.monthly --type auto-renewable --preset sandbox --requests 200 --concurrency 10
            """)

    @Argument(help: ArgumentHelp("Your Get Retention Message endpoint: http:// or https://.", valueName: "url"))
    var url: String
    @OptionGroup var jws: JWSMakeOptions
    @OptionGroup(title: "Scenario") var scenarioOptions: ScenarioOptions
    @Option(help: ArgumentHelp("Requests in all (1-100000).", valueName: "n"))
    var requests = 100
    @Option(help: ArgumentHelp("Requests in flight at once (1-256).", valueName: "n"))
    var concurrency = 10
    @Option(help: ArgumentHelp("Apple's response time threshold, in milliseconds.", valueName: "ms"))
    var thresholdMs = 700
    @Option(help: ArgumentHelp("Percent of requests that must succeed for PASS (0-100).", valueName: "percent"))
    var successRate = 95.0
    @Option(help: ArgumentHelp("Seconds before an unanswered request is abandoned (1-600).", valueName: "s"))
    var timeout = 5
    @Option(help: ArgumentHelp("PEM certificates an https:// endpoint may chain to, besides the system's.", valueName: "file"))
    var notifyCa: String?
    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        _ = try HTTPURL.argument(url)
        guard (1...100_000).contains(requests) else { throw ValidationError("--requests must be from 1 to 100000, not \(requests)") }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be from 1 to 256, not \(concurrency)") }
        guard (1...600_000).contains(thresholdMs) else { throw ValidationError("--threshold-ms must be from 1 to 600000, not \(thresholdMs)") }
        guard (0...100).contains(successRate) else { throw ValidationError("--success-rate is a percentage from 0 to 100, not \(successRate)") }
        guard WebhookRequest.timeoutRange.contains(timeout) else { throw ValidationError("--timeout \(WebhookRequest.timeoutRange.requirement), not \(timeout)") }
    }

    func run() async throws {
        let target = try HTTPURL.argument(url)
        let forged = try jws.forged(.realtime, scenario: scenarioOptions)
        guard let payload = forged.payload.objectValue else { throw fail("the realtime request is not a JSON object", Exit.software) }
        let trust = try notifyCa.map { String(decoding: try readInput($0, kind: .certificate).bytes, as: UTF8.self) }
        let forge: Forge
        do {
            let pki = try jws.jwsCertificates.map { try CertificateSet<JWSRole>.load(from: URL(fileURLWithPath: $0)) }
            forge = try Forge(receiptPKI: .bundled(), jwsPKI: pki)
        } catch let error as ForgeError { throw fail(error.message, Exit.code(for: error)) }
        // Apple sends each request with its own identifier.
        let bodies: [[UInt8]]
        do {
            bodies = try RealtimeLoadTest.bodies(of: payload, count: requests, seed: 0x7265_616C_7469_6D65) { (value) throws(ForgeError) in  // "realtime"
                try forge.sign(value, xcode: forged.xcodeSigned)
            }
        } catch { throw fail(error.message, Exit.code(for: error)) }
        let posts = bodies.map { WebhookRequest(url: target, body: $0, timeoutSeconds: timeout, trustedRootsPEM: trust) }
        let network = try Network.required(for: "forge bench realtime")
        let started = ContinuousClock.now
        let answers = await network.deliver(posts, concurrency: concurrency)
        let elapsed = ContinuousClock.now - started
        let outcome = RealtimeLoadTest.Outcome(answers, thresholdMilliseconds: thresholdMs)
        let percentile = outcome.percentile
        let latencies = outcome.latencies
        let succeeded = outcome.succeeded
        let rate = outcome.successRate
        let passed = rate >= successRate
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let ordered = outcome.orderedFailures.map { ($0.result, $0.count) }
        if json {
            var members: JSONObject = [("result", .string(passed ? "PASS" : "FAIL")), ("url", .string(url))]
            members.append(("totalRequests", .integer(Int64(answers.count))))
            members.append(("succeeded", .integer(Int64(succeeded))))
            members.append(("successRate", .number(rate)))
            members.append(("successRateThreshold", .number(successRate)))
            members.append(("responseTimeThreshold", .integer(Int64(thresholdMs))))
            members.append(("maxConcurrentRequests", .integer(Int64(concurrency))))
            members.append(("totalDuration", .integer(Int64(seconds * 1000))))
            for (name, p) in [("p50", 500), ("p90", 900), ("p99", 990)] { members.append((name, .integer(percentile(p)))) }
            members.append(("max", .integer(latencies.last ?? 0)))
            let failed: JSONObject = JSONObject(ordered.map { ($0.0.rawValue, JSONValue.integer(Int64($0.1))) })
            members.append(("failures", .object(failed)))
            let object = JSONValue.object(members)
            print(object.serialized(pretty: false))
        } else {
            print(
                "\(passed ? "PASS" : "FAIL")  \(succeeded)/\(answers.count) succeeded (\(printfFormat("%.1f", rate)) %, threshold \(printfFormat("%g", successRate)) %)  "
                    + "p50 \(percentile(500)) ms  p90 \(percentile(900)) ms  p99 \(percentile(990)) ms  max \(latencies.last ?? 0) ms  "
                    + "(threshold \(thresholdMs) ms, concurrency \(concurrency), \(printfFormat("%.1f", seconds)) s)")
            if !ordered.isEmpty { print("failures: " + ordered.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ")) }
        }
        if !passed { throw Exit.invalid }
    }
}
