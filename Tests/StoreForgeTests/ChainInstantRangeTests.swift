import Foundation
import _ForgeSupport
import JWSModel
import ReceiptCorpus
import StoreForge
import ReferenceValidation
import StoreModel
import Testing
import AppStoreVocabulary

/// The instants a JWS chain is checked at come from its `signedDate`: one the chain check cannot evaluate (OpenSSL
/// compares certificate dates only in the years 0000–9999) is `payload.invalid-field` before any chain work, never
/// OpenSSL's "format error in certificate's notBefore field"; every instant inside is judged by the chain itself.
@Suite("Instants a chain can be checked at", .timeLimit(.minutes(2)))
struct ChainInstantRangeTests {
    static let pki = try! CertificateSet<JWSRole>.bundled()
    static let context = ValidationContext(trustedRoots: [pki.certificate(.root)], bundleID: "com.example.app", environment: .production)
    static let made = try! Forge(receiptPKI: .bundled()).make(
        .transaction, scenario: Scenario(purchases: [Purchase(productID: "pro.monthly")]), now: ReceiptDate.parse("2025-01-01T00:00:00Z")!)

    /// The forged transaction with its payload's `signedDate` written as `token` (JSON text), or a second
    /// `signedDate` after the first when `last`.
    static func jws(signedDate token: String, last: Bool = false) throws -> String {
        let parts = made.compact.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let payload = String(decoding: try #require(Base64URL.decode(parts[1])), as: UTF8.self)
        let edited =
            last
            ? String(payload.dropLast()) + ",\"signedDate\":\(token)}"
            : payload.replacing(try Regex("\"signedDate\":-?[0-9][0-9.eE+-]*"), with: "\"signedDate\":\(token)")
        try #require(edited != payload)
        return [parts[0], Base64URL.encode(Array(edited.utf8)), parts[2]].joined(separator: ".")
    }

    /// Around both ends (0000-01-01T00:00:00Z = -62167219200000 ms, 9999-12-31T23:59:59.999Z = 253402300799999 ms),
    /// the old ends (±8.64e15) and the year -29719 (-1e15).
    static let outside = [
        "-62167219200001", "-62167219200000.5", "-62167219200100", "253402300800000", "253402300799999.5", "253402300800001", "-1e15", "-8.64e15",
        "8.64e15", "1e300",
    ]
    static let inside = ["-62167219200000", "-62167219199999", "0", "-0", "1e-400", "253402300799999", "253402300799998.5", "253402300000000"]

    @Test("The milliseconds an instant from input may name are exactly the years 0000 to 9999")
    func range() throws {
        for token in Self.outside { #expect(ReceiptDate.instant(milliseconds: try #require(Double(token))) == nil, "\(token)") }
        for token in Self.inside { #expect(ReceiptDate.instant(milliseconds: try #require(Double(token))) != nil, "\(token)") }
        let first = try #require(ReceiptDate.instant(milliseconds: -62_167_219_200_000))
        let last = try #require(ReceiptDate.instant(milliseconds: 253_402_300_799_999))
        #expect(ReceiptDate.format(first, style: .fractionalZulu) == "0000-01-01T00:00:00.000Z")
        #expect(ReceiptDate.format(last, style: .fractionalZulu) == "9999-12-31T23:59:59.999Z")
        // Date strings are input too: an offset that carries a four-digit year past either end is no date.
        #expect(ReceiptDate.parse("9999-12-31T23:59:59Z") != nil && ReceiptDate.parse("0000-01-01T00:00:00Z") != nil)
        #expect(ReceiptDate.parse("9999-12-31T23:59:59-0100") == nil && ReceiptDate.parse("0000-01-01T00:30:00+0100") == nil)
    }

    @Test("A signedDate outside the years 0000-9999 is payload.invalid-field, first or as the last of two keys", arguments: outside)
    func refused(token: String) throws {
        for last in [false, true] {
            let report = JWSVerifier().verify(try Self.jws(signedDate: token, last: last), context: Self.context)
            #expect(report.errorClass == .payloadInvalidField, "\(token) last: \(last): \(report.checks.map(\.detail))")
            #expect(!report.checks.contains { $0.detail.contains("format error") }, "\(report.checks.map(\.detail))")
            #expect(report.checks.last?.detail.contains("signedDate") == true)
        }
    }

    @Test("A signedDate inside is judged by the chain: expired or not yet valid at the ends, never a format error", arguments: inside)
    func judgedByTheChain(token: String) throws {
        let report = JWSVerifier().verify(try Self.jws(signedDate: token), context: Self.context)
        #expect(report.errorClass == .chainNotYetValid || report.errorClass == .chainExpired, "\(token): \(report.checks.map(\.detail))")
        #expect(!report.checks.contains { $0.detail.contains("format error") }, "\(report.checks.map(\.detail))")
    }

    @Test("-1e15 first and a real date last: the last counts, so the chain holds and the edited payload fails its signature")
    func duplicateKeys() throws {
        let payload = String(decoding: try #require(Base64URL.decode(Self.made.compact.split(separator: ".")[1])), as: UTF8.self)
        let parts = Self.made.compact.split(separator: ".").map(String.init)
        let first = "{\"signedDate\":-1e15," + payload.dropFirst()
        let report = JWSVerifier().verify([parts[0], Base64URL.encode(Array(first.utf8)), parts[2]].joined(separator: "."), context: Self.context)
        #expect(report.errorClass == .jwsSignature, "\(report.checks.map(\.detail))")
    }
}
