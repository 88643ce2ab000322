import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import ReceiptCorpus
import StoreForge
import ReceiptModel
import StoreServer
import _ForgeSupport
import StoreModel

/// `forge serve`: Apple's server side, hermetic. This command only parses: its flags become a ``ServeConfiguration``, which
/// forge-http (which forge starts) builds and serves (`ForgeServers.buildServeApplication`).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Stand in for Apple's servers for testing server code: verifyReceipt (production and sandbox), the App Store Server API, notifications to your webhook and OCSP, with faults on demand.",
        discussion: """
            POST /verifyReceipt plays https://buy.itunes.apple.com/verifyReceipt and POST /sandbox/verifyReceipt plays https://sandbox.itunes.apple.com/verifyReceipt: the request {"receipt-data", "password", "exclude-old-transactions"}, HTTP 200 with Apple's JSON and status codes:
              0 valid (decoded: receipt, in_app, latest_receipt_info, pending_renewal_info, latest_receipt)
              21000 not a POST, or the body is not a JSON object      21002 receipt-data missing or not a receipt
              21003 signature or chain fails under --root               21004 wrong or missing password (--shared-secret)
              21006 valid, subscription expired (--legacy-expired-status) 21007 sandbox receipt sent to production
              21008 production receipt sent to sandbox                 21010 account deleted (timeline event)
              21005, 21009, 21100-21199 (with is-retryable): only as faults

            Server-side history: --scenario FILE takes the JSON of `forge make --spec`, with its "now" (when the device's receipt was made) and a "timeline" of what happened since, e.g.
              {"bundleId": "com.example.app", "now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-12-15T00:00:00Z", "period": "P1M"}],
               "timeline": [{"event": "renew", "count": 2}, {"event": "billing-retry", "at": "2025-03-15T00:00:00Z"}]}
            Events: renew (count), cancel, refund (reason other|app-issue), billing-retry, grace-period (days), recover, price-increase (consent pending|accepted|declined), change-product (to), account-deleted, billing-retry-ended (Apple stops retrying: expired, intent 2), product-withdrawn (intent 4), extend (days 1-90: the period in force at `at` ends later), app-account-token (token: a UUID on the purchase's transactions; originalTransactionId), consent-revoked (a parent revokes consent: RESCIND_CONSENT about the app, no productId), refund-request (requestReason: CONSUMPTION_REQUEST with consumptionRequestReason; refunds nothing). A receipt with the scenario's transactions is answered as of the server's clock (--now, or X-Forge-Now per request): latest_receipt_info, pending_renewal_info and a re-issued latest_receipt reflect the events up to then.

            App Store Server API (the same --scenario files, each one customer of one app; signed fields rendered from the store model at the server's clock and signed by the EC TEST PKI, trust jws-root-g3.pem): production at /inApps/… (the sandbox there too when Host is api.storekit-sandbox.apple.com), sandbox at /sandbox/inApps/…, a store served in its own environment. GET /inApps/v1/transactions/{transactionId}; GET /inApps/v2/history/{anyTransactionId} and v1 (revision, sort, productId, productType, startDate, endDate, revoked, inAppOwnershipType, subscriptionGroupIdentifier; 20 a page; revision is a durable cursor); GET /inApps/v1/subscriptions/{anyTransactionId} (status=1…5); GET /inApps/v2/refund/lookup/{anyTransactionId}; GET /inApps/v1/lookup/{orderId} (production only; `forge jws make transaction` prints the order id); GET /inApps/v1/transactions/appTransactions/{anyTransactionId}; PUT /inApps/v1|v2/transactions/consumption/{transactionId} (202); POST /inApps/v1/transactions/{transactionId}/finish; PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken; PUT /inApps/v1/subscriptions/extend/{originalTransactionId} (1-90 days, twice in 365 days, active subscriptions outside a free trial); POST /inApps/v1/subscriptions/extend/mass and GET …/mass/{productId}/{requestIdentifier}; POST /inApps/v1/notifications/test and GET …/test/{token}; POST /inApps/v1/notifications/history (paginationToken; derived from the store: purchases, renewals, refunds, timeline events, extensions, TEST; 30 days back in the sandbox, 180 in production; sendAttempts from --notify's deliveries). --notify URL and --notify-sandbox URL deliver each notification to your webhook as the server clock passes it, retried 1, 12, 24, 48 and 72 hours after a failed first attempt (sandbox: once); --time-rate N runs the clock N times as fast as the wall's (7200: Apple's retry schedule in 36 s); each webhook has its own queue of at most \(NotificationDispatcher.maximumPending) pending (more are dropped, counted, said on stderr); without a webhook for the environment, Request a Test Notification answers 4040007, and while its queue is full 5000001 (retryable). Every URL is checked where it is read (http or https, a host, a port from 1 to 65535), each redirect's Location too, before anything connects; a webhook whose host is not loopback is warned about at start. --state FILE keeps all of it (clock, changes, test notifications, finished transactions, consumption reports, every notification with its attempts and pending retries) in SQLite: kill the server at any instant and start it again on the file, and no acknowledged delivery is repeated and no retry lost. Changes (an extension, an app account token) are timeline events appended to the customer's scenario at the server clock: every later answer shows them, verifyReceipt's too; GET /_forge/scenarios prints the scenarios as held (forge jws make --spec replays them). The clock is --now (or the wall clock), moved forward by POST /_forge/clock ({"now":DATE}, {"advance":"P1M"} or {"advance":SECONDS}; GET reads it); X-Forge-Now sets it for one request. Reads at a pinned clock are answered from a cache until the state changes. Errors are Apple's: {"errorCode","errorMessage"} as application/json with the HTTP status of the code's family (Documentation/serve.md lists every code sent); any other method on a known path is 405 with Allow. Without --no-auth these routes answer 401 with an empty body. Documentation/server-api.openapi.yaml is the API as served (OpenAPI 3.1).

            Faults, on both APIs, by --fault or while running with POST /_forge/faults: [ENDPOINT:]ACTION[,count=N|,percent=P][,latency=MS]. ENDPOINT: any (the default: every endpoint of both APIs), production or sandbox (verifyReceipt's), or Server API endpoints as NAME (both environments), production/NAME, sandbox/NAME, production/any, sandbox/any or any/any, NAME one of \(FaultEndpoint.serverAPINames.joined(separator: ", ")). ACTION one of status=CODE (verifyReceipt: 21000-21010 or 21100-21199 [retryable=false]; Server API: one of Apple's error codes, e.g. 5000001, answered with its HTTP status and {"errorCode","errorMessage"}; with any, only the endpoints of the code's API), http=CODE, close (half a response, then the connection closes), not-json (a proxy's HTML page: HTTP 200 on verifyReceipt, 503 on the Server API), latency=MS. On the Server API a fault applies after the token check and the rate limit (a 401 or a 429 does not spend it) and before the endpoint runs (a faulted request changes nothing). E.g. --fault production:status=21005,count=2 --fault sandbox:http=503,percent=25 --fault sandbox/transactionInfo:status=5000001,count=1. GET /_forge/faults lists them as JSON Lines, one object per line in the form POST takes (with what is left of each count), DELETE /_forge/faults clears them; GET /_forge/log is the request log (JSON Lines; --log FILE also appends it to a file).

            OCSP (--ocsp, --ocsp-answer, --ocsp-ca): RFC 6960 at /ocsp (POST, or GET with the request in the path) for the bundled receipt and JWS TEST PKIs and each --ocsp-ca set (`forge ca init --jws --ocsp-url URL` makes one whose leaf and intermediate name this server): SHA-1 and SHA-256 CertIDs, the nonce echoed, signed by the issuer. Per certificate: good unless --ocsp-answer CERT=ANSWER or POST /_forge/ocsp (the same text; GET lists, DELETE resets) says \(OCSPAnswer.Kind.allCases.filter { $0 != .good }.map(\.rawValue).joined(separator: ", ")); a path that names an answer (/ocsp/revoked/…) wins. Answers are dated by the wall clock.

            Control routes (/_forge/*) are for the test that owns the server, not a web page: without --control-token they answer loopback clients only, for a loopback Host (or the --listen host), with no foreign Origin (null included), and POSTs with Content-Type: application/json (403, or 415 for the type); with --control-token TOKEN every client, loopback too, must send Authorization: Bearer TOKEN (401 without it), and nothing else is checked. Refusals are JSON {"error", "message"}, logged with the rule broken. --listen on a non-loopback address prints the address bound and warns on stderr. \(ServerOptions.listenHelp)

            \(ServerOptions.limitsHelp) The request log in memory keeps the last --log-capacity entries (default \(ServerLimits.defaultLogCapacity)) and at most \(RequestLog.defaultMaximumBytes >> 20) MiB of them, each string of an entry cut at \(RequestLog.maximumStringBytes) bytes; GET /_forge/log says in X-Forge-Log-Evicted how many it pushed out, in X-Forge-Log-Dropped how many lines --log FILE could not take (a full disk, or a writer 4 MiB behind: said once on stderr; a line is written whole or not at all) and in X-Forge-Log-Written the seq up to which the file is complete (a thread of its own writes it, so no request waits on the disk). At most \(ServerLimits.maximumFaults) faults are in force at once (POST /_forge/faults answers 409 past that). On the verifyReceipt endpoints a refusal keeps Apple's shape: HTTP 200 with status 21000 (the body: too large, broken framing, cut off) or 21005 (busy, no answer in time), forge_error and forge_message.

            \(ServeEnvironment.help)

            TEST ONLY: receipts are judged under the bundled TEST root (--root receipt) unless --root; --tls serves HTTPS with a certificate issued by that root for the host, localhost, 127.0.0.1 and Apple's Server API host names \(ServerAPIEnvironment.allCases.map(\.appleHost).joined(separator: ", ")), so a client trusts root.pem (`forge ca export --out DIR` writes it). A request at /inApps/… whose Host is one of those names is served by its environment, so Apple's clients reach this server unpatched when the names resolve to it (/etc/hosts) and root.pem is trusted. \(ServerAPIEnvironment.localTesting.appleHost) (Apple's Environment.LOCAL_TESTING, for unit tests; also at /local-testing/inApps/…) serves every store, production and sandbox, at production's rate limits. Documentation/server-api-clients.md shows how to point each of Apple's clients here.
            """)

    @Option(help: ArgumentHelp("Where to listen; port 0 picks a free port. The URLs are printed on stdout.", valueName: "host:port"))
    var listen = "127.0.0.1:8080"
    @Flag(
        help:
            "Serve HTTPS with a certificate issued by the TEST root for the host, localhost and Apple's Server API host names (trust root.pem of `forge ca export` in the client). Every URL printed becomes https://, the control routes (/_forge/*) too: a test's own calls to them must trust root.pem as well (--export-roots writes it; --ready-json names it)."
    )
    var tls = false
    @Option(help: ArgumentHelp("The app's shared secret: receipts with auto-renewable purchases then need it as password (21004).", valueName: "secret"))
    var sharedSecret: String?
    @Option(
        name: .customLong(ServeOption.scenario.rawValue),
        help: ArgumentHelp(
            "A server-side history (forge make --spec JSON with now and a timeline), or a folder of them (its *.json files in name order); repeatable.",
            valueName: "file"))
    var scenario: [String] = []
    @Option(
        help: ArgumentHelp(
            "An Xcode StoreKit configuration file: its products and storefront fill what each --scenario leaves unsaid (a scenario's own storefront and products win), its _timeRate is the default --time-rate, and --product serves one more customer who bought those products.",
            valueName: "file"))
    var storekit: String?
    @Option(name: .customLong("product"), help: ArgumentHelp("With --storekit: a product the extra customer bought (repeatable).", valueName: "id"))
    var products: [String] = []
    @Option(name: .customLong(ServeOption.fault.rawValue), help: ArgumentHelp("Fault on demand (see above); repeatable, first match applies.", valueName: "spec"))
    var fault: [String] = []
    @Option(help: ArgumentHelp("The server's clock (YYYY-MM-DDThh:mm:ssZ). Default: the wall clock.", valueName: "date"))
    var now: String?
    @Option(help: ArgumentHelp("Seed of the percent= fault draws.", valueName: "n"))
    var seed: UInt64 = 0
    @Flag(help: "Answer 21006 with the decoded receipt when every subscription has expired, as verifyReceipt did for iOS 6-style receipts.")
    var legacyExpiredStatus = false
    @Option(help: ArgumentHelp("Append the request log (JSON Lines) to this file.", valueName: "file"))
    var log: String?
    @Option(help: RootOption.help(default: "receipt"))
    var root: [String] = []
    @Option(help: ArgumentHelp("Event-loop threads. Default: one per core.", valueName: "n"))
    var threads: Int?
    @Flag(
        name: .customLong(ServeOption.noAuth.rawValue),
        help:
            "Answer the App Store Server API (/inApps/…, /sandbox/inApps/…) without checking the bearer token. Without it those routes answer 401 with an empty body: nothing is open by accident."
    )
    var noAuth = false
    @Option(
        help: ArgumentHelp(
            "apple: enforce Apple's per-app, per-endpoint request rates on the Server API (50/s transaction info, history, statuses, consumption, finish; 10/s refund history; the sandbox at 10 %), answering 429, 4290000 and Retry-After (UNIX time in ms). off: no limit.",
            valueName: "apple|off"))
    var rateLimits: RateLimitMode = .off
    @OptionGroup(title: "Limits") var server: ServerOptions
    @Option(help: ArgumentHelp("Request log entries kept in memory for GET /_forge/log (a ring: the oldest go first).", valueName: "n"))
    var logCapacity = ServerLimits.defaultLogCapacity
    @Option(
        name: .customLong(ServeOption.controlToken.rawValue),
        help: ArgumentHelp(
            "Let any client use the control routes (/_forge/*) that sends Authorization: Bearer TOKEN, and no client without it. Default: loopback clients that are not a web page (loopback Host, no foreign Origin, JSON POSTs).",
            valueName: "token"))
    var controlToken: String?
    @Option(name: .customLong(ServeOption.apiKey.rawValue), help: ArgumentHelp(APIKeyOptions.apiKeyHelp, valueName: "key-id=file"))
    var apiKey: [String] = []
    @Option(name: .customLong(ServeOption.issuerID.rawValue), help: ArgumentHelp(APIKeyOptions.issuerIDHelp, valueName: "id"))
    var issuerId: String?
    @Option(
        help: ArgumentHelp(
            "Deliver the production stores' notifications to this webhook as the server clock passes them, retried at 1, 12, 24, 48 and 72 hours after a failed first attempt.",
            valueName: "url"))
    var notify: String?
    @Option(help: ArgumentHelp("Deliver the sandbox stores' notifications to this webhook (one retry, an hour after a failed first attempt).", valueName: "url"))
    var notifySandbox: String?
    @Option(name: .customLong(ServeOption.notifyCA.rawValue), help: ArgumentHelp("PEM certificates an https:// webhook may chain to, besides the system's.", valueName: "file"))
    var notifyCa: String?
    @Option(help: ArgumentHelp("Seconds one delivery attempt may take (connect, request, answer).", valueName: "s"))
    var notifyTimeout = WebhookRequest.defaultTimeoutSeconds
    @Option(
        help: ArgumentHelp(
            "Server seconds per wall second, from --now (or the start) on, as Xcode's _timeRate: 3600 makes an hour pass in a second, so Apple's retry schedule plays out in seconds. Default: a clock that moves only by POST /_forge/clock (with --now) or the wall clock.",
            valueName: "n"))
    var timeRate: Double?
    @Option(
        name: .customLong(ServeOption.state.rawValue),
        help: ArgumentHelp(
            "Keep the server state in this SQLite file (created if missing) and resume it on the next start: the clock, the scenarios' timelines as the API changed them, app account tokens, extensions, test notifications, finished transactions, consumption reports, and every notification with its send attempts and pending retries. Written before each change is answered; a restart must name the same --scenario files. Default: in memory.",
            valueName: "file"))
    var state: String?
    @Flag(
        help: ArgumentHelp(
            "Also answer OCSP at /ocsp (RFC 6960, POST or GET) for the bundled receipt and JWS TEST PKIs and each --ocsp-ca set: good unless --ocsp-answer or POST /_forge/ocsp says otherwise, or the path names an answer (/ocsp/revoked/…)."
        ))
    var ocsp = false
    @Option(
        help: ArgumentHelp(
            "What OCSP says about one certificate: CERT=ANSWER, CERT one of \(OCSPService.certificateNames.map(\.name).joined(separator: ", ")) or a serial in hex; ANSWER one of \(OCSPAnswer.Kind.allCases.map(\.rawValue).joined(separator: ", ")) (revoked,reason=keyCompromise,at=DATE; slow,seconds=N). Repeatable; implies --ocsp.",
            valueName: "cert=answer"))
    var ocspAnswer: [String] = []
    @Option(
        name: .customLong(ServeOption.ocspCA.rawValue),
        help: ArgumentHelp(
            "A JWS certificate set (forge ca init --jws --ocsp-url URL) the responder also answers for, signing with its keys. Repeatable; implies --ocsp.", valueName: "dir"))
    var ocspCa: [String] = []
    @Flag(
        help: ArgumentHelp(
            "Stop as at SIGTERM once stdin reaches its end: for a program that starts forge serve as its child with a pipe as stdin (forge run's OCSP responder does), so the server never outlives it, even when it is killed."
        ))
    var stopAtStdinEof = false
    @Flag(
        help: ArgumentHelp(
            "Stop as at SIGTERM once the process that started forge serve is gone (exited, killed or crashed), seen within \(ParentWatch.pollMilliseconds) ms: for a test fixture whose server must not outlive it, with no pipe to hold (--stop-at-stdin-eof is the same for a parent that holds stdin's pipe)."
        ))
    var exitWithParent = false
    @Flag(
        help: ArgumentHelp(
            "Once listening, print one JSON line on stdout instead of the text (which goes to stderr): pid, host, port, baseUrl, each environment's URLs, the auth the Server API wants (key ids, key paths, issuer id, or none), the control URL, and with --export-roots the TEST roots' paths (with --tls, the one the serving certificate chains to). Documentation/serve.md gives its fields."
        ))
    var readyJson = false
    @Option(
        help: ArgumentHelp(
            "Before listening, write the TEST roots into this folder as `forge ca export --out DIR` does (root.pem, jws-root-g3.pem, …): a client that verifies what the server signs, or its TLS, trusts them. --ready-json names each file.",
            valueName: "dir"))
    var exportRoots: String?

    func validate() throws {
        try APIKeyOptions.validate(apiKeys: apiKey, issuerID: issuerId)
        if noAuth && !apiKey.isEmpty { throw ValidationError("--no-auth conflicts with --api-key: the API is either open or behind keys") }
        if Validate.hostAndPort(listen) == nil { throw ValidationError("--listen must be host:port (e.g. 127.0.0.1:8080, port 0 for any), not '\(listen)'") }
        if let now, ReceiptDate.parse(now) == nil { throw ValidationError("--now '\(now)' is not a date like 2025-01-31T12:00:00Z") }
        if let threads, !(1...64).contains(threads) { throw ValidationError("--threads must be between 1 and 64") }
        let capacity = ServerLimits.logCapacityRange
        guard capacity.contains(logCapacity) else { throw ValidationError("--log-capacity must be between \(capacity.lowerBound) and \(capacity.upperBound)") }
        if let controlToken, controlToken.isEmpty || controlToken.contains(where: { $0.isWhitespace || !$0.isASCII }) {
            throw ValidationError("--control-token must be non-empty printable ASCII without spaces (it is sent as Authorization: Bearer TOKEN)")
        }
        guard fault.count <= ServerLimits.maximumFaults else { throw ValidationError("at most \(ServerLimits.maximumFaults) --fault options") }
        for (flag, url) in [("--notify", notify), ("--notify-sandbox", notifySandbox)] {
            if let url { _ = try HTTPURL.argument(url, flag) }
        }
        guard WebhookRequest.timeoutRange.contains(notifyTimeout) else {
            throw ValidationError("--notify-timeout \(WebhookRequest.timeoutRange.requirement), not \(notifyTimeout)")
        }
        if !products.isEmpty, storekit == nil { throw ValidationError("--product picks products of a --storekit file: give one") }
        if let timeRate, !ServerState.timeRates.contains(timeRate) {
            throw ValidationError("--time-rate must be from \(ServerState.timeRates.lowerBound) to \(ServerState.timeRates.upperBound), not \(timeRate)")
        }
        for spec in fault {
            do { _ = try Fault(parsing: spec) } catch { throw ValidationError("--fault \(error.message)") }
        }
        for spec in ocspAnswer {
            do { _ = try OCSPService.parse(spec: spec) } catch { throw ValidationError("--ocsp-answer \(error.message)") }
        }
    }

    /// The OCSP responder, when asked for: its sets and its answers (it dates them by the wall clock: verifiers going
    /// online judge at now).
    private func ocspConfiguration() throws -> ServeConfiguration.OCSP? {
        guard ocsp || !ocspAnswer.isEmpty || !ocspCa.isEmpty else { return nil }
        var sets: [CertificateSet<JWSRole>] = []
        do {
            for directory in ocspCa { sets.append(try CertificateSet<JWSRole>.load(from: URL(fileURLWithPath: directory))) }
        } catch { throw fail("--ocsp-ca: \(error.message)", Exit.dataError) }
        return ServeConfiguration.OCSP(jwsSets: sets, answers: ocspAnswer)
    }

    /// What `--scenario` names, a folder standing for its `.json` files in name order (a container's mounted folder).
    static func scenarioFiles(_ paths: [String]) throws -> [String] {
        try paths.flatMap { path -> [String] in
            guard FileBytes.status(path)?.isDirectory == true else { return [path] }
            let names: [String]
            do { names = try FileManager.default.contentsOfDirectory(atPath: path) } catch { throw fail("--scenario \(path): cannot list the folder", Exit.noInput) }
            let files = names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.sorted().map { path.hasSuffix("/") ? path + $0 : path + "/" + $0 }
            guard !files.isEmpty else { throw fail("--scenario \(path): the folder holds no .json file", Exit.noInput) }
            return files
        }
    }

    /// The command line as a ``ServeConfiguration``: files read, values checked, nothing built.
    private func configuration(host: String, port: Int) throws -> ServeConfiguration {
        var scenarios: [Scenario] = []
        for path in try Self.scenarioFiles(scenario) {
            let (bytes, _) = try readInput(path, kind: .json)
            do { scenarios.append(try Scenario.decode(json: Data(bytes))) } catch { throw fail("\(path): \(error.message)", Exit.dataError) }
        }
        let storeKit = try storekit.map { try loadStoreKit($0, products: products) }
        if let storeKit {
            scenarios = scenarios.map { $0.applying(storeKit) }
            if !products.isEmpty {
                do {
                    // Bought an hour before the server's start: --now, else the wall clock.
                    var customer = try storeKit.scenario(purchasing: products)
                    customer.now = now ?? ReceiptDate.format(Date())
                    scenarios.append(customer)
                } catch { throw fail(error.message, Exit.usage) }
            }
        }
        var configuration = ServeConfiguration(
            listener: ServerListener(host: host, port: port, threads: threads, limits: server.limits), receiptPKI: try loadPKI(nil))
        configuration.servesTLS = tls
        configuration.scenarios = scenarios
        configuration.now = now.flatMap(ReceiptDate.parse)
        // Xcode's rate, unless --time-rate says otherwise; real time is the wall clock's own pace, so no rate.
        configuration.timeRate = timeRate ?? storeKit?.timeRate.flatMap { $0 == .realTime ? nil : $0.storeSecondsPerSecond }
        configuration.trustedRoots = try loadRoots(root)
        configuration.sharedSecret = sharedSecret
        configuration.legacyExpiredStatus = legacyExpiredStatus
        configuration.access =
            if noAuth { .open } else if let authenticator = try APIKeyOptions.authenticator(apiKeys: apiKey, issuerID: issuerId, scenarios: scenarios) {
                .tokens(authenticator)
            } else { .closed }
        configuration.appleRateLimits = rateLimits == .apple
        var webhooks: [ServerAPIEnvironment: HTTPURL] = [:]
        webhooks[.production] = try notify.map { try HTTPURL.argument($0, "--notify") }
        webhooks[.sandbox] = try notifySandbox.map { try HTTPURL.argument($0, "--notify-sandbox") }
        let trust = try notifyCa.map { String(decoding: try readInput($0, kind: .certificate).bytes, as: UTF8.self) }
        if !webhooks.isEmpty { configuration.webhooks = .init(urls: webhooks, timeoutSeconds: notifyTimeout, trustedRootsPEM: trust) }
        configuration.statePath = state
        do { configuration.faults = try fault.map { spec throws(ServeError) in try Fault(parsing: spec) } } catch { throw fail("--fault \(error.message)", Exit.usage) }
        configuration.faultSeed = seed
        configuration.logPath = log
        configuration.logCapacity = logCapacity
        configuration.controlToken = controlToken
        configuration.ocsp = try ocspConfiguration()
        configuration.warn = { note("warning: \($0)") }
        return configuration
    }

    func run() async throws {
        guard let (host, port) = Validate.hostAndPort(listen) else { throw ValidationError("--listen must be host:port") }
        let network = try Network.required(for: "forge serve")
        let configuration = try configuration(host: host, port: port)
        let roots = try exportRoots.map { try CA.Export.write(to: $0) }
        if exitWithParent { ParentWatch.signalWhenGone(SIGTERM) }
        let scheme = tls ? "https" : "http"
        let controlToken = controlToken, noAuth = noAuth, notifying = configuration.webhooks?.urls ?? [:], servesOCSP = configuration.ocsp != nil
        let ready = readyJson ? ReadyLine(serve: self, roots: roots, servesOCSP: servesOCSP) : nil
        do {
            try await network.serve(configuration) {
                bound in
                let base = "\(scheme)://\(bound.authority)"
                var lines = [
                    "production  \(base)\(AppleEndpoint.production.path)", "sandbox     \(base)\(AppleEndpoint.sandbox.path)",
                    "server api  \(base)/inApps (production)  \(base)/sandbox/inApps (sandbox)\(noAuth ? "  --no-auth" : apiKey.isEmpty ? "  (401 until --api-key or --no-auth)" : "  (bearer tokens of --api-key)")",
                    "control     \(base)/_forge/faults  \(base)/_forge/log  \(base)/_forge/clock  \(base)/_forge/scenarios",
                ]
                if servesOCSP { lines.append("ocsp        \(base)/ocsp  (answers: \(base)/_forge/ocsp)") }
                if let notify { lines.append("notify      production → \(notify)") }
                if let notifySandbox { lines.append("notify      sandbox → \(notifySandbox)") }
                if tls {
                    lines.append("trust       --root receipt (the TEST root that issued the serving certificate; `forge ca export` writes it as root.pem)")
                    let hosts = ServerAPIEnvironment.allCases.map { "\($0.appleHost) (\($0 == .localTesting ? "every store" : $0.rawValue))" }
                    lines.append("hosts       \(hosts.joined(separator: "  ")): in the certificate; point them at this server (/etc/hosts) for Apple's unpatched clients")
                }
                // stdout, unbuffered: the first line names the port, for scripts and tests; with --ready-json, the one
                // JSON line, the text on stderr.
                if let ready {
                    StandardStream.error.write(lines.joined(separator: "\n") + "\n")
                    StandardStream.output.write(ready.json(bound: bound, scheme: scheme).serialized(pretty: false) + "\n")
                } else {
                    StandardStream.output.write((lines.joined(separator: "\n") + "\n"))
                }
                if !bound.isLoopback {
                    let control =
                        controlToken == nil ? "the control routes answer loopback clients only (--control-token to open them)" : "the control routes need the --control-token"
                    note("warning: listening on \(bound.authority), not loopback: anyone who can reach it can send requests; \(control)")
                }
                if stopAtStdinEof { EndOfInput.signalWhenReached(SIGTERM) }
                // As for --listen: what leaves this machine is said once, at the start.
                for (flag, url) in [("--notify", notifying[.production]), ("--notify-sandbox", notifying[.sandbox])] {
                    guard let url, !ServerAddress.isLoopback(url.host) else { continue }
                    note("warning: \(flag) \(url) is not loopback: every notification, signed by the TEST PKI, is sent off this machine to whoever answers there")
                }
            }
        } catch {
            throw Exit.serveFailure(error, host: host, port: port)
        }
    }
}

