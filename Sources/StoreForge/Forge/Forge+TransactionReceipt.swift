import AppStoreVocabulary
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ForgeCrypto
public import ReceiptModel
import _ForgeSupport
public import StoreModel

/// The two signature versions of the iOS 6 transaction receipt (apple-2026-facts §4): the first byte of its signature.
public enum TransactionReceiptVersion: UInt8, Sendable, Hashable, CaseIterable, Codable {
    /// Until 2016: RSA-1024 under an iTunes Store CA-like authority, marker 1.2.840.113635.100.6.5.1.
    case v2 = 2
    /// From May 2016: RSA-2048, the SHA-1-era receipt-signing leaf under the WWDR-like intermediate.
    case v3 = 3

    /// The certificate that signs this version and the one a validator anchors on (the chain is exactly those two).
    public func signer(
        receiptPKI: CertificateSet<CertificateRole>, transactionPKI: CertificateSet<TransactionReceiptRole>
    ) -> (key: RSAPrivateKey, certificate: [UInt8], anchor: [UInt8]) {
        switch self {
        case .v2:
            (transactionPKI.privateKey(.purchaseReceipt), transactionPKI.certificateDER(.purchaseReceipt), transactionPKI.certificateDER(.iTunesStoreCA))
        case .v3: (receiptPKI.privateKey(.leafSHA1), receiptPKI.certificateDER(.leafSHA1), receiptPKI.certificateDER(.intermediateSHA1))
        }
    }

    /// The signer's issuer with its key, for certificates issued again from them (the vectors' variants).
    public func issuer(receiptPKI: CertificateSet<CertificateRole>, transactionPKI: CertificateSet<TransactionReceiptRole>) -> Credential<RSAPrivateKey> {
        switch self {
        case .v2: transactionPKI[.iTunesStoreCA]
        case .v3: receiptPKI[.intermediateSHA1]
        }
    }

    /// The signer's certificate template.
    public var signerTemplate: CertificateTemplate {
        switch self {
        case .v2: TransactionReceiptRole.purchaseReceipt.template
        case .v3: CertificateRole.leafSHA1.template
        }
    }
}

/// One purchase of the store as a transaction receipt, before it is signed: what the vectors edit.
public struct TransactionReceiptDraft: Sendable {
    public var version: TransactionReceiptVersion
    /// `purchase-info`'s entries, in order.
    public var purchaseInfo: [(key: String, value: String)]
    /// The outer entries after `signature` and `purchase-info`: `environment` (sandbox), `pod`, `signing-status`.
    public var outerTail: [(key: String, value: String)]
    public var key: RSAPrivateKey
    /// The signer's certificate DER, as the blob embeds it.
    public var certificate: [UInt8]
    /// The certificate a validator anchors on (the signer's issuer).
    public let anchor: [UInt8]
    /// The purchase rendered.
    public let transaction: Transaction
    public let store: Store

    /// The inner plist's bytes instead of ``purchaseInfo`` rendered (a vector's purchase-info that is not a plist of strings).
    public var rawPurchaseInfo: [UInt8]?

    /// `purchase-info` as the old-style plist whose base64 the outer one carries.
    public var purchaseInfoBytes: [UInt8] { rawPurchaseInfo ?? OldStylePlist.render(purchaseInfo) }

    /// Signs `purchaseInfoBytes` (or `signing` instead, for a receipt whose signature is of another purchase-info).
    public func signed(signing other: [UInt8]? = nil) throws(ForgeError) -> ForgedTransactionReceipt {
        assembled(signatureBlob: try signature(signing: other).encoded())
    }

    /// The signature blob over `version ‖ purchase-info` (or `other`), by ``key``, embedding ``certificate``.
    public func signature(signing other: [UInt8]? = nil) throws(ForgeError) -> TransactionReceiptSignature {
        let message = TransactionReceiptSignature.signedMessage(version: version.rawValue, purchaseInfo: other ?? purchaseInfoBytes)
        let signature = try ForgeError.wrapping("signing the transaction receipt") { try key.signature(for: message, algorithm: .sha1) }
        return TransactionReceiptSignature(version: version.rawValue, signature: signature, certificate: certificate)
    }

    /// The outer plist around any signature blob (the vectors write broken ones); nil leaves `signature` out, as the
    /// unsigned receipt of Apple's own test fixture.
    public func assembled(signatureBlob: [UInt8]?) -> ForgedTransactionReceipt {
        let info = purchaseInfoBytes
        var outer: [(key: String, value: String)] = []
        if let signatureBlob { outer.append((TransactionReceipt.OuterKey.signature.rawValue, Base64.encode(signatureBlob))) }
        outer.append((TransactionReceipt.OuterKey.purchaseInfo.rawValue, Base64.encode(info)))
        outer += outerTail
        return ForgedTransactionReceipt(
            bytes: OldStylePlist.render(outer), purchaseInfo: info, purchaseInfoEntries: purchaseInfo, version: version, transaction: transaction, anchor: anchor,
            store: store)
    }
}

/// A transaction receipt the forge made: the outer plist's bytes (what `transactionReceipt` held; a server is sent their
/// base64) and what they render.
public struct ForgedTransactionReceipt: Sendable {
    public let bytes: [UInt8]
    /// The inner plist, decoded.
    public let purchaseInfo: [UInt8]
    /// Its entries, in order.
    public let purchaseInfoEntries: [(key: String, value: String)]
    public let version: TransactionReceiptVersion
    public let transaction: Transaction
    /// The DER of the certificate a validator anchors on.
    public let anchor: [UInt8]
    public let store: Store
    /// What an app posted to verifyReceipt as `receipt-data`.
    public var base64: String { Base64.encode(bytes) }
}

