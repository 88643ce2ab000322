#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import ForgeCrypto

/// The dates every certificate of a chain is valid at: from the latest notBefore to the earliest notAfter. What is
/// made outside it does not validate at its own time (`forge make` and `forge jws make` warn, and make it all the same).
public struct ValidityWindow: Sendable, Hashable {
    public let notBefore: Date
    public let notAfter: Date

    /// The window of `chain`, DER certificates; nil when one of them does not parse or there are none. Only the dates
    /// are read (no key is decoded), so the check costs `make` nothing measurable.
    public init?(chain: [[UInt8]]) {
        guard let windows = try? chain.map(X509Certificate.validity(derEncoded:)), let from = windows.map(\.notBefore).max(),
            let to = windows.map(\.notAfter).min()
        else { return nil }
        notBefore = from
        notAfter = to
    }

    /// Whether `date` lies in the window, its ends included (never, when the certificates share no date).
    public func contains(_ date: Date) -> Bool { notBefore <= date && date <= notAfter }
}
