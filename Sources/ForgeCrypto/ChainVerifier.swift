internal import COpenSSL
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// The outcome of ``ChainVerifier/verify(leaf:intermediates:trustedRoots:at:)``.
public enum ChainVerificationResult: Sendable, Hashable {
    /// A path was found and checked; the chain runs leaf first, trusted root last.
    case trusted(chain: [X509Certificate])
    /// No acceptable path, and why.
    case untrusted(ChainFailure)
}

/// Why no acceptable path was found: what a validator tells apart (``Kind``), OpenSSL's own text for it (e.g.
/// "certificate has expired"), and the depth of the offending certificate (0 = leaf). OpenSSL's `X509_V_ERR_*`
/// numbers stay here, with the library that defines them.
public struct ChainFailure: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// A certificate's notAfter is before the evaluation time.
        case expired
        /// A certificate's notBefore is after the evaluation time.
        case notYetValid
        /// The path ends at no trusted root: an issuer that is missing, or a self-signed certificate not trusted.
        case untrustedAnchor
        /// Anything else: a bad signature, an unhandled critical extension, an internal failure.
        case invalid
    }

    public let kind: Kind
    public let reason: String
    public let depth: Int
    /// OpenSSL's `X509_V_ERR_*` code, for diagnostics only: judge by ``kind``.
    public let verifyError: Int

    /// The failure OpenSSL's verify error `verifyError` describes.
    public init(verifyError: Int, reason: String, depth: Int) {
        self.verifyError = verifyError
        self.reason = reason
        self.depth = depth
        kind =
            switch Int32(truncatingIfNeeded: verifyError) {
            case X509_V_ERR_CERT_HAS_EXPIRED: .expired
            case X509_V_ERR_CERT_NOT_YET_VALID: .notYetValid
            case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
                X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
                .untrustedAnchor
            default: .invalid
            }
    }
}

/// Path building and validation with OpenSSL's verifier, configured the way receipt validators are tested.
public enum ChainVerifier {
    /// Builds and checks a path from `leaf` through `intermediates` to one of `trustedRoots`.
    ///
    /// Validity is checked at `time`, or not at all when `time` is `nil` (the wall clock is never used).
    /// No purpose check, no CRLs, SHA-1 signatures allowed, no partial chains (the path must end at a
    /// supplied root) unless `anchorsMayBeIntermediates`. A critical extension OpenSSL does not process fails the chain ("unhandled critical
    /// extension"), as RFC 5280 §4.2 requires and Apple's own verifier does: that includes Apple's marker
    /// OIDs when marked critical, which Apple's certificates never are.
    public static func verify(
        leaf: X509Certificate,
        intermediates: [X509Certificate],
        trustedRoots: [X509Certificate],
        at time: Date?,
        anchorsMayBeIntermediates: Bool = false
    ) -> ChainVerificationResult {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let store = X509_STORE_new() else { return internalFailure("X509_STORE_new") }
        defer { X509_STORE_free(store) }
        for root in trustedRoots {
            guard X509_STORE_add_cert(store, root.backing.pointer) == 1 else { return internalFailure("X509_STORE_add_cert") }
        }
        guard let untrusted = COpenSSL_sk_X509_new_null() else { return internalFailure("sk_X509_new_null") }
        defer { COpenSSL_sk_X509_free(untrusted) }
        for intermediate in intermediates {
            guard COpenSSL_sk_X509_push(untrusted, intermediate.backing.pointer) > 0 else { return internalFailure("sk_X509_push") }
        }
        guard let context = X509_STORE_CTX_new() else { return internalFailure("X509_STORE_CTX_new") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.backing.pointer, untrusted) == 1 else {
            return internalFailure("X509_STORE_CTX_init")
        }
        guard let parameters = X509_STORE_CTX_get0_param(context) else { return internalFailure("X509_STORE_CTX_get0_param") }
        // Trusting an issuer that is not self-signed, as Apple's transaction-receipt check anchors on the signer's issuer.
        var flags: UInt = anchorsMayBeIntermediates ? UInt(X509_V_FLAG_PARTIAL_CHAIN) : 0
        if let time {
            guard let seconds = timeT(time) else {
                return .untrusted(
                    ChainFailure(
                        verifyError: Int(X509_V_ERR_UNSPECIFIED), reason: "the evaluation time (\(time.timeIntervalSince1970) s since 1970) is not a time_t",
                        depth: 0))
            }
            X509_VERIFY_PARAM_set_time(parameters, seconds)
        } else {
            flags |= UInt(X509_V_FLAG_NO_CHECK_TIME)
        }
        guard X509_VERIFY_PARAM_set_flags(parameters, flags) == 1 else {
            return internalFailure("X509_VERIFY_PARAM_set_flags")
        }
        X509_VERIFY_PARAM_set_auth_level(parameters, 0)

        let rc = X509_verify_cert(context)
        let error = X509_STORE_CTX_get_error(context)
        guard rc == 1 else {
            guard error != X509_V_OK else { return internalFailure("X509_verify_cert") }
            return .untrusted(
                ChainFailure(
                    verifyError: Int(error), reason: String(cString: X509_verify_cert_error_string(Int(error))),
                    depth: Int(X509_STORE_CTX_get_error_depth(context))))
        }
        return trustedChain(of: context, suppliedCertificates: [leaf] + intermediates + trustedRoots)
    }

    /// Maps the verified chain back to the caller's certificates (OpenSSL builds it from the very `X509` objects it was given).
    private static func trustedChain(of context: OpaquePointer, suppliedCertificates: [X509Certificate]) -> ChainVerificationResult {
        guard let chain = X509_STORE_CTX_get0_chain(context) else { return internalFailure("X509_STORE_CTX_get0_chain") }
        var certificates: [X509Certificate] = []
        for index in 0..<COpenSSL_sk_X509_num(chain) {
            let element = COpenSSL_sk_X509_value(chain, index)
            guard let certificate = suppliedCertificates.first(where: { $0.backing.pointer == element }) else {
                return internalFailure("X509_verify_cert returned a certificate that was not supplied")
            }
            certificates.append(certificate)
        }
        return .trusted(chain: certificates)
    }

    /// An OpenSSL failure unrelated to the certificates themselves (allocation, internal error), reported as
    /// unspecified with the failing step and OpenSSL's reasons as the text.
    private static func internalFailure(_ context: String) -> ChainVerificationResult {
        let reasons = OpenSSLErrorQueue.drain()
        return .untrusted(
            ChainFailure(verifyError: Int(X509_V_ERR_UNSPECIFIED), reason: reasons.isEmpty ? context : "\(context): \(reasons.joined(separator: "; "))", depth: 0))
    }
}
