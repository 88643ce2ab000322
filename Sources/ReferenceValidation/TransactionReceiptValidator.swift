#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
package import ForgeCrypto
package import ReceiptCorpus
package import ReceiptModel
import _ForgeSupport
import AppStoreVocabulary

/// The verdict on one iOS 6 transaction receipt, every step, and what could be read.
package typealias TransactionReceiptReport = VerificationReport<TransactionReceiptFindings>

/// What the transaction-receipt validator read besides its checks.
package struct TransactionReceiptFindings: ArtefactFindings {
    /// The outer plist's entries, when it is a dictionary of strings.
    package var outer: [(key: String, value: String)]?
    /// The signature blob, when it decodes.
    package var signature: TransactionReceiptSignature?
    /// The embedded certificate, when it parses.
    package var certificate: X509Certificate?
    /// `purchase-info`'s entries, when it is a dictionary of strings.
    package var purchaseInfo: [(key: String, value: String)]?

    package static let validMessage = "transaction receipt is valid"
    /// Neither an old-style plist nor its base64, or no transaction receipt's plist and signature blob (exit 65
    /// territory), by the receipt validator's rule: a purchase-info that is wrong under a valid signature is readable.
    package static func isUnreadable(_ errorClass: ErrorClass?) -> Bool { ReceiptFindings.isUnreadable(errorClass) }
}

