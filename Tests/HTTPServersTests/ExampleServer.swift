import _ForgeSupport
import ForgeTestSupport
import Foundation
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import StoreModel
import Testing

/// `forge serve --now 2025-01-01T00:00:00Z --scenario examples/server-api/sandbox-customer.json --scenario
/// examples/server-api/production-customer.json` in process, put together as `forge serve` puts it: one state for both
/// APIs on one clock (what the Server API changes, verifyReceipt shows), the bundled TEST root trusted, the request log
/// kept. The tests that once started a server per test over a socket (`Tests/ForgeCLITests/ServerAPI*Tests.swift`) drive
/// it through `app.test(.router)`; the control routes take ``controlToken`` (in process no peer is loopback).
struct ExampleServer {
    /// The examples' `now`: the server clock at start.
    static let clock = "2025-01-01T00:00:00Z"
    static let controlToken = "t0ken"
    /// A sandbox customer (com.example.api) with 24 monthly periods and a non-consumable by `now`, two renewals and a
    /// refund of the non-consumable later; a production one (com.example.prod) with a yearly subscription.
    static let sandboxFile = Repository.file("examples/server-api/sandbox-customer.json")
    static let productionFile = Repository.file("examples/server-api/production-customer.json")

    /// 2025-01-01T00:00:00Z in ms; the sandbox customer's monthly period then runs to January 15.
    static let start: Int64 = 1_735_689_600_000
    static let day: Int64 = 86_400_000
    static let january15: Int64 = 1_736_899_200_000

    let application: ForgeApplication
    let service: ServerAPIService
    let log: RequestLog

    /// `access` is `--no-auth` (open), `--api-key` (tokens) or neither (closed); `rateLimits` counts on a clock of the
    /// test's; `webhooks` are `--notify` and `--notify-sandbox`; `faults` and `seed` are `--fault` and `--seed`; `scenarios`
    /// replace the examples' (`--scenario` of other files).
    init(
        access: ServerAPIService.Access = .open, rateLimits: ServerAPIRateLimits? = nil, webhooks: [ServerAPIEnvironment: HTTPURL] = [:],
        faults: [String] = [], seed: UInt64 = 0, scenarios: [Scenario]? = nil
    ) throws {
        let forge = try Forge.bundled()
        let now = try #require(ReceiptDate.parse(Self.clock))
        let state = try ServerState(scenarios: try scenarios ?? Self.scenarios(), now: now)
        service = try ServerAPIService(
            state: state, forge: forge,
            configuration: .init(
                now: now, access: access, rateLimits: rateLimits, deliveries: webhooks.isEmpty ? nil : NotificationDispatcher(.init(urls: webhooks))))
        let verifyReceipt = VerifyReceiptService(
            configuration: .init(trustedRoots: [forge.receiptPKI.certificate(.root)], now: now), histories: try ServerHistories(state: state, forge: forge))
        log = try RequestLog(file: nil, capacity: 1000)
        var plan: [Fault] = []
        for spec in faults { plan.append(try Fault(parsing: spec)) }
        application = try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: verifyReceipt, serverAPI: service, faults: try FaultPlan(plan, seed: seed), log: log,
            controlToken: Self.controlToken)
    }

    static func scenarios() throws -> [Scenario] {
        try [sandboxFile, productionFile].map { try Scenario.decode(json: try Data(contentsOf: $0)) }
    }

    /// The request log's entries, oldest first.
    var entries: [[String: Any]] { log.jsonLines.split(separator: "\n").map { Self.object(Data($0.utf8)) } }

    /// The control routes' credential.
    static var control: HTTPFields { [.authorization: "Bearer " + controlToken] }

    // MARK: - Reading answers

    static func object(_ data: Data) -> [String: Any] { (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:] }

    /// The body as a JSON object; empty when it is not one.
    static func object(_ response: TestResponse) -> [String: Any] { object(Data(String(buffer: response.body).utf8)) }

    /// The payload of a compact JWS; empty when it is not one.
    static func payload(_ compact: Any?) -> [String: Any] {
        guard let text = compact as? String else { return [:] }
        let parts = text.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return [:] }
        return object(Data(bytes))
    }

    /// The payloads of a page's `signedTransactions`.
    static func transactions(_ response: TestResponse) -> [[String: Any]] { (object(response)["signedTransactions"] as? [Any] ?? []).map(payload) }

    /// Apple's `errorCode` of an error answer.
    static func errorCode(_ response: TestResponse) -> Int? { object(response)["errorCode"] as? Int }

    /// A JSON body, its members sorted: the same dictionary is the same bytes every time (a pagination token is bound to
    /// its request's bytes, and JSONSerialization's member order otherwise varies from call to call).
    static func body(_ json: [String: Any]) throws -> ByteBuffer { ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json, options: .sortedKeys)) }

    /// Headers with `name: value`.
    static func header(_ name: String, _ value: String) throws -> HTTPFields {
        var fields = HTTPFields()
        fields[try #require(HTTPFields.Element.Name(name))] = value
        return fields
    }
}

/// The ids of the example customers at the clock, as `forge jws make transaction --spec` names them.
struct ExampleIDs {
    /// The sandbox customer's monthly subscription: its first transaction and its latest.
    let original: String
    let latest: String
    /// Every monthly period, in purchase order.
    let monthly: [String]
    /// The sandbox customer's non-consumable.
    let lifetime: String
    /// The production customer's yearly subscription, and the order id its receipt shows.
    let productionTransaction: String
    let productionOrder: String

    init() throws {
        let at = try #require(ReceiptDate.parse(ExampleServer.clock))
        let scenarios = try ExampleServer.scenarios()
        let forge = try Forge.bundled()
        let sandbox = try forge.rendering(scenarios[0], madeAt: at, now: at).store
        let byProduct = Dictionary(grouping: sandbox.transactions.sorted { $0.purchaseDate < $1.purchaseDate }, by: \.productID)
        monthly = (byProduct["pro.monthly"] ?? []).map(\.transactionID)
        original = try #require(byProduct["pro.monthly"]?.first?.originalTransactionID)
        latest = try #require(monthly.last)
        lifetime = try #require(byProduct["lifetime"]?.first?.transactionID)
        let production = try forge.rendering(scenarios[1], madeAt: at, now: at).store
        let yearly = try #require(production.transactions.first)
        productionTransaction = yearly.transactionID
        productionOrder = production.orderID(of: yearly)
    }
}
