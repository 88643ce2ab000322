import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptCorpus
import StoreForge
import ReceiptModel
import ReferenceValidation
import ReceiptValidationServer
import _ForgeSupport
import JWSModel
import StoreModel
import AppStoreVocabulary

/// `forge jws`: StoreKit 2 signed data — forged, inspected and verified.
struct JWSCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jws",
        abstract: "StoreKit 2 signed data (JWS): transactions, renewal info, AppTransaction, notifications V2, realtime requests.",
        discussion: """
            JWS are ES256-signed by the bundled EC TEST PKI (Certificates/jws/: a P-384 root like Apple Root CA - G3, a P-384 intermediate like WWDR G6, a P-256 signing leaf), x5c = leaf, intermediate, root; with an xcode-* preset, by a self-signed Xcode-like certificate with kid Apple_Xcode_Key. Nonces follow RFC 6979, so the same scenario, --now and --seed give the same bytes. TEST ONLY: trust the anchor named jws (`forge ca export --out DIR` writes it as jws-root-g3.pem and .der; Xcode JWS: jws-xcode) in your server's tests, never in production; forge's own commands take --root jws.
            """,
        subcommands: [MakeJWS.self, InspectJWS.self, ValidateJWS.self])
}

struct MakeJWS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make",
        abstract: "Forge a signed JWS of one kind from a scenario (the same flags and spec as `forge make`).",
        discussion: """
            Kinds: transaction, renewal, app-transaction, notification, realtime. The ids, dates, bundle and device are those of the receipt `forge make` makes from the same arguments, so a server that sees both during a migration sees one history. Environment: Production by default, Sandbox with --preset sandbox, Xcode with --preset xcode-2023 (fractional-millisecond dates, ids "0", one self-signed certificate). --environment sets the claim only (the preset picks the signer), in Apple's spelling exactly: `sandbox` is refused, not read as Production.

            Notifications: --notification-type and --subtype take Apple's values; a pair Apple never sends (REFUND --subtype INITIAL_BUY) exits 64 naming it. TEST needs no --product: without one it carries no transaction, as Apple's does. The pair sets the state the notification carries, through the scenario's timeline (so `forge make` of the same timeline agrees): EXPIRED → lapsed, auto-renew off, expirationIntent 1-4 by subtype, status 2; DID_FAIL_TO_RENEW → billing retry, status 3 (GRACE_PERIOD: gracePeriodExpiresDate, status 4); GRACE_PERIOD_EXPIRED → status 3; REFUND, REVOKE → revocationDate and revocationReason, status 5; DID_CHANGE_RENEWAL_STATUS → autoRenewStatus 0 or 1; DID_RENEW → a renewal transaction; PRICE_INCREASE → priceIncreaseStatus. Subscription pairs imply an auto-renewable product, as --expired does (a --type or spec type that says otherwise exits 64); flags that contradict the pair (EXPIRED with a later --expires) exit 64 saying which.

            --set POINTER=JSON and --unset POINTER edit the payload by RFC 6901 pointer (/data/appAppleId; a bare name is a top-level member). A member Apple's schema does not have exits 64 naming the key and the pointer, unless --allow-unknown-keys; so does a number JSON cannot carry (1e400).

            Examples:
              forge jws make transaction --product pro.monthly --renewals 2 --now 2025-01-01T00:00:00Z
              forge jws make notification --notification-type DID_RENEW --product pro.monthly --renewals 1 --preset sandbox -o n.jws
              forge jws make app-transaction --bundle-id com.example.app --set originalPlatform='"macOS"'
            """)

    @Argument(help: ArgumentHelp("transaction, renewal, app-transaction, notification or realtime.", valueName: "kind"))
    var kind: JWSKind
    @OptionGroup var jws: JWSMakeOptions
    @OptionGroup(title: "Scenario") var scenarioOptions: ScenarioOptions
    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Output file (the compact JWS and a newline). Default: stdout.", valueName: "file"))
    var output: String?
    @Option(help: "Print the JWS (compact, the default) or json: {kind, environment, jws, header, payload}.")
    var format: JWSOutput = .compact
    @Flag(name: [.customShort("q"), .long], help: "Do not report what was made on stderr.")
    var quiet = false

    enum JWSOutput: String, ExpressibleByArgument, CaseIterable { case compact, json }

    func run() throws {
        let forged = try jws.forged(kind, scenario: scenarioOptions)
        let text: String
        switch format {
        case .compact: text = forged.compact
        case .json:
            text = JSONValue.object([
                ("kind", .string(kind.rawValue)), ("environment", .string(forged.environment.rawValue)), ("jws", .string(forged.compact)), ("payload", forged.payload),
            ]).serialized()
        }
        try writeOutput(Data((text + "\n").utf8), to: output)
        if !quiet {
            note(
                "made \(kind.rawValue) JWS, \(forged.compact.utf8.count) bytes, environment \(forged.environment.rawValue), bundle id \(forged.bundleID)\(output.map { " → \($0)" } ?? "")"
            )
            let anchor = forged.xcodeSigned ? BundledAnchor.jwsXcode : .jws
            note(
                "trust anchor: --root \(anchor.rawValue)\(forged.xcodeSigned ? " with --environment Xcode" : "") (compiled in; `forge ca export` writes it as \(anchor.fileStem).pem)"
            )
            if kind == .transaction, let id = forged.payload["transactionId"]?.stringValue,
                let t = forged.store.transactions.first(where: { $0.transactionID == id }), !forged.xcodeSigned
            {
                // What the customer's e-mailed receipt shows: `forge serve` looks it up (GET /inApps/v1/lookup/{orderId}).
                note("order id: \(forged.store.orderID(of: t))")
            }
        }
    }
}

