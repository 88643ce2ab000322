#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
package import ForgeCrypto
package import ReceiptCorpus
import ReceiptModel
package import _ForgeSupport
import JWSModel
import StoreModel
package import AppStoreVocabulary

/// The verdict on one JWS, every step, and what could be read.
package typealias JWSReport = VerificationReport<JWSFindings>

/// What the JWS verifier read besides its checks.
package struct JWSFindings: ArtefactFindings {
    package let header: JSONValue?
    package let payload: JSONValue?
    /// The `x5c` certificates that parsed, in order.
    package let certificates: [X509Certificate]
    /// Reports of the signed JWS inside the payload, by field (`signedTransactionInfo`, `signedRenewalInfo`).
    package let nested: [(field: String, report: JWSReport)]
    /// What the payload is, as recognised from its fields; nil when it is none of the five.
    package let kind: JWSKind?

    package static let validMessage = "JWS is valid"
    /// Not a JWS at all (exit 65 territory).
    package static func isUnreadable(_ errorClass: ErrorClass?) -> Bool { errorClass == .jwsFormat }
}

extension VerificationReport where Findings == JWSFindings {
    package init(
        checks: [Check], header: JSONValue?, payload: JSONValue?, certificates: [X509Certificate], nested: [(field: String, report: JWSReport)], kind: JWSKind?
    ) {
        self.init(checks: checks, findings: JWSFindings(header: header, payload: payload, certificates: certificates, nested: nested, kind: kind))
    }
}

