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
import StoreForge
import ReceiptModel
import _ForgeSupport
import StoreModel
import AppStoreVocabulary

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

            BATCH: --count N --out DIR makes N receipts in one process on --jobs threads: DIR/receipt-<i>.der (or .b64, .json) and DIR/index.jsonl (one line per receipt: file, seed, transaction ids). Receipt i uses seed S+i, S being --seed or the derived seed, so a batch with --seed and --now is the same bytes on every run and with any --jobs. DIR must be new or empty: anything in it (an earlier batch too) refuses with exit 73 and nothing is changed, unless --force, which replaces DIR whole. The batch is written into a staging folder beside DIR and swapped in only when complete, so a failure or an interrupt leaves DIR as it was.

            DATES: every date of the timeline (purchases, renewals, expiries, refunds, --now) lies from 1970-01-01T00:00:00Z up to 9999-12-31T00:00:00Z, the dates receipts (four-digit RFC 3339 years) and JWS (milliseconds since 1970) carry; anything else exits 64 naming the purchase or event and the date. A --now outside the TEST chain's validity warns: the receipt will not validate at that time.

            SPEC ERRORS: a --spec file that is not a scenario (an unknown key, a value of the wrong kind, outside its vocabulary or its range) exits 65 naming the key path ('timeline[0].event') and what the key takes; a spec that asks for what cannot be made (contradictory fields, dates out of bounds) exits 65 too, naming the file, as forge serve --scenario does; flags that do (alone or against the spec) exit 64. A negative number given to a flag gets the flag's range.

            TRANSACTION RECEIPTS: --transaction-receipt makes iOS 6's SKPaymentTransaction.transactionReceipt of the scenario's latest purchase (the same ids and dates as the app receipt of the same arguments): an old-style plist of signature, purchase-info (base64 of an inner plist with every key Apple wrote that the purchase has), environment (sandbox only), pod and signing-status. The signature blob is version | RSA signature | certificate length (big-endian) | certificate, over version ‖ the decoded purchase-info with RSASSA-PKCS1-v1_5 SHA-1: version 3 by the SHA-1-era receipt-signing leaf (anchor: its WWDR-like issuer, --root transaction-receipt-v3), version 2 by an RSA-1024 PurchaseReceiptCertificate-like leaf (anchor: an iTunes Store CA-like authority, --root transaction-receipt-v2). --format json gives the answer verifyReceipt gave for it. Xcode presets refuse: Xcode never made one.

            Purchase options (--type, --expired, --renewals, …) apply to every --product. Subscription options imply --type auto-renewable. With --spec, flags override the spec's fields; --product replaces its purchases, and purchase options without --product apply to each of the spec's purchases. The time is the wall clock unless --now pins it, and the seed is derived from the inputs unless --seed pins it: the same arguments with --now give the same bytes. Both are reported on stderr. Trust the reported trust anchor to accept it: the anchor named receipt (storekit for xcode-*), which forge's own commands take as --root receipt and `forge ca export --out DIR` writes as root.pem and storekit.pem.
            """)

    @OptionGroup(title: "Scenario") var scenarioOptions: ScenarioOptions
    @Option(help: "Receipt type (attribute 0), Apple's spelling exactly. Default: the preset's (Production; ProductionSandbox for sandbox; Xcode for xcode-*).")
    var environment: ReceiptType?
    @Option(help: "Output: der, base64, json (the verifyReceipt decoded form). Default der; base64 when stdout is a terminal.")
    var format: OutputFormat?
    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Output file (written atomically). Default: stdout.", valueName: "file"))
    var output: String?
    @Option(help: ArgumentHelp("A certificate set made by `forge ca init` instead of the bundled one.", valueName: "dir"))
    var certificates: String?
    @Flag(name: [.customShort("q"), .long], help: "Do not report what was made on stderr.")
    var quiet = false
    @Option(parsing: .number, help: ArgumentHelp("Make this many receipts (needs --out); see BATCH.", valueName: "n"))
    var count: Int?
    @Option(help: ArgumentHelp("With --count: the directory the receipts and index.jsonl are written to.", valueName: "dir"))
    var out: String?
    @Option(parsing: .number, help: ArgumentHelp("With --count: threads. Default: the number of cores.", valueName: "n"))
    var jobs: Int?
    @Flag(
        help: ArgumentHelp(
            "With --count: replace a non-empty --out DIR whole. Deletes everything in DIR (files forge did not write, folders, an earlier batch) once the new batch is complete; never a file in place of DIR, nor a folder that holds the current directory."
        ))
    var force = false

    @Flag(
        help: ArgumentHelp(
            "Make the iOS 6 transaction receipt (SKPaymentTransaction.transactionReceipt) of the latest purchase instead of an app receipt: the old-style plist; --format base64 is what an app posted to verifyReceipt, der its bytes. See TRANSACTION RECEIPTS."
        ))
    var transactionReceipt = false
    @Option(help: ArgumentHelp("With --transaction-receipt: the signature version, 2 (RSA-1024, until 2016) or 3 (RSA-2048). Default 3.", valueName: "2|3"))
    var signatureVersion: TransactionReceiptVersion?

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable { case der, base64, json }

    func validate() throws {
        if let count {
            guard (1...10_000_000).contains(count) else { throw ValidationError("--count must be between 1 and 10000000") }
            guard out != nil else { throw ValidationError("--count needs --out DIR (the receipts are files in it)") }
            guard output == nil else { throw ValidationError("--count writes into --out DIR; -o/--output is for one receipt") }
        } else if out != nil {
            throw ValidationError("--out is for a batch: give --count N too, or -o FILE for one receipt")
        }
        if signatureVersion != nil, !transactionReceipt { throw ValidationError("--signature-version is for a transaction receipt: add --transaction-receipt") }
        if transactionReceipt, count != nil { throw ValidationError("--transaction-receipt makes one receipt: drop --count") }
        if transactionReceipt, certificates != nil, signatureVersion == .v2 {
            throw ValidationError("--certificates holds no version 2 signer: version 2 is signed by the compiled-in set only")
        }
        if force, count == nil { throw ValidationError("--force replaces a batch's --out DIR: give --count N and --out DIR too") }
        if let jobs {
            guard count != nil else { throw ValidationError("--jobs is for a batch: give --count N and --out DIR too") }
            guard (1...256).contains(jobs) else { throw ValidationError("--jobs must be between 1 and 256") }
        }
    }

    func run() throws {
        let (scenario, creation) = try scenarioOptions.resolved(receiptType: environment)
        let pki = try loadPKI(certificates)
        if transactionReceipt { return try makeTransactionReceipt(scenario, now: creation, pki: pki) }
        let preset = scenario.preset ?? .appstore
        warnIfOutsideValidity(creation, of: (preset.chain + [preset.trustAnchor]).map { pki.certificateDER($0) }, making: "receipt")
        if let count, let out { return try makeBatch(scenario, now: creation, count: count, into: out, pki: pki) }
        let receipt: ForgedReceipt
        do {
            receipt = try Forge(receiptPKI: pki).make(scenario, now: creation)
        } catch {
            throw scenarioOptions.refused(error, now: creation)
        }
        let toTerminal = (output == nil || output == "-") && isatty(STDOUT_FILENO) == 1
        if format == nil, toTerminal, !quiet { note("stdout is a terminal: writing base64 (use -o FILE for DER)") }
        try writeOutput(try render(receipt, as: format ?? (toTerminal ? .base64 : .der)), to: output)
        if !quiet {
            note("made \(receipt.preset.rawValue) receipt, \(receipt.bytes.count) bytes, \(receipt.transactions.count) transaction(s)\(output.map { " → \($0)" } ?? "")")
            note("now \(ReceiptDate.format(receipt.now)), seed \(receipt.seed), device id \(receipt.deviceID), bundle id \(receipt.bundleID)")
            if let certificates {
                note("trust anchor: \(certificates)/\(receipt.trustAnchorRole.fileStem).pem")
            } else {
                let anchor: BundledAnchor = receipt.trustAnchorRole == .storeKit ? .storekit : .receipt
                note("trust anchor: --root \(anchor.rawValue) (compiled in; `forge ca export` writes it as \(anchor.fileStem).pem)")
            }
        }
    }

    /// One purchase as iOS 6's transaction receipt, signed as --signature-version says.
    func makeTransactionReceipt(_ scenario: Scenario, now: Date, pki: CertificateSet<CertificateRole>) throws {
        let version = signatureVersion ?? .v3
        let receipt: ForgedTransactionReceipt
        do {
            receipt = try Forge(receiptPKI: pki).makeTransactionReceipt(scenario, now: now, version: version)
        } catch {
            throw scenarioOptions.refused(error, now: now)
        }
        let toTerminal = (output == nil || output == "-") && isatty(STDOUT_FILENO) == 1
        let data: Data
        switch format ?? (toTerminal ? .base64 : .der) {
        case .der: data = Data(receipt.bytes)
        case .base64: data = Data((receipt.base64 + "\n").utf8)
        case .json: data = Data((VerifyReceiptJSON.transactionReceiptResponse(status: 0, receipt: receipt.purchaseInfoEntries).serialized() + "\n").utf8)
        }
        try writeOutput(data, to: output)
        if !quiet {
            let store = receipt.store
            note(
                "made version \(version.rawValue) transaction receipt, \(receipt.bytes.count) bytes, transaction \(receipt.transaction.transactionID) of \(receipt.transaction.productID)\(output.map { " → \($0)" } ?? "")"
            )
            note("now \(ReceiptDate.format(store.now)), seed \(store.seed), bundle id \(store.bundleID)")
            let anchor: BundledAnchor = version == .v2 ? .transactionReceiptV2 : .transactionReceiptV3
            let anchorText =
                certificates.map { "\($0)/\(CertificateRole.intermediateSHA1.fileStem).pem" }
                ?? "--root \(anchor.rawValue) (compiled in; `forge ca export` writes it as \(anchor.fileStem).pem)"
            note("trust anchor: \(anchorText); the chain is the embedded certificate and this issuer")
        }
    }

    func render(_ receipt: ForgedReceipt, as format: OutputFormat) throws -> Data {
        switch format {
        case .der:
            return Data(receipt.bytes)
        case .base64:
            return Data((Data(receipt.bytes).base64EncodedString() + "\n").utf8)
        case .json:
            // Rendered from the store the receipt was encoded from, not read back from its bytes.
            var extras = VerifyReceiptJSON.Extras(
                cancellationReasons: receipt.history.cancellationReasons, latestReceipt: Data(receipt.bytes).base64EncodedString(),
                requestDate: receipt.now, now: receipt.now, pendingRenewals: receipt.history.pendingRenewals)
            extras.ownership = receipt.ownership
            return Data((VerifyReceiptJSON.response(for: receipt.verifyReceipt, extras: extras).serialized() + "\n").utf8)
        }
    }
}

/// Warns, on one stderr line, when `now` lies outside the validity of `chain` (the TEST certificates that sign and
/// anchor the artefact): what is made then does not validate at its own time. Made all the same.
func warnIfOutsideValidity(_ now: Date, of chain: [[UInt8]], making artefact: String) {
    guard let window = ValidityWindow(chain: chain), !window.contains(now) else { return }
    note(
        "warning: now \(ReceiptDate.format(now)) is outside the TEST chain's validity (\(ReceiptDate.format(window.notBefore)) to \(ReceiptDate.format(window.notAfter))): "
            + "a \(artefact) made then will not validate at that time")
}

/// The bundled test PKI, or a set made by `forge ca init`.
func loadPKI(_ directory: String?) throws -> CertificateSet<CertificateRole> {
    do {
        if let directory { return try CertificateSet<CertificateRole>.load(from: URL(fileURLWithPath: directory)) }
        return try CertificateSet<CertificateRole>.bundled()
    } catch {
        throw fail(error.message, directory == nil ? Exit.software : Exit.dataError)
    }
}
