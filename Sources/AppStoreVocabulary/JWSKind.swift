/// The five StoreKit 2 signed artefacts, Apple's kinds of signed data (`SignedDataVerifier`'s entry points). Here, below the
/// corpus, the forge and the verifier, so all of them (and the command line) name a kind with one type; the raw values
/// are the command line's and the corpus's spelling.
public enum JWSKind: String, Sendable, Hashable, CaseIterable, Codable {
    case transaction
    case renewal
    case appTransaction = "app-transaction"
    case notification
    /// Retention Messaging's realtime request (`DecodedRealtimeRequestBody`).
    case realtime
}