/// What `forge jws make` forges, and `forge notify` signs and sends, besides the scenario (``ScenarioOptions``, a
/// group of each command's own: a group nested in a group costs swift-argument-parser's debug-build validation
/// three times over, ~60 ms of every call): the payload's claims, the notification's pair or timeline event, and the
/// payload edits.
struct JWSMakeOptions: ParsableArguments {
    @Option(name: .customLong("about"), help: ArgumentHelp("The purchase (product id) the JWS is about. Default: the first.", valueName: "id"))
    var about: String?
    @Option(help: "The environment claim (AppTransaction: receiptType). Default: the preset's (Production; Sandbox for sandbox; Xcode for xcode-*).")
    var environment: Environment?
    @Option(
        parsing: .number,
        help: ArgumentHelp("The app's Apple id (notification data, AppTransaction, realtime). Default: the receipt's (absent outside Production).", valueName: "n"))
    var appAppleId: Int64?
    @Option(help: "notificationType of a notification. Default: DID_RENEW.")
    var notificationType: NotificationType?
    @Option(help: "subtype of a notification: one Apple sends with --notification-type.")
    var subtype: NotificationSubtype?
    @Option(
        parsing: .number,
        help: ArgumentHelp(
            "The notification of the N-th event (from 1) of the --spec timeline: its type and subtype (cancel is DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED, refund REFUND, grace-period DID_FAIL_TO_RENEW/GRACE_PERIOD…), its product and, unless --now, its time; the state is the timeline's own. A renew event has no time, and Apple sends an EXPIRED when the period ends, not when the product is withdrawn or the price increase declined: give --now for those.",
            valueName: "n"))
    var event: Int?
    @Option(help: "A CONSUMPTION_REQUEST's data.consumptionRequestReason: why the customer asked for the refund. Default: UNINTENDED_PURCHASE.")
    var consumptionRequestReason: ConsumptionRequestReason?
    @Option(
        help: ArgumentHelp(
            "An EXTERNAL_PURCHASE_TOKEN's custom link token type (tokenType, with tokenExpirationDate 30 days after tokenCreationDate). Default: none, a token of the older kinds.",
            valueName: "type"))
    var tokenType: ExternalPurchaseTokenType?
    @Option(help: ArgumentHelp("appAccountToken (a UUID) on transactions.", valueName: "uuid"))
    var appAccountToken: String?
    @Option(
        parsing: .number,
        help: ArgumentHelp("Price in milliunits (9990 = 9.99). Default: the product's in --storekit (or the spec's products), else 9990; offers keep theirs.", valueName: "n"))
    var price: Int64?
    @Option(help: "ISO 4217 currency. Default: the storefront's (--storekit's _storefront, the spec's storefront), else USD.")
    var currency: String?
    @Option(
        help: ArgumentHelp("Set a payload member to a JSON value (repeatable): --set /data/appAppleId=1234, --set revocationType='\"REFUND_FULL\"'.", valueName: "pointer=json"))
    var set: [String] = []
    @Option(help: ArgumentHelp("Remove a payload member (repeatable): --unset /data/status.", valueName: "pointer"))
    var unset: [String] = []
    @Flag(help: "Let --set add members Apple's schema does not have.")
    var allowUnknownKeys = false
    @Option(help: ArgumentHelp("An EC set made by `forge ca init --jws` instead of the bundled one.", valueName: "dir"))
    var jwsCertificates: String?