/// The reference verifier for StoreKit 2 signed data, with `SignedDataVerifier` semantics (storekit2-facts
/// §4): compact JWS; `alg` ES256 only; `x5c` of exactly three certificates (Xcode: one, pinned among the
/// roots); the chain built from `x5c[0]` and `x5c[1]` to a configured root (never `x5c[2]`), both marker
/// OIDs required, evaluated at `signedDate` (`receiptCreationDate` for AppTransaction); the signature under
/// the leaf's P-256 key; then bundleId, environment and, in Production, appAppleId; nested JWS verified alike.
package struct JWSVerifier: ArtefactValidator {
    /// Parsed `x5c` certificates and chain verdicts, shared with the receipt validator; nil computes every one.
    package let cache: ValidationCache?

    package init(cache: ValidationCache? = .shared) { self.cache = cache }

    /// The bytes as they are, as the artefact kind says (a vector's `context.artifact`): white space inside or around
    /// a JWS is the input's, judged by the parser.
    package func check(_ input: [UInt8], as artifact: ArtifactKind, context: ValidationContext) -> any CheckedReport {
        verify(input, as: artifact.jwsKind, context: context)
    }

    /// The sniffing front door, for callers that do not know the kind (the CLI asked for none): the kind is read from the payload's
    /// fields (``kind(of:)``). Callers that know what they hold use ``verify(_:as:context:)``.
    package func verify(_ text: String, context: ValidationContext) -> JWSReport { verify(Array(text.utf8), as: nil, context: context) }

    /// A JWS of `kind`, as Apple's `SignedDataVerifier` entry points (`verifyAndDecodeTransaction`,
    /// `…RenewalInfo`, `…AppTransaction`, `…Notification`, `…RealtimeRequest`) each verify one: the kind decides the
    /// chain's instant and the claims checked, and a notification's signed transaction and renewal info are verified as
    /// those kinds. nil reads the kind from the payload's fields, nested JWS alike (the sniffing front door).
    package func verify(_ text: String, as kind: JWSKind?, context: ValidationContext) -> JWSReport { verify(Array(text.utf8), as: kind, context: context) }

    /// The compact JWS's UTF-8 bytes, parsed where they lie; offline, as Apple's verifiers with online checks off.
    package func verify(_ bytes: [UInt8], as kind: JWSKind?, context: ValidationContext) -> JWSReport {
        switch throughChain(bytes, as: kind, context: context) {
        case .decided(let report): return report
        case .chainHeld(var steps):
            guard steps.checkSignatureAndClaims(self, context: context) else { return steps.report() }
            return steps.report(nested: steps.nestedJWS(as: kind).map { ($0.field, verify(Array($0.text.utf8), as: $0.kind, context: context)) })
        }
    }

    /// The same steps with revocation checked online once the chain holds (OCSP for the intermediate, then the leaf),
    /// as Apple's verifiers with `enableOnlineChecks`; nested JWS alike. It suspends while `online`'s transport waits
    /// for the responders, so no thread waits with it.
    package func verify(_ bytes: [UInt8], as kind: JWSKind?, context: ValidationContext, online: OnlineRevocation) async -> JWSReport {
        switch throughChain(bytes, as: kind, context: context) {
        case .decided(let report): return report
        case .chainHeld(var steps):
            if let (intermediate, root) = steps.revocationIssuers(context) {
                steps.checks.append(await online.check(leaf: steps.leaf, intermediate: intermediate, root: root))
                if steps.checks.last?.status == .failed { return steps.report() }
            }
            guard steps.checkSignatureAndClaims(self, context: context) else { return steps.report() }
            var nested: [(String, JWSReport)] = []
            for (field, text, kind) in steps.nestedJWS(as: kind) { nested.append((field, await verify(Array(text.utf8), as: kind, context: context, online: online))) }
            return steps.report(nested: nested)
        }
    }

    /// Where the steps stand once the chain holds: what the rest of them read.
    private struct ChainHeld {
        var checks: [Check]
        let jws: CompactJWS
        let header: JSONValue
        let payload: JSONValue
        let certificates: [X509Certificate]
        let kind: JWSKind?
        let leaf: X509Certificate
        let xcode: Bool

        /// The intermediate and the root that issued it, when the chain has them (never Xcode's).
        func revocationIssuers(_ context: ValidationContext) -> (X509Certificate, X509Certificate)? {
            guard !xcode, certificates.count > 1, let root = context.trustedRoots.first(where: { certificates[1].isIssued(by: $0) }) else { return nil }
            return (certificates[1], root)
        }

        /// The signature under the leaf's key, then the claims; false when the signature fails (the steps stop).
        mutating func checkSignatureAndClaims(_ verifier: JWSVerifier, context: ValidationContext) -> Bool {
            if let key = leaf.publicKey.ec, key.curve == .p256, key.isValidSignature(jws.signature, for: jws.signingInput, algorithm: .sha256) {
                checks.append(.passed(.signature, "ES256 over the signing input verifies under the leaf's P-256 key"))
            } else {
                let why = leaf.publicKey.ec?.curve == .p256 ? "\(jws.signature.count)-byte signature does not verify" : "the leaf's key is not P-256"
                checks.append(.failed(.signature, .jwsSignature, why))
                return false
            }
            checks += verifier.claimChecks(payload, kind: kind, context: context)
            return true
        }

        /// The signed JWS inside the payload, by field, with the kind each field holds when the outer kind was given
        /// (nil: read from the payload, as the outer one was).
        func nestedJWS(as outer: JWSKind?) -> [(field: String, text: String, kind: JWSKind?)] {
            let nested: [(String, String, JWSKind)] = [
                ("data", "signedTransactionInfo", .transaction), ("data", "signedRenewalInfo", .renewal), ("appData", "signedAppTransactionInfo", .appTransaction),
            ]
            return nested.compactMap { member, field, kind in
                payload[member]?.objectValue?[field]?.stringValue.map { (field, $0, outer == nil ? nil : kind) }
            }
        }

        /// The report, with the nested JWS' verdicts as checks of their own.
        func report(nested: [(String, JWSReport)] = []) -> JWSReport {
            var checks = checks
            for (field, report) in nested {
                checks.append(
                    report.verdict == .valid
                        ? .passed(.nested, "\(field) verifies") : .failed(.nested, .jwsNested, "\(field): \(report.message) [\(report.errorClass?.rawValue ?? "")]"))
            }
            return JWSReport(checks: checks, header: header, payload: payload, certificates: certificates, nested: nested, kind: kind)
        }
    }

    private enum Stage {
        case decided(JWSReport)
        case chainHeld(ChainHeld)
    }

    /// Format, header and chain: a report when they decide it, else what the remaining steps read.
    private func throughChain(_ bytes: [UInt8], as given: JWSKind?, context: ValidationContext) -> Stage {
        var checks: [Check] = []
        let jws: CompactJWS
        do { jws = try CompactJWS(parsing: bytes) } catch {
            return .decided(JWSReport(checks: [.failed(.format, .jwsFormat, error.description)], header: nil, payload: nil, certificates: [], nested: [], kind: nil))
        }
        let header = try? JSONValue(parsing: jws.header)
        let payload = try? JSONValue(parsing: jws.payload)
        guard let header, header.objectValue != nil else {
            return .decided(
                JWSReport(checks: [.failed(.format, .jwsFormat, "the header is not a JSON object")], header: nil, payload: payload, certificates: [], nested: [], kind: nil))
        }
        guard let payload, payload.objectValue != nil else {
            return .decided(
                JWSReport(checks: [.failed(.format, .jwsFormat, "the payload is not a JSON object")], header: header, payload: nil, certificates: [], nested: [], kind: nil))
        }
        checks.append(.passed(.format, "three base64url parts; header and payload are JSON objects"))
        let kind = given ?? Self.kind(of: payload)

        // Header: alg, then x5c.
        guard header["alg"] == .string("ES256") else {
            checks.append(.failed(.header, .jwsAlgorithm, "alg is \(header["alg"]?.serialized(pretty: false) ?? "absent"); Apple signs ES256 only"))
            return .decided(JWSReport(checks: checks, header: header, payload: payload, certificates: [], nested: [], kind: kind))
        }
        let xcode = context.environment == .xcode
        guard let entries = header["x5c"]?.arrayValue else {
            checks.append(.failed(.header, .jwsX5C, "no x5c array in the header"))
            return .decided(JWSReport(checks: checks, header: header, payload: payload, certificates: [], nested: [], kind: kind))
        }
        // The count before any certificate is decoded: a header of 10,000 entries costs one comparison.
        let expectedCount = xcode ? 1 : 3
        guard entries.count == expectedCount else {
            checks.append(
                .failed(.header, .jwsX5C, "x5c has \(entries.count) certificates; \(xcode ? "Xcode signs with one" : "Apple's chain has exactly 3 (leaf, intermediate, root)")"))
            return .decided(JWSReport(checks: checks, header: header, payload: payload, certificates: [], nested: [], kind: kind))
        }
        var certificates: [X509Certificate] = []
        for (index, entry) in entries.enumerated() {
            // RFC 7515 §4.1.6: standard base64 (not url), no line breaks.
            guard let text = entry.stringValue, let der = Base64.decodeStandard(text), let certificate = ValidationCache.certificate(der, cache: cache) else {
                // x5c[2] is never trusted (the root comes from configuration), but one that is not a certificate
                // is refused, as Java's verifier does: the stricter of the two answers Apple's libraries give.
                checks.append(.failed(.header, .jwsX5C, "x5c[\(index)] is not a base64 DER certificate"))
                return .decided(JWSReport(checks: checks, header: header, payload: payload, certificates: certificates, nested: [], kind: kind))
            }
            certificates.append(certificate)
        }
        checks.append(.passed(.header, "alg ES256, x5c of \(entries.count)"))

        // The instant: signedDate, or receiptCreationDate for AppTransaction, unless pinned.
        let dateField = kind == .appTransaction ? "receiptCreationDate" : "signedDate"
        let instant: Date
        if let at = context.chainTime {
            instant = at
        } else if let value = payload[dateField], let milliseconds = value.numericValue {
            // Checked before any conversion or chain work: 1e300 or Int64.max milliseconds is no instant and must not
            // trap, and at -1e15 (the year -29719) OpenSSL cannot compare a certificate's dates at all.
            guard let date = ReceiptDate.instant(milliseconds: milliseconds) else {
                let shown = value.integerValue.map(String.init) ?? String(milliseconds)
                checks.append(
                    .failed(
                        .chain, .payloadInvalidField,
                        "\(dateField) \(shown) is no instant a chain can be checked at: dates are within \(ReceiptDate.inputRangeText)"))
                return .decided(JWSReport(checks: checks, header: header, payload: payload, certificates: certificates, nested: [], kind: kind))
            }
            instant = date
        } else {
            checks.append(.failed(.chain, .payloadMissingField, "no numeric \(dateField) to evaluate the chain at; pin a time"))
            return .decided(JWSReport(checks: checks, header: header, payload: payload, certificates: certificates, nested: [], kind: kind))
        }
        guard let leaf = certificates.first else {
            return .decided(JWSReport(checks: checks, header: header, payload: payload, certificates: certificates, nested: [], kind: kind))
        }
        checks.append(chainCheck(leaf: leaf, intermediate: xcode ? nil : certificates.dropFirst().first, roots: context.trustedRoots, at: instant, xcode: xcode))
        if checks.last?.status == .failed { return .decided(JWSReport(checks: checks, header: header, payload: payload, certificates: certificates, nested: [], kind: kind)) }
        return .chainHeld(ChainHeld(checks: checks, jws: jws, header: header, payload: payload, certificates: certificates, kind: kind, leaf: leaf, xcode: xcode))
    }

    private func chainCheck(leaf: X509Certificate, intermediate: X509Certificate?, roots: [X509Certificate], at time: Date, xcode: Bool) -> Check {
        guard !roots.isEmpty else { return .failed(.chain, .chainUntrusted, "no trusted root configured") }
        if xcode {
            guard roots.contains(leaf) else { return .failed(.chain, .chainUntrusted, "the Xcode certificate is not one of the trusted roots") }
            guard leaf.notBefore <= time, time <= leaf.notAfter else { return .failed(.chain, .chainExpired, "the Xcode certificate is not valid at \(ReceiptDate.format(time))") }
            return .passed(.chain, "the pinned Xcode certificate, at \(ReceiptDate.format(time))")
        }
        let intermediates = intermediate.map { [$0] } ?? []
        let verdict =
            cache?.chain(leaf: leaf, intermediates: intermediates, trustedRoots: roots, at: time)
            ?? ChainVerifier.verify(leaf: leaf, intermediates: intermediates, trustedRoots: roots, at: time)
        switch verdict {
        case .untrusted(let failure):
            return .failed(.chain, failure.errorClass, "\(failure.reason) (at depth \(failure.depth), evaluated at \(ReceiptDate.format(time)))")
        case .trusted(let chain):
            guard chain.count == 3 else { return .failed(.chain, .chainLength, "the path has \(chain.count) certificates; Apple's has 3") }
            guard chain[0].hasExtension(oid: KnownOID.appleReceiptSigningMarker) else {
                return .failed(.chain, .chainLeafMarker, "the leaf lacks the marker \(KnownOID.appleReceiptSigningMarker)")
            }
            // Apple's signing leaf is CA:FALSE (critical); path validation alone lets a CA sign as an end entity.
            guard !chain[0].isCA else { return .failed(.chain, .chainInvalid, "the signing certificate is a CA; Apple's leaf says CA:FALSE") }
            // RFC 5280 §4.2.1.1/§4.2.1.2 key identifiers (Apple's Python verifier runs OpenSSL's strict mode).
            for (certificate, name) in [(chain[0], "leaf"), (chain[1], "intermediate")] {
                guard certificate.hasExtension(oid: "2.5.29.35") else { return .failed(.chain, .chainInvalid, "the \(name) has no authorityKeyIdentifier") }
                guard certificate.hasExtension(oid: "2.5.29.14") else { return .failed(.chain, .chainInvalid, "the \(name) has no subjectKeyIdentifier") }
            }
            guard chain[0].keyUsage.map({ $0.contains("digitalSignature") }) ?? true else {
                return .failed(.chain, .chainInvalid, "the leaf's keyUsage does not allow digitalSignature")
            }
            guard chain[0].extendedKeyUsage == nil else { return .failed(.chain, .chainInvalid, "the leaf has an extendedKeyUsage Apple's does not") }
            guard chain[1].hasExtension(oid: KnownOID.appleWWDRIntermediateMarker) else {
                return .failed(.chain, .chainIntermediateMarker, "the intermediate lacks the marker \(KnownOID.appleWWDRIntermediateMarker)")
            }
            return .passed(.chain, "\(chain.map { $0.commonName ?? $0.subject }.joined(separator: " → ")), at \(ReceiptDate.format(time)), marker OIDs present")
        }
    }

    fileprivate func claimChecks(_ payload: JSONValue, kind: JWSKind?, context: ValidationContext) -> [Check] {
        var checks: [Check] = []
        // Bound from whichever of Apple's alternatives is present, in the order Apple's SignedDataVerifier reads them.
        let data = payload["data"] ?? payload["summary"] ?? payload["externalPurchaseToken"] ?? payload["appData"]
        let claims = kind == .notification ? (data ?? .object([])) : payload
        if kind == .notification, let appData = payload["appData"] { checks += Self.appDataChecks(appData, in: payload) }
        if let bundle = context.bundleID, kind != .renewal, kind != .realtime {
            let actual = claims["bundleId"]?.stringValue
            checks.append(actual == bundle ? .passed(.bundleID, bundle) : .failed(.bundleID, .bindingBundleID, "bundleId is \(actual ?? "absent"), expected \(bundle)"))
        }
        if let environment = context.environment {
            var actual = (kind == .appTransaction ? claims["receiptType"] : claims["environment"])?.stringValue
            if actual == nil, let id = payload["externalPurchaseToken"]?["externalPurchaseId"]?.stringValue {
                actual = (id.hasPrefix("SANDBOX") ? Environment.sandbox : .production).rawValue
            }
            // Apple's spelling exactly: the claim is compared as text against the typed expectation.
            checks.append(
                actual == environment.rawValue
                    ? .passed(.environment, environment.rawValue)
                    : .failed(.environment, .bindingEnvironment, "environment is \(actual ?? "absent"), expected \(environment.rawValue)"))
        }
        if context.environment == .production, let kind, [.appTransaction, .notification, .realtime].contains(kind) {
            let actual = claims["appAppleId"]?.integerValue
            if let expected = context.appAppleID {
                checks.append(
                    actual == expected
                        ? .passed(.appAppleID, String(expected))
                        : .failed(.appAppleID, .bindingAppAppleID, "appAppleId is \(actual.map(String.init) ?? "absent"), expected \(expected)"))
            } else {
                checks.append(.failed(.appAppleID, .bindingAppAppleID, "Production needs the app's Apple id to check appAppleId, and none was given"))
            }
        }
        return checks
    }

    /// RESCIND_CONSENT's `appData` (Apple's AppData): instead of `data`, `summary` or `externalPurchaseToken`, never
    /// beside one (which would be bound, and which acted on?), and carrying the app's signed AppTransaction, which
    /// is what says whose consent ended. Apple's Python verifier checks neither: it binds `data` first and does not
    /// look for the nested JWS.
    private static func appDataChecks(_ appData: JSONValue, in payload: JSONValue) -> [Check] {
        let beside = ["data", "summary", "externalPurchaseToken"].filter { payload[$0] != nil }
        if !beside.isEmpty {
            return [
                .failed(
                    .payload, .payloadInvalidField,
                    "appData and \(beside.joined(separator: ", ")) are both present: Apple sends one of them (appData for RESCIND_CONSENT)")
            ]
        }
        guard appData.objectValue != nil else { return [.failed(.payload, .payloadInvalidField, "appData is not an object")] }
        guard appData["signedAppTransactionInfo"]?.stringValue != nil else {
            return [.failed(.payload, .payloadMissingField, "appData has no signedAppTransactionInfo: RESCIND_CONSENT carries the app's signed AppTransaction")]
        }
        return []
    }

    /// What the payload is, by the fields only that kind has: the sniffing front door's guess.
    package static func kind(of payload: JSONValue) -> JWSKind? {
        if payload["notificationType"] != nil { return .notification }
        if payload["receiptType"] != nil { return .appTransaction }
        if payload["autoRenewStatus"] != nil || payload["autoRenewProductId"] != nil { return .renewal }
        if payload["requestIdentifier"] != nil, payload["userLocale"] != nil { return .realtime }
        if payload["transactionId"] != nil { return .transaction }
        return nil
    }
}
