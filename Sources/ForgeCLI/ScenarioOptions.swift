import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import StoreForge
import ReceiptModel
import StoreModel
import _ForgeSupport
import AppStoreVocabulary

/// The scenario flags `forge make` and `forge jws make` share: the same flag means the same thing in both.
struct ScenarioOptions: ParsableArguments {
    @Option(name: .customLong("product"), help: ArgumentHelp("A product bought (repeatable).", valueName: "id"))
    var products: [String] = []
    @Option(help: "Product type: consumable, non-consumable, non-renewing, auto-renewable.")
    var type: ProductType?
    @Flag(help: "The subscription's latest period ended one day before --now.")
    var expired = false
    @Option(help: ArgumentHelp("When the latest subscription period ends.", valueName: "date"))
    var expires: String?
    @Option(parsing: .number, help: ArgumentHelp("Subscription renewals after the first period (N renewals = N+1 transactions), 0 to 10000.", valueName: "n"))
    var renewals: Int?
    @Option(help: ArgumentHelp("Refunded/cancelled: --cancelled, or --cancelled=other|app-issue.", valueName: "reason"))
    var cancelled: String?
    @Flag(help: "The first subscription period is a free trial.")
    var trial = false
    @Flag(help: "The first subscription period is an introductory offer.")
    var intro = false
    @Option(help: ArgumentHelp("Promotional offer id on the latest period.", valueName: "id"))
    var promo: String?
    @Option(parsing: .number, help: "Quantity of each purchase, 1 to 1000000.")
    var quantity: Int?
    @Option(help: ArgumentHelp("Subscription period, ISO 8601 (P1W, P1M, P1Y). Default P1M.", valueName: "period"))
    var period: String?
    @Option(
        help: ArgumentHelp(
            "How the subscription is paid: BILLED_UPFRONT, or MONTHLY (a yearly subscription, one transaction a month over a 12-month commitment).",
            valueName: "plan"))
    var billingPlan: BillingPlanType?
    @Option(help: ArgumentHelp("When the (first) purchase happened.", valueName: "date"))
    var purchaseDate: String?
    @Option(help: "App bundle identifier. Default com.example.app.")
    var bundleId: String?
    @Option(help: "App version (attribute 3). Default 1.")
    var appVersion: String?
    @Option(help: "Original app version (attribute 19). Default 1.0; absent from Xcode receipts unless given.")
    var originalAppVersion: String?
    @Option(help: ArgumentHelp("Device the hash binds to: a UUID (iOS) or a MAC aa:bb:cc:dd:ee:ff (macOS). Default: derived from the seed.", valueName: "id"))
    var deviceId: String?
    @Option(help: ArgumentHelp("Creation time, e.g. 2025-01-31T12:00:00Z. Default: now.", valueName: "date"))
    var now: String?
    @Option(name: .customLong("seed"), parsing: .number, help: ArgumentHelp("Seed for every generated id and byte, 0 to 2^64-1.", valueName: "seed"))
    var seedText: String?
    /// `--seed`, checked by ``validate()``.
    var seed: UInt64? { seedText.flatMap { UInt64($0) } }
    @Option(help: "Shape: appstore, appstore-sha1, sandbox, xcode-2020, xcode-2023. Default appstore.")
    var preset: Preset?
    @Option(help: ArgumentHelp("A scenario JSON file (see README); flags override it.", valueName: "file"))
    var spec: String?
    @Option(
        help: ArgumentHelp(
            "An Xcode StoreKit configuration file: its products (type, period, group, price, offers) and storefront fill what the scenario leaves unsaid (the spec's own storefront and products win); --product picks them by productID (`forge storekit --help`).",
            valueName: "file"))
    var storekit: String?

    func validate() throws {
        if let seedText, UInt64(seedText) == nil {
            throw ValidationError("--seed \((UInt64.min...UInt64.max).requirement), not \(seedText)")
        }
        if let cancelled, CancellationReason(argument: cancelled) == nil {
            throw ValidationError("--cancelled takes other (0) or app-issue (1), not '\(cancelled)'")
        }
    }

    /// The spec (if any) with the flags applied, and the creation time: --now, the spec's now, or the wall clock.
    /// `receiptType` is the command's own `--environment` (`forge make`: a receipt type; `forge jws make`: the
    /// receipt type of its environment).
    func resolved(receiptType: ReceiptType? = nil) throws -> (Scenario, Date) {
        var scenario = try namedFiles()
        applyFlags(to: &scenario)
        if let receiptType { scenario.environment = receiptType.rawValue }
        let creation =
            try now.map { try parseDate($0, option: "--now") }
            ?? scenario.now.map { try parseDate($0, option: "the spec's now") } ?? wallClock()
        return (scenario, creation)
    }

    /// The scenario of the files the user names: the `--spec` (a file that is not a scenario exits 65) with the
    /// `--storekit` file applied (``Scenario/applying(_:)``), before any flag.
    func namedFiles() throws -> Scenario {
        var scenario = Scenario()
        if let spec {
            let (bytes, _) = try readInput(spec, kind: .json)
            do { scenario = try Scenario.decode(json: Data(bytes)) } catch { throw fail("\(spec): \(error.message)", Exit.dataError) }
        }
        if let storekit { scenario = scenario.applying(try loadStoreKit(storekit, products: products)) }
        return scenario
    }

    /// The exit for a scenario the forge refused at `now`. Bad data in a file the user names is 65 in every command
    /// (as `forge serve --scenario`): when the `--spec` alone cannot make a store, the error is the file's, said with
    /// its name; what the flags ask for is a usage error (64), said with the flags' names.
    func refused(_ error: ForgeError, now: Date) -> ExitCode {
        guard let spec else { return fail(ScenarioFlags.message(error), Exit.code(for: error)) }
        if error.code == .invalidScenario || error.code == .conflictingOptions, let alone = try? namedFiles() {
            do { _ = try Store(alone, now: now) } catch { return fail("\(spec): \(error.message)", Exit.dataError) }
        }
        return fail(error.message, Exit.code(for: error))
    }

    func applyFlags(to scenario: inout Scenario) {
        if let preset { scenario.preset = preset }
        if let bundleId { scenario.bundleID = bundleId }
        if let appVersion { scenario.appVersion = appVersion }
        if let originalAppVersion { scenario.originalAppVersion = originalAppVersion }
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
            if let billingPlan { purchase.billingPlan = billingPlan }
            if let purchaseDate { purchase.purchaseDate = purchaseDate }
            scenario.purchases[index] = purchase
        }
    }
}
