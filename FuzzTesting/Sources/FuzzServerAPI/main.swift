import Foundation
import ForgeCrypto
import _ForgeSupport
import FuzzSupport
import StoreForge
@testable import StoreServer
import StoreModel

/// What every input is served with, made once, lazily: LeakSanitizer reads what a one-time initializer (`_WZ`)
/// allocates as not leaked (lsan.supp).
enum Fixture {
    /// Two apps' customers, as `forge serve --scenario` takes them: a production subscription and a refunded
    /// consumable, and a sandbox subscription and a refunded non-consumable.
    static let specs = [
        #"""
        {"bundleId": "com.example.prod", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.yearly", "purchaseDate": "2023-06-01T00:00:00Z", "period": "P1Y", "renewals": 1},
                       {"productId": "coins", "type": "consumable", "purchaseDate": "2024-12-01T00:00:00Z"}],
         "timeline": [{"event": "renew", "productId": "pro.yearly", "count": 1}, {"event": "refund", "productId": "coins", "at": "2025-01-10T00:00:00Z"}]}
        """#,
        #"""
        {"preset": "sandbox", "bundleId": "com.example.api", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-09-15T00:00:00Z", "period": "P1M", "renewals": 3},
                       {"productId": "lifetime", "type": "non-consumable", "purchaseDate": "2024-06-01T00:00:00Z"}],
         "timeline": [{"event": "renew", "productId": "pro.monthly", "count": 2}, {"event": "refund", "productId": "lifetime", "at": "2025-02-20T00:00:00Z"}]}
        """#,
    ]
    static let scenarios = specs.compactMap { try? Scenario.decode(json: Data($0.utf8)) }
    static let forge = try? Forge(receiptPKI: .bundled())
    static let now = Date(timeIntervalSince1970: 1_735_689_600)

    /// `{tx}`, `{otx}` (production) and `{stx}`, `{sotx}` (sandbox) in a path, query or body stand for the customers' latest
    /// transaction id and original transaction id, so seeds can name real customers.
    static let placeholders: [(String, String)] = {
        guard let forge else { return [] }
        var pairs: [(String, String)] = []
        for (scenario, prefix) in zip(scenarios, ["", "s"]) {
            guard let payload = try? forge.make(.transaction, scenario: scenario, now: now).payload else { continue }
            pairs.append(("{\(prefix)tx}", payload["transactionId"]?.stringValue ?? ""))
            pairs.append(("{\(prefix)otx}", payload["originalTransactionId"]?.stringValue ?? ""))
        }
        return pairs
    }()

    /// The App Store Connect key tokens are signed with, derived (no secrecy needed), and the issuer the server expects.
    static let key = try? ECPrivateKey(scalar: Array(repeating: 0x2A, count: 32), curve: .p256)
    static let keyID = "FUZZKEY001", issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    static let authenticator = key.flatMap { key in
        (try? ServerAPIKey(id: keyID, publicKey: key.publicKey)).map { apiKey in
            ServerAPIAuthenticator(keys: [apiKey], issuerID: issuerID, bundleIDs: ["com.example.prod", "com.example.api"])
        }
    }

    /// A compact JWS of `header` and `payload` signed ES256 with the server's key (`{now}` and `{exp}` in either are the
    /// wall clock's seconds and 30 minutes later, `{kid}` and `{iss}` the key and issuer the server knows).
    static func token(header: String, payload: String) -> String {
        let clock = Int(Date().timeIntervalSince1970)
        func filled(_ text: String) -> [UInt8] {
            Array(
                text.replacing("{now}", with: String(clock)).replacing("{exp}", with: String(clock + 1800)).replacing("{kid}", with: keyID).replacing("{iss}", with: issuerID).utf8)
        }
        let input = Base64URL.encode(filled(header)) + "." + Base64URL.encode(filled(payload))
        let signature = (try? key?.signature(for: Array(input.utf8), algorithm: .sha256)) ?? nil
        return input + "." + Base64URL.encode(signature ?? [])
    }

    static let webhook = try? HTTPURL("http://127.0.0.1:9/hook")
    static let validHeader = #"{"alg":"ES256","kid":"{kid}","typ":"JWT"}"#
    static let validClaims = #"{"iss":"{iss}","iat":{now},"exp":{exp},"aud":"appstoreconnect-v1","bid":"com.example.prod"}"#
}

/// The App Store Server API as `forge serve` answers it, on a fresh server state per input (so an input replays the
/// same way alone); the router in front of it is Hummingbird's. The first byte picks how the caller authenticates (bits 3-4: no auth, a
/// valid token, a token of the fuzzer's header 0x01 claims signed with the server's key, the fuzzer's own
/// `Authorization`), Apple's rate limits (bit 5) and the environment (bits 6-7: production, sandbox, local testing,
/// or the one the Host field names). The rest, split at 0x00: the endpoint as the router hands it over (its name, then
/// its path parameters, split at `/`: `transactionInfo/{tx}`), query, body, authorization, X-Forge-Now, Host.
func fuzzServerAPI(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    guard let forge = Fixture.forge, let authenticator = Fixture.authenticator, let flags = bytes.first else { return 0 }
    var fields = bytes.dropFirst().split(separator: 0, maxSplits: 5, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    while fields.count < 6 { fields.append("") }
    for index in 0..<3 {
        for (placeholder, value) in Fixture.placeholders { fields[index] = fields[index].replacing(placeholder, with: value) }
    }
    // The endpoint as the router hands it over: its name, then its path parameters (`transactionInfo/{tx}`).
    let route = fields[0].split(separator: "/", omittingEmptySubsequences: false).map { String($0) }
    guard let endpoint = route.first.flatMap(ServerAPIService.Endpoint.init(rawValue:)) else { return 0 }
    let authorization: String?
    let access: ServerAPIService.Access
    switch (flags >> 3) & 3 {
    case 0:
        (access, authorization) = (.open, nil)
    case 1:
        (access, authorization) = (.tokens(authenticator), "Bearer " + Fixture.token(header: Fixture.validHeader, payload: Fixture.validClaims))
    case 2:
        let parts = fields[3].split(separator: "\u{1}", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let signed = parts.count == 2 ? Fixture.token(header: parts[0], payload: parts[1]) : Fixture.token(header: Fixture.validHeader, payload: fields[3])
        (access, authorization) = (.tokens(authenticator), "Bearer " + signed)
    default:
        (access, authorization) = (.tokens(authenticator), fields[3])
    }
    let environment: ServerAPIEnvironment =
        switch flags >> 6 {
        case 0: .production
        case 1: .sandbox
        case 2: .localTesting
        default: .atRoot(host: fields[5].isEmpty ? nil : fields[5])
        }
    // Webhooks configured, so notifications are queued (never sent: nothing here delivers them).
    let deliveries = Fixture.webhook.map { NotificationDispatcher(NotificationDispatcher.Webhooks(urls: [.production: $0, .sandbox: $0])) }
    let configuration = ServerAPIService.Configuration(
        now: Fixture.now, access: access, rateLimits: flags & 0x20 != 0 ? ServerAPIRateLimits() : nil, deliveries: deliveries)
    guard let service = try? ServerAPIService(scenarios: Fixture.scenarios, forge: forge, configuration: configuration) else { return 0 }
    let request = ServerAPIRequest(
        environment: environment, endpoint: endpoint, parameters: Array(route.dropFirst()), query: fields[1], body: Array(fields[2].utf8),
        now: fields[4].isEmpty ? nil : ReceiptDate.parse(fields[4]), authorization: authorization)
    let response = service.respond(request)
    // What the request log writes of it.
    _ = JSONValue.object(response.summary).serialized(pretty: false)
    // A second request on the changed state: the same endpoint again.
    _ = service.respond(ServerAPIRequest(environment: environment, endpoint: endpoint, parameters: Array(route.dropFirst()), query: fields[1], authorization: authorization))
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzServerAPI(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