    func validate() throws {
        let appleIDs = 1...ScenarioLimits.unsignedJSONInteger.upperBound
        if let appAppleId, !appleIDs.contains(appAppleId) { throw ValidationError("--app-apple-id \(appleIDs.requirement), not \(appAppleId)") }
        if let price, !ScenarioLimits.unsignedJSONInteger.contains(price) { throw ValidationError("--price \(ScenarioLimits.unsignedJSONInteger.requirement), not \(price)") }
    }

    /// The notification `--event` names: its pair, its product and its time (nil: the scenario's now).
    func reportedEvent(
        in scenario: Scenario, kind: JWSKind
    ) throws -> (type: NotificationType, subtype: NotificationSubtype?, productID: String?, at: Date?, reason: ConsumptionRequestReason?)? {
        guard let event else { return nil }
        guard kind == .notification else { throw fail("--event reports a timeline event as a notification: make the kind notification, not \(kind.rawValue)", Exit.usage) }
        guard notificationType == nil, subtype == nil else {
            throw fail("--event sets the notification's type and subtype from the event: leave out --notification-type and --subtype", Exit.usage)
        }
        let timeline = scenario.timeline ?? []
        guard event >= 1, event <= timeline.count else {
            throw fail("--event \(event): the scenario's timeline has \(timeline.count) event(s)\(timeline.isEmpty ? " (give one with --spec)" : ", numbered from 1")", Exit.usage)
        }
        let happened = timeline[event - 1]
        guard let pair = scenario.notification(for: happened) else {
            throw fail("--event \(event) is \(happened.event.rawValue): Apple sends no notification for it", Exit.usage)
        }
        let reason = happened.event == .refundRequest ? happened.requestReason ?? .unintendedPurchase : nil
        return (pair.type, pair.subtype, scenario.announcedProduct(of: happened), happened.at.flatMap(ReceiptDate.parse), reason)
    }

    /// The JWS of `kind` these options describe in `scenarioOptions`' scenario, signed; a note on stderr when the clock
    /// is outside the chain's validity.
    func forged(_ kind: JWSKind, scenario scenarioOptions: ScenarioOptions) throws -> ForgedJWS {
        let (scenario, resolvedNow) = try scenarioOptions.resolved(receiptType: environment?.receiptType)
        let reported = try reportedEvent(in: scenario, kind: kind)
        // The event's own time is when Apple sends its notification; --now still wins.
        let creation = scenarioOptions.now == nil ? reported?.at ?? resolvedNow : resolvedNow
        var overrides: [(String, JSONValue)] = []
        for assignment in set {
            do throws(ForgeError) {
                let parsed = try PayloadAssignment(parsing: assignment)
                overrides.append((parsed.pointer, parsed.value))
            } catch { throw fail("--set \(error.message) (quote a JSON string for the shell: storefront='\"FRA\"')", Exit.usage) }
        }
        var options = JWSOptions(
            productID: about ?? reported?.productID, environment: environment, appAppleID: appAppleId,
            notificationType: .known(reported?.type ?? notificationType ?? .didRenew), subtype: (reported.map { $0.subtype } ?? subtype).map(WireValue.known),
            currency: currency, price: price, appAccountToken: appAccountToken, overrides: overrides, removals: unset.map { PayloadAssignment.pointer($0) },
            allowUnknownKeys: allowUnknownKeys)
        options.stateFromTimeline = reported != nil
        if let reason = consumptionRequestReason ?? reported?.reason { options.consumptionRequestReason = reason }
        options.tokenType = tokenType
        let forged: ForgedJWS
        do {
            let pki = try jwsCertificates.map { try CertificateSet<JWSRole>.load(from: URL(fileURLWithPath: $0)) }
            forged = try Forge(receiptPKI: .bundled(), jwsPKI: pki).make(kind, scenario: scenario, now: creation, options: options)
            warnIfOutsideValidity(creation, of: try (pki ?? .bundled()).x5cDER(xcode: forged.xcodeSigned), making: "JWS")
        } catch let error as ForgeError {
            throw scenarioOptions.refused(error, now: creation)
        }
        return forged
    }
}

