import _ForgeSupport

/// The iOS 6 transaction receipt (`SKPaymentTransaction.transactionReceipt`, apple-2026-facts §4) as bytes: an old-style
/// plist of strings (``OuterKey``) whose `purchase-info` is the base64 of another (``PurchaseInfoKey``) and whose
/// `signature` is the base64 of a ``TransactionReceiptSignature``. No crypto here: the forge signs, the validator judges.
public enum TransactionReceipt {
    /// The outer plist's keys, in Apple's order.
    public enum OuterKey: String, Sendable, CaseIterable {
        case signature
        case purchaseInfo = "purchase-info"
        /// `Sandbox` in the sandbox; absent in production.
        case environment
        /// A server pool number ("100" in a 2011 sandbox sample, "16" in a 2017 production one).
        case pod
        case signingStatus = "signing-status"
    }

    /// Every key of `purchase-info` Apple wrote, in §4's order; each value a string. verifyReceipt's flat `receipt`
    /// mirrors them with underscores (``verifyReceiptName``).
    public enum PurchaseInfoKey: String, Sendable, CaseIterable {
        case originalPurchaseDate = "original-purchase-date"
        case originalPurchaseDatePST = "original-purchase-date-pst"
        case originalPurchaseDateMS = "original-purchase-date-ms"
        case purchaseDate = "purchase-date"
        case purchaseDatePST = "purchase-date-pst"
        case purchaseDateMS = "purchase-date-ms"
        /// Milliseconds, unlike the other dates.
        case expiresDate = "expires-date"
        case expiresDateFormatted = "expires-date-formatted"
        case expiresDateFormattedPST = "expires-date-formatted-pst"
        case uniqueVendorIdentifier = "unique-vendor-identifier"
        case uniqueIdentifier = "unique-identifier"
        case originalTransactionID = "original-transaction-id"
        case transactionID = "transaction-id"
        case webOrderLineItemID = "web-order-line-item-id"
        case itemID = "item-id"
        case appItemID = "app-item-id"
        case bundleID = "bid"
        case bundleVersion = "bvrs"
        case versionExternalIdentifier = "version-external-identifier"
        case productID = "product-id"
        case quantity
        case isTrialPeriod = "is-trial-period"
        case isInIntroOfferPeriod = "is-in-intro-offer-period"

        /// The name verifyReceipt's `receipt` object gives it (`original_purchase_date_pst`).
        public var verifyReceiptName: String { String(rawValue.map { $0 == "-" ? "_" : $0 }) }
    }

    /// The entries of a plist that must be a dictionary of strings with each key once, as both of the receipt's are.
    public static func strings(of value: OldStylePlist.Value) throws(StringsProblem) -> [(key: String, value: String)] {
        guard case .dictionary(let entries) = value else { throw .notDictionary(value.kindName) }
        var seen = Set<String>()
        var strings: [(key: String, value: String)] = []
        for entry in entries {
            guard seen.insert(entry.key).inserted else { throw .duplicateKey(entry.key) }
            guard case .string(let text) = entry.value else { throw .notString(key: entry.key, kind: entry.value.kindName) }
            strings.append((entry.key, text))
        }
        return strings
    }

    /// Why a plist is not a dictionary of strings.
    public enum StringsProblem: Error, Sendable, Hashable, CustomStringConvertible {
        case notDictionary(String)
        case duplicateKey(String)
        case notString(key: String, kind: String)

        public var description: String {
            switch self {
            case .notDictionary(let kind): "the plist is \(kind), not a dictionary"
            case .duplicateKey(let key): "\"\(key)\" appears more than once"
            case .notString(let key, let kind): "\"\(key)\" is \(kind), not a string"
            }
        }
    }

    /// The outer plist as bytes, or its base64 as a server receives it (white space around it ignored): nil when neither.
    public static func outerBytes(_ input: [UInt8]) -> [UInt8]? {
        let trimmed = input.drop { Self.isSpace($0) }.reversed().drop { Self.isSpace($0) }.reversed()
        guard let first = trimmed.first else { return nil }
        if first == UInt8(ascii: "{") { return input }
        guard trimmed.count <= ReceiptLimits.maximumInputSize, let text = String(validating: Array(trimmed), as: UTF8.self),
            let decoded = Base64.decodeStandard(text), decoded.first(where: { !Self.isSpace($0) }) == UInt8(ascii: "{")
        else { return nil }
        return decoded
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}

/// The `signature` of a transaction receipt, byte for byte (Apple's `VerificationController.m`): `version (1 byte) |
/// RSA signature (128 bytes for version 2, 256 for 3) | certificate length (4 bytes, big-endian) | certificate (DER)`,
/// over `version ‖ the decoded purchase-info` with RSASSA-PKCS1-v1_5 and SHA-1.
public struct TransactionReceiptSignature: Sendable, Hashable {
    public var version: UInt8
    public var signature: [UInt8]
    /// The certificate length the blob declares: the certificate's when built.
    public var declaredCertificateLength: UInt32
    public var certificate: [UInt8]

    public init(version: UInt8, signature: [UInt8], certificate: [UInt8]) {
        self.version = version
        self.signature = signature
        self.certificate = certificate
        self.declaredCertificateLength = UInt32(clamping: certificate.count)
    }

    /// The signature's length a version implies: 128 for 2 (RSA-1024), 256 for 3 (RSA-2048); nil for any other.
    public static func signatureLength(version: UInt8) -> Int? {
        switch version {
        case 2: 128
        case 3: 256
        default: nil
        }
    }

    /// What is signed: the version byte, then the purchase-info's decoded bytes.
    public static func signedMessage(version: UInt8, purchaseInfo: [UInt8]) -> [UInt8] { [version] + purchaseInfo }

    public func encoded() -> [UInt8] {
        let length = declaredCertificateLength
        return [version] + signature + [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + certificate
    }

    /// Reads a blob whose version is 2 or 3, checking every length against the bytes there are; bytes after the
    /// certificate are refused (Apple's sample tolerated them; nothing Apple wrote has them).
    public init(decoding blob: [UInt8]) throws(ReceiptDecodingError) {
        let region = "signature byte"
        guard let version = blob.first else { throw ReceiptDecodingError(.empty, at: 0, "an empty signature", region: region) }
        guard let length = Self.signatureLength(version: version) else {
            throw ReceiptDecodingError(.invalidValue, at: 0, "version \(version): only 2 and 3 exist", region: region)
        }
        let header = 1 + length + 4
        guard blob.count >= header else {
            throw ReceiptDecodingError(
                .truncated, at: blob.count, "\(blob.count) bytes; version \(version) needs \(header) before the certificate", region: region)
        }
        let declared = blob[1 + length..<header].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let available = blob.count - header
        guard UInt64(declared) <= UInt64(available) else {
            throw ReceiptDecodingError(
                .invalidLength, at: 1 + length, "certificate length \(declared) runs past the blob's \(available) remaining bytes", region: region)
        }
        guard Int(declared) == available else {
            throw ReceiptDecodingError(.trailingBytes, at: header + Int(declared), "\(available - Int(declared)) bytes after the certificate", region: region)
        }
        self.version = version
        self.signature = Array(blob[1..<1 + length])
        self.declaredCertificateLength = declared
        self.certificate = Array(blob[header...])
    }
}