/// `forge serve --ready-json`: what a test fixture needs to use the server, as one JSON object, so that no program
/// scrapes the text. The fields are documented in Documentation/serve.md ("Readiness for programs").
struct ReadyLine: Sendable {
    let auth: JSONValue
    let roots: [(anchor: BundledAnchor, path: String)]?
    let servesOCSP: Bool
    let notify: [(String, String?)]
    let controlToken: Bool

    init(serve: Serve, roots: [(anchor: BundledAnchor, path: String)]?, servesOCSP: Bool) {
        let keys = serve.apiKey.compactMap(APIKeyOptions.split).map { JSONValue.object([("keyId", .string($0.keyID)), ("keyPath", .string($0.path))]) }
        let mode = serve.noAuth ? "none" : keys.isEmpty ? "closed" : "keys"
        auth = .object([("mode", .string(mode)), ("issuerId", serve.issuerId.map(JSONValue.string) ?? .null), ("keys", .array(keys))])
        self.roots = roots
        self.servesOCSP = servesOCSP
        notify = [("production", serve.notify), ("sandbox", serve.notifySandbox)]
        controlToken = serve.controlToken != nil
    }

    func json(bound: ServerAddress, scheme: String) -> JSONValue {
        let base = "\(scheme)://\(bound.authority)"
        let environments: [(String, JSONValue)] = ServerAPIEnvironment.allCases.map { environment in
            var urls: [(String, JSONValue)] = [("serverApi", .string(base + environment.prefix))]
            switch environment {
            case .production: urls.insert(("verifyReceipt", .string(base + AppleEndpoint.production.path)), at: 0)
            case .sandbox: urls.insert(("verifyReceipt", .string(base + AppleEndpoint.sandbox.path)), at: 0)
            case .localTesting: break
            }
            return (environment == .localTesting ? "localTesting" : environment.rawValue, .object(JSONObject(urls)))
        }
        let rootPaths: JSONValue = roots.map { .object(JSONObject($0.map { ($0.anchor.rawValue, JSONValue.string($0.path)) })) } ?? .null
        let tlsRoot = roots?.first { $0.anchor == .receipt }?.path
        return .object([
            ("pid", .integer(Int64(getpid()))), ("host", .string(bound.host)), ("port", .integer(Int64(bound.port))), ("baseUrl", .string(base)),
            ("environments", .object(JSONObject(environments))), ("control", .object([("url", .string(base + "/_forge")), ("token", .bool(controlToken))])),
            ("auth", auth), ("ocsp", servesOCSP ? .string(base + "/ocsp") : .null),
            ("notify", .object(JSONObject(notify.map { ($0.0, $0.1.map(JSONValue.string) ?? .null) }))),
            ("tls", scheme == "https" ? .object([("rootAnchor", .string(BundledAnchor.receipt.rawValue)), ("rootPath", tlsRoot.map(JSONValue.string) ?? .null)]) : .null),
            ("roots", rootPaths),
        ])
    }
}

