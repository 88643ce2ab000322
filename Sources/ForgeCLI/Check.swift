import ReceiptCorpus
import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import StoreForge
import ReceiptModel
import ReceiptConformance
import ReferenceValidation
import ReceiptValidationServer
import StoreServer
import StoreModel
import _ForgeSupport
import JWSModel
import AppStoreVocabulary

/// The expectations every artefact is checked against, and how the verdict is printed: one option group
/// (swift-argument-parser's `@OptionGroup`) for `validate`, `inspect` and `jws validate`, so the shared options
/// have one spelling, one help text and one parse.
struct CheckOptions: ParsableArguments {
    @Option(help: RootOption.help(default: "receipt for receipts; jws for JWS (jws-xcode with --environment Xcode)"))
    var root: [String] = []
    @Option(help: "Expected bundle identifier.")
    var bundleId: String?
    @Option(
        help: ArgumentHelp(
            "Expected environment, in Apple's spelling. A receipt is judged by the environment its type (attribute 0) names: ProductionSandbox and ProductionVPPSandbox are Sandbox, ProductionVPP is Production; a JWS by its environment claim (AppTransaction: receiptType).",
            valueName: "environment"))
    var environment: EnvironmentArgument?
    @Option(help: ArgumentHelp("Evaluate the chain (and a receipt's expiration) at this time instead of the artefact's own date and now.", valueName: "date"))
    var at: String?
    @Flag(help: "Print as JSON: the verdict, error class, checks and what was decoded.")
    var json = false

    /// Whether any expectation was given (inspect shows checks only then).
    var hasExpectations: Bool { !root.isEmpty || bundleId != nil || environment != nil || at != nil }

    /// The `--root` certificates, or `defaultRoots` when none are given.
    func roots(default defaultRoots: () throws -> [TrustedRoot]) throws -> [TrustedRoot] {
        root.isEmpty ? try defaultRoots() : try loadRoots(root)
    }

    /// The context without the artefact-specific expectations; `now` is `--at` when given, else the wall clock.
    func context(roots: [TrustedRoot]) throws -> ValidationContext {
        let pinned = try at.map { try parseDate($0, option: "--at") }
        return ValidationContext(trustedRoots: roots, bundleID: bundleId, environment: environment?.environment, chainTime: pinned, now: pinned ?? wallClock())
    }

    /// The JWS expectations not given, as the flag that would check each (the JWS verifier runs no step for
    /// them); a renewal info and a realtime request carry no bundleId to check.
    func notGiven(kind: JWSKind?) -> [(check: CheckName, flag: String)] {
        let bundleChecked = kind != .renewal && kind != .realtime
        return [(CheckName.bundleID, bundleId == nil && bundleChecked), (.environment, environment == nil)].compactMap { check, missing in
            missing ? VerdictSummary.flags[check].map { (check, $0) } : nil
        }
    }

    /// Prints the verdict and exits as every check command does: 0 valid, 1 invalid, 65 not the artefact at all
    /// (one stderr line unless JSON). Text: ``VerdictSummary``; `--json`: `value` with the subscriptions' states.
    /// `hint`, when the verdict could change by a flag (a bundled anchor that trusts it), goes to stderr.
    func finish(
        _ report: some CheckedReport, notChecked: [(check: CheckName, flag: String)] = [], subscriptions: [SubscriptionState], at now: Date, hint: String?,
        json value: @autoclosure () -> JSONValue
    ) throws {
        if json {
            var object = value()
            if case .object(var members) = object, !report.isUnreadable {
                members["subscriptions"] = .array(subscriptions.map { $0.json(at: now) })
                object = .object(members)
            }
            print(object.serialized())
        } else {
            print(VerdictSummary.lines(report, notChecked: notChecked, subscriptions: subscriptions, at: now).joined(separator: "\n"))
        }
        if report.isUnreadable, !json { StandardStream.error.write("forge: error: \(report.message)\n") }
        if let hint { note("hint: \(hint)") }
        let code = Exit.code(for: report)
        if code != .success { throw code }
    }
}

/// What `validate` and `jws validate` print: the verdict line first (scripts read it), then every failure, what was
/// checked, what was skipped and why (the flag that would check it), and each subscription's state at the
/// evaluation time, so a `valid` that checked half the steps of an expired subscription says so.
enum VerdictSummary {
    /// The flag that gives each check named in a report its expectation.
    static let flags: [CheckName: String] = [.bundleID: "--bundle-id", .appVersion: "--app-version", .deviceHash: "--device-id", .environment: "--environment"]

