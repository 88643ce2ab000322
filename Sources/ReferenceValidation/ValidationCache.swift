package import ForgeCrypto
#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
import Synchronization
import _ForgeSupport
import StoreModel

/// What the reference validators (receipts and JWS) may reuse between artefacts: parsed certificates, keyed by
/// their exact DER bytes, and chain verdicts, keyed by the exact bytes of the leaf, the intermediates (in order)
/// and the trusted roots, and the evaluation instant. Nothing else decides those results, so a hit returns what
/// a fresh computation would — a test runs the whole corpus cold, warm and without a cache and compares every
/// verdict, error class and message.
///
/// The instant enters a key only where it can matter. Path validation depends on time only through each
/// certificate's validity, so a verdict reached at an instant strictly inside every supplied certificate's
/// validity (leaf, intermediates and roots: any path is built from them) holds at every such instant, and is
/// kept without it; a verdict at any other instant is kept for that second only. JWS carry a `signedDate` each,
/// so without this no two notifications of a day would share a verdict.
///
/// Most receipts and JWS of a corpus, or of an app, carry the same certificates: parsing them and building
/// their path with OpenSSL (two P-384 verifications for Apple's JWS chain) is most of a validation's cost, and
/// OpenSSL 3's decoders take global locks that make parallel validations queue behind each other.
package final class ValidationCache: Sendable {
    /// The cache the reference validator uses unless told otherwise.
    package static let shared = ValidationCache()

    /// Entries kept of each kind before the cache starts over; a hostile stream of distinct certificates costs
    /// memory up to this bound, then cache misses.
    package let capacity: Int

    /// Bytes as a key, hashed as one block (`[UInt8]`'s own hashing feeds the hasher a byte at a time).
    private struct Bytes: Hashable {
        let value: [UInt8]
        func hash(into hasher: inout Hasher) { value.withUnsafeBytes { hasher.combine(bytes: $0) } }
    }

    private struct ChainKey: Hashable {
        let leaf: Bytes
        let intermediates: [Bytes]
        let roots: [Bytes]
        /// Whole seconds since 1970 as the verifier sees them, kept as a `Double`: no conversion to trap on; nil
        /// for a verdict that holds at every instant inside the certificates' common validity (or without a time).
        let instant: Double?
    }

    private struct State {
        var certificates: [Bytes: X509Certificate] = [:]
        var chains: [ChainKey: ChainVerificationResult] = [:]
        var hits = 0
        var misses = 0
    }

    private let state = Mutex(State())

    package init(capacity: Int = 1024) { self.capacity = max(1, capacity) }

    /// The parsed certificate, or nil when the bytes are not one (not cached: bad bytes are rare and cheap to refuse).
    package func certificate(_ der: [UInt8]) -> X509Certificate? {
        let key = Bytes(value: der)
        if let known = state.withLock({ state -> X509Certificate? in
            let found = state.certificates[key]
            if found != nil { state.hits += 1 }
            return found
        }) {
            return known
        }
        guard let parsed = try? X509Certificate(derEncoded: der) else { return nil }
        return state.withLock { state in
            state.misses += 1
            if state.certificates.count >= capacity { state.certificates = [:] }
            // Another thread may have parsed it meanwhile: keep the first, so every caller shares one object.
            if let first = state.certificates[key] { return first }
            state.certificates[key] = parsed
            return parsed
        }
    }

    /// `der` parsed through `cache` when there is one, else parsed afresh: the one way both validators read a certificate.
    package static func certificate(_ der: [UInt8], cache: ValidationCache?) -> X509Certificate? {
        guard let cache else { return try? X509Certificate(derEncoded: der) }
        return cache.certificate(der)
    }

    /// `ChainVerifier.verify`, remembered.
    package func chain(leaf: X509Certificate, intermediates: [X509Certificate], trustedRoots: [X509Certificate], at time: Date?) -> ChainVerificationResult {
        let certificates = [leaf] + intermediates + trustedRoots
        let key = ChainKey(
            leaf: Bytes(value: leaf.derRepresentation), intermediates: intermediates.map { Bytes(value: $0.derRepresentation) },
            roots: trustedRoots.map { Bytes(value: $0.derRepresentation) },
            instant: time.flatMap { Self.insideEveryValidity($0, certificates) ? nil : $0.timeIntervalSince1970.rounded(.down) })
        if let known = state.withLock({ state -> ChainVerificationResult? in
            let found = state.chains[key]
            if found != nil { state.hits += 1 }
            return found
        }) {
            return known
        }
        let result = ChainVerifier.verify(leaf: leaf, intermediates: intermediates, trustedRoots: trustedRoots, at: time)
        state.withLock { state in
            state.misses += 1
            if state.chains.count >= capacity { state.chains = [:] }
            state.chains[key] = result
        }
        return result
    }

    /// Whether `time` is more than a second inside every certificate's validity: OpenSSL compares whole seconds,
    /// and no boundary is near.
    static func insideEveryValidity(_ time: Date, _ certificates: [X509Certificate]) -> Bool {
        certificates.allSatisfy { $0.notBefore.addingTimeInterval(1) < time && time < $0.notAfter.addingTimeInterval(-1) }
    }

    /// Lookups answered from the cache and computed, since it was made.
    package var statistics: (hits: Int, misses: Int) { state.withLock { ($0.hits, $0.misses) } }
}