extension Forge {
    /// The transaction receipt of one purchase of `scenario` at `now`, signed as `version`: the transaction `transactionID`
    /// names, else the store's latest (by purchase date). Deterministic: the same scenario, time and seed give the same bytes.
    public func makeTransactionReceipt(
        _ scenario: Scenario, now: Date, version: TransactionReceiptVersion, transactionID: String? = nil
    ) throws(ForgeError) -> ForgedTransactionReceipt {
        try transactionReceiptDraft(scenario, now: now, version: version, transactionID: transactionID).signed()
    }

    /// The same, unsigned, for callers that edit it first. With `reissuedAt`, the store is looked at then, as
    /// verifyReceipt's server sees it later (``Store/init(_:now:reissuedAt:)``); with `latestOf`, the purchase is the
    /// latest period of that original transaction (a subscription's latest renewal).
    public func transactionReceiptDraft(
        _ scenario: Scenario, now: Date, version: TransactionReceiptVersion, transactionID: String? = nil, reissuedAt: Date? = nil,
        latestOf originalTransactionID: String? = nil
    ) throws(ForgeError) -> TransactionReceiptDraft {
        let store = try Store(scenario, now: now, reissuedAt: reissuedAt)
        guard !store.preset.isXcode else {
            throw ForgeError(.conflictingOptions, "a transaction receipt is iOS 6's, from the App Store or its sandbox: Xcode's StoreKit testing never made one")
        }
        let transaction: Transaction
        if let transactionID {
            guard let named = store.transactions.first(where: { $0.transactionID == transactionID }) else {
                throw ForgeError(.invalidScenario, "no transaction \(transactionID) in the scenario at \(ReceiptDate.format(now))")
            }
            transaction = named
        } else {
            let candidates = store.transactions.enumerated().filter { originalTransactionID == nil || $0.element.originalTransactionID == originalTransactionID }
            guard let latest = candidates.max(by: { ($0.element.purchaseDate, $0.offset) < ($1.element.purchaseDate, $1.offset) }) else {
                throw ForgeError(.invalidScenario, "the scenario has no purchase at \(ReceiptDate.format(now)): a transaction receipt is of one purchase")
            }
            transaction = latest.element
        }
        let signer = version.signer(receiptPKI: receiptPKI, transactionPKI: transactionReceiptPKI)
        let sandbox = store.environment == .sandbox
        var outerTail: [(key: String, value: String)] = []
        if sandbox { outerTail.append((TransactionReceipt.OuterKey.environment.rawValue, Environment.sandbox.rawValue)) }
        outerTail += [(TransactionReceipt.OuterKey.pod.rawValue, sandbox ? "100" : "16"), (TransactionReceipt.OuterKey.signingStatus.rawValue, "0")]
        return TransactionReceiptDraft(
            version: version, purchaseInfo: try Self.purchaseInfo(transaction, of: store), outerTail: outerTail, key: signer.key,
            certificate: signer.certificate, anchor: signer.anchor, transaction: transaction, store: store)
    }

    /// Every key of apple-2026-facts §4 the purchase has, in its order.
    static func purchaseInfo(_ transaction: Transaction, of store: Store) throws(ForgeError) -> [(key: String, value: String)] {
        typealias Key = TransactionReceipt.PurchaseInfoKey
        var entries: [(key: String, value: String)] = []
        func add(_ key: Key, _ value: String) { entries.append((key.rawValue, value)) }
        let original = VerifyReceiptJSON.dateTexts(transaction.originalPurchaseDate)
        add(.originalPurchaseDate, original.gmt)
        add(.originalPurchaseDatePST, original.pacific)
        add(.originalPurchaseDateMS, original.milliseconds)
        let purchase = VerifyReceiptJSON.dateTexts(transaction.purchaseDate)
        add(.purchaseDate, purchase.gmt)
        add(.purchaseDatePST, purchase.pacific)
        add(.purchaseDateMS, purchase.milliseconds)
        if let expires = transaction.expiresDate.map(VerifyReceiptJSON.dateTexts) {
            add(.expiresDate, expires.milliseconds)
            add(.expiresDateFormatted, expires.gmt)
            add(.expiresDateFormattedPST, expires.pacific)
        }
        if store.deviceID.kind == .uuid { add(.uniqueVendorIdentifier, store.deviceID.description) }
        // iOS 6's UDID was 40 hex digits; here one the device id determines.
        let udid = try ForgeError.wrapping("deriving the unique identifier") { try DigestAlgorithm.sha1.digest(store.deviceID.bytes) }
        add(.uniqueIdentifier, hexString(udid))
        add(.originalTransactionID, transaction.originalTransactionID)
        add(.transactionID, transaction.transactionID)
        if transaction.webOrderLineItemID != 0 { add(.webOrderLineItemID, String(transaction.webOrderLineItemID)) }
        add(.itemID, String(itemID(of: transaction.productID)))
        if store.appItemID != 0 { add(.appItemID, String(store.appItemID)) }
        add(.bundleID, store.bundleID)
        add(.bundleVersion, store.appVersion)
        if store.versionExternalIdentifier != 0 { add(.versionExternalIdentifier, String(store.versionExternalIdentifier)) }
        add(.productID, transaction.productID)
        add(.quantity, String(transaction.quantity))
        add(.isTrialPeriod, transaction.isTrialPeriod ? "true" : "false")
        if transaction.expiresDate != nil { add(.isInIntroOfferPeriod, transaction.isInIntroOfferPeriod ? "true" : "false") }
        return entries
    }

    /// The product's Apple id (`item-id`), which the scenario does not name: nine digits its product id determines.
    static func itemID(of productID: String) -> UInt64 { 100_000_000 + StableHash.fnv1a(productID.utf8) % 900_000_000 }
}
