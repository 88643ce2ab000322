import ReceiptCorpus
import ArgumentParser
import Foundation
import ForgeCrypto
import ReceiptForge
import ReceiptModel
import ReceiptConformance
import ReferenceValidation
import ReceiptValidationServer
import ReceiptServe
import StoreModel
import ForgeSupport

/// The expectations every artefact is checked against, and how the verdict is printed: one option group
/// (swift-argument-parser's `@OptionGroup`) for `validate`, `inspect` and `jws validate`, so the shared options
/// have one spelling, one help text and one parse.
struct CheckOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Trusted root certificate, PEM or DER (repeatable). Default: the bundled TEST root (receipts: Certificates/root.pem; JWS: Certificates/jws/jws-root-g3.pem, or the Xcode certificate with --environment Xcode).",
            valueName: "file"))
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
    func roots(default defaultRoots: () throws -> [X509Certificate]) throws -> [X509Certificate] {
        root.isEmpty ? try defaultRoots() : try loadRoots(root)
    }

    /// The context without the artefact-specific expectations; `now` is `--at` when given, else the wall clock.
    func context(roots: [X509Certificate]) throws -> ValidationContext {
        let pinned = try at.map { try parseDate($0, option: "--at") }
        return ValidationContext(trustedRoots: roots, bundleID: bundleId, environment: environment?.environment, chainTime: pinned, now: pinned ?? wallClock())
    }

    /// Prints the verdict (the summary lines, or `json`) and exits as every check command does: 0 valid,
    /// 1 invalid, 65 not the artefact at all (one stderr line unless JSON).
    func finish(_ report: some CheckedReport, json value: @autoclosure () -> JSONValue) throws {
        print(json ? value().serialized() : report.summaryLines.joined(separator: "\n"))
        if report.isUnreadable, !json { FileHandle.standardError.write(Data("forge: error: \(report.message)\n".utf8)) }
        let code = Exit.code(for: report)
        if code != .success { throw code }
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
            Steps: parse; signature by the embedded certificate the SignerInfo names, with the SignerInfo's digest; chain to --root at the receipt creation date (or --at), requiring the marker OIDs and a 3-certificate chain unless the signer is itself a trusted self-signed certificate (Xcode); bundle id; app version; device hash; environment; receipt expiration (type 21). Input: DER, base64 (line breaks allowed) or base64 of base64, from a file or - for stdin. Exit codes: 0 valid, 1 invalid, 65 unreadable input, 66 missing file, 64 usage.

            With --listen: \(ServerOptions.limitsHelp) A refusal is JSON {"error", "message"} with the HTTP status that says the same (413, 400, 408, 503), except on POST /verifyReceipt, which keeps Apple's shape (HTTP 200, status 21000 or 21005, forge_error, forge_message). --listen on a non-loopback address prints the address bound and warns on stderr.
            """)

    @Argument(help: ArgumentHelp("Receipt file, or - for standard input.", valueName: "file"))
    var file: String?
    @OptionGroup(title: "Checks") var checks: CheckOptions
    @OptionGroup(title: "Receipt checks") var receiptChecks: ReceiptCheckOptions
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
        let report = ReferenceValidator().validate(bytes, context: try receiptChecks.context(checks))
        try checks.finish(report, json: Inspection(receipt: report, source: source, inputSize: bytes.count, includeChecks: true).json())
    }
}

/// `forge validate --listen`: the reference validator behind the http:// transport.
extension Validate {
    static func hostAndPort(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        let host = String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return host.isEmpty ? nil : (host, port)
    }

    func serveHTTP(network: any NetworkSupport, host: String, port: Int) async throws {
        let directory = try VectorsCommand.Location.locate(vectors)
        let reference: ReferenceHarness
        do { reference = try ReferenceHarness(vectorsDirectory: directory) } catch { throw fail("cannot load trust anchors from \(directory.path): \(error)", Exit.dataError) }
        let listener = HTTPListener(host: host, port: port, tls: nil, threads: threads, limits: server.limits)
        do {
            try await network.listen(listener, routes: HarnessRoutes(harness: reference)) { bound in
                // stdout, unbuffered: scripts and tests read the port from this line.
                FileHandle.standardOutput.write(Data("listening on http://\(bound.authority) (GET /hello, POST /validate, POST /verifyReceipt)\n".utf8))
                if !bound.isLoopback { note("warning: listening on \(bound.authority), not loopback: anyone who can reach it can send requests") }
            }
        } catch {
            throw fail("cannot listen on \(host):\(port): \(error)", Exit.software)
        }
    }
}

/// `forge validate --harness`: the reference validator behind the stdio transport.
extension Validate {
    func serveHarness() throws {
        let directory = try VectorsCommand.Location.locate(vectors)
        let reference: ReferenceHarness
        do { reference = try ReferenceHarness(vectorsDirectory: directory) } catch { throw fail("cannot load trust anchors from \(directory.path): \(error)", Exit.dataError) }
        StdioHarnessServer.serve(reference, write: { FileHandle.standardOutput.write($0) }, note: note)
    }
}

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode any receipt: container shape, certificates, every attribute, and the checks if asked.",
        discussion: """
            Accepts DER, base64 (with or without line breaks) and base64 of base64, from a file or - (stdin). Unknown attribute types are shown in hex. Give --root, --bundle-id, --device-id, … to also run the validator's checks. On unreadable input: one line naming the byte offset and what was expected, exit 65.
            """)

    @Argument(help: ArgumentHelp("Receipt file, or - for standard input.", valueName: "file"))
    var file: String
    @OptionGroup(title: "Checks") var checks: CheckOptions
    @OptionGroup(title: "Receipt checks") var receiptChecks: ReceiptCheckOptions

    func run() throws {
        let (bytes, source) = try readInput(file)
        let report = ReferenceValidator().validate(bytes, context: try receiptChecks.context(checks))
        if report.isUnreadable {
            throw fail(report.message.replacingOccurrences(of: "parse: ", with: ""), Exit.code(for: report))
        }
        let includeChecks = checks.hasExpectations || receiptChecks.hasExpectations
        let inspection = Inspection(receipt: report, source: source, inputSize: bytes.count, includeChecks: includeChecks)
        print(checks.json ? inspection.json().serialized() : inspection.text())
    }
}

/// The certificates of `--root` files (PEM, several per file, or DER); the bundled TEST root when none.
func loadRoots(_ paths: [String]) throws -> [X509Certificate] {
    var roots: [X509Certificate] = []
    for path in paths {
        let (bytes, _) = try readInput(path, kind: .certificate)
        do {
            if bytes.first == 0x30 {
                roots.append(try X509Certificate(derEncoded: bytes))
            } else {
                roots += try X509Certificate.all(fromPEM: String(decoding: bytes, as: UTF8.self))
            }
        } catch {
            throw fail("\(path) is not a PEM or DER certificate: \(error)", Exit.dataError)
        }
    }
    return paths.isEmpty ? [try loadPKI(nil)[.root].certificate] : roots
}
