package import ForgeCrypto
import AppStoreVocabulary
import ReceiptCorpus
import _ForgeSupport
import StoreModel

/// Why a rejected artefact would pass its chain under a trust anchor the caller can name (the CLI's bundled
/// anchors, which this layer does not know): the validator decides, by trying each; the caller words it, so the
/// hint names the exact anchor, never a guess.
package enum AnchorHint: Sendable, Hashable {
    /// The chain is trusted under `anchor`, which the context did not trust. `xcodeShaped`: a JWS whose x5c holds
    /// one certificate (Xcode's shape).
    case trustedUnder(anchor: String, xcodeShaped: Bool)
    /// A JWS signed like Xcode (an x5c of one certificate, key id `kid`) judged for another environment: it passes
    /// as Xcode's under `anchor`.
    case xcodeEnvironment(anchor: String, kid: String?)
    /// A receipt signed by a certificate that signs itself (Xcode's StoreKit shape), trusted under none of the anchors.
    case selfSignedSigner

    /// A trust anchor a hint may name: its name as the caller spells it, and its certificate.
    package typealias Candidate = (name: String, certificate: X509Certificate)

    /// A receipt whose chain is untrusted under the roots given, but trusted under one of `candidates` (asked for
    /// only then).
    package static func receipt(_ bytes: [UInt8], context: ValidationContext, report: ValidationReport, candidates: () -> [Candidate]) -> AnchorHint? {
        guard report.firstFailure?.name == .chain, report.errorClass == .chainUntrusted else { return nil }
        for (name, root) in candidates() where !context.trustedRoots.contains(root) {
            var trial = context
            trial.trustedRoots = [root]
            let chain = ReferenceValidator().validate(bytes, context: trial).checks.first { $0.name == .chain }
            if chain?.status == .passed { return .trustedUnder(anchor: name, xcodeShaped: false) }
        }
        if report.certificates.count == 1, report.certificates.first?.isSelfIssued == true { return .selfSignedSigner }
        return nil
    }

    /// A JWS rejected for its chain or its x5c (an Xcode JWS read as Apple's), trusted under one of `candidates`.
    package static func jws(_ text: String, context: ValidationContext, report: JWSReport, candidates: () -> [Candidate]) -> AnchorHint? {
        // Only an untrusted chain, or an x5c of one certificate (Xcode's shape): an x5c of any other count is
        // refused for its count, and retrying it would only parse a hostile header again.
        let xcodeShaped = report.header?["x5c"]?.arrayValue?.count == 1
        guard let failure = report.firstFailure, failure.errorClass == .chainUntrusted || (failure.errorClass == .jwsX5C && xcodeShaped) else { return nil }
        for (name, root) in candidates() {
            var trial = context
            trial.trustedRoots = [root]
            if xcodeShaped { trial.environment = .xcode }
            let checks = JWSVerifier().verify(text, as: report.kind, context: trial).checks
            guard checks.contains(where: { $0.name == .chain && $0.status == .passed }) else { continue }
            if xcodeShaped, context.environment != .xcode { return .xcodeEnvironment(anchor: name, kid: report.header?["kid"]?.stringValue) }
            guard !context.trustedRoots.contains(root) else { continue }
            return .trustedUnder(anchor: name, xcodeShaped: xcodeShaped)
        }
        return nil
    }
}