    static func lines(_ report: some CheckedReport, notChecked: [(check: CheckName, flag: String)], subscriptions: [SubscriptionState], at now: Date) -> [String] {
        var lines = ["\(report.verdict.rawValue)\(report.errorClass.map { " (\($0))" } ?? "")"]
        if report.isUnreadable { return lines }
        lines += report.checks.filter { $0.status == .failed }.map { "FAIL \($0.name): \($0.detail) [\($0.errorClass?.rawValue ?? "")]" }
        let passed = report.checks.filter { $0.status == .passed }.map(\.name.rawValue)
        if !passed.isEmpty { lines.append("checked: " + passed.joined(separator: ", ")) }
        var skipped = report.checks.filter { $0.status == .skipped }.map { check in
            "\(check.name) (\(check.detail)\(flags[check.name].map { ": give \($0)" } ?? ""))"
        }
        skipped += notChecked.map { "\($0.check) (no expected value given: give \($0.flag))" }
        if !skipped.isEmpty { lines.append("skipped: " + skipped.joined(separator: "; ")) }
        lines += subscriptions.map { $0.line(at: now) }
        return lines
    }
}

extension SubscriptionState {
    /// The line `validate` and `jws validate` print for it, at the evaluation time (`--at`, else the wall clock).
    func line(at now: Date) -> String {
        let evaluated = "evaluated at \(ReceiptDate.format(now))"
        let status = status(at: now)
        return switch status {
        case .active: "subscription \(productID): active, expires \(ReceiptDate.format(expires)) (\(evaluated))"
        // Billing retry and grace need renewal info, which this state has not: only `expired` comes here.
        case .expired, .billingRetry, .gracePeriod: "subscription \(productID): \(status.name) \(ReceiptDate.format(expires)) (\(evaluated))"
        case .revoked: "subscription \(productID): revoked \(revoked.map { ReceiptDate.format($0) } ?? "") (expires \(ReceiptDate.format(expires)); \(evaluated))"
        }
    }
}

/// The hint as `validate` and `jws validate` print it on stderr: the exact flags that make the artefact pass.
extension AnchorHint {
    /// The bundled anchors (``BundledAnchor``) the validator tries, in order.
    static func bundledCandidates() -> [Candidate] { BundledAnchor.allCases.compactMap { anchor in (try? anchor.certificate()).map { (anchor.rawValue, $0) } } }

    func message(receipt: Bool) -> String {
        switch self {
        case .trustedUnder(let anchor, let xcodeShaped):
            let what =
                if receipt, anchor == BundledAnchor.storekit.rawValue {
                    "it is signed by the bundled Xcode-like StoreKit certificate (an xcode-* receipt)"
                } else if xcodeShaped {
                    "it is signed by the bundled Xcode-like certificate"
                } else {
                    "it chains to the bundled anchor \(anchor)"
                }
            return "\(what): pass --root \(anchor)"
        case .xcodeEnvironment(let anchor, let kid):
            return "it is signed like Xcode (x5c of one certificate, kid \(kid ?? "absent")): pass --environment Xcode --root \(anchor)"
        case .selfSignedSigner:
            return
                "the signer is self-signed (Xcode's StoreKit shape): pass --root FILE with that certificate (Xcode: export it from the .storekit configuration), or --root storekit for forge's"
        }
    }
}

/// `--environment` of the check commands: Apple's environments, or a receipt type, which names one
/// (`ProductionSandbox` is Sandbox). Exact spelling: an unknown or miscased value exits 64 with the list.
struct EnvironmentArgument: ExpressibleByArgument {
    let environment: Environment

    init?(argument: String) {
        guard let environment = Environment(receiptType: argument) else { return nil }
        self.environment = environment
    }

    static var allValueStrings: [String] {
        var values = Environment.allCases.map(\.rawValue)
        for type in ReceiptType.allCases where !values.contains(type.rawValue) { values.append(type.rawValue) }
        return values
    }
}

/// The receipt-only expectations of `validate` and `inspect`.
/// What an iOS 6 transaction receipt is bound to besides the shared checks: the transaction the app reported.
struct TransactionReceiptCheckOptions: ParsableArguments {
    @Option(help: ArgumentHelp("iOS 6 transaction receipts: the transaction id the app reported (transaction-id).", valueName: "id"))
    var transactionId: String?
    @Option(help: ArgumentHelp("iOS 6 transaction receipts: the product the app reported (product-id).", valueName: "id"))
    var productId: String?
    @Option(parsing: .number, help: ArgumentHelp("iOS 6 transaction receipts: the quantity the app reported.", valueName: "n"))
    var quantity: Int?

