#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import ForgeCrypto
import ReceiptCorpus
package import StoreForge
import ReceiptModel
import ReferenceValidation
package import _ForgeSupport
package import StoreModel
import AppStoreVocabulary

/// Apple's verifyReceipt, answered from the bytes: what `forge serve` (and `forge validate --listen`'s
/// `/verifyReceipt`) reply to one request, independent of any socket. Checks run in Apple's order —
/// readable request (21000), readable `receipt-data` (21002), authentic under the trust anchors (21003),
/// the right endpoint for the receipt's environment (21007/21008), the shared secret (21004), the account
/// (21010) — and a valid receipt is decoded with what the server's history adds to it.
package struct VerifyReceiptService: Sendable {
    package struct Configuration: Sendable {
        /// The roots a receipt must chain to; the bundled TEST root by default.
        package var trustedRoots: [X509Certificate]
        /// With a secret, a receipt with auto-renewable purchases needs it as `password` (21004).
        package var sharedSecret: String?
        /// Answer 21006 (valid, subscription expired) as verifyReceipt once did for iOS 6-style receipts.
        package var legacyExpiredStatus: Bool
        /// The server's clock; the wall clock when nil. A request's `X-Forge-Now` overrides both.
        package var now: Date?
        /// The anchors a request may name in `X-Forge-Trust-Anchor` (a corpus's `forge-root`, `forge-storekit`).
        package var namedAnchors: [String: X509Certificate]
        /// The issuers an iOS 6 transaction receipt's signer must be issued by (its chain is the two); by default the
        /// bundled version 2 and version 3 anchors.
        package var transactionReceiptRoots: [X509Certificate]

        package init(
            trustedRoots: [X509Certificate], sharedSecret: String? = nil, legacyExpiredStatus: Bool = false,
            now: Date? = nil, namedAnchors: [String: X509Certificate] = [:], transactionReceiptRoots: [X509Certificate]? = nil
        ) {
            self.transactionReceiptRoots =
                transactionReceiptRoots ?? [BundledAnchor.transactionReceiptV2, .transactionReceiptV3].compactMap { try? $0.certificate() }
            self.namedAnchors = namedAnchors
            self.trustedRoots = trustedRoots
            self.sharedSecret = sharedSecret
            self.legacyExpiredStatus = legacyExpiredStatus
            self.now = now
        }
    }

    /// What a conformance run adds to a request (the runner's `X-Forge-*` headers): the vector's clock,
    /// anchors and binding. An expected environment replaces routing by endpoint.
    package struct Overrides: Sendable {
        package var now: Date?
        /// A name from ``Configuration/namedAnchors``; an unknown name trusts nothing (21003).
        package var trustAnchor: String?
        package var bundleID: String?
        package var appVersion: String?
        package var deviceID: [UInt8]?
        package var environment: String?
        /// The request carries a vector's context (any `X-Forge-*` header; the runner leaves out the ones the
        /// vector does not set): its environment is judged from `X-Forge-Environment` alone, not routed by
        /// endpoint (no 21007/21008 unless the vector expects another environment).
        package var bindsEnvironment: Bool

        package init(
            now: Date? = nil, trustAnchor: String? = nil, bundleID: String? = nil, appVersion: String? = nil, deviceID: [UInt8]? = nil,
            environment: String? = nil, bindsEnvironment: Bool? = nil
        ) {
            self.bindsEnvironment = bindsEnvironment ?? (environment != nil)
            self.now = now
            self.trustAnchor = trustAnchor
            self.bundleID = bundleID
            self.appVersion = appVersion
            self.deviceID = deviceID
            self.environment = environment
        }

        /// From the headers the runner's verifyreceipt mapping sends (names in lower case): `X-Forge-Now`,
        /// `X-Forge-Trust-Anchor`, `X-Forge-Bundle-Id`, `X-Forge-App-Version`, `X-Forge-Device-Id`,
        /// `X-Forge-Environment`. Empty values count as absent.
        package init(headers: [String: String]) {
            func value(_ name: String) -> String? { headers[name].flatMap { $0.isEmpty ? nil : $0 } }
            self.init(
                now: value("x-forge-now").flatMap(ReceiptDate.parse), trustAnchor: value("x-forge-trust-anchor"),
                bundleID: value("x-forge-bundle-id"), appVersion: value("x-forge-app-version"),
                deviceID: value("x-forge-device-id").flatMap(DeviceID.init)?.bytes, environment: value("x-forge-environment"),
                bindsEnvironment: headers.keys.contains { $0.hasPrefix("x-forge-") })
        }
    }

    /// The reply, and what the request log records of the request.
    package struct Answer: Sendable {
        package var status: VerifyReceiptStatus
        package var body: JSONValue
        package var summary: JSONObject
    }

    package let configuration: Configuration
    let histories: ServerHistories

    package init(configuration: Configuration, histories: ServerHistories = ServerHistories()) {
        self.configuration = configuration
        self.histories = histories
    }

    package func answer(endpoint: AppleEndpoint, body: [UInt8], overrides: Overrides = Overrides()) -> Answer {
        var summary: JSONObject = [("bytes", .integer(Int64(body.count)))]
        guard let request = try? JSONValue(parsing: body), request.objectValue != nil else {
            return Answer(status: .unreadableRequest, body: Self.status(.unreadableRequest), summary: summary)
        }
        let password = request["password"]?.stringValue
        let excludeOld = request["exclude-old-transactions"] == .bool(true)
        summary.append(("password", .string(passwordNote(password))))
        summary.append(("excludeOldTransactions", .bool(excludeOld)))
        guard let receiptData = request["receipt-data"]?.stringValue else {
            return failure(.malformedReceiptData, .inputEncoding, "receipt-data is missing or not a string", summary: summary)
        }
        // receipt-data is the base64 of the receipt file (line breaks allowed); what those bytes are
        // (DER, base64 text…) is judged as everywhere else.
        guard let bytes = Data(base64Encoded: receiptData, options: .ignoreUnknownCharacters) else {
            return failure(.malformedReceiptData, .inputEncoding, "receipt-data is not base64", summary: summary)
        }
        summary.append(("receipt", .string(Self.fingerprint([UInt8](bytes)))))
        if TransactionReceipt.outerBytes([UInt8](bytes)) != nil {
            return transactionReceiptAnswer([UInt8](bytes), endpoint: endpoint, password: password, overrides: overrides, summary: summary)
        }
        let now = overrides.now ?? histories.state?.now() ?? configuration.now ?? Date()
        let context = ValidationContext(
            trustedRoots: overrides.trustAnchor.map { configuration.namedAnchors[$0].map { [$0] } ?? [] } ?? configuration.trustedRoots, bundleID: overrides.bundleID,
            appVersion: overrides.appVersion,
            deviceID: overrides.deviceID, environment: overrides.environment.flatMap(Environment.init(receiptType:)), now: now)
        let report = ReferenceValidator().validate([UInt8](bytes), context: context)
        let sandboxReceipt = report.receipt?.receiptType.flatMap(Environment.init(receiptType:)) == .sandbox
        if let bundle = report.receipt?.bundleID { summary.append(("bundleId", .string(bundle))) }
        guard report.verdict == .valid, let receipt = report.receipt else {
            let errorClass = report.errorClass ?? .containerMalformed
            return failure(Self.status(for: errorClass, sandboxReceipt: sandboxReceipt), errorClass, report.message, summary: summary)
        }
        if !overrides.bindsEnvironment {
            if endpoint == .production, sandboxReceipt { return Answer(status: .sandboxReceiptInProduction, body: Self.status(.sandboxReceiptInProduction), summary: summary) }
            if endpoint == .sandbox, !sandboxReceipt { return Answer(status: .productionReceiptInSandbox, body: Self.status(.productionReceiptInSandbox), summary: summary) }
        }
        let hasSubscriptions = receipt.inAppPurchases.contains { $0.productType == 3 || ($0.productType == nil && $0.expiresDate != nil) }
        if let secret = configuration.sharedSecret, hasSubscriptions, password != secret {
            // Observed (forum thread 683183): the sandbox answers 21003 when the password is missing.
            let status: VerifyReceiptStatus = password == nil && endpoint == .sandbox ? .notAuthenticated : .sharedSecretMismatch
            return Answer(status: status, body: Self.status(status), summary: summary)
        }

        var extras = VerifyReceiptJSON.Extras(requestDate: now, now: now, excludeOldTransactions: excludeOld)
        extras.latestReceipt = Data(bytes).base64EncodedString()
        var expired = false
        let originals = Set(receipt.inAppPurchases.compactMap(\.originalTransactionID))
        if let (history, forge) = histories.history(of: originals) {
            do {
                let latest = try forge.make(history.scenario, now: history.madeAt, reissuedAt: max(now, history.madeAt))
                if let deleted = latest.history.accountDeletedAt, deleted <= now {
                    return Answer(status: .accountNotFound, body: Self.status(.accountNotFound), summary: summary)
                }
                extras.latestReceipt = Data(latest.bytes).base64EncodedString()
                extras.latestTransactions = try AppReceipt(payloadBytes: latest.payload).inAppPurchases.map(VerifyReceiptJSON.Purchase.init)
                extras.pendingRenewals = latest.history.pendingRenewals
                extras.cancellationReasons = latest.history.cancellationReasons
                extras.ownership = latest.ownership
                expired = latest.history.allSubscriptionsExpired(at: now, transactions: latest.transactions)
                summary.append(("history", .bool(true)))
            } catch {
                return Answer(status: .internalDataAccessError, body: Self.status(.internalDataAccessError, message: "\(error)"), summary: summary)
            }
        } else if hasSubscriptions {
            let latest = receipt.inAppPurchases.filter { $0.expiresDate != nil }.max { ($0.expiresDate ?? .distantPast) < ($1.expiresDate ?? .distantPast) }
            expired = latest.map { ($0.expiresDate.map { $0 <= now } ?? false) || $0.cancellationDate != nil } ?? false
        }
        var response = VerifyReceiptJSON.response(for: receipt, extras: extras)
        var status = VerifyReceiptStatus.valid
        if configuration.legacyExpiredStatus, expired, hasSubscriptions {
            status = .subscriptionExpired
            if var members = response.objectValue {
                members["status"] = .integer(status.rawValue)
                response = .object(members)
            }
        }
        return Answer(status: status, body: response, summary: summary)
    }

    /// Apple's status for a failed check: 21002 unreadable, 21003 not authenticated, 21007/21008 the
    /// wrong environment, and 21010 ("could not be authorized") for what Apple leaves to the app.
    static func status(for errorClass: ErrorClass, sandboxReceipt: Bool) -> VerifyReceiptStatus {
        switch errorClass.family {
        case "signature", "chain": .notAuthenticated
        case "binding" where errorClass == .bindingEnvironment: sandboxReceipt ? .sandboxReceiptInProduction : .productionReceiptInSandbox
        case "binding", "policy": .accountNotFound
        default: .malformedReceiptData
        }
    }

    /// `{"status": N}`, with `is-retryable` where Apple sends it (21100–21199).
    package static func status(_ status: VerifyReceiptStatus, retryable: Bool? = nil, message: String? = nil) -> JSONValue {
        var members: JSONObject = [("status", .integer(status.rawValue))]
        if status.isInternalRange { members.append(("is-retryable", .bool(retryable ?? true))) }
        if let message { members.append(("forge_message", .string(message))) }
        return .object(members)
    }

    /// A failure the validator found; `forge_error_class` and `forge_message` (not Apple's) say which check failed.
    func failure(_ status: VerifyReceiptStatus, _ errorClass: ErrorClass, _ message: String, summary: JSONObject) -> Answer {
        let body: JSONValue = .object([
            ("status", .integer(status.rawValue)), ("forge_error_class", .string(errorClass.rawValue)), ("forge_message", .string(message)),
        ])
        return Answer(status: status, body: body, summary: summary)
    }

    /// The log never holds the secret: only whether one came and whether it matched.
    private func passwordNote(_ password: String?) -> String {
        guard let password else { return "absent" }
        guard let secret = configuration.sharedSecret else { return "present" }
        return password == secret ? "matches" : "mismatch"
    }

    /// The first 16 hex digits of the receipt's SHA-256: enough to tell a test's receipts apart in a log.
    static func fingerprint(_ bytes: [UInt8]) -> String {
        let digest = (try? DigestAlgorithm.sha256.digest(bytes)) ?? []
        return hexString(digest.prefix(8))
    }
}

