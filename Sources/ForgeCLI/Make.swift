import ArgumentParser
import Foundation
import ForgeCrypto
import ReceiptForge
import ReceiptModel

struct Make: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make",
        abstract: "Make a receipt: valid by default, in the shape of a real one.",
        discussion: """
            Examples:
              forge make --product com.example.pro --expired -o expired.der
              forge make --preset xcode-2023 --product com.example.coins --format base64
              forge make --spec scenario.json --now 2025-01-01T00:00:00Z --format json
              forge make --product com.example.pro --count 10000 --out receipts/ --seed 1 --now 2025-01-01T00:00:00Z

            BATCH: --count N --out DIR makes N receipts in one process on --jobs threads: DIR/receipt-<i>.der (or .b64, .json) and DIR/index.jsonl (one line per receipt: file, seed, transaction ids). Receipt i uses seed S+i, S being --seed or the derived seed, so a batch with --seed and --now is the same bytes on every run and with any --jobs.

            Purchase options (--type, --expired, --renewals, …) apply to every --product. Subscription options imply --type auto-renewable. With --spec, flags override the spec's fields; --product replaces its purchases, and purchase options without --product apply to each of the spec's purchases. The time is the wall clock unless --now pins it, and the seed is derived from the inputs unless --seed pins it: the same arguments with --now give the same bytes. Both are reported on stderr. Trust the reported trust anchor (Certificates/root.pem, or storekit.pem for xcode-*) to accept it.
            """)

    @Option(name: .customLong("product"), help: ArgumentHelp("A product bought (repeatable).", valueName: "id"))
    var products: [String] = []
    @Option(help: "Product type: consumable, non-consumable, non-renewing, auto-renewable.")
    var type: ProductType?
    @Flag(help: "The subscription's latest period ended one day before --now.")
    var expired = false
    @Option(help: ArgumentHelp("When the latest subscription period ends.", valueName: "date"))
    var expires: String?
    @Option(help: ArgumentHelp("Subscription renewals after the first period (N renewals = N+1 transactions).", valueName: "n"))
    var renewals: Int?
    @Option(help: ArgumentHelp("Refunded/cancelled: --cancelled, or --cancelled=other|app-issue.", valueName: "reason"))
    var cancelled: String?
    @Flag(help: "The first subscription period is a free trial.")
    var trial = false
    @Flag(help: "The first subscription period is an introductory offer.")
    var intro = false
    @Option(help: ArgumentHelp("Promotional offer id on the latest period.", valueName: "id"))
    var promo: String?
    @Option(help: "Quantity of each purchase.")
    var quantity: Int?
    @Option(help: ArgumentHelp("Subscription period, ISO 8601 (P1W, P1M, P1Y). Default P1M.", valueName: "period"))
    var period: String?
    @Option(help: ArgumentHelp("When the (first) purchase happened.", valueName: "date"))
    var purchaseDate: String?
    @Option(help: "App bundle identifier. Default com.example.app.")
    var bundleId: String?
    @Option(help: "App version (attribute 3). Default 1.")
    var appVersion: String?
    @Option(help: "Original app version (attribute 19). Default 1.0; absent from Xcode receipts unless given.")
    var originalAppVersion: String?
    @Option(help: "Receipt type (attribute 0): Production, ProductionSandbox, Xcode, ProductionVPP…")
    var environment: String?
    @Option(help: ArgumentHelp("Device the hash binds to: a UUID (iOS) or a MAC aa:bb:cc:dd:ee:ff (macOS). Default: derived from the seed.", valueName: "id"))
    var deviceId: String?
    @Option(help: ArgumentHelp("Creation time, e.g. 2025-01-31T12:00:00Z. Default: now.", valueName: "date"))
    var now: String?
    @Option(help: "Seed for every generated id and byte.")
    var seed: UInt64?
    @Option(help: "Shape: appstore, appstore-sha1, sandbox, xcode-2020, xcode-2023. Default appstore.")
    var preset: Preset?
    @Option(help: ArgumentHelp("A scenario JSON file (see README); flags override it.", valueName: "file"))
    var spec: String?
    @Option(help: "Output: der, base64, json (the verifyReceipt decoded form). Default der; base64 when stdout is a terminal.")
    var format: OutputFormat?
    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Output file (written atomically). Default: stdout.", valueName: "file"))
    var output: String?
    @Option(help: ArgumentHelp("A certificate set made by `forge ca init` instead of the bundled one.", valueName: "dir"))
    var certificates: String?
    @Flag(name: [.customShort("q"), .long], help: "Do not report what was made on stderr.")
    var quiet = false
    @Option(help: ArgumentHelp("Make this many receipts (needs --out); see BATCH.", valueName: "n"))
    var count: Int?
    @Option(help: ArgumentHelp("With --count: the directory the receipts and index.jsonl are written to.", valueName: "dir"))
    var out: String?
    @Option(help: ArgumentHelp("With --count: threads. Default: the number of cores.", valueName: "n"))
    var jobs: Int?

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable { case der, base64, json }

    func validate() throws {
        if let cancelled, CancellationReason(argument: cancelled) == nil {
            throw ValidationError("--cancelled takes other (0) or app-issue (1), not '\(cancelled)'")
        }
        if let count {
            guard (1...10_000_000).contains(count) else { throw ValidationError("--count must be between 1 and 10000000") }
            guard out != nil else { throw ValidationError("--count needs --out DIR (the receipts are files in it)") }
            guard output == nil else { throw ValidationError("--count writes into --out DIR; -o/--output is for one receipt") }
        } else if out != nil {
            throw ValidationError("--out is for a batch: give --count N too, or -o FILE for one receipt")
        }
        if let jobs {
            guard count != nil else { throw ValidationError("--jobs is for a batch: give --count N and --out DIR too") }
            guard (1...256).contains(jobs) else { throw ValidationError("--jobs must be between 1 and 256") }
        }
    }

    func run() throws {
        var scenario = Scenario()
        if let spec {
            let (bytes, _) = try readInput(spec)
            do { scenario = try Scenario.decode(json: Data(bytes)) } catch { throw fail("\(spec): \(error.message)", Exit.dataError) }
        }
        applyFlags(to: &scenario)
        let creation =
            try now.map { try parseDate($0, option: "--now") }
            ?? scenario.now.map { try parseDate($0, option: "the spec's now") } ?? wallClock()
        let pki = try loadPKI(certificates)
        if let count, let out { return try makeBatch(scenario, now: creation, count: count, into: out, pki: pki) }
        let receipt: ForgedReceipt
        do {
            receipt = try Forge(pki: pki).make(scenario, now: creation, naming: spec == nil ? .flags : .specKeys)
        } catch {
            throw fail(error.message, error.code == .conflictingOptions || error.code == .invalidScenario ? Exit.usage : Exit.software)
        }
        let toTerminal = (output == nil || output == "-") && isatty(STDOUT_FILENO) == 1
        if format == nil, toTerminal, !quiet { note("stdout is a terminal: writing base64 (use -o FILE for DER)") }
        try writeOutput(try render(receipt, as: format ?? (toTerminal ? .base64 : .der)), to: output)
        if !quiet {
            note("made \(receipt.preset.rawValue) receipt, \(receipt.bytes.count) bytes, \(receipt.transactions.count) transaction(s)\(output.map { " → \($0)" } ?? "")")
            note("now \(ReceiptDate.format(receipt.now)), seed \(receipt.seed), device id \(receipt.deviceID), bundle id \(receipt.bundleID)")
            let set = certificates.map { "\($0)/" } ?? "Certificates/ (compiled in)"
            note("trust anchor: \(receipt.trustAnchorRole.fileStem).pem of \(set)")
        }
    }

    private func applyFlags(to scenario: inout Scenario) {
        if let preset { scenario.preset = preset }
        if let bundleId { scenario.bundleID = bundleId }
        if let appVersion { scenario.appVersion = appVersion }
        if let originalAppVersion { scenario.originalAppVersion = originalAppVersion }
        if let environment { scenario.environment = environment }
        if let deviceId { scenario.deviceID = deviceId }
        if let seed { scenario.seed = seed }
        if !products.isEmpty { scenario.purchases = products.map { Purchase(productID: $0) } }
        for index in scenario.purchases.indices {
            var purchase = scenario.purchases[index]
            if let type { purchase.type = type }
            if expired { purchase.expired = true }
            if let expires { purchase.expiresDate = expires }
            if let renewals { purchase.renewals = renewals }
            if let cancelled { purchase.cancelled = CancellationReason(argument: cancelled) }
            if trial { purchase.trial = true }
            if intro { purchase.intro = true }
            if let promo { purchase.promo = promo }
            if let quantity { purchase.quantity = quantity }
            if let period { purchase.period = period }
            if let purchaseDate { purchase.purchaseDate = purchaseDate }
            scenario.purchases[index] = purchase
        }
    }

    func render(_ receipt: ForgedReceipt, as format: OutputFormat) throws -> Data {
        switch format {
        case .der:
            return Data(receipt.bytes)
        case .base64:
            return Data((Data(receipt.bytes).base64EncodedString() + "\n").utf8)
        case .json:
            let decoded: AppReceipt
            do { decoded = try AppReceipt(payloadBytes: receipt.payload) } catch { throw fail("re-reading the payload: \(error)", Exit.software) }
            let extras = VerifyReceiptJSON.Extras(
                cancellationReasons: receipt.history.cancellationReasons, latestReceipt: Data(receipt.bytes).base64EncodedString(),
                requestDate: receipt.now, now: receipt.now, pendingRenewals: receipt.history.pendingRenewals)
            return Data((VerifyReceiptJSON.response(for: decoded, extras: extras).serialized() + "\n").utf8)
        }
    }
}

/// The bundled test PKI, or a set made by `forge ca init`.
func loadPKI(_ directory: String?) throws -> TestPKI {
    do {
        if let directory { return try TestPKI.load(from: URL(fileURLWithPath: directory)) }
        return try TestPKI.bundled()
    } catch {
        throw fail(error.message, directory == nil ? Exit.software : Exit.dataError)
    }
}
