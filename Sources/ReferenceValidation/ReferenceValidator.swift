#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import ForgeCrypto
package import ReceiptModel
package import ReceiptCorpus
import _ForgeSupport
import StoreModel
package import AppStoreVocabulary

/// What a validator is told besides the artefact's bytes: the app's expectations, one context for receipts and
/// StoreKit 2 JWS alike, plus the few fields only one artefact has.
package struct ValidationContext: Sendable {
    /// Certificates trusted as chain anchors (Apple Root CA in production; the test root here).
    package var trustedRoots: [X509Certificate]
    package var bundleID: String?
    /// The environment the app expects; nil skips the check. A receipt's type (attribute 0) is judged by the
    /// environment it names (`ProductionSandbox` and `ProductionVPPSandbox` are Sandbox); a JWS by its claim.
    package var environment: Environment?
    /// When the chain is evaluated; nil means at the artefact's own date: a receipt's creation date (Apple's
    /// current practice), a JWS's `signedDate` (`receiptCreationDate` for an AppTransaction).
    package var chainTime: Date?
    /// The present, for the receipt expiration check (type 21).
    package var now: Date
    /// Receipts only: the app version (attribute 3); nil skips the check.
    package var appVersion: String?
    /// Receipts only: raw device identifier bytes (16 for a UUID, 6 for a MAC); nil skips the device-hash check.
    package var deviceID: [UInt8]?
    /// JWS only: the app's Apple id, required to match in Production for AppTransaction, notifications and
    /// realtime requests.
    package var appAppleID: Int64?
    /// iOS 6 transaction receipts only: the transaction the app reported (Apple's check compares `transaction-id`,
    /// `product-id` and `quantity` with it); nil, or a nil member, skips that comparison.
    package var transaction: ExpectedTransaction?

    package init(
        trustedRoots: [X509Certificate], bundleID: String? = nil, appVersion: String? = nil, deviceID: [UInt8]? = nil, appAppleID: Int64? = nil,
        environment: Environment? = nil, chainTime: Date? = nil, now: Date = Date()
    ) {
        self.trustedRoots = trustedRoots
        self.bundleID = bundleID
        self.appVersion = appVersion
        self.deviceID = deviceID
        self.appAppleID = appAppleID
        self.environment = environment
        self.chainTime = chainTime
        self.now = now
    }
}

/// What the app says it bought, for the transaction-receipt check that binds the receipt to it.
package struct ExpectedTransaction: Sendable, Hashable {
    package var transactionID: String?
    package var productID: String?
    package var quantity: Int?

    package init(transactionID: String? = nil, productID: String? = nil, quantity: Int? = nil) {
        self.transactionID = transactionID
        self.productID = productID
        self.quantity = quantity
    }
}

/// One step of the validation and how it went.
package struct Check: Sendable, Hashable {
    package enum Status: String, Sendable, Hashable, Codable { case passed, failed, skipped }
    package let name: CheckName
    package let status: Status
    package let detail: String
    package let errorClass: ErrorClass?

    static func passed(_ name: CheckName, _ detail: String) -> Check { Check(name: name, status: .passed, detail: detail, errorClass: nil) }
    static func skipped(_ name: CheckName, _ detail: String) -> Check { Check(name: name, status: .skipped, detail: detail, errorClass: nil) }
    static func failed(_ name: CheckName, _ errorClass: ErrorClass, _ detail: String) -> Check {
        Check(name: name, status: .failed, detail: detail, errorClass: errorClass)
    }
}

/// The outcome of validating one receipt: a value, never a thrown error. Its checks run in Apple's documented
/// order; steps after a failure still run where they can.
package typealias ValidationReport = VerificationReport<ReceiptFindings>

/// What the receipt validator read besides its checks.
package struct ReceiptFindings: ArtefactFindings {
    package let transport: ReceiptInput.Transport?
    package let container: ReceiptContainer?
    package let receipt: AppReceipt?
    /// Certificates embedded in the receipt, parsed (those OpenSSL could read).
    package let certificates: [X509Certificate]

    package static let validMessage = "receipt is valid"

    /// Not a receipt at all (exit code 65 territory). A malformed payload under a valid signature is readable data
    /// that is wrong, not unreadable input.
    package static func isUnreadable(_ errorClass: ErrorClass?) -> Bool {
        guard let family = errorClass?.family else { return false }
        return family == "input" || errorClass == .containerMalformed
    }
}

