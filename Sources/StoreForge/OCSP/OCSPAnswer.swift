#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport
import ReceiptCorpus
public import StoreModel

/// What the TEST OCSP responder says about one certificate: a certificate status, a response status other
/// than successful, a broken transport, or a successful answer that is wrong in one way a verifier must notice.
///
/// Written `KIND[,key=value…]` on the command line and in the control route (`revoked,reason=keyCompromise`,
/// `slow,seconds=5`); the bare kind in a responder path (`/ocsp/revoked/…`) and in a vector's context.
public struct OCSPAnswer: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable, Codable {
        /// certStatus good, signed by the issuer, fresh for a week.
        case good
        /// certStatus revoked, at `revokedAt` (a day before the answer when not given), with `reason` if given.
        case revoked
        /// certStatus unknown: the responder does not know the certificate.
        case unknown
        /// OCSPResponseStatus tryLater (3), no response bytes.
        case tryLater = "try-later"
        /// OCSPResponseStatus malformedRequest (1).
        case malformed
        /// OCSPResponseStatus unauthorized (6).
        case unauthorized
        /// HTTP 500 with no body: a network failure to every verifier.
        case http500 = "http-500"
        /// A body that is not DER.
        case garbage
        /// good, but only after `seconds` (10 when not given): a verifier's deadline.
        case slow
        /// good, but `nextUpdate` is a day past and `thisUpdate` eight days.
        case stale
        /// good, without `nextUpdate`.
        case noNextUpdate = "no-next-update"
        /// good, naming the issuer as responder but signed by another key.
        case wrongKey = "wrong-key"
        /// good, signed by a delegated responder the issuer certified with the `ocspSigning` EKU (RFC 6960 §4.2.2.2).
        case delegate
        /// good, signed by a certificate the issuer issued without the `ocspSigning` EKU: not a responder.
        case delegateWithoutEKU = "delegate-no-eku"
    }

    /// RFC 5280 §5.3.1 `CRLReason`.
    public enum RevocationReason: Int, Sendable, CaseIterable, Codable {
        case unspecified = 0, keyCompromise = 1, cACompromise = 2, affiliationChanged = 3, superseded = 4
        case cessationOfOperation = 5, certificateHold = 6, removeFromCRL = 8, privilegeWithdrawn = 9, aACompromise = 10

        public var name: String {
            switch self {
            case .unspecified: "unspecified"
            case .keyCompromise: "keyCompromise"
            case .cACompromise: "cACompromise"
            case .affiliationChanged: "affiliationChanged"
            case .superseded: "superseded"
            case .cessationOfOperation: "cessationOfOperation"
            case .certificateHold: "certificateHold"
            case .removeFromCRL: "removeFromCRL"
            case .privilegeWithdrawn: "privilegeWithdrawn"
            case .aACompromise: "aACompromise"
            }
        }
    }

    public var kind: Kind
    public var revokedAt: Date?
    public var reason: RevocationReason?
    /// How long a `slow` answer waits.
    public var seconds: Int

    public init(_ kind: Kind, revokedAt: Date? = nil, reason: RevocationReason? = nil, seconds: Int = 10) {
        self.kind = kind
        self.revokedAt = revokedAt
        self.reason = reason
        self.seconds = seconds
    }

    public static let good = OCSPAnswer(.good)

    /// The longest `slow` wait: past every verifier's deadline (30 s), short of hanging a run.
    public static let maximumSeconds = 120

    /// Reads `KIND[,reason=R][,at=DATE][,seconds=N]`.
    public init(parsing text: String) throws(ForgeError) {
        var parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhitespace() }
        let name = parts.removeFirst()
        guard let kind = Kind(rawValue: name) else {
            throw ForgeError(.invalidScenario, "unknown OCSP answer \"\(name)\"; one of: \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.init(kind)
        for part in parts {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { throw ForgeError(.invalidScenario, "OCSP answer \"\(text)\": \"\(part)\" is not key=value") }
            switch (kind, pair[0]) {
            case (.revoked, "reason"):
                guard let reason = RevocationReason.allCases.first(where: { $0.name == pair[1] || String($0.rawValue) == pair[1] }) else {
                    throw ForgeError(
                        .invalidScenario, "OCSP answer \"\(text)\": unknown reason \"\(pair[1])\"; one of: \(RevocationReason.allCases.map(\.name).joined(separator: ", "))")
                }
                self.reason = reason
            case (.revoked, "at"):
                guard let date = ReceiptDate.parse(pair[1]) else { throw ForgeError(.invalidScenario, "OCSP answer \"\(text)\": at=\(pair[1]) is not a date") }
                revokedAt = date
            case (.slow, "seconds"):
                guard let seconds = Int(pair[1]), (0...Self.maximumSeconds).contains(seconds) else {
                    throw ForgeError(.invalidScenario, "OCSP answer \"\(text)\": seconds must be 0…\(Self.maximumSeconds)")
                }
                self.seconds = seconds
            default:
                throw ForgeError(.invalidScenario, "OCSP answer \"\(text)\": \(kind.rawValue) takes no \(pair[0])=")
            }
        }
    }

    public var description: String {
        var text = kind.rawValue
        if let reason { text += ",reason=\(reason.name)" }
        if let revokedAt { text += ",at=\(ReceiptDate.format(revokedAt))" }
        if kind == .slow, seconds != 10 { text += ",seconds=\(seconds)" }
        return text
    }
}

/// Where one certificate of an `online` vector sends OCSP: the TEST responder's path of an answer
/// (`http://127.0.0.1:6960/ocsp/revoked`), or nowhere (an AIA without an OCSP entry).
public enum OCSPPointer: Sendable, Hashable, RawRepresentable, CaseIterable {
    case none
    case answer(OCSPAnswer.Kind)

    public static var allCases: [OCSPPointer] { [.none] + OCSPAnswer.Kind.allCases.map(Self.answer) }

    public init?(rawValue: String) {
        if rawValue == "none" {
            self = .none
        } else if let kind = OCSPAnswer.Kind(rawValue: rawValue) {
            self = .answer(kind)
        } else {
            return nil
        }
    }

    public var rawValue: String {
        switch self {
        case .none: "none"
        case .answer(let kind): kind.rawValue
        }
    }

    /// The AIA OCSP entries of a certificate pointing here.
    public var urls: [String] {
        switch self {
        case .none: []
        case .answer(let kind): ["\(OCSPContext.bundledResponder)/ocsp/\(kind.rawValue)"]
        }
    }
}
