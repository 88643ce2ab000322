import ReceiptCorpus
import StoreModel
import AppStoreVocabulary

/// The iOS 6 transaction receipts of the corpus (issue 43): valid ones of both signature versions in both
/// environments, and one invalid one per bug class seen in the wild or in extract-only code. Each is judged as
/// Apple's recommended checks judge it (apple-2026-facts §4); a harness declares `transaction-receipt` to be sent them.
extension VectorCatalogue {
    /// The purchase a transaction receipt renders: the latest period of a monthly subscription.
    static let transactionReceiptScenario = Scenario(bundleID: bundleID, appVersion: "1", deviceID: deviceID, purchases: [subscription])

    static func transactionReceipt(
        _ id: String, _ description: String, version: TransactionReceiptVersion, preset: Preset = .appstore, _ defect: TransactionReceiptDefect? = nil,
        severity: Severity = .high, canary: Bool = false
    ) -> VectorSpec {
        var scenario = transactionReceiptScenario
        scenario.preset = preset
        var spec = VectorSpec(
            id, description, scenario: scenario, mutations: defect.map { [MutationStep($0.mutationID, [:])] } ?? [], verdict: defect == nil ? .valid : .invalid,
            errorClasses: defect?.errorClasses ?? [], severity: severity, canary: canary, fileExtension: "plist", revision: 1, artifact: .transactionReceipt)
        spec.transactionReceiptVersion = version
        spec.trustAnchor = nil
        return spec
    }

    static let transactionReceipts: [VectorSpec] = transactionReceiptValid + transactionReceiptInvalid

    static let transactionReceiptValid: [VectorSpec] = TransactionReceiptVersion.allCases.flatMap { version in
        [
            transactionReceipt(
                "transaction-receipt-valid::v\(version.rawValue)-production",
                "A version \(version.rawValue) transaction receipt of a subscription period in production, as Apple signed it: RSASSA-PKCS1-v1_5 SHA-1 over version ‖ purchase-info under the embedded \(version == .v2 ? "RSA-1024 PurchaseReceiptCertificate-like" : "RSA-2048 receipt-signing") certificate, which the trusted anchor issued and which was valid at the purchase date. Every correct validator must accept it.",
                version: version, severity: .critical, canary: version == .v3),
            transactionReceipt(
                "transaction-receipt-valid::v\(version.rawValue)-sandbox",
                "A version \(version.rawValue) transaction receipt from the sandbox (environment = Sandbox, pod 100), checked by a validator that expects Sandbox: Apple signed sandbox receipts with the same certificates, so every correct validator must accept it.",
                version: version, preset: .sandbox, severity: .critical),
        ]
    }

    static let transactionReceiptInvalid: [VectorSpec] = [
        transactionReceipt(
            "transaction-receipt::unsigned",
            "No signature at all, only purchase-info: the shape of Apple's own test fixture. Extract-only code (Apple's four libraries' ReceiptUtility) reads a transaction id from it; a validator must reject it, as nothing vouches for it.",
            version: .v3, .unsigned, severity: .critical),
        transactionReceipt(
            "transaction-receipt::signature-of-other-purchase-info",
            "A genuine signature of the purchase as it was, around a purchase-info whose quantity was changed to 10: a replayed receipt with changed fields. The signature does not verify over the bytes sent, so it must be rejected.",
            version: .v3, .signatureOfOtherPurchaseInfo, severity: .critical),
        transactionReceipt(
            "transaction-receipt::other-app",
            "A genuinely signed receipt of another app (bid com.example.other), sent to a server of com.example.app: the replay a fake App Store served in 2012. Apple's checks compare bid; accepting it grants one app's purchase in another.",
            version: .v3, .otherApp, severity: .critical),
        transactionReceipt(
            "transaction-receipt::version-2-with-256-byte-signature",
            "Version byte 2 in front of a 256-byte signature and its RSA-2048 certificate: read as version 2 (128 bytes), the certificate length lands inside the signature. The blob does not parse, so it must be rejected.",
            version: .v3, .version2With256ByteSignature),
        transactionReceipt(
            "transaction-receipt::version-3-with-128-byte-signature",
            "Version byte 3 in front of a 128-byte signature and its RSA-1024 certificate: read as version 3 (256 bytes), the length field falls inside the certificate. The blob does not parse, so it must be rejected.",
            version: .v2, .version3With128ByteSignature),
        transactionReceipt(
            "transaction-receipt::certificate-length-past-blob",
            "A genuine signature blob whose certificate length claims 1000 bytes more than the blob holds. Reading past the end is a memory-safety bug in C parsers; the blob is malformed and must be rejected.",
            version: .v3, .certificateLengthPastBlob, severity: .critical),
        transactionReceipt(
            "transaction-receipt::truncated-blob",
            "A signature blob cut two bytes into its certificate length: no certificate, no length. It must be rejected.",
            version: .v3, .truncatedBlob),
        transactionReceipt(
            "transaction-receipt::leaf-expired-at-purchase",
            "Signed by a certificate with the signer's own key and issuer that expired in 2001, years before the purchase date at which Apple's checks evaluate the chain. It must be rejected.",
            version: .v2, .leafExpiredAtPurchase),
        transactionReceipt(
            "transaction-receipt::chain-to-another-root",
            "Signed correctly by a certificate the foreign TEST root issued, not the trusted issuer: anyone can make such a receipt. It must be rejected.",
            version: .v3, .chainToAnotherRoot, severity: .critical),
        transactionReceipt(
            "transaction-receipt::purchase-info-not-plist",
            "A correctly signed purchase-info that is JSON, not an old-style plist. Apple never wrote one; a validator cannot read the purchase it vouches for and must reject it.",
            version: .v3, .purchaseInfoNotPlist),
        transactionReceipt(
            "transaction-receipt::duplicate-keys",
            "A correctly signed purchase-info with quantity twice (1, then 10): readers that keep the last value and readers that keep the first disagree on what was bought. Apple never wrote a key twice; it must be rejected.",
            version: .v3, .duplicateKeys),
        transactionReceipt(
            "transaction-receipt::non-string-value",
            "A correctly signed purchase-info whose quantity is an array, not a string: Apple wrote only strings, and code that casts the value to a string traps or reads nothing. It must be rejected.",
            version: .v3, .nonStringValue),
    ]
}
