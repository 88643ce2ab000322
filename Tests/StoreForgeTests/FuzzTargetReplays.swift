import AppStoreVocabulary
import Foundation
import ForgeCrypto
import _ForgeSupport
import JWSModel
import ReceiptConformance
import ReceiptCorpus
import StoreForge
import StoreServer
import StoreModel
import ForgeTestSupport

/// The fuzz targets of issue 36 as `FailCaseTests` replays their findings: each reads an input exactly as its target
/// in `FuzzTesting/Sources/<Target>/main.swift` does and runs the same code. (FuzzWebhookAnswer needs a socket and
/// the HTTP client: `WebhookAnswerFailCaseTests` replays it.)
enum FuzzTargetReplays {
    static let now = Date(timeIntervalSince1970: 1_735_689_600)

    // MARK: FuzzOCSP

    static let ocsp = try? OCSPService(clock: { now })

    static func ocsp(_ bytes: [UInt8]) {
        guard let service = ocsp, let mode = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        let split = rest.firstIndex(of: 0) ?? rest.count
        let after = split < rest.count ? Array(rest[(split + 1)...]) : []
        switch mode % 4 {
        case 0: _ = service.respond(path: "", request: rest)
        case 1:
            let path = String(decoding: rest, as: UTF8.self)
            if let request = OCSPService.getRequest(path: path) { _ = service.respond(path: path, request: request) }
        case 2: _ = service.respond(path: String(decoding: rest[..<split], as: UTF8.self), request: after)
        default:
            if (try? service.set(spec: String(decoding: rest[..<split], as: UTF8.self))) != nil {
                _ = service.table
                _ = service.respond(path: "", request: after)
                service.reset()
            }
        }
    }

    // MARK: FuzzStoreKitConfiguration

    static let forge = try? Forge(receiptPKI: .bundled())

    static func storeKit(_ bytes: [UInt8]) {
        guard let configuration = try? StoreKitConfiguration.read(bytes) else { return }
        _ = configuration.listing()
        _ = (try? configuration.listingJSON())?.serialized(pretty: true)
        let ids = configuration.products.prefix(2).map(\.productID)
        _ = try? configuration.products(named: ids + ["not.in.the.file"])
        guard let scenario = try? configuration.scenario(purchasing: ids), let forge, configuration.products.count <= 8 else { return }
        _ = try? forge.make(scenario, now: now, reissuedAt: now)
        _ = try? forge.make(.transaction, scenario: scenario, now: now)
    }

    // MARK: FuzzRunMerge

    static let manifest: Manifest? = {
        guard var whole = try? ManifestIO.load(from: Repository.vectors) else { return nil }
        whole.vectors = Array(whole.vectors.filter { !$0.id.family.hasPrefix("jws-") }.prefix(24) + whole.vectors.filter { $0.id.family.hasPrefix("jws-") }.prefix(16))
        return whole
    }()

    static func runMerge(_ bytes: [UInt8]) {
        guard let manifest else { return }
        let parts = bytes.split(separator: 0, maxSplits: 3, omittingEmptySubsequences: false).compactMap { try? JSONDecoder().decode(RunResults.self, from: Data($0)) }
        guard !parts.isEmpty else { return }
        _ = try? RunResults.merged(parts)
        if let (merged, _) = try? RunResults.merged(parts, corpus: manifest) {
            try? ReportFiles(results: "results.json", junit: "junit.xml", markdown: "report.md", html: "report.html").write([merged], manifest: manifest, to: { _, _ in })
            _ = ConsoleReport.summary(merged)
            _ = merged.exitCode
        }
    }

    // MARK: FuzzServerAPI

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
    static let key = try? ECPrivateKey(scalar: Array(repeating: 0x2A, count: 32), curve: .p256)
    static let keyID = "FUZZKEY001", issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    static let validHeader = #"{"alg":"ES256","kid":"{kid}","typ":"JWT"}"#
    static let validClaims = #"{"iss":"{iss}","iat":{now},"exp":{exp},"aud":"appstoreconnect-v1","bid":"com.example.prod"}"#

    static func token(header: String, payload: String) -> String {
        let clock = Int(Date().timeIntervalSince1970)
        func filled(_ text: String) -> [UInt8] {
            Array(
                text.replacing("{now}", with: String(clock)).replacing("{exp}", with: String(clock + 1800)).replacing("{kid}", with: keyID)
                    .replacing("{iss}", with: issuerID).utf8)
        }
        let input = Base64URL.encode(filled(header)) + "." + Base64URL.encode(filled(payload))
        let signature = (try? key?.signature(for: Array(input.utf8), algorithm: .sha256)) ?? nil
        return input + "." + Base64URL.encode(signature ?? [])
    }

    /// The status of the first answer; nil when the input is empty.
    @discardableResult
    static func serverAPI(_ bytes: [UInt8]) -> Int? {
        guard let forge, let key, let apiKey = try? ServerAPIKey(id: keyID, publicKey: key.publicKey), let flags = bytes.first else { return nil }
        let authenticator = ServerAPIAuthenticator(keys: [apiKey], issuerID: issuerID, bundleIDs: ["com.example.prod", "com.example.api"])
        var fields = bytes.dropFirst().split(separator: 0, maxSplits: 5, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        while fields.count < 6 { fields.append("") }
        for index in 0..<3 {
            for (placeholder, value) in placeholders { fields[index] = fields[index].replacing(placeholder, with: value) }
        }
        // The endpoint as the router hands it over: its name, then its path parameters (`transactionInfo/{tx}`).
        let route = fields[0].split(separator: "/", omittingEmptySubsequences: false).map { String($0) }
        guard let endpoint = route.first.flatMap(ServerAPIService.Endpoint.init(rawValue:)) else { return 0 }
        let authorization: String?
        let access: ServerAPIService.Access
        switch (flags >> 3) & 3 {
        case 0: (access, authorization) = (.open, nil)
        case 1: (access, authorization) = (.tokens(authenticator), "Bearer " + token(header: validHeader, payload: validClaims))
        case 2:
            let parts = fields[3].split(separator: "\u{1}", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            (access, authorization) = (
                .tokens(authenticator), "Bearer " + (parts.count == 2 ? token(header: parts[0], payload: parts[1]) : token(header: validHeader, payload: fields[3]))
            )
        default: (access, authorization) = (.tokens(authenticator), fields[3])
        }
        let environment: ServerAPIEnvironment =
            switch flags >> 6 {
            case 0: .production
            case 1: .sandbox
            case 2: .localTesting
            default: .atRoot(host: fields[5].isEmpty ? nil : fields[5])
            }
        let deliveries = (try? HTTPURL("http://127.0.0.1:9/hook")).map { NotificationDispatcher(NotificationDispatcher.Webhooks(urls: [.production: $0, .sandbox: $0])) }
        let configuration = ServerAPIService.Configuration(now: now, access: access, rateLimits: flags & 0x20 != 0 ? ServerAPIRateLimits() : nil, deliveries: deliveries)
        guard let service = try? ServerAPIService(scenarios: scenarios, forge: forge, configuration: configuration) else { return nil }
        let response = service.respond(
            ServerAPIRequest(
                environment: environment, endpoint: endpoint, parameters: Array(route.dropFirst()), query: fields[1], body: Array(fields[2].utf8),
                now: fields[4].isEmpty ? nil : ReceiptDate.parse(fields[4]), authorization: authorization))
        _ = JSONValue.object(response.summary).serialized(pretty: false)
        _ = service.respond(ServerAPIRequest(environment: environment, endpoint: endpoint, parameters: Array(route.dropFirst()), query: fields[1], authorization: authorization))
        return response.status
    }
}