/// Server-side histories: a receipt whose transactions belong to one of the server's customers is answered
/// with the scenario's timeline up to the request's time (renewals, refunds, billing retry, and what the App
/// Store Server API changed: extensions, app account tokens), and a `latest_receipt` re-issued by the forge.
package struct ServerHistories: Sendable {
    struct History: Sendable {
        let scenario: Scenario
        let madeAt: Date
    }

    private let forge: Forge?
    /// The customers and the server clock, shared with the App Store Server API.
    let state: ServerState?
    /// Original transaction id → the customer whose purchases made it.
    private let byOriginalTransaction: [String: Int]

    package init() {
        forge = nil
        state = nil
        byOriginalTransaction = [:]
    }

    /// Forges each customer's receipt once, at its `now`, to learn which transactions it owns.
    package init(state: ServerState, forge: Forge) throws(ForgeError) {
        var owners: [String: Int] = [:]
        for (index, customer) in state.customers.enumerated() {
            for transaction in try forge.make(customer.scenario, now: customer.madeAt).transactions {
                owners[transaction.originalTransactionID] = index
            }
        }
        self.forge = forge
        self.state = state
        byOriginalTransaction = owners
    }

    func history(of originalTransactionIDs: Set<String>) -> (History, Forge)? {
        guard let forge, let state, let index = originalTransactionIDs.sorted().lazy.compactMap({ byOriginalTransaction[$0] }).first else { return nil }
        let customers = state.customers
        guard customers.indices.contains(index) else { return nil }
        return (History(scenario: customers[index].scenario, madeAt: customers[index].madeAt), forge)
    }
}