extension VerificationReport where Findings == ReceiptFindings {
    package init(checks: [Check], transport: ReceiptInput.Transport?, container: ReceiptContainer?, receipt: AppReceipt?, certificates: [X509Certificate]) {
        self.init(checks: checks, findings: ReceiptFindings(transport: transport, container: container, receipt: receipt, certificates: certificates))
    }
}

/// The reference validator: Apple's documented on-device steps, in order.
///
/// 1. parse the PKCS#7 container and the payload;
/// 2. check the signature with the embedded certificate the SignerInfo names, using the digest the
///    SignerInfo names (not the certificate's own algorithm, the mistake behind AppReceiptValidator #94);
/// 3. chain that certificate to a trusted root, at the receipt creation date unless pinned, and require
///    the marker OIDs (leaf 6.11.1, intermediate 6.2.1) and a chain of exactly three — except when the
///    signer is itself a trusted self-signed certificate (the Xcode StoreKit shape);
/// 4. bundle id; 5. app version; 6. device hash; 7. environment; 8. receipt expiration (type 21).
package struct ReferenceValidator: ArtefactValidator {
    /// Reused certificates and chain verdicts (see ``ValidationCache``); nil computes everything every time.
    package let cache: ValidationCache?

    package init(cache: ValidationCache? = .shared) { self.cache = cache }

    package func check(_ input: [UInt8], as kind: ArtifactKind, context: ValidationContext) -> any CheckedReport { validate(input, context: context) }

    package func validate(_ input: [UInt8], context: ValidationContext) -> ValidationReport {
        var checks: [Check] = []
        // 1. Parse.
        let der: [UInt8]
        let transport: ReceiptInput.Transport
        do throws(ReceiptDecodingError) {
            (der, transport) = try ReceiptInput.decode(input)
        } catch {
            let errorClass: ErrorClass =
                switch error.code {
                case .empty: .inputEmpty
                case .tooLarge: .inputTooLarge
                default: .inputEncoding
                }
            return ValidationReport(
                checks: [.failed(.parse, errorClass, error.description)], transport: nil, container: nil,
                receipt: nil, certificates: [])
        }
        let container: ReceiptContainer
        do throws(ReceiptDecodingError) {
            container = try ReceiptContainer(berEncoded: der)
        } catch {
            return ValidationReport(
                checks: [.failed(.parse, .containerMalformed, error.description)], transport: transport,
                container: nil, receipt: nil, certificates: [])
        }
        guard let payload = container.payload else {
            return ValidationReport(
                checks: [.failed(.parse, .containerNoContent, "the SignedData has no eContent (detached signature)")],
                transport: transport, container: container, receipt: nil, certificates: [])
        }
        let certificates = container.certificates.compactMap { ValidationCache.certificate($0, cache: cache) }
        checks.append(structureCheck(container))
        // The payload is read now (the chain is judged at its creation date) but judged after the
        // signature: Apple's order is signature, chain, then payload.
        var receipt: AppReceipt?
        var payloadFailure: Check?
        do throws(ReceiptDecodingError) {
            receipt = try AppReceipt(payloadBytes: payload)
        } catch {
            var located = error
            if let base = container.payloadOffset, error.region == "payload byte" { located = error.relocated(by: base, region: "byte") }
            payloadFailure = .failed(.payload, .payloadMalformed, located.description)
        }

        // 2–3. Signature and chain.
        let signer = signatureCheck(container, payload: payload, certificates: certificates, into: &checks)
        checks.append(chainCheck(signer: signer, certificates: certificates, receipt: receipt, context: context))
        if let payloadFailure { checks.append(payloadFailure) }

        // 4–8. Payload bindings.
        if let receipt {
            checks += bindingChecks(receipt, context: context)
        }
        return ValidationReport(checks: checks, transport: transport, container: container, receipt: receipt, certificates: certificates)
    }

    private func structureCheck(_ container: ReceiptContainer) -> Check {
        if container.encapsulatedContentTypeOID != KnownOID.data {
            return .failed(.structure, .containerContentType, "eContentType is \(container.encapsulatedContentTypeOID), expected id-data (\(KnownOID.data))")
        }
        if container.signers.count != 1 {
            return .failed(.structure, .containerSignerCount, "\(container.signers.count) SignerInfos; a receipt has exactly one")
        }
        if container.shape.trailingByteCount > 0 {
            return .failed(.structure, .containerTrailingBytes, "\(container.shape.trailingByteCount) bytes follow the ContentInfo")
        }
        return .passed(.structure, "one signer, id-data content, \(container.shape.lengths)")
    }

    /// Returns the signer's certificate when the signature verifies.
    private func signatureCheck(
        _ container: ReceiptContainer, payload: [UInt8], certificates: [X509Certificate],
        into checks: inout [Check]
    ) -> X509Certificate? {
        guard container.signers.count == 1, let signer = container.signers.first else {
            checks.append(.failed(.signature, .containerSignerCount, "cannot check a signature with \(container.signers.count) SignerInfos"))
            return nil
        }
        guard
            let certificate = certificates.first(where: { certificate in
                (try? CertificateIdentity(derEncoded: certificate.derRepresentation)).map { $0.matches(signer) } ?? false
            })
        else {
            checks.append(
                .failed(
                    .signature, .signatureSignerNotFound,
                    "no embedded certificate matches the SignerInfo's issuer and serial number"))
            return nil
        }
        guard let digest = DigestAlgorithm(dottedOID: signer.digestAlgorithmOID), digest != .md5 else {
            checks.append(
                .failed(
                    .signature, .signatureUnsupportedAlgorithm,
                    "digest algorithm \(signer.digestAlgorithmOID) is not one receipts use (SHA-1 or SHA-256 and up)"))
            return nil
        }
        if !container.digestAlgorithmOIDs.contains(signer.digestAlgorithmOID) {
            checks.append(
                .failed(
                    .signature, .signatureAlgorithmMismatch,
                    "SignerInfo digest \(name(signer.digestAlgorithmOID)) is not among SignedData.digestAlgorithms \(container.digestAlgorithmOIDs.map(name))"))
            return nil
        }
        let withRSA = [
            KnownOID.sha1WithRSAEncryption: DigestAlgorithm.sha1, KnownOID.sha256WithRSAEncryption: .sha256,
            KnownOID.sha384WithRSAEncryption: .sha384, KnownOID.sha512WithRSAEncryption: .sha512,
        ]
        if signer.signatureAlgorithmOID != KnownOID.rsaEncryption {
            guard let implied = withRSA[signer.signatureAlgorithmOID] else {
                checks.append(.failed(.signature, .signatureUnsupportedAlgorithm, "signature algorithm \(signer.signatureAlgorithmOID) is not RSA PKCS#1 v1.5"))
                return nil
            }
            guard implied == digest else {
                checks.append(
                    .failed(
                        .signature, .signatureAlgorithmMismatch,
                        "signature algorithm \(name(signer.signatureAlgorithmOID)) contradicts digest algorithm \(name(signer.digestAlgorithmOID))"))
                return nil
            }
        }
        var signedBytes = payload
        if let attributes = signer.signedAttributes {
            guard let messageDigest = signer.messageDigest, (try? digest.digest(payload)) == messageDigest else {
                checks.append(.failed(.signature, .signatureMessageDigest, "the messageDigest signed attribute does not match the content's \(digest.rawValue)"))
                return nil
            }
            signedBytes = attributes
        }
        guard let key = certificate.publicKey.rsa, key.isValidSignature(signer.signature, for: signedBytes, algorithm: digest) else {
            var detail = "RSA \(digest.rawValue) signature does not verify with \(certificate.commonName ?? certificate.subject)"
            if let recovered = certificate.publicKey.rsa?.recoveredDigestInfo(from: signer.signature), let used = Self.digestName(inDigestInfo: recovered),
                used != digest.rawValue
            {
                detail += " (the signature holds a \(used) digest)"
            }
            checks.append(.failed(.signature, .signatureInvalid, detail))
            return nil
        }
        checks.append(
            .passed(
                .signature,
                "\(digest.rawValue) over the \(signer.signedAttributes == nil ? "payload" : "signed attributes") verifies with \(certificate.commonName ?? certificate.subject)"))
        return certificate
    }

    private func chainCheck(
        signer: X509Certificate?, certificates: [X509Certificate], receipt: AppReceipt?,
        context: ValidationContext
    ) -> Check {
        guard let signer else { return .skipped(.chain, "no verified signer to chain") }
        if receipt == nil, context.chainTime == nil {
            return .skipped(.chain, "the payload is unreadable, so there is no creation date to evaluate the chain at")
        }
        guard let time = context.chainTime ?? receipt?.creationDate else {
            return .failed(.chain, .payloadMissingField, "no receipt creation date (type 12) to evaluate the chain at; pin a time")
        }
        guard !context.trustedRoots.isEmpty else { return .failed(.chain, .chainUntrusted, "no trusted root configured") }
        let intermediates = certificates.filter { $0 != signer }
        let verdict =
            cache?.chain(leaf: signer, intermediates: intermediates, trustedRoots: context.trustedRoots, at: time)
            ?? ChainVerifier.verify(leaf: signer, intermediates: intermediates, trustedRoots: context.trustedRoots, at: time)
        switch verdict {
        case .untrusted(let failure):
            let errorClass = failure.errorClass
            var detail = "\(failure.reason) (at depth \(failure.depth), evaluated at \(ReceiptDate.format(time)))"
            if errorClass == .chainUntrusted, signer.isSelfIssued {
                detail += "; the signer is self-signed (Xcode StoreKit shape): trust its certificate to accept such receipts"
            }
            return .failed(.chain, errorClass, detail)
        case .trusted(let chain):
            if chain.count == 1 {
                return .passed(.chain, "signer is a trusted self-signed certificate (Xcode StoreKit shape), at \(ReceiptDate.format(time))")
            }
            guard chain.count == 3 else {
                return .failed(.chain, .chainLength, "chain has \(chain.count) certificates; Apple's receipt chain has exactly 3 (leaf, WWDR, root)")
            }
            guard chain[0].hasExtension(oid: KnownOID.appleReceiptSigningMarker) else {
                return .failed(.chain, .chainLeafMarker, "signing certificate lacks the receipt-signing marker \(KnownOID.appleReceiptSigningMarker)")
            }
            guard chain[1].hasExtension(oid: KnownOID.appleWWDRIntermediateMarker) else {
                return .failed(.chain, .chainIntermediateMarker, "intermediate lacks the WWDR marker \(KnownOID.appleWWDRIntermediateMarker)")
            }
            return .passed(.chain, "\(chain.map { $0.commonName ?? $0.subject }.joined(separator: " → ")), at \(ReceiptDate.format(time)), marker OIDs present")
        }
    }

    private func bindingChecks(_ receipt: AppReceipt, context: ValidationContext) -> [Check] {
        var checks: [Check] = []
        func compare(_ name: CheckName, _ expected: String?, _ actual: String?, _ type: Int, _ errorClass: ErrorClass) {
            guard let expected else { checks.append(.skipped(name, "no expected value given")); return }
            guard let actual else { checks.append(.failed(name, .payloadMissingField, "the receipt has no attribute \(type)")); return }
            checks.append(actual == expected ? .passed(name, "'\(actual)'") : .failed(name, errorClass, "receipt says '\(actual)', expected '\(expected)'"))
        }
        // Two values for an identity field leave "which one is checked" to each parser: reject, don't guess.
        for type in [
            AttributeType.receiptType, AttributeType.bundleID, AttributeType.appVersion, AttributeType.opaqueValue,
            AttributeType.sha1Hash, AttributeType.receiptCreationDate, AttributeType.expirationDate,
        ]
        where receipt.payload.payload.all(type).count > 1 {
            checks.append(.failed(.payload, .payloadInvalidField, "attribute \(type) appears \(receipt.payload.payload.all(type).count) times"))
            return checks
        }
        // One rule for identities and dates (the corpus's WRONG_INNER_TAG): the value carries the string type
        // Apple documents, UTF8String for identities and IA5String for dates, or the field is not the one a
        // genuine receipt carries. Strict, as a reference should be; profiles may accept either.
        for (name, type, tag) in [
            (CheckName.receiptType, AttributeType.receiptType, ASN1Tag.utf8String), (.bundleID, AttributeType.bundleID, ASN1Tag.utf8String),
            (.appVersion, AttributeType.appVersion, ASN1Tag.utf8String),
            (.creationDate, AttributeType.receiptCreationDate, ASN1Tag.ia5String),
            (.expiration, AttributeType.expirationDate, ASN1Tag.ia5String),
        ] {
            if let value = receipt.payload.payload.first(type)?.value, let found = value.first, found != tag {
                checks.append(.failed(name, .payloadInvalidField, "attribute \(type) holds \(ASN1Tag.name(found)), expected \(ASN1Tag.name(tag))"))
                return checks
            }
        }
        compare(.bundleID, context.bundleID, receipt.bundleID, AttributeType.bundleID, .bindingBundleID)
        compare(.appVersion, context.appVersion, receipt.appVersion, AttributeType.appVersion, .bindingAppVersion)
        if let deviceID = context.deviceID {
            if let input = receipt.deviceHashInput(deviceID: deviceID), let stored = receipt.sha1Hash {
                let computed = (try? DigestAlgorithm.sha1.digest(input)) ?? []
                checks.append(
                    computed == stored
                        ? .passed(.deviceHash, "SHA-1(device id ‖ opaque value ‖ bundle id TLV) matches")
                        : .failed(
                            .deviceHash, .bindingDeviceHash, "SHA-1(device id ‖ opaque value ‖ bundle id TLV) is \(hexString(computed)), the receipt says \(hexString(stored))"))
            } else {
                checks.append(.failed(.deviceHash, .payloadMissingField, "the receipt lacks the opaque value (4), bundle id (2) or hash (5)"))
            }
        } else {
            checks.append(.skipped(.deviceHash, "no device id given"))
        }
        if let expected = context.environment {
            if let actual = receipt.receiptType {
                // By environment, not by spelling: a ProductionVPP receipt belongs to a Production app.
                checks.append(
                    ReceiptType(rawValue: actual)?.environment == expected
                        ? .passed(.environment, "'\(actual)'")
                        : .failed(.environment, .bindingEnvironment, "receipt says '\(actual)', expected '\(expected.receiptType.rawValue)' (\(expected.rawValue))"))
            } else {
                checks.append(.failed(.environment, .payloadMissingField, "the receipt has no attribute \(AttributeType.receiptType)"))
            }
        } else {
            checks.append(.skipped(.environment, "no expected value given"))
        }
        if let text = receipt.expirationDateText, !text.isEmpty {
            if let expiry = ReceiptDate.parse(text) {
                checks.append(
                    expiry > context.now
                        ? .passed(.expiration, "expires \(text)")
                        : .failed(.expiration, .policyExpired, "the receipt expired at \(text) (now \(ReceiptDate.format(context.now)))"))
            } else {
                checks.append(.failed(.expiration, .payloadInvalidField, "expiration date '\(text)' is not a date"))
            }
        } else {
            checks.append(.skipped(.expiration, "no expiration date (type 21)"))
        }
        return checks
    }

    private func name(_ oid: String) -> String { KnownOID.name(oid) ?? oid }

    /// The digest named by a DigestInfo's AlgorithmIdentifier.
    static func digestName(inDigestInfo bytes: [UInt8]) -> String? {
        let reader = BERReader(bytes)
        guard let info = try? reader.node(at: 0), let algorithm = try? reader.children(of: info).first,
            let oidNode = try? reader.children(of: algorithm).first, oidNode.identifier == ASN1Tag.objectIdentifier,
            let dotted = OID.dotted(reader.content(of: oidNode))
        else { return nil }
        return DigestAlgorithm(dottedOID: dotted)?.rawValue ?? dotted
    }
}

extension ChainFailure {
    /// The taxonomy's class for why the path failed.
    var errorClass: ErrorClass {
        switch kind {
        case .expired: .chainExpired
        case .notYetValid: .chainNotYetValid
        case .untrustedAnchor: .chainUntrusted
        case .invalid: .chainInvalid
        }
    }
}
