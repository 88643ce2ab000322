import ForgeCrypto
public import ReceiptCorpus
public import ReceiptModel
import _ForgeSupport
public import StoreModel

/// What is wrong with an invalid iOS 6 transaction receipt: the bug classes seen in the wild and in extract-only code
/// (issue 43), each a recipe step (`transaction-receipt.<raw value>`) the corpus records and replays.
public enum TransactionReceiptDefect: String, Sendable, Hashable, CaseIterable {
    /// No `signature` at all: the shape of Apple's own test fixture, which extract-only code accepts.
    case unsigned
    /// A genuine signature of the purchase as it was, around a purchase-info whose quantity and product were changed.
    case signatureOfOtherPurchaseInfo = "signature-of-other-purchase-info"
    /// A genuinely signed receipt of another app (the 2012 fake App Store served other apps' receipts).
    case otherApp = "other-app"
    /// Version byte 2 in front of a 256-byte (version 3) signature and its certificate.
    case version2With256ByteSignature = "version-2-with-256-byte-signature"
    /// Version byte 3 in front of a 128-byte (version 2) signature and its certificate.
    case version3With128ByteSignature = "version-3-with-128-byte-signature"
    /// A certificate length past the end of the blob.
    case certificateLengthPastBlob = "certificate-length-past-blob"
    /// The blob cut inside its certificate length.
    case truncatedBlob = "truncated-blob"
    /// The signer's certificate, from its own key and issuer, expired years before the purchase date.
    case leafExpiredAtPurchase = "leaf-expired-at-purchase"
    /// The signer's certificate issued by another root (the foreign TEST root), not by the trusted issuer.
    case chainToAnotherRoot = "chain-to-another-root"
    /// A signed purchase-info that is JSON, not an old-style plist.
    case purchaseInfoNotPlist = "purchase-info-not-plist"
    /// A signed purchase-info with `quantity` twice (a reader keeping the last value sees 10).
    case duplicateKeys = "duplicate-keys"
    /// A signed purchase-info whose `quantity` is an array, not a string.
    case nonStringValue = "non-string-value"

    /// The recipe step's mutation id.
    public var mutationID: String { "transaction-receipt." + rawValue }

    /// The defect a recipe step names, nil for another step.
    public init?(mutationID: String) {
        guard mutationID.hasPrefix("transaction-receipt.") else { return nil }
        self.init(rawValue: String(mutationID.dropFirst("transaction-receipt.".count)))
    }

    /// What a correct validator may say of it (alternatives).
    public var errorClasses: [ErrorClass] {
        switch self {
        case .unsigned, .certificateLengthPastBlob, .truncatedBlob: [.containerMalformed]
        case .signatureOfOtherPurchaseInfo: [.signatureInvalid]
        case .otherApp: [.bindingBundleID]
        case .version2With256ByteSignature, .version3With128ByteSignature: [.containerMalformed, .signatureInvalid, .signatureUnsupportedAlgorithm]
        case .leafExpiredAtPurchase: [.chainExpired]
        case .chainToAnotherRoot: [.chainUntrusted]
        case .purchaseInfoNotPlist: [.payloadMalformed]
        case .duplicateKeys, .nonStringValue: [.payloadInvalidField, .payloadMalformed]
        }
    }

    /// The receipt `draft` makes, with this defect; `forge` holds the certificates the defect re-issues from.
    public func apply(to draft: TransactionReceiptDraft, forge: Forge) throws(ForgeError) -> ForgedTransactionReceipt {
        var draft = draft
        switch self {
        case .unsigned:
            return draft.assembled(signatureBlob: nil)
        case .signatureOfOtherPurchaseInfo:
            let genuine = draft.purchaseInfoBytes
            draft.set(.quantity, "10")
            return try draft.signed(signing: genuine)
        case .otherApp:
            draft.set(.bundleID, "com.example.other")
            return try draft.signed()
        case .version2With256ByteSignature, .version3With128ByteSignature:
            // The other version's signature and certificate under this version's byte.
            let other: TransactionReceiptVersion = self == .version2With256ByteSignature ? .v3 : .v2
            let signer = other.signer(receiptPKI: forge.receiptPKI, transactionPKI: forge.transactionReceiptPKI)
            draft.key = signer.key
            draft.certificate = signer.certificate
            draft.version = other
            var blob = try draft.signature()
            blob.version = self == .version2With256ByteSignature ? 2 : 3
            return draft.assembled(signatureBlob: blob.encoded())
        case .certificateLengthPastBlob:
            var blob = try draft.signature()
            blob.declaredCertificateLength += 1000
            return draft.assembled(signatureBlob: blob.encoded())
        case .truncatedBlob:
            let blob = try draft.signature().encoded()
            let cut = 1 + (TransactionReceiptSignature.signatureLength(version: draft.version.rawValue) ?? 0) + 2
            return draft.assembled(signatureBlob: Array(blob.prefix(cut)))
        case .leafExpiredAtPurchase, .chainToAnotherRoot:
            var template = draft.version.signerTemplate
            var issuer = draft.version.issuer(receiptPKI: forge.receiptPKI, transactionPKI: forge.transactionReceiptPKI)
            if self == .leafExpiredAtPurchase {
                template.notBefore = TestPKIProfile.date(2000, 1, 1)
                template.notAfter = TestPKIProfile.date(2001, 1, 1)
            } else {
                issuer = forge.receiptPKI[.foreignRoot]
            }
            let certificate = try ForgeError.wrapping("issuing a variant of the signer") {
                try X509Certificate.issue(template, subjectKey: draft.key.publicKey, issuer: issuer.certificate, issuerKey: issuer.privateKey)
            }
            draft.certificate = certificate.derRepresentation
            return try draft.signed()
        case .purchaseInfoNotPlist:
            let json = JSONValue.object(JSONObject(draft.purchaseInfo.map { ($0.key, JSONValue.string($0.value)) }))
            draft.rawPurchaseInfo = Array(json.serialized(pretty: false).utf8)
            return try draft.signed()
        case .duplicateKeys:
            draft.purchaseInfo.append((TransactionReceipt.PurchaseInfoKey.quantity.rawValue, "10"))
            return try draft.signed()
        case .nonStringValue:
            let text = String(decoding: OldStylePlist.render(draft.purchaseInfo), as: UTF8.self)
            let quantity = draft.value(.quantity) ?? "1"
            draft.rawPurchaseInfo = Array(text.replacing("\"quantity\" = \"\(quantity)\";", with: "\"quantity\" = (\"\(quantity)\");").utf8)
            return try draft.signed()
        }
    }
}

extension TransactionReceiptDraft {
    /// The value of `key` in purchase-info.
    public func value(_ key: TransactionReceipt.PurchaseInfoKey) -> String? { purchaseInfo.first { $0.key == key.rawValue }?.value }

    /// Replaces the value of `key` in purchase-info where it stands.
    public mutating func set(_ key: TransactionReceipt.PurchaseInfoKey, _ value: String) {
        purchaseInfo = purchaseInfo.map { $0.key == key.rawValue ? ($0.key, value) : $0 }
    }
}