/// The bounds both servers (`forge serve`, `forge validate --listen`) take from the command line; the rest
/// of ``ServerLimits`` is fixed and stated in ``limitsHelp``.
struct ServerOptions: ParsableArguments {
    @Option(
        name: .customLong(ServeOption.readTimeout.rawValue),
        help: ArgumentHelp(
            "Seconds a connection gets to send a request's headers (from its opening or the previous answer), and again its body; then it is closed (a cut-off body is answered 408).",
            valueName: "seconds"))
    var readTimeout = ServerLimits.defaultReadTimeout
    @Option(
        name: .customLong(ServeOption.shutdownGrace.rawValue),
        help: ArgumentHelp(
            "Seconds the requests in flight get after SIGINT or SIGTERM; then the server exits anyway (0). A second signal exits at once (128 + its number).",
            valueName: "seconds"))
    var shutdownGrace = ServerLimits.defaultShutdownGrace
    @Option(
        help: ArgumentHelp(
            "Requests answered at once, on threads of their own (default: one per core, at least 2); \(ServerLimits.queuedAnswersPerWorker) more per worker may wait, past that a request is refused as busy.",
            valueName: "n"))
    var workers: Int?

    func validate() throws {
        for (name, value, range) in [
            ("--read-timeout", readTimeout, ServerLimits.readTimeoutRange), ("--shutdown-grace", shutdownGrace, ServerLimits.shutdownGraceRange),
            ("--workers", workers ?? ServerLimits.defaultWorkers, ServerLimits.workersRange),
        ] where !range.contains(value) {
            throw ValidationError("\(name) must be between \(range.lowerBound) and \(range.upperBound)")
        }
    }

