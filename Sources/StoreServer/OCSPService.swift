#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
import ForgeCrypto
import _ForgeSupport
package import StoreForge
import Synchronization
package import StoreModel

/// `forge serve --ocsp`: the OCSP responder of the TEST PKIs, socket-free. It answers for the bundled receipt PKI
/// (RSA) and JWS PKI (EC) and any JWS set given, and says what it is told per certificate (by flag or by
/// `POST /_forge/ocsp`), or what the request's path names: a certificate whose AIA points at `/ocsp/revoked/…`
/// is revoked whatever else is set, so one responder serves vectors of every state at once.
package final class OCSPService: Sendable {
    package let responder: OCSPResponder
    /// The largest request body read: a request names a few certificates in a few hundred bytes.
    package static let maximumRequestBytes = 64 * 1024
    /// The answer per certificate serial (lowercase hex); the rest are `good`.
    private let answers: Mutex<[String: OCSPAnswer]>
    /// Certificates with an answer set at once: a serial is at most 20 bytes, so the table stays under 100 KiB.
    package static let maximumAnswers = 1_000
    private let clock: @Sendable () -> Date

    /// The names `--ocsp-answer` and the control route take for the bundled certificates, and what they stand for.
    package static let certificateNames: [(name: String, serial: @Sendable () -> [UInt8])] = [
        ("jws-leaf", { bundledJWS?.certificate(.leaf).serialNumber ?? [] }),
        ("jws-intermediate", { bundledJWS?.certificate(.intermediate).serialNumber ?? [] }),
        ("receipt-leaf", { bundledReceipt?.certificate(.leaf).serialNumber ?? [] }),
        ("receipt-intermediate", { bundledReceipt?.certificate(.intermediate).serialNumber ?? [] }),
    ]
    private static let bundledJWS = try? CertificateSet<JWSRole>.bundled()
    private static let bundledReceipt = try? CertificateSet<CertificateRole>.bundled()

    /// A responder for the bundled PKIs and `jwsSets` (a `forge ca init --jws` folder each), on `clock`.
    package init(jwsSets: [CertificateSet<JWSRole>] = [], clock: @escaping @Sendable () -> Date = { Date() }) throws(ForgeError) {
        let receipt = try CertificateSet<CertificateRole>.bundled()
        var issuers: [OCSPResponder.Issuer] = []
        for role in [CertificateRole.root, .intermediate, .intermediateSHA1] {
            issuers.append(try OCSPResponder.Issuer(certificate: receipt.certificate(role), key: .rsa(receipt.privateKey(role))))
        }
        for set in [try CertificateSet<JWSRole>.bundled()] + jwsSets {
            for role in [JWSRole.root, .intermediate] {
                issuers.append(try OCSPResponder.Issuer(certificate: set.certificate(role), key: .ec(set.privateKey(role))))
            }
        }
        responder = OCSPResponder(issuers: issuers)
        answers = Mutex([:])
        self.clock = clock
    }

    /// Reads `CERT=ANSWER` (the flag's and the control route's form) and applies it.
    package func set(spec: String) throws(ForgeError) {
        let (serial, answer) = try Self.parse(spec: spec)
        let full = answers.withLock { table -> Bool in
            guard table[serial] != nil || table.count < Self.maximumAnswers else { return true }
            table[serial] = answer
            return false
        }
        if full {
            throw ForgeError(.invalidScenario, "\(Self.maximumAnswers) certificates already have an answer: DELETE /_forge/ocsp makes them good again")
        }
    }

    /// `CERT=ANSWER` read: the serial it names (lowercase hex) and the answer.
    package static func parse(spec: String) throws(ForgeError) -> (serial: String, answer: OCSPAnswer) {
        let pair = spec.split(separator: "=", maxSplits: 1).map(String.init)
        guard pair.count == 2 else { throw ForgeError(.invalidScenario, "\"\(spec)\" is not CERTIFICATE=ANSWER (jws-leaf=revoked)") }
        return (try serial(pair[0]), try OCSPAnswer(parsing: pair[1]))
    }

    /// Every answer set, as `SERIAL=ANSWER` lines.
    package var table: [String] { answers.withLock { $0 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }

    package func reset() { answers.withLock { $0 = [:] } }

    static func serial(_ certificate: String) throws(ForgeError) -> String {
        if let named = certificateNames.first(where: { $0.name == certificate }) { return hexString(named.serial()) }
        let digits = certificate.lowercased().filter { $0 != ":" }
        guard !digits.isEmpty, digits.count <= 40, digits.allSatisfy(\.isHexDigit) else {
            throw ForgeError(
                .invalidScenario, "unknown certificate \"\(certificate)\": one of \(certificateNames.map(\.name).joined(separator: ", ")), or a serial number in hex")
        }
        var trimmed = Substring(digits)
        while trimmed.count > 2, trimmed.hasPrefix("00") { trimmed = trimmed.dropFirst(2) }
        return String(trimmed.count % 2 == 1 ? "0" + trimmed : trimmed)
    }

    /// The answer to a POST body (or a GET's decoded path), asked at `path` (what follows `/ocsp`).
    package func respond(path: String, request: [UInt8]) -> OCSPResponder.Reply {
        let pathAnswer = Self.answer(inPath: path)
        let table = answers.withLock { $0 }
        return responder.respond(to: request, now: clock()) { question in
            pathAnswer ?? table[hexString(question.serialNumber)] ?? .good
        }
    }

    /// The answer a path names in its first segment (`/revoked/wwdrg6`), if it names one.
    static func answer(inPath path: String) -> OCSPAnswer? {
        guard let first = path.split(separator: "/").first, let kind = OCSPAnswer.Kind(rawValue: String(first)) else { return nil }
        return OCSPAnswer(kind)
    }

    /// A GET request's DER: the last path segment, percent-decoded base64 (RFC 6960 Appendix A.1).
    package static func getRequest(path: String) -> [UInt8]? {
        guard let last = path.split(separator: "/").last, let decoded = last.percentDecoded else { return nil }
        return Data(base64Encoded: decoded).map { Array($0) }
    }
}