    var hasExpectations: Bool { transactionId != nil || productId != nil || quantity != nil }

    var expected: ExpectedTransaction? { hasExpectations ? ExpectedTransaction(transactionID: transactionId, productID: productId, quantity: quantity) : nil }

    /// Refuses the flags for an artefact that is not a transaction receipt.
    func refuseUnlessTransactionReceipt() throws {
        if hasExpectations { throw fail("--transaction-id, --product-id and --quantity are checks of iOS 6 transaction receipts; this is not one", Exit.usage) }
    }
}

struct ReceiptCheckOptions: ParsableArguments {
    @Option(help: "Expected app version (attribute 3).")
    var appVersion: String?
    @Option(help: ArgumentHelp("Device id for the hash check: UUID or MAC address.", valueName: "id"))
    var deviceId: String?

    var hasExpectations: Bool { appVersion != nil || deviceId != nil }

    /// `checks`' context with the receipt's own expectations; the bundled receipt TEST root unless `--root`.
    func context(_ checks: CheckOptions) throws -> ValidationContext {
        var context = try checks.context(roots: try checks.roots { [try loadPKI(nil)[.root].certificate] })
        context.appVersion = appVersion
        if let deviceId {
            guard let parsed = DeviceID(deviceId) else {
                throw fail("--device-id '\(deviceId)' is neither a UUID nor a MAC address (aa:bb:cc:dd:ee:ff)", Exit.usage)
            }
            context.deviceID = parsed.bytes
        }
        return context
    }
}

struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Validate a receipt with the reference validator (Apple's documented steps, in order).",
        discussion: """
            Steps: parse; signature by the embedded certificate the SignerInfo names, with the SignerInfo's digest; chain to --root at the receipt creation date (or --at), requiring the marker OIDs and a 3-certificate chain unless the signer is itself a trusted self-signed certificate (Xcode); bundle id; app version; device hash; environment; receipt expiration (type 21). Input: DER, base64 (line breaks allowed) or base64 of base64, from a file or - for stdin. Exit codes: 0 valid, 1 invalid, 65 unreadable input, 66 missing file (or a --root that is neither a file nor a bundled anchor), 64 usage.

            An iOS 6 transaction receipt (an old-style plist, or its base64) is judged by Apple's recommended checks instead: the signature blob's structure; RSASSA-PKCS1-v1_5 SHA-1 over version ‖ purchase-info under the embedded certificate; that certificate issued by a --root (default: the bundled transaction-receipt-v2 and -v3 anchors, the signers' issuers) at the purchase date, the chain being exactly those two; the marker 1.2.840.113635.100.6.5.1 for version 2; purchase-info a dictionary of strings, each key once; bundle id; the transaction the app reported (--transaction-id, --product-id, --quantity); environment.

            Output: the verdict first (valid, or invalid (error class)), then each failure (FAIL), the checks that passed (checked:), those skipped and why (skipped:, with the flag that would run them) and each subscription's state at --at or now (subscription ID: active, expires …; expired …; revoked …). --json has the same as checks and subscriptions. When a bundled anchor would trust a receipt the roots given do not (an xcode-* receipt: --root storekit), stderr says which --root to pass.

            With --listen: \(ServerOptions.limitsHelp) A refusal is JSON {"error", "message"} with the HTTP status that says the same (413, 400, 408, 503), except on POST /verifyReceipt, which keeps Apple's shape (HTTP 200, status 21000 or 21005, forge_error, forge_message). --listen on a non-loopback address prints the address bound and warns on stderr. \(ServerOptions.listenHelp)
            """)

    @Argument(help: ArgumentHelp("Receipt file, or - for standard input.", valueName: "file"))
    var file: String?
    @OptionGroup(title: "Checks") var checks: CheckOptions
    @OptionGroup(title: "Receipt checks") var receiptChecks: ReceiptCheckOptions
    @OptionGroup(title: "Transaction-receipt checks") var transactionChecks: TransactionReceiptCheckOptions
    @Flag(help: "Serve the harness protocol v1 on stdin/stdout (NDJSON) for `forge run --target stdio:…`, with the corpus's trust anchors.")
    var harness = false
    @Option(
        help: ArgumentHelp(
            "Serve the reference validator over HTTP: GET /hello and POST /validate (harness protocol v1), POST /verifyReceipt (Apple's request and response shape). Port 0 picks a free port; the URL is printed on stdout. Served by forge-http (built by `swift build`), which forge starts.",
            valueName: "host:port"))
    var listen: String?
    @Option(help: ArgumentHelp("With --listen: event-loop threads. Default: one per core.", valueName: "n"))
    var threads: Int = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: ArgumentHelp("With --harness or --listen: the corpus whose trust anchors to load.", valueName: "dir"))
    var vectors: String?
    @OptionGroup(title: "With --listen") var server: ServerOptions

    func validate() throws {
        if harness, listen != nil { throw ValidationError("--harness (stdio) and --listen (HTTP) are two ways to serve; choose one") }
        if harness || listen != nil, transactionChecks.hasExpectations {
            throw ValidationError("--transaction-id, --product-id and --quantity check one transaction receipt file, not a harness's requests")
        }
        if harness || listen != nil, file != nil { throw ValidationError("a harness reads requests, not a receipt file; give no file with --harness or --listen") }
        if !harness, listen == nil, file == nil { throw ValidationError("give a receipt file (or - for stdin), or --harness, or --listen host:port") }
        if let listen, Self.hostAndPort(listen) == nil { throw ValidationError("--listen must be host:port (e.g. 127.0.0.1:8080, port 0 for any), not '\(listen)'") }
        guard (1...64).contains(threads) else { throw ValidationError("--threads must be between 1 and 64") }
    }

    func run() async throws {
        if harness { return try serveHarness() }
        if let listen, let (host, port) = Self.hostAndPort(listen) {
            return try await serveHTTP(network: try Network.required(for: "--listen"), host: host, port: port)
        }
        guard let file else { throw ValidationError("give a receipt file (or - for stdin)") }
        let (bytes, source) = try readInput(file)
        if let transactionReceipt = TransactionReceiptInspection(bytes, source: source) {
            var context = try transactionReceiptContext(checks)
            context.transaction = transactionChecks.expected
            let report = TransactionReceiptValidator().validate(bytes, context: context)
            return try checks.finish(report, subscriptions: [], at: context.now, hint: nil, json: Inspection(transactionReceipt, report: report).json())
        }
        try transactionChecks.refuseUnlessTransactionReceipt()
        let context = try receiptChecks.context(checks)
        let report = ReferenceValidator().validate(bytes, context: context)
        try checks.finish(
            report, subscriptions: SubscriptionState.of(report.receipt), at: context.now,
            hint: AnchorHint.receipt(bytes, context: context, report: report, candidates: AnchorHint.bundledCandidates)?.message(receipt: true),
            json: Inspection(receipt: report, source: source, inputSize: bytes.count, includeChecks: true).json())
    }
}

/// `forge validate --listen`: the reference validator behind the http:// transport.
extension Validate {
    static func hostAndPort(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        let host = String(text[..<colon].drop { "[]".contains($0) }.reversed().drop { "[]".contains($0) }.reversed())
        return host.isEmpty ? nil : (host, port)
    }

    func serveHTTP(network: any NetworkSupport, host: String, port: Int) async throws {
        let directory = try VectorsCommand.Location.locate(vectors)
        let reference: ReferenceHarness
        do { reference = try ReferenceHarness(vectorsDirectory: directory) } catch { throw fail("cannot load trust anchors from \(directory.path): \(error)", Exit.dataError) }
        let listener = ServerListener(host: host, port: port, tls: nil, threads: threads, limits: server.limits)
        do {
            try await network.listen(listener, routes: HarnessRoutes(harness: reference)) { bound in
                // stdout, unbuffered: scripts and tests read the port from this line.
                StandardStream.output.write("listening on http://\(bound.authority) (GET /hello, POST /validate, POST /verifyReceipt)\n")
                if !bound.isLoopback { note("warning: listening on \(bound.authority), not loopback: anyone who can reach it can send requests") }
            }
        } catch {
            throw Exit.serveFailure(error, host: host, port: port)
        }
    }
}

