import ForgeCrypto
import Foundation
import _ForgeSupport
import StoreForge
import StoreServer
import StoreModel
import Testing

/// Every record a client makes is its app's: with a token for app B, nothing app A made through the API is read,
/// blocked or answered — mass extensions and their status, extension answers kept for retries.
@Suite("Records scoped to the token's app", .timeLimit(.minutes(2)))
struct ServerAPIAppScopeTests {
    static let issuer = "00000000-0000-4000-8000-000000000022"
    static let keyID = "SCOPETEST1"

    /// Two customers of two apps in the sandbox, each subscribed to `pro.monthly`, active at the clock.
    static func scenarios() throws -> [Scenario] {
        try ["com.example.a", "com.example.b"].map { bundle in
            try Scenario.decode(
                json: Data(
                    #"{"preset":"sandbox","bundleId":"\#(bundle)","now":"2025-01-01T00:00:00Z","purchases":[{"productId":"pro.monthly","purchaseDate":"2024-10-15T00:00:00Z","period":"P1M","renewals":2}]}"#
                        .utf8))
        }
    }

    /// An App Store Server API token for `bundleID`, as Apple's clients make one (ES256, `kid`, `aud`, `bid`, `iss`, `exp`).
    static func token(_ key: ECPrivateKey, bundleID: String) throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(keyID)","typ":"JWT"}"#.utf8))
        let payload = Base64URL.encode(
            Array(#"{"iss":"\#(issuer)","iat":\#(now),"exp":\#(now + 600),"aud":"appstoreconnect-v1","bid":"\#(bundleID)"}"#.utf8))
        let input = header + "." + payload
        return "Bearer " + input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8), algorithm: .sha256))
    }

    struct Fixture {
        let service: ServerAPIService
        let a: String
        let b: String
        /// Each customer's original transaction id.
        let originals: [String]
    }

    static func fixture() throws -> Fixture {
        let key = try ECPrivateKey.generate(curve: .p256)
        let authenticator = ServerAPIAuthenticator(
            keys: [try ServerAPIKey(id: keyID, publicKey: key.publicKey)], issuerID: issuer, bundleIDs: ["com.example.a", "com.example.b"])
        let scenarios = try scenarios()
        let now = try #require(ReceiptDate.parse(StateFixtures.clock))
        let service = try ServerAPIService(
            state: try ServerState(scenarios: scenarios, now: now), forge: try Forge.bundled(), configuration: .init(now: now, access: .tokens(authenticator)))
        let originals = try scenarios.map { scenario in try #require(try StateFixtures.ids(scenario)["pro.monthly"]?.first) }
        return Fixture(
            service: service, a: try token(key, bundleID: "com.example.a"), b: try token(key, bundleID: "com.example.b"), originals: originals)
    }

    static func extensions(_ service: ServerAPIService, customer: Int) -> Int {
        (service.state.customers[customer].scenario.timeline ?? []).filter { $0.event == .extend }.count
    }

    @Test("App B does not read app A's mass extension, and B's own with the same request identifier extends B's subscribers")
    func massExtensions() throws {
        let fixture = try Self.fixture()
        let service = fixture.service
        let body = #"{"extendByDays":3,"extendReasonCode":1,"requestIdentifier":"R1","productId":"pro.monthly"}"#
        let byA = StateFixtures.call(service, .massExtendRenewalDate, body: body, authorization: fixture.a)
        #expect(byA.status == 200)
        #expect(Self.extensions(service, customer: 0) == 1 && Self.extensions(service, customer: 1) == 0)

        let readByB = StateFixtures.call(service, .massExtensionStatus, "pro.monthly", "R1", authorization: fixture.b)
        #expect(readByB.status == 404 && StateFixtures.json(readByB)?["errorCode"]?.integerValue == 4_040_009, "B reads nothing of A's")

        let byB = StateFixtures.call(service, .massExtendRenewalDate, body: body, authorization: fixture.b)
        #expect(byB.status == 200)
        #expect(Self.extensions(service, customer: 1) == 1, "B's own request extended B's subscriber")
        #expect(Self.extensions(service, customer: 0) == 1, "and nothing more of A's")
        for token in [fixture.a, fixture.b] {
            let status = StateFixtures.json(StateFixtures.call(service, .massExtensionStatus, "pro.monthly", "R1", authorization: token))
            #expect(status?["succeededCount"]?.integerValue == 1 && status?["failedCount"]?.integerValue == 0)
        }
    }

    @Test("The same request identifier in two apps' extensions: each is its app's own, each extends")
    func extensionAnswers() throws {
        let fixture = try Self.fixture()
        try #require(fixture.originals[0] != fixture.originals[1])
        let service = fixture.service
        let body = #"{"extendByDays":5,"extendReasonCode":1,"requestIdentifier":"R2"}"#
        for (index, token) in [fixture.a, fixture.b].enumerated() {
            let answer = StateFixtures.call(service, .extendRenewalDate, "\(fixture.originals[index])", body: body, authorization: token)
            #expect(answer.status == 200 && StateFixtures.json(answer)?["originalTransactionId"]?.stringValue == fixture.originals[index])
            #expect(Self.extensions(service, customer: index) == 1)
        }
        // B asking about A's subscription, with A's request identifier: not B's to see.
        let crossed = StateFixtures.call(service, .extendRenewalDate, "\(fixture.originals[0])", body: body, authorization: fixture.b)
        #expect(crossed.status == 404)
    }
}