struct InspectJWS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode a JWS: header, x5c chain (subjects, validity, marker OIDs), payload, nested JWS.",
        discussion: """
            Reads a compact JWS (at most 16 MiB) from a file or - (stdin). Nothing is verified: use `forge jws validate` for that. Decodes at most 16 x5c entries (certificatesNotShown counts the rest). Exit 65 when it is not a compact JWS.
            """)

    @Argument(help: ArgumentHelp("JWS file, or - for standard input.", valueName: "file"))
    var file: String
    @Flag(help: "Print as JSON.")
    var json = false

    func run() throws {
        let (bytes, _) = try readInput(file, kind: .jws)
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace(newlines: true)
        guard let inspection = Inspection(jws: text) else { throw fail("not a compact JWS (header.payload.signature, base64url JSON)", Exit.dataError) }
        print(json ? inspection.json().serialized() : inspection.text())
    }
}

struct ValidateJWS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Verify a JWS as Apple's SignedDataVerifier does (offline), with an error class on failure.",
        discussion: """
            Checks: compact form; alg ES256; x5c of exactly 3 (Xcode: 1, pinned); the chain x5c[0] → x5c[1] → --root (x5c[2] is never trusted) with the markers 1.2.840.113635.100.6.11.1 and 1.2.840.113635.100.6.2.1, at signedDate (receiptCreationDate for AppTransaction) unless --at; the ES256 signature; bundleId; environment; appAppleId in Production (AppTransaction, notification, realtime); a notification's signed transaction and renewal info, the same way (RESCIND_CONSENT: appData bound as data, never beside it, its signed AppTransaction required and verified). A JWS is at most 16 MiB; x5c is counted before any entry is decoded; a signedDate (receiptCreationDate) outside the years 0000 to 9999 is payload.invalid-field. Exit 0 valid, 1 invalid, 65 not a JWS, 66 missing file (or a --root that is neither a file nor a bundled anchor), 64 usage. Output as `forge validate`'s: the verdict first, then FAIL, checked:, skipped: (bundleId, environment without --bundle-id, --environment) and the transaction's subscription state; an Xcode-signed JWS read without --environment Xcode gets a hint on stderr naming the flags (--environment Xcode --root jws-xcode). --kind verifies as that kind, as SignedDataVerifier's entry point for it; without it the kind is read from the payload's fields.
            """)

    @Argument(help: ArgumentHelp("JWS file, or - for standard input.", valueName: "file"))
    var file: String?
    @Flag(help: "Serve the harness protocol v1 on stdin/stdout for `forge run --target stdio:…`: receipts and JWS, with the corpus's trust anchors.")
    var harness = false
    @Option(help: ArgumentHelp("With --harness: the corpus whose trust anchors to load.", valueName: "dir"))
    var vectors: String?
    @OptionGroup(title: "Checks") var checks: CheckOptions
    @Option(help: "Expected appAppleId (checked in Production).")
    var appAppleId: Int64?
    @Option(
        help: ArgumentHelp(
            "Verify as this kind (transaction, renewal, app-transaction, notification or realtime), as Apple's SignedDataVerifier entry point for it does: the kind decides the chain's instant and the claims checked. Default: the kind the payload's fields say.",
            valueName: "kind"))
    var kind: JWSKind?

    func validate() throws {
        if harness, kind != nil { throw ValidationError("--kind is for a file; with --harness each vector names its kind") }
        if harness, file != nil { throw ValidationError("a harness reads requests, not a file; give no file with --harness") }
        if !harness, file == nil { throw ValidationError("give a JWS file (or - for stdin), or --harness") }
    }

    func run() throws {
        if harness {
            // The same reference harness as `forge validate --harness`: it judges each vector by its artifact kind.
            let directory = try VectorsCommand.Location.locate(vectors)
            let reference: ReferenceHarness
            do { reference = try ReferenceHarness(vectorsDirectory: directory) } catch { throw fail("cannot load trust anchors from \(directory.path): \(error)", Exit.dataError) }
            return StdioHarnessServer.serve(reference, write: { StandardStream.output.write($0) }, note: note)
        }
        let (bytes, _) = try readInput(file ?? "-", kind: .jws)
        // The bundled JWS TEST root unless --root; the Xcode certificate when Xcode is expected.
        let roots = try checks.roots { try loadRoots([(checks.environment?.environment == .xcode ? BundledAnchor.jwsXcode : .jws).rawValue]) }
        var context = try checks.context(roots: roots)
        context.appAppleID = appAppleId
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace(newlines: true)
        let report = JWSVerifier().verify(text, as: kind, context: context)
        try checks.finish(
            report, notChecked: report.isUnreadable ? [] : checks.notGiven(kind: report.kind), subscriptions: SubscriptionState.of(report), at: context.now,
            hint: AnchorHint.jws(text, context: context, report: report, candidates: AnchorHint.bundledCandidates)?.message(receipt: false),
            json: Inspection(jws: text, report: report)?.json() ?? .null)
    }
}