/// `forge validate --harness`: the reference validator behind the stdio transport.
extension Validate {
    func serveHarness() throws {
        let directory = try VectorsCommand.Location.locate(vectors)
        let reference: ReferenceHarness
        do { reference = try ReferenceHarness(vectorsDirectory: directory) } catch { throw fail("cannot load trust anchors from \(directory.path): \(error)", Exit.dataError) }
        StdioHarnessServer.serve(reference, write: { StandardStream.output.write($0) }, note: note)
    }
}

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode any receipt: container shape, certificates, every attribute, and the checks if asked; iOS 6 transaction receipts too.",
        discussion: """
            Accepts DER, base64 (with or without line breaks) and base64 of base64, from a file or - (stdin). Unknown attribute types are shown in hex. An iOS 6 transaction receipt (an old-style plist, or its base64) shows its outer keys, its signature blob (version, lengths, certificate) and every key of purchase-info; its checks run under --root, else both bundled transaction-receipt anchors. Give --root, --bundle-id, --device-id, … to also run the validator's checks; they are shown (ok, FAIL, skip) with a verdict line.

            Exit codes: inspect is a viewer, so it exits 0 whenever the input decodes, whatever its checks say (the verdict line and --json's verdict say it); gate on `forge validate`, which exits 1 when a check fails. 65 unreadable input (one line naming the byte offset and what was expected), 66 missing file, 64 usage.
            """)

    @Argument(help: ArgumentHelp("Receipt file, or - for standard input.", valueName: "file"))
    var file: String
    @OptionGroup(title: "Checks") var checks: CheckOptions
    @OptionGroup(title: "Receipt checks") var receiptChecks: ReceiptCheckOptions

    func run() throws {
        let (bytes, source) = try readInput(file)
        if let transactionReceipt = TransactionReceiptInspection(bytes, source: source) {
            if let unreadable = transactionReceipt.unreadable { throw fail(unreadable, Exit.dataError) }
            let report = checks.hasExpectations ? TransactionReceiptValidator().validate(bytes, context: try transactionReceiptContext(checks)) : nil
            let inspection = Inspection(transactionReceipt, report: report)
            return print(checks.json ? inspection.json().serialized() : inspection.text())
        }
        let report = ReferenceValidator().validate(bytes, context: try receiptChecks.context(checks))
        if report.isUnreadable {
            throw fail(report.message.replacing("parse: ", with: ""), Exit.code(for: report))
        }
        let includeChecks = checks.hasExpectations || receiptChecks.hasExpectations
        let inspection = Inspection(receipt: report, source: source, inputSize: bytes.count, includeChecks: includeChecks)
        print(checks.json ? inspection.json().serialized() : inspection.text())
    }
}

/// `--root` of every command that takes one (`validate`, `inspect`, `jws validate`, `serve`), one help text.
enum RootOption {
    static func help(default defaultRoot: String) -> ArgumentHelp {
        ArgumentHelp(
            "Trusted root: a bundled anchor by name (\(BundledAnchor.names); `forge ca export` writes them out) or a certificate file, PEM (several per file) or DER. Repeatable. A file named like an anchor: give it as ./NAME. Default: \(defaultRoot).",
            valueName: "name|file")
    }
}

/// An iOS 6 transaction receipt's context: `--root`, else both bundled transaction-receipt anchors (the issuers of
/// version 2's and version 3's signers).
func transactionReceiptContext(_ checks: CheckOptions) throws -> ValidationContext {
    try checks.context(roots: try checks.roots { try loadRoots([BundledAnchor.transactionReceiptV2.rawValue, BundledAnchor.transactionReceiptV3.rawValue]) })
}

/// The certificates `--root` names: a bundled anchor by name (``BundledAnchor``, from any directory), else
/// a PEM (several per file) or DER file. A value that is neither exits 66 listing the names; none given: the
/// bundled receipt TEST root.
func loadRoots(_ values: [String]) throws -> [TrustedRoot] {
    var roots: [TrustedRoot] = []
    for value in values {
        if let anchor = BundledAnchor(rawValue: value) {
            do throws(ForgeError) { roots.append(try anchor.certificate()) } catch { throw fail(error.message, Exit.software) }
            continue
        }
        guard FileManager.default.fileExists(atPath: value) else {
            throw fail("--root \(value): no such file, nor a bundled anchor (\(BundledAnchor.names))", Exit.noInput)
        }
        let (bytes, _) = try readInput(value, kind: .certificate)
        do { roots += try ValidationContext.roots(inFile: bytes) } catch {
            throw fail("\(value) is not a PEM or DER certificate: \(error)", Exit.dataError)
        }
    }
    return values.isEmpty ? [try loadPKI(nil)[.root].certificate] : roots
}