    var limits: ServerLimits { ServerLimits(readTimeoutSeconds: readTimeout, shutdownGraceSeconds: shutdownGrace, workers: workers) }

    /// What a server that cannot listen does, for both commands' `--help`.
    static let listenHelp =
        "A --listen address the server cannot take (the port in use, an address not of this machine such as 203.0.113.1, a port below 1024 without privileges, a host that does not resolve) exits 69 with one line: forge: error: cannot listen on HOST:PORT: address already in use (…)."

    /// The fixed limits, for both commands' `--help`.
    static let limitsHelp = """
        Limits: a request body is at most \(ServerLimits.maximumBody >> 20) MiB, and the server holds at most \(ServerLimits.maximumBodyBytesInFlight >> 20) MiB of bodies not yet answered over every connection (past either the body is refused and the connection closed); a request's headers must arrive within --read-timeout seconds (default \(ServerLimits.defaultReadTimeout)) of the connection's opening or the previous answer, its body within --read-timeout of its headers (else the connection closes; a cut-off body is answered 408); answers are computed by --workers threads off the event loops, so a heavy request never holds a light one, and a request that gets no answer within \(ServerLimits.answerTimeout) s is told so (503, or 21005 on verifyReceipt). SIGINT or SIGTERM stops accepting and gives the requests in flight --shutdown-grace seconds (default \(ServerLimits.defaultShutdownGrace)), then exits 0; a second signal exits at once with 128 + its number.
        """
}

