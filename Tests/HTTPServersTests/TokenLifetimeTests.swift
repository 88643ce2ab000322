import Foundation
import ForgeCrypto
import _ForgeSupport
import StoreServer
import Testing

/// The bearer token's lifetime and its header, with tokens minted here (ES256 over a fixed P-256 scalar): a token
/// without `iat` lives no longer than one with it, and a `crit` header is refused (RFC 7515 §4.1.11). Apple's own
/// clients' tokens: `ServerAPIAuthenticationTests`.
@Suite("Bearer tokens: the 60-minute cap without iat, and crit", .timeLimit(.minutes(2)))
struct TokenLifetimeTests {
    static let bundleID = "com.example.auth"
    static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    static let now = Date(timeIntervalSince1970: 1_736_899_200)

    struct Minter {
        let key: ECPrivateKey
        let authenticator: ServerAPIAuthenticator

        init() throws {
            key = try ECPrivateKey(scalar: Array(repeating: 0x2A, count: 32), curve: .p256)
            authenticator = ServerAPIAuthenticator(
                keys: [try ServerAPIKey(id: "FORGEKEY01", publicKey: key.publicKey)], issuerID: TokenLifetimeTests.issuerID, bundleIDs: [TokenLifetimeTests.bundleID])
        }

        /// `Bearer` and a token signed with the key: Apple's claims with `exp`, and `iat` when given, under `header`.
        func bearer(exp: Double, iat: Double? = nil, header: String = #"{"alg":"ES256","kid":"FORGEKEY01","typ":"JWT"}"#) throws -> String {
            var claims = #"{"iss":"\#(TokenLifetimeTests.issuerID)","aud":"appstoreconnect-v1","bid":"\#(TokenLifetimeTests.bundleID)","exp":\#(exp)"#
            if let iat { claims += #","iat":\#(iat)"# }
            let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array((claims + "}").utf8))
            return "Bearer " + input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8), algorithm: .sha256))
        }

        /// The rule that refused the token (its log name), or "accepted".
        func verdict(_ bearer: String, at now: Date = TokenLifetimeTests.now) -> String {
            switch authenticator.check(authorization: bearer, now: now) {
            case .accepted: "accepted"
            case .rejected(let rule): rule.rawValue
            }
        }
    }

    @Test("Without iat, exp may be at most 60 minutes after the server's clock (and its minute of skew): a token for the year 9999 is refused, Apple's 5-minute one accepted")
    func lifetimeWithoutIssuedAt() throws {
        let minter = try Minter()
        let clock = Self.now.timeIntervalSince1970
        #expect(minter.verdict(try minter.bearer(exp: clock + 300)) == "accepted", "Apple's Python and Java clients: no iat, 5 minutes")
        #expect(minter.verdict(try minter.bearer(exp: clock + 3_600)) == "accepted")
        #expect(minter.verdict(try minter.bearer(exp: clock + 3_660)) == "accepted", "a client clock a minute fast")
        for exp in [clock + 3_661, clock + 86_400, 253_402_300_799, 1e300] {
            #expect(minter.verdict(try minter.bearer(exp: exp)) == "exp-too-far", "exp \(exp)")
        }
        // With iat the rule is unchanged: 60 minutes from iat, iat at most a minute ahead.
        #expect(minter.verdict(try minter.bearer(exp: clock + 3_600, iat: clock)) == "accepted")
        #expect(minter.verdict(try minter.bearer(exp: clock + 3_601, iat: clock)) == "exp-after-iat")
        // Without iat the server cannot tell when a token was made: it is good in the last 61 minutes before its exp only.
        let twoHours = try minter.bearer(exp: clock + 7_200)
        #expect(minter.verdict(twoHours, at: Self.now.addingTimeInterval(3_500)) == "exp-too-far")
        #expect(minter.verdict(twoHours, at: Self.now.addingTimeInterval(3_600)) == "accepted")
    }

    @Test("A header with crit is refused, whatever it names (this server understands no extension); without it the same token is accepted")
    func criticalHeaderRefused() throws {
        let minter = try Minter()
        let exp = Self.now.timeIntervalSince1970 + 300
        for crit in [#"["exp"]"#, #"["b64"]"#, #"["http://example.com/ext"]"#, "[]", #""exp""#] {
            let header = #"{"alg":"ES256","kid":"FORGEKEY01","typ":"JWT","crit":\#(crit),"http://example.com/ext":true}"#
            #expect(minter.verdict(try minter.bearer(exp: exp, header: header)) == "crit", "crit \(crit)")
        }
        #expect(minter.verdict(try minter.bearer(exp: exp, header: #"{"alg":"ES256","kid":"FORGEKEY01","typ":"JWT","http://example.com/ext":true}"#)) == "accepted")
    }
}
