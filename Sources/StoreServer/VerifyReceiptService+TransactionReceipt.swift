#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ForgeCrypto
import ReceiptCorpus
import StoreForge
import ReceiptModel
import ReferenceValidation
import _ForgeSupport
import StoreModel
import AppStoreVocabulary

/// verifyReceipt's answer to an iOS 6 transaction receipt (apple-2026-facts §4, receipt-facts §b.7): judged by Apple's
/// recommended checks, then the flat `receipt` of its purchase-info with underscore keys; for an auto-renewable
/// subscription `latest_receipt_info` as an object (the latest period, from the server's timeline when the purchase is
/// one of its customers') and `latest_receipt`; once that period has ended, 21006 with `latest_expired_receipt_info`
/// too under `--legacy-expired-status` (verifyReceipt's answer to iOS 6 receipts only).
extension VerifyReceiptService {
    func transactionReceiptAnswer(
        _ bytes: [UInt8], endpoint: AppleEndpoint, password: String?, overrides: Overrides, summary: JSONObject
    ) -> Answer {
        var summary = summary
        summary.append(("artifact", .string(ArtifactKind.transactionReceipt.rawValue)))
        let now = overrides.now ?? histories.state?.now() ?? configuration.now ?? Date()
        let roots = overrides.trustAnchor.map { configuration.namedAnchors[$0].map { [$0] } ?? [] } ?? configuration.transactionReceiptRoots
        let context = ValidationContext(
            trustedRoots: roots, bundleID: overrides.bundleID, environment: overrides.environment.flatMap(Environment.init(receiptType:)), now: now)
        let report = TransactionReceiptValidator().validate(bytes, context: context)
        let sandboxReceipt = report.outer?.first { $0.key == TransactionReceipt.OuterKey.environment.rawValue }?.value == Environment.sandbox.rawValue
        guard report.verdict == .valid, let receipt = report.purchaseInfo, let signature = report.signature,
            let version = TransactionReceiptVersion(rawValue: signature.version)
        else {
            let errorClass = report.errorClass ?? .containerMalformed
            return failure(Self.status(for: errorClass, sandboxReceipt: sandboxReceipt), errorClass, report.message, summary: summary)
        }
        func field(_ entries: [(key: String, value: String)], _ key: TransactionReceipt.PurchaseInfoKey) -> String? {
            entries.first { $0.key == key.rawValue }?.value
        }
        if let bundle = field(receipt, .bundleID) { summary.append(("bundleId", .string(bundle))) }
        if !overrides.bindsEnvironment {
            if endpoint == .production, sandboxReceipt { return Answer(status: .sandboxReceiptInProduction, body: Self.status(.sandboxReceiptInProduction), summary: summary) }
            if endpoint == .sandbox, !sandboxReceipt { return Answer(status: .productionReceiptInSandbox, body: Self.status(.productionReceiptInSandbox), summary: summary) }
        }
        let isSubscription = field(receipt, .expiresDate) != nil
        if let secret = configuration.sharedSecret, isSubscription, password != secret {
            let status: VerifyReceiptStatus = password == nil && endpoint == .sandbox ? .notAuthenticated : .sharedSecretMismatch
            return Answer(status: status, body: Self.status(status), summary: summary)
        }
        guard isSubscription else {
            return Answer(status: .valid, body: VerifyReceiptJSON.transactionReceiptResponse(status: 0, receipt: receipt), summary: summary)
        }

        // The subscription's latest period: the server's, re-issued at the request's time, when it knows the customer.
        var latest = receipt
        var latestReceipt = Base64.encode(bytes)
        var cancelled = false
        let original = field(receipt, .originalTransactionID) ?? field(receipt, .transactionID) ?? ""
        if let (history, forge) = histories.history(of: [original]) {
            do throws(ForgeError) {
                let draft = try forge.transactionReceiptDraft(
                    history.scenario, now: history.madeAt, version: version, reissuedAt: max(now, history.madeAt), latestOf: original)
                let reissued = try draft.signed()
                latest = reissued.purchaseInfoEntries
                latestReceipt = reissued.base64
                cancelled = reissued.transaction.cancellationDate.map { $0 <= now } ?? false
                summary.append(("history", .bool(true)))
            } catch {
                return Answer(status: .internalDataAccessError, body: Self.status(.internalDataAccessError, message: "\(error)"), summary: summary)
            }
        }
        let expires = field(latest, .expiresDate).flatMap { Int64($0) }.flatMap { ReceiptDate.instant(milliseconds: Double($0)) }
        let expired = cancelled || (expires.map { $0 <= now } ?? false)
        if configuration.legacyExpiredStatus, expired {
            let body = VerifyReceiptJSON.transactionReceiptResponse(
                status: Int(VerifyReceiptStatus.subscriptionExpired.rawValue), receipt: receipt, latestReceiptInfo: latest, latestExpiredReceiptInfo: latest)
            return Answer(status: .subscriptionExpired, body: body, summary: summary)
        }
        let body = VerifyReceiptJSON.transactionReceiptResponse(status: 0, receipt: receipt, latestReceiptInfo: latest, latestReceipt: latestReceipt)
        return Answer(status: .valid, body: body, summary: summary)
    }
}
