import Foundation
import ForgeTestSupport
import _ForgeSupport
import Testing

/// `forge jws validate` on a JWS whose `signedDate` the chain check cannot be evaluated at (OpenSSL compares
/// certificate dates in the years 0000–9999 only): `payload.invalid-field`, exit 1, in the verifier's words, never
/// OpenSSL's "format error in certificate's notBefore field"; inside the years, the chain judges.
@Suite("signedDate outside the years 0000-9999 through forge jws validate", .timeLimit(.minutes(2)))
struct SignedDateRangeCLITests {
    /// A transaction `forge jws make` signs, with its payload's `signedDate` written as `token` (JSON text) or, when
    /// `last`, repeated after the real one.
    static func jws(signedDate token: String, last: Bool = false) async throws -> String {
        let made = try await forge("jws", "make", "transaction", "--product", "pro.monthly", "--now", "2025-01-01T00:00:00Z", "-q")
        #expect(made.status == 0, "\(made.stderr)")
        let parts = made.text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let payload = String(decoding: try #require(Base64URL.decode(parts[1])), as: UTF8.self)
        let edited =
            last
            ? String(payload.dropLast()) + ",\"signedDate\":\(token)}"
            : payload.replacing(try Regex("\"signedDate\":-?[0-9][0-9.eE+-]*"), with: "\"signedDate\":\(token)")
        try #require(edited != payload)
        return [parts[0], Base64URL.encode(Array(edited.utf8)), parts[2]].joined(separator: ".")
    }

    @Test(
        "Just outside either end, the old ends and the year -29719: payload.invalid-field, exit 1, also as the last of two keys",
        arguments: ["-62167219200001", "253402300800000", "-1e15", "-8.64e15", "8.64e15"])
    func refused(token: String) async throws {
        for last in [false, true] {
            let text = try await Self.jws(signedDate: token, last: last)
            let result = try await forge("jws", "validate", "-", stdin: Data(text.utf8))
            #expect(result.status == 1, "exit \(result.status): \(result.text)\(result.stderr)")
            #expect(result.text.hasPrefix("invalid (payload.invalid-field)\n") && result.text.contains("signedDate"), "\(token) last \(last): \(result.text)")
            #expect(!result.text.contains("format error"), "\(result.text)")
        }
        let report = try json(try await forge("jws", "validate", "-", "--json", stdin: Data(try await Self.jws(signedDate: token).utf8)))
        #expect(report["errorClass"] as? String == "payload.invalid-field", "\(report)")
    }

    @Test("At either end the chain judges: not yet valid in 0000, expired in 9999", arguments: [("-62167219200000", "chain.not-yet-valid"), ("253402300799999", "chain.expired")])
    func ends(token: String, errorClass: String) async throws {
        let result = try await forge("jws", "validate", "-", stdin: Data(try await Self.jws(signedDate: token).utf8))
        #expect(result.status == 1 && result.text.hasPrefix("invalid (\(errorClass))\n"), "\(result.text)\(result.stderr)")
        #expect(!result.text.contains("format error"), "\(result.text)")
    }
}