/// `forge serve --rate-limits`: Apple's Server API rates, or none.
enum RateLimitMode: String, ExpressibleByArgument, CaseIterable {
    case apple
    case off
}

/// `forge serve`'s flags from environment variables, for a server started without a command line of its own (a
/// GitHub Actions service container, the container image's default command): FORGE_SERVE_NOW=DATE stands for
/// `--now DATE` when the command line gives no --now. The variables go before the command line's own arguments.
enum ServeEnvironment {
    enum Kind { case value, values, flag }
    /// The flags a variable may give, by long name: what a container's user sets (where to listen, the clock,
    /// the stores, the keys, the webhooks, the state file, TLS).
    static let flags: [(name: String, kind: Kind)] = [
        ("listen", .value), ("now", .value), ("scenario", .values), ("storekit", .value), ("no-auth", .flag), ("api-key", .values),
        ("issuer-id", .value), ("shared-secret", .value), ("tls", .flag), ("notify", .value), ("notify-sandbox", .value),
        ("notify-ca", .value), ("state", .value), ("time-rate", .value), ("control-token", .value), ("rate-limits", .value),
        ("fault", .values), ("log", .value), ("ocsp", .flag),
    ]

    /// FORGE_SERVE_ and the flag's name in capitals, `_` for `-`.
    static func variable(_ flag: String) -> String { "FORGE_SERVE_" + String(flag.uppercased().map { $0 == "-" ? "_" : $0 }) }