/// The reference validator of the iOS 6 transaction receipt, with Apple's recommended checks (apple-2026-facts §4,
/// `VerificationController.m`): the signature blob's structure; RSASSA-PKCS1-v1_5 SHA-1 over `version ‖ purchase-info`
/// under the embedded certificate; the chain of exactly two certificates, the embedded one issued by a trusted anchor
/// (its issuer, as Apple anchors on the iTunes Store CA), evaluated at the purchase date; the marker
/// 1.2.840.113635.100.6.5.1 for version 2; then the bundle id, the transaction the app reported (transaction id,
/// product, quantity: ``ValidationContext/transaction``) and the environment. `purchase-info` must be a dictionary of
/// strings with each key once. Replay (a transaction id seen before) is the caller's: the validator keeps no state.
package struct TransactionReceiptValidator: ArtefactValidator {
    package init() {}

    package func check(_ input: [UInt8], as kind: ArtifactKind, context: ValidationContext) -> any CheckedReport { validate(input, context: context) }

    /// Keys the checks read; a receipt without one of them cannot be judged.
    static let requiredKeys: [TransactionReceipt.PurchaseInfoKey] = [.transactionID, .productID, .quantity, .purchaseDate, .bundleID]

    package func validate(_ input: [UInt8], context: ValidationContext) -> TransactionReceiptReport {
        var findings = TransactionReceiptFindings()
        var checks: [Check] = []
        func report() -> TransactionReceiptReport { TransactionReceiptReport(checks: checks, findings: findings) }
        func fail(_ name: CheckName, _ errorClass: ErrorClass, _ detail: String) -> TransactionReceiptReport {
            checks.append(.failed(name, errorClass, detail))
            return report()
        }

        // Parse: the outer plist, a dictionary of strings.
        guard !input.isEmpty else { return fail(.parse, .inputEmpty, "no bytes") }
        guard input.count <= ReceiptLimits.maximumInputSize else {
            return fail(.parse, .inputTooLarge, "\(input.count) bytes; at most \(ReceiptLimits.maximumInputSize)")
        }
        guard let outerBytes = TransactionReceipt.outerBytes(input) else {
            return fail(.parse, .inputEncoding, "neither an old-style plist ('{' first) nor the base64 of one")
        }
        let outerPlist: OldStylePlist.Value
        do throws(ReceiptDecodingError) { outerPlist = try OldStylePlist.parse(outerBytes) } catch {
            return fail(.parse, .containerMalformed, "the outer plist: \(error)")
        }
        let outer: [(key: String, value: String)]
        do throws(TransactionReceipt.StringsProblem) { outer = try TransactionReceipt.strings(of: outerPlist) } catch {
            return fail(.parse, .containerMalformed, "the outer plist: \(error)")
        }
        findings.outer = outer
        checks.append(.passed(.parse, "an old-style plist of \(outer.count) strings"))
        func value(_ key: TransactionReceipt.OuterKey) -> String? { outer.first { $0.key == key.rawValue }?.value }

        // Structure: the signature blob and the purchase-info's base64.
        guard let signatureText = value(.signature), let purchaseInfoText = value(.purchaseInfo) else {
            return fail(.structure, .containerMalformed, "the outer plist has no \(value(.signature) == nil ? "signature" : "purchase-info") (an unsigned receipt is not one)")
        }
        guard let blob = Base64.decodeStandard(signatureText) else { return fail(.structure, .containerMalformed, "signature is not base64") }
        guard let purchaseInfo = Base64.decodeStandard(purchaseInfoText) else { return fail(.structure, .payloadMalformed, "purchase-info is not base64") }
        guard let version = blob.first, TransactionReceiptSignature.signatureLength(version: version) != nil else {
            return fail(.structure, .signatureUnsupportedAlgorithm, blob.isEmpty ? "an empty signature blob" : "signature version \(blob[0]): only 2 and 3 exist")
        }
        let signature: TransactionReceiptSignature
        do throws(ReceiptDecodingError) { signature = try TransactionReceiptSignature(decoding: blob) } catch {
            return fail(.structure, .containerMalformed, "the signature blob \(error)")
        }
        findings.signature = signature
        checks.append(
            .passed(.structure, "version \(version): \(signature.signature.count)-byte signature, \(signature.certificate.count)-byte certificate"))

        // Signature: under the embedded certificate's key, whose size the version fixes.
        guard let certificate = try? X509Certificate(derEncoded: signature.certificate) else {
            return fail(.signature, .chainInvalid, "the embedded certificate does not parse as X.509")
        }
        findings.certificate = certificate
        guard let key = certificate.publicKey.rsa, key.bitCount == signature.signature.count * 8 else {
            return fail(
                .signature, .signatureInvalid,
                "version \(version) signs with RSA-\(signature.signature.count * 8); the certificate's key is \(certificate.publicKey.rsa.map { "RSA-\($0.bitCount)" } ?? "not RSA")"
            )
        }
        let message = TransactionReceiptSignature.signedMessage(version: version, purchaseInfo: purchaseInfo)
        guard key.isValidSignature(signature.signature, for: message, algorithm: .sha1) else {
            return fail(.signature, .signatureInvalid, "RSASSA-PKCS1-v1_5 SHA-1 over version ‖ purchase-info does not verify under the embedded certificate")
        }
        checks.append(.passed(.signature, "RSASSA-PKCS1-v1_5 SHA-1 over version ‖ purchase-info verifies (RSA-\(key.bitCount))"))

        // Payload: a dictionary of strings with the keys the checks read.
        let innerPlist: OldStylePlist.Value
        do throws(ReceiptDecodingError) { innerPlist = try OldStylePlist.parse(purchaseInfo, region: "purchase-info byte") } catch {
            return fail(.payload, .payloadMalformed, "purchase-info is not an old-style plist: \(error)")
        }
        let entries: [(key: String, value: String)]
        do throws(TransactionReceipt.StringsProblem) { entries = try TransactionReceipt.strings(of: innerPlist) } catch {
            if case .notDictionary = error { return fail(.payload, .payloadMalformed, "purchase-info: \(error)") }
            return fail(.payload, .payloadInvalidField, "purchase-info: \(error)")
        }
        findings.purchaseInfo = entries
        func field(_ key: TransactionReceipt.PurchaseInfoKey) -> String? { entries.first { $0.key == key.rawValue }?.value }
        if let missing = Self.requiredKeys.first(where: { field($0) == nil }) {
            return fail(.payload, .payloadMissingField, "purchase-info has no \(missing.rawValue)")
        }
        guard let purchaseDate = Self.purchaseDate(field(.purchaseDateMS), field(.purchaseDate)) else {
            return fail(.payload, .payloadInvalidField, "purchase-date is not a date Apple writes")
        }
        guard let quantity = field(.quantity).flatMap({ Int($0) }), quantity > 0 else {
            return fail(.payload, .payloadInvalidField, "quantity \(field(.quantity) ?? "") is not a positive integer")
        }
        checks.append(.passed(.payload, "\(entries.count) strings: transaction \(field(.transactionID) ?? ""), \(quantity) × \(field(.productID) ?? "")"))

        // Chain: exactly two certificates, the embedded one issued by a trusted anchor, at the purchase date.
        let time = context.chainTime ?? purchaseDate
        guard context.trustedRoots.contains(where: { certificate.isIssued(by: $0) && $0 != certificate }) else {
            return fail(.chain, .chainUntrusted, "the embedded certificate (issuer \(certificate.issuer)) is issued by no trusted anchor")
        }
        switch ChainVerifier.verify(leaf: certificate, intermediates: [], trustedRoots: context.trustedRoots, at: time, anchorsMayBeIntermediates: true) {
        case .untrusted(let failure): return fail(.chain, failure.errorClass, "\(failure.reason) at \(ReceiptDate.format(time))")
        case .trusted(let chain):
            guard chain.count == 2 else { return fail(.chain, .chainLength, "\(chain.count) certificates; Apple's chain is the signer and its issuer") }
        }
        if version == 2, !certificate.hasExtension(oid: Self.purchaseReceiptMarker) {
            return fail(.chain, .chainLeafMarker, "version 2's signer lacks the marker \(Self.purchaseReceiptMarker)")
        }
        checks.append(.passed(.chain, "issued by a trusted anchor, valid at the purchase date \(ReceiptDate.format(time))"))

        // Bindings.
        if let bundleID = context.bundleID {
            let bid = field(.bundleID) ?? ""
            guard bid == bundleID else { return fail(.bundleID, .bindingBundleID, "bid \(bid), expected \(bundleID)") }
            checks.append(.passed(.bundleID, bid))
        }
        if let expected = context.transaction {
            let mismatched = [
                (TransactionReceipt.PurchaseInfoKey.transactionID, expected.transactionID), (.productID, expected.productID), (.quantity, expected.quantity.map(String.init)),
            ].first { key, value in value.map { $0 != field(key) } ?? false }
            if let (key, value) = mismatched {
                return fail(.transaction, .binding, "\(key.rawValue) \(field(key) ?? ""), the app reported \(value ?? "")")
            }
            checks.append(.passed(.transaction, "transaction \(field(.transactionID) ?? ""), \(quantity) × \(field(.productID) ?? "") as the app reported"))
        }
        if let expected = context.environment {
            let stated = value(.environment)
            let environment: Environment = stated == Environment.sandbox.rawValue ? .sandbox : .production
            guard stated == nil || stated == Environment.sandbox.rawValue else {
                return fail(.environment, .bindingEnvironment, "environment \(stated ?? ""): Apple writes Sandbox or nothing")
            }
            guard environment == expected else { return fail(.environment, .bindingEnvironment, "\(environment.rawValue), expected \(expected.rawValue)") }
            checks.append(.passed(.environment, environment.rawValue))
        }
        return report()
    }

    /// The version 2 signer's marker (a NULL extension).
    static let purchaseReceiptMarker = "1.2.840.113635.100.6.5.1"

    /// `purchase-date-ms` when present, else `purchase-date` ("2012-05-18 02:04:20 Etc/GMT").
    static func purchaseDate(_ milliseconds: String?, _ text: String?) -> Date? {
        if let milliseconds {
            return Int64(milliseconds).flatMap { ReceiptDate.instant(milliseconds: Double($0)) }
        }
        guard let text, text.hasSuffix(" Etc/GMT"), text.utf8.count == 27 else { return nil }
        let wall = text.prefix(19)
        return ReceiptDate.parse(wall.prefix(10) + "T" + wall.dropFirst(11) + "Z")
    }
}