    static let help = """
        Environment: FORGE_SERVE_<FLAG> (the flag's long name in capitals, _ for -) gives a flag the command line does not: \
        \(flags.map { variable($0.name) }.joined(separator: ", ")). A repeatable flag's variable takes its values separated by spaces \
        (FORGE_SERVE_SCENARIO="/config/a.json /config/b.json"); a flag without a value takes 1 or 0 (true or false); an empty variable is unset.
        """

    /// forge's command line with the variables of this process applied; a variable that cannot be read exits 64.
    static func applied(to arguments: [String]) -> [String] {
        do { return try Self.arguments(arguments, environment: ProcessInfo.processInfo.environment) } catch { ForgeCommand.exit(withError: error) }
    }

    /// `arguments` (forge's, the command first) with, when the command is `serve`, each flag the command line
    /// lacks taken from its variable in `environment`.
    static func arguments(_ arguments: [String], environment: [String: String]) throws(ValidationError) -> [String] {
        guard arguments.first == "serve" else { return arguments }
        let given = arguments.dropFirst().prefix { $0 != "--" }
        var added: [String] = []
        for (name, kind) in flags {
            let flag = "--" + name
            guard let value = environment[variable(name)], !value.isEmpty, !given.contains(where: { $0 == flag || $0.hasPrefix(flag + "=") }) else { continue }
            switch kind {
            case .value: added += [flag, value]
            case .values: added += value.split(separator: " ").flatMap { [flag, String($0)] }
            case .flag:
                switch value.lowercased() {
                case "1", "true": added.append(flag)
                case "0", "false": break
                default: throw ValidationError("\(variable(name)) must be 1 or 0 (true or false), not '\(value)'")
                }
            }
        }
        return [arguments[0]] + added + arguments.dropFirst()
    }
}
