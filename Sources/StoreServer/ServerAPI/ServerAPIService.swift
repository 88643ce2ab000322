#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import StoreForge
package import _ForgeSupport
package import StoreModel
import AppStoreVocabulary

/// The App Store Server API's environments, as `forge serve` mounts them: production at the server's root
/// (`/inApps/…`, Apple's `https://api.storekit.apple.com`), sandbox under `/sandbox` (`https://api.storekit-sandbox.apple.com`),
/// local testing under `/local-testing` (`https://local-testing-base-url`).
package enum ServerAPIEnvironment: String, Sendable, Hashable, CaseIterable {
    case production
    case sandbox
    /// Apple's `Environment.LOCAL_TESTING`, "for unit tests": it serves every store, production and sandbox, so a
    /// unit test's client finds the customer whichever environment the scenario is, at production's rate limits.
    case localTesting = "local-testing"

    /// What comes before `/inApps` on the stand-in server.
    package var prefix: String {
        switch self {
        case .production: ""
        case .sandbox: "/sandbox"
        case .localTesting: "/local-testing"
        }
    }

    /// Apple's host for the environment: a request at the root whose `Host` names it is served there (a client
    /// that resolves Apple's host name to this server keeps its paths); `forge serve --tls` names each in its certificate.
    package var appleHost: String {
        switch self {
        case .production: "api.storekit.apple.com"
        case .sandbox: "api.storekit-sandbox.apple.com"
        case .localTesting: "local-testing-base-url"
        }
    }

    /// The environment of a request at `/inApps/…` (no prefix): the one whose Apple host the `Host` header names
    /// (port and case aside), else production.
    package static func atRoot(host: String?) -> ServerAPIEnvironment {
        guard var name = host?.lowercased() else { return .production }
        if let colon = name.lastIndex(of: ":"), !name.hasSuffix("]") { name = String(name[..<colon]) }
        return allCases.first { $0.appleHost == name } ?? .production
    }

    /// Whether this environment serves a store of `environment`: a Production store's transactions are not found
    /// in the sandbox, and the other way round, as Apple's two databases are apart; local testing sees both.
    func serves(_ environment: Environment) -> Bool {
        switch self {
        case .production: environment == .production
        case .sandbox: environment == .sandbox
        case .localTesting: environment == .production || environment == .sandbox
        }
    }
}

/// One request to the Server API, independent of any socket: the endpoint the router matched and its path
/// parameters (percent-decoded), the raw query string, the body.
package struct ServerAPIRequest: Sendable {
    package var environment: ServerAPIEnvironment
    package var endpoint: ServerAPIService.Endpoint
    /// The path's parameters in the order the path names them (a mass extension's status: product id, then request id).
    package var parameters: [String]
    package var query: String
    package var body: [UInt8]
    /// The request's `X-Forge-Now`: the server clock for this request alone.
    package var now: Date?
    /// The `Authorization` header, for the bearer-token check (item 2 of issue 22).
    package var authorization: String?

    package init(
        environment: ServerAPIEnvironment, endpoint: ServerAPIService.Endpoint, parameters: [String] = [], query: String = "", body: [UInt8] = [],
        now: Date? = nil, authorization: String? = nil
    ) {
        self.environment = environment
        self.endpoint = endpoint
        self.parameters = parameters
        self.query = query
        self.body = body
        self.now = now
        self.authorization = authorization
    }
}

/// The answer: HTTP status, `Content-Type` (nil: no body), body, and what the request log records.
package struct ServerAPIResponse: Sendable {
    package var status: Int
    package var contentType: String?
    package var body: [UInt8]
    /// Headers besides `Content-Type` (`Retry-After` of a 429, `Allow` of a 405).
    package var headers: [(name: String, value: String)] = []
    /// `endpoint`, `errorCode` (null on success) and what the endpoint adds (the id asked about, the count sent).
    package var summary: JSONObject

    /// Apple's error: the family's status, `application/json` exactly (Python's client drops the code from any
    /// other Content-Type, `; charset=utf-8` included), `{"errorCode","errorMessage"}`.
    package static func error(_ error: ServerAPIError, endpoint: String) -> ServerAPIResponse {
        ServerAPIResponse(
            status: error.httpStatus, contentType: ServerAPIService.jsonContentType, body: Array(error.body.serialized(pretty: false).utf8),
            summary: [("endpoint", .string(endpoint)), ("errorCode", .integer(error.code))])
    }

    /// No body: 401 (Apple sends none), and paths or methods the API does not have.
    package static func empty(_ status: Int, endpoint: String, note: String) -> ServerAPIResponse {
        ServerAPIResponse(status: status, contentType: nil, body: [], summary: [("endpoint", .string(endpoint)), ("errorCode", .null), ("note", .string(note))])
    }
}

/// Apple's App Store Server API answered from the store model: the signed fields are rendered by the forge
/// (``StoreRendering``) from the `--scenario` files, at the server's clock, signed by the EC TEST PKI.
///
/// Endpoints: Get Transaction Info (`GET /inApps/v1/transactions/{transactionId}`), Get Transaction History v2
/// (`GET /inApps/v2/history/{anyTransactionId}`, every filter, ≤ ``pageSize`` a page, `revision` a durable
/// cursor), Get All Subscription Statuses (`GET /inApps/v1/subscriptions/{anyTransactionId}?status=`), Get Refund
/// History v2 (`GET /inApps/v2/refund/lookup/{anyTransactionId}?revision=`), Get App Transaction Info
/// (`GET /inApps/v1/transactions/appTransactions/{anyTransactionId}`), Send Consumption Information v1 and v2
/// (`PUT /inApps/v{1,2}/transactions/consumption/{transactionId}`, 202, kept in the state and the request log), Finish Transaction
/// (`POST /inApps/v1/transactions/{transactionId}/finish`, 200, kept in the state and the request log).
/// Errors are ``ServerAPIError``s. Each scenario is one customer of one app; it needs `now` (when its
/// purchases were made: that fixes the ids) and is served in its store's environment (Production or Sandbox;
/// an `xcode-*` store, whose ids are all 0, is not served).
package struct ServerAPIService: Sendable {
    /// Apple's page size for the transaction and refund histories.
    package static let pageSize = 20
    /// Exactly Apple's: nothing after it.
    package static let jsonContentType = "application/json"

    package struct Configuration: Sendable {
        /// The server's clock; the wall clock when nil. A request's `X-Forge-Now` overrides both.
        package var now: Date?
        /// Who may call: the default refuses everyone (401, empty body), so the routes are never open by accident.
        package var access: Access
        /// `--rate-limits apple`: Apple's per-endpoint rates; nil, no limit.
        package var rateLimits: ServerAPIRateLimits?
        /// `--notify URL`, `--notify-sandbox URL`: the webhooks notifications are delivered to; nil, none.
        package var deliveries: NotificationDispatcher?

        package init(now: Date? = nil, access: Access = .closed, rateLimits: ServerAPIRateLimits? = nil, deliveries: NotificationDispatcher? = nil) {
            self.now = now
            self.access = access
            self.rateLimits = rateLimits
            self.deliveries = deliveries
        }
    }

    /// Who may call the API.
    package enum Access: Sendable {
        /// `--no-auth`: anyone, without a token.
        case open
        /// Holders of a token `ServerAPIAuthenticator` accepts (`--api-key`, `--issuer-id`), scoped to its app.
        case tokens(ServerAPIAuthenticator)
        /// Nobody: neither `--no-auth` nor an API key was given.
        case closed
    }

    package let configuration: Configuration
    /// The customers, the clock and what the developer has changed: shared with `/_forge/clock`.
    package let state: ServerState
    let forge: Forge?
    /// The read-only endpoints' answers, by request, clock and state version.
    let cache = ResponseCache()
    /// The Retention Messaging performance tests initiated and not yet taken by the server's runner.
    package let performanceTests = PerformanceTestQueue()

    /// No scenario: every id is unknown (4040010).
    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        state = ServerState(now: configuration.now)
        forge = nil
    }

    /// Checks each scenario renders (and has its `now`) before the server starts.
    package init(scenarios: [Scenario], forge: Forge, configuration: Configuration = Configuration()) throws(ForgeError) {
        try self.init(state: try ServerState(scenarios: scenarios, now: configuration.now), forge: forge, configuration: configuration)
    }

    /// Serves `state`'s customers (shared with verifyReceipt's ``ServerHistories``); its clock is the server's.
    package init(state: ServerState, forge: Forge, configuration: Configuration = Configuration()) throws(ForgeError) {
        for customer in state.customers { _ = try forge.rendering(customer.scenario, madeAt: customer.madeAt, now: customer.madeAt) }
        self.configuration = configuration
        self.forge = forge
        self.state = state
    }

    /// The endpoints, by the name the request log and the faults give them. Where each is served (method and path) is
    /// the HTTP layer's business: its router registers every endpoint (`ServerAPIController`).
    package enum Endpoint: String, CaseIterable, Sendable {
        case transactionInfo
        case transactionHistory
        case transactionHistoryV1
        case subscriptionStatuses
        case refundHistory
        case orderLookup
        case appTransactionInfo
        case consumptionV1
        case consumptionV2
        case finishTransaction
        case setAppAccountToken
        case extendRenewalDate
        case massExtendRenewalDate
        case massExtensionStatus
        case requestTestNotification
        case testNotificationStatus
        case notificationHistory
        // Retention Messaging (ServerAPIService+RetentionMessaging), named as Apple's Python client names its methods.
        case uploadImage
        case deleteImage
        case imageList
        case uploadMessage
        case deleteMessage
        case messageList
        case configureDefaultMessage
        case deleteDefaultMessage
        case defaultMessage
        case configureRealtimeURL
        case deleteRealtimeURL
        case realtimeURL
        case initiatePerformanceTest
        case performanceTestResults

        /// Answers only from the state, changing nothing (Get Notification History is a POST that reads).
        var readsOnly: Bool {
            switch self {
            case .consumptionV1, .consumptionV2, .finishTransaction, .setAppAccountToken, .extendRenewalDate, .massExtendRenewalDate, .requestTestNotification,
                .uploadImage, .deleteImage, .uploadMessage, .deleteMessage, .configureDefaultMessage, .deleteDefaultMessage, .configureRealtimeURL,
                .deleteRealtimeURL, .initiatePerformanceTest:
                false
            case .transactionInfo, .transactionHistory, .transactionHistoryV1, .subscriptionStatuses, .refundHistory, .orderLookup, .appTransactionInfo,
                .massExtensionStatus, .testNotificationStatus, .notificationHistory, .imageList, .messageList, .defaultMessage, .realtimeURL,
                .performanceTestResults:
                true
            }
        }

        /// What the request log calls the path's first parameter.
        var parameterName: String? {
            switch self {
            case .orderLookup: "orderId"
            case .setAppAccountToken, .extendRenewalDate: "originalTransactionId"
            case .massExtensionStatus: "productId"
            case .testNotificationStatus: "testNotificationToken"
            case .uploadImage, .deleteImage: "imageIdentifier"
            case .uploadMessage, .deleteMessage: "messageIdentifier"
            case .configureDefaultMessage, .deleteDefaultMessage, .defaultMessage: "productId"
            case .performanceTestResults: "requestId"
            case .massExtendRenewalDate, .requestTestNotification, .notificationHistory, .imageList, .messageList, .configureRealtimeURL, .deleteRealtimeURL,
                .realtimeURL, .initiatePerformanceTest:
                nil
            default: "transactionId"
            }
        }
    }

    /// The answer to `request`. Never traps: every failure is an answer. `admitted` hears of each request that passed
    /// authentication and the rate limit, by the log's endpoint name, before it is answered: an answer it returns (a
    /// fault's) is sent instead, and the endpoint does nothing.
    package func respond(_ request: ServerAPIRequest, admitted: (_ endpoint: String) -> ServerAPIResponse? = { _ in nil }) -> ServerAPIResponse {
        var authenticated: JSONObject = []
        let endpoint = request.endpoint, parameters = request.parameters
        let parameter = parameters.first ?? ""
        let scope: Scope
        switch configuration.access {
        case .open:
            scope = Scope(environment: request.environment, app: nil)
        case .closed:
            let advice = "start forge serve with \(ServeOption.apiKey) and \(ServeOption.issuerID), or \(ServeOption.noAuth)"
            return .empty(401, endpoint: endpoint.rawValue, note: "no API key is configured: " + advice)
        case .tokens(let authenticator):
            // The wall clock, not the server's: clients mint tokens from their real clocks.
            switch authenticator.check(authorization: request.authorization, now: Date()) {
            case .accepted(let keyID, let bundleID):
                scope = Scope(environment: request.environment, app: bundleID)
                authenticated = [("kid", .string(keyID))]
            case .rejected(let rule):
                var refused = ServerAPIResponse.empty(401, endpoint: endpoint.rawValue, note: rule.description)
                refused.summary.append(("auth", .string(rule.rawValue)))
                return refused
            }
        }
        // Counted on the rate limiter's own clock (the wall's), never on X-Forge-Now: a client chooses that.
        if let limits = configuration.rateLimits, let retry = limits.admit(endpoint, app: scope.app ?? "", environment: scope.environment) {
            var refused = ServerAPIResponse.error(.rateLimitExceeded, endpoint: endpoint.rawValue)
            let retryAfter = String(Int64(retry.timeIntervalSince1970) * 1000)
            refused.headers = [("Retry-After", retryAfter)]
            refused.summary.append(("retryAfter", .string(retryAfter)))
            if let name = endpoint.parameterName { refused.summary.append((name, .string(parameter))) }
            refused.summary += authenticated
            return refused
        }
        // A change is made at the server clock or later: one dated before it would rewrite what was already answered
        // (a renewal served a moment ago would move away, an extension escape the twice-a-year rule).
        if !endpoint.readsOnly, let requested = request.now, case let clock = state.now(), requested < clock {
            let reason =
                "X-Forge-Now \(ReceiptDate.format(requested)) is before the server clock (\(ReceiptDate.format(clock))): a change is made at the server clock or later, never in the past"
            var refused = ServerAPIResponse.error(.generalBadRequest, endpoint: endpoint.rawValue)
            refused.headers = [("X-Forge-Refused", reason)]
            refused.summary.append(("refused", .string(reason)))
            if let name = endpoint.parameterName { refused.summary.append((name, .string(parameter))) }
            refused.summary += authenticated
            return refused
        }
        if var instead = admitted(endpoint.rawValue) {
            if let name = endpoint.parameterName { instead.summary.append((name, .string(parameter))) }
            instead.summary += authenticated
            return instead
        }
        let now = state.now(request: request.now)
        var response: ServerAPIResponse
        let key = ResponseCache.Key(
            request: ([request.environment.rawValue, scope.app ?? "", endpoint.rawValue, request.query] + parameters).joined(separator: "\n"),
            // A delivery attempt changes the history's sendAttempts: both counters only grow, so their sum moves with either.
            body: request.body, milliseconds: ReceiptDate.milliseconds(now) ?? 0, version: state.version &+ (configuration.deliveries?.version ?? 0))
        if endpoint.readsOnly, let cached = cache.answer(key) {
            response = cached
            response.summary.append(("cached", .bool(true)))
        } else {
            response = answer(endpoint, parameters: parameters, request: request, scope: scope, now: now)
            if endpoint.readsOnly, response.status == 200 { cache.keep(response, for: key) }
        }
        if let name = endpoint.parameterName { response.summary.append((name, .string(parameter))) }
        response.summary += authenticated
        return response
    }

    /// The endpoint's answer, computed.
    private func answer(_ endpoint: Endpoint, parameters: [String], request: ServerAPIRequest, scope: Scope, now: Date) -> ServerAPIResponse {
        let parameter = parameters.first ?? ""
        var response: ServerAPIResponse
        do throws(ServerAPIError) {
            let query = ServerAPIQuery(request.query)
            /// A 200 with `body` written in its declared order (Apple's), and the log's `count`.
            func json(_ body: some ServerAPIAnswer) -> ServerAPIResponse {
                guard let value = try? JSONValue(encoding: body) else { return .error(.generalInternal, endpoint: endpoint.rawValue) }
                var answer = ServerAPIResponse(
                    status: 200, contentType: Self.jsonContentType, body: Array(value.serialized(pretty: false).utf8),
                    summary: [("endpoint", .string(endpoint.rawValue)), ("errorCode", .null)])
                if let count = body.loggedCount { answer.summary.append(("count", .integer(Int64(count)))) }
                return answer
            }
            switch endpoint {
            case .transactionInfo: response = json(try transactionInfo(parameter, scope: scope, now: now))
            case .transactionHistory, .transactionHistoryV1: response = json(try history(parameter, query: query, scope: scope, now: now))
            case .subscriptionStatuses: response = json(try statuses(parameter, query: query, scope: scope, now: now))
            case .refundHistory: response = json(try refunds(parameter, query: query, scope: scope, now: now))
            case .appTransactionInfo: response = json(try appTransactionInfo(parameter, scope: scope, now: now))
            case .consumptionV1, .consumptionV2:
                let recorded = try consumption(parameter, version2: endpoint == .consumptionV2, body: request.body, scope: scope, now: now)
                let report = ServerState.ConsumptionReport(environment: scope.environment, transactionID: parameter, receivedAt: now, body: recorded)
                try state.change { $0.remember(report) }
                response = .empty(202, endpoint: endpoint.rawValue, note: "consumption information recorded")
                response.summary.append(("consumption", recorded))
            case .finishTransaction:
                // The transaction must exist; that it was finished is kept (and in the request log).
                _ = try transaction(parameter, scope: scope, now: now)
                let finished = ServerState.FinishedTransaction(environment: scope.environment, transactionID: parameter, finishedAt: now)
                try state.change { $0.remember(finished) }
                response = .empty(200, endpoint: endpoint.rawValue, note: "transaction finished")
            case .orderLookup where scope.environment == .sandbox:
                response = .empty(404, endpoint: endpoint.rawValue, note: "Apple's sandbox has no order lookup")
            case .orderLookup: response = json(try lookUpOrder(parameter, scope: scope, now: now))
            case .setAppAccountToken:
                let token = try setAppAccountToken(parameter, body: request.body, scope: scope, now: now)
                response = .empty(200, endpoint: endpoint.rawValue, note: "app account token set")
                response.summary.append(("appAccountToken", .string(token)))
            case .extendRenewalDate: response = json(try extendRenewalDate(parameter, body: request.body, scope: scope, now: now))
            case .massExtendRenewalDate: response = json(try massExtendRenewalDate(body: request.body, scope: scope, now: now))
            case .massExtensionStatus:
                response = json(try massExtensionStatus(productID: parameter, requestIdentifier: parameters.last ?? "", scope: scope))
            case .requestTestNotification: response = json(try requestTestNotification(scope: scope, now: now))
            case .testNotificationStatus: response = json(try testNotificationStatus(parameter, scope: scope))
            case .notificationHistory: response = json(try notificationHistory(body: request.body, query: query, scope: scope, now: now))
            case .uploadImage:
                try uploadImage(parameter, query: query, body: request.body, scope: scope)
                response = .empty(200, endpoint: endpoint.rawValue, note: "image uploaded")
            case .deleteImage:
                try deleteImage(parameter, scope: scope)
                response = .empty(200, endpoint: endpoint.rawValue, note: "image deleted")
            case .imageList: response = json(imageList(scope: scope))
            case .uploadMessage:
                try uploadMessage(parameter, body: request.body, scope: scope)
                response = .empty(200, endpoint: endpoint.rawValue, note: "message uploaded")
            case .deleteMessage:
                try deleteMessage(parameter, scope: scope)
                response = .empty(200, endpoint: endpoint.rawValue, note: "message deleted")
            case .messageList: response = json(messageList(scope: scope))
            case .configureDefaultMessage:
                try configureDefaultMessage(productID: parameter, locale: parameters.last ?? "", body: request.body, scope: scope)
                response = .empty(200, endpoint: endpoint.rawValue, note: "default message configured")
            case .deleteDefaultMessage:
                try deleteDefaultMessage(productID: parameter, locale: parameters.last ?? "", scope: scope)
                response = .empty(200, endpoint: endpoint.rawValue, note: "default message deleted")
            case .defaultMessage: response = json(try defaultMessage(productID: parameter, locale: parameters.last ?? "", scope: scope))
            case .configureRealtimeURL:
                let url = try configureRealtimeURL(body: request.body, scope: scope)
                response = .empty(200, endpoint: endpoint.rawValue, note: "realtime URL configured")
                response.summary.append(("realtimeURL", .string(url)))
            case .deleteRealtimeURL:
                try deleteRealtimeURL(scope: scope)
                response = .empty(200, endpoint: endpoint.rawValue, note: "realtime URL deleted")
            case .realtimeURL: response = json(try realtimeURL(scope: scope))
            case .initiatePerformanceTest: response = json(try initiatePerformanceTest(body: request.body, scope: scope, now: now))
            case .performanceTestResults: response = json(try performanceTestResults(parameter, scope: scope))
            }
        } catch {
            response = .error(error, endpoint: endpoint.rawValue)
        }
        return response
    }

    // MARK: - The store at the request's clock

    /// What a request may see: one environment and, behind a token, only the app its `bid` names (Apple scopes
    /// every answer to the token's app).
    struct Scope {
        let environment: ServerAPIEnvironment
        let app: String?
    }

    /// One customer's store at the request's clock, with what a lookup needs.
    struct View {
        let rendering: StoreRendering
        /// The transactions made by then, in the store's order.
        let transactions: [Transaction]
        /// The customer's place in ``ServerState/customers``: where a mutation goes.
        let customer: Int
    }

    /// Every customer `scope` may see at `now`, rendered. A scenario that cannot be looked at this early (or
    /// this late) holds no one at that clock; an `xcode-*` store (every id 0) is not served.
    func views(scope: Scope, now: Date) -> [View] { views(scope: scope, now: now, customers: state.customers) }

    /// The same, of `customers` as read at some state version.
    func views(scope: Scope, now: Date, customers: [ServerState.Customer]) -> [View] {
        guard let forge else { return [] }
        var views: [View] = []
        for (index, customer) in customers.enumerated() {
            guard let rendering = try? forge.rendering(customer.scenario, madeAt: customer.madeAt, now: now),
                !rendering.isXcode, scope.environment.serves(rendering.environment),
                scope.app.map({ $0 == rendering.store.bundleID }) ?? true
            else { continue }
            views.append(View(rendering: rendering, transactions: rendering.store.transactions.filter { $0.purchaseDate <= now }, customer: index))
        }
        return views
    }

    /// The customer `id` belongs to (a transaction id, an original transaction id or, with `anyID`, the app
    /// transaction id) in `environment` at `now`, or 4000006 (not an id) / 4040010 (no such customer).
    func view(of id: String, anyID: Bool, scope: Scope, now: Date, customers: [ServerState.Customer]? = nil) throws(ServerAPIError) -> View {
        guard ServerAPIIdentifier.isWellFormed(id) else { throw .invalidTransactionID }
        for view in views(scope: scope, now: now, customers: customers ?? state.customers) {
            let owns =
                view.transactions.contains { $0.transactionID == id || (anyID && $0.originalTransactionID == id) }
                || (anyID && !view.transactions.isEmpty && view.rendering.appTransactionID == id)
            if owns { return view }
        }
        throw .transactionIDNotFound
    }

    /// A JWS the forge signs; a failure is Apple's general internal error.
    func signed(_ work: () throws(ForgeError) -> String) throws(ServerAPIError) -> String {
        do { return try work() } catch { throw .generalInternal }
    }

    // MARK: - Get Transaction Info

    /// The transaction whose `transactionId` is `id` (an original transaction id names the first purchase), and its store.
    func transaction(_ id: String, scope: Scope, now: Date) throws(ServerAPIError) -> (View, Transaction) {
        let view = try view(of: id, anyID: false, scope: scope, now: now)
        guard let transaction = view.transactions.first(where: { $0.transactionID == id }) else { throw .transactionIDNotFound }
        return (view, transaction)
    }

    func transactionInfo(_ id: String, scope: Scope, now: Date) throws(ServerAPIError) -> TransactionInfoResponse {
        let (view, transaction) = try transaction(id, scope: scope, now: now)
        return TransactionInfoResponse(signedTransactionInfo: try signed { () throws(ForgeError) in try view.rendering.signedTransaction(transaction) })
    }

    // MARK: - Get Transaction History v2

    /// The history's query parameters, each checked against Apple's values (sort first: a revision must match it).
    struct HistoryFilter {
        /// Apple's `sort` values (`TransactionHistoryRequest.Order`).
        enum Order: String {
            case ascending = "ASCENDING"
            case descending = "DESCENDING"
        }

        var revision: HistoryRevision?
        var ascending = true
        var startDate: Int64?
        var endDate: Int64?
        var productIDs: Set<String>?
        var productTypes: Set<ProductType>?
        var groups: Set<String>?
        var ownership: OwnershipType?
        var revoked: Bool?

        init(_ query: ServerAPIQuery) throws(ServerAPIError) {
            if let sort = query.value("sort") {
                guard let order = Order(rawValue: sort) else { throw .invalidSort }
                ascending = order == .ascending
            }
            if let token = query.value("revision") {
                guard let revision = HistoryRevision(token: token), revision.ascending == ascending else { throw .invalidRequestRevision }
                self.revision = revision
            }
            if let text = query.value("startDate") {
                guard let date = Int64(text), date >= 0 else { throw .invalidStartDate }
                startDate = date
            }
            if let text = query.value("endDate") {
                guard let date = Int64(text), date >= 0 else { throw .invalidEndDate }
                endDate = date
            }
            if let startDate, let endDate, startDate >= endDate { throw .startDateAfterEndDate }
            let products = query.values("productId")
            if !products.isEmpty {
                guard products.allSatisfy({ ServerAPIService.productIDLength.contains($0.utf8.count) }) else { throw .invalidProductID }
                productIDs = Set(products)
            }
            let types = query.values("productType")
            if !types.isEmpty {
                var known = Set<ProductType>()
                for type in types {
                    guard let productType = ProductType(historyFilterName: type) else { throw .invalidProductType }
                    known.insert(productType)
                }
                productTypes = known
            }
            let groups = query.values("subscriptionGroupIdentifier")
            if !groups.isEmpty {
                guard groups.allSatisfy({ !$0.isEmpty }) else { throw .invalidSubscriptionGroupIdentifier }
                self.groups = Set(groups)
            }
            if let text = query.value("inAppOwnershipType") {
                guard let ownership = OwnershipType(documented: text) else { throw .invalidInAppOwnershipType }
                self.ownership = ownership
            }
            if let text = query.value("revoked") {
                // Apple's Python client sends str(bool): "True" / "False".
                guard let revoked = ["true": true, "false": false][text.lowercased()] else { throw .invalidRevoked }
                self.revoked = revoked
            }
        }
    }

    func history(_ id: String, query: ServerAPIQuery, scope: Scope, now: Date) throws(ServerAPIError) -> HistoryResponse {
        let filter = try HistoryFilter(query)
        let view = try view(of: id, anyID: true, scope: scope, now: now)
        let rendering = view.rendering
        func milliseconds(_ date: Date) -> Int64 { ReceiptDate.milliseconds(date) ?? 0 }
        var records: [(key: HistoryRevision.Key, transaction: Transaction)] = []
        for t in view.transactions {
            let purchased = milliseconds(t.purchaseDate)
            if let start = filter.startDate, purchased < start { continue }
            if let end = filter.endDate, purchased >= end { continue }
            if let products = filter.productIDs, !products.contains(t.productID) { continue }
            if let types = filter.productTypes, !types.contains(t.type) { continue }
            if let groups = filter.groups, t.type != .autoRenewable || !groups.contains(rendering.groupIdentifier(t.productID)) { continue }
            if let ownership = filter.ownership, ownership != t.ownership { continue }
            if let revoked = filter.revoked, revoked != (t.cancellationDate != nil) { continue }
            let modified = max(purchased, t.cancellationDate.map(milliseconds) ?? purchased)
            let key = HistoryRevision.Key(modified: modified, transactionID: t.transactionID)
            if let revision = filter.revision, !revision.precedes(key) { continue }
            records.append((key, t))
        }
        records.sort { filter.ascending ? $0.key < $1.key : $1.key < $0.key }
        let page = records.prefix(Self.pageSize)
        var signedTransactions: [String] = []
        for record in page {
            signedTransactions.append(try signed { () throws(ForgeError) in try rendering.signedTransaction(record.transaction) })
        }
        let revision = HistoryRevision(ascending: filter.ascending, after: page.last?.key ?? filter.revision?.after)
        return HistoryResponse(
            revision: revision.token, hasMore: records.count > page.count, bundleId: rendering.store.bundleID, appAppleId: rendering.appAppleID,
            environment: rendering.environment, signedTransactions: signedTransactions)
    }

    // MARK: - Get Refund History v2

    /// The customer's refunded and revoked transactions, oldest revocation first, ≤ ``pageSize`` a page; `revision`
    /// the same durable cursor as the history's (by revocation date), so a later call sees only new refunds.
    func refunds(_ id: String, query: ServerAPIQuery, scope: Scope, now: Date) throws(ServerAPIError) -> RefundHistoryResponse {
        var cursor: HistoryRevision?
        if let token = query.value("revision") {
            guard let revision = HistoryRevision(token: token), revision.ascending else { throw .invalidRequestRevision }
            cursor = revision
        }
        let view = try view(of: id, anyID: true, scope: scope, now: now)
        var records: [(key: HistoryRevision.Key, transaction: Transaction)] = []
        for t in view.transactions {
            guard let revoked = t.cancellationDate, revoked <= now, let milliseconds = ReceiptDate.milliseconds(revoked) else { continue }
            let key = HistoryRevision.Key(modified: milliseconds, transactionID: t.transactionID)
            if let cursor, !cursor.precedes(key) { continue }
            records.append((key, t))
        }
        records.sort { $0.key < $1.key }
        let page = records.prefix(Self.pageSize)
        var signedTransactions: [String] = []
        for record in page {
            signedTransactions.append(try signed { () throws(ForgeError) in try view.rendering.signedTransaction(record.transaction) })
        }
        let revision = HistoryRevision(ascending: true, after: page.last?.key ?? cursor?.after)
        return RefundHistoryResponse(signedTransactions: signedTransactions, revision: revision.token, hasMore: records.count > page.count)
    }

    // MARK: - Get App Transaction Info

    func appTransactionInfo(_ id: String, scope: Scope, now: Date) throws(ServerAPIError) -> AppTransactionInfoResponse {
        let view = try view(of: id, anyID: true, scope: scope, now: now)
        return AppTransactionInfoResponse(signedAppTransactionInfo: try signed { () throws(ForgeError) in try view.rendering.signedAppTransaction() })
    }

    // MARK: - Send Consumption Information v2

    /// Apple's `deliveryStatus` values (v2's `DeliveryStatus`).
    enum DeliveryStatus: String {
        case delivered = "DELIVERED"
        case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
        case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// v1's coded fields: each an integer in Apple's range (`ConsumptionRequestV1`), else its error.
    static let consumptionV1Fields: [(name: String, range: ClosedRange<Int64>, error: ServerAPIError)] = [
        ("consumptionStatus", 0...3, .invalidConsumptionStatus), ("platform", 0...2, .invalidPlatform),
        ("deliveryStatus", 0...5, .invalidDeliveryStatus), ("accountTenure", 0...7, .invalidAccountTenure), ("playTime", 0...7, .invalidPlayTime),
        ("lifetimeDollarsRefunded", 0...7, .invalidLifetimeDollarsRefunded), ("lifetimeDollarsPurchased", 0...7, .invalidLifetimeDollarsPurchased),
        ("userStatus", 0...4, .invalidUserStatus),
    ]

    /// The members of Apple's `ConsumptionRequest` (v2) and `ConsumptionRequestV1`: all a report keeps of a body.
    static let consumptionV2Members = ["customerConsented", "sampleContentProvided", "deliveryStatus", "consumptionPercentage", "refundPreference"]
    static let consumptionV1Members = [
        "customerConsented", "consumptionStatus", "platform", "sampleContentProvided", "deliveryStatus", "appAccountToken", "accountTenure", "playTime",
        "lifetimeDollarsRefunded", "lifetimeDollarsPurchased", "userStatus", "refundPreference",
    ]
    /// The longest string a report keeps of a member forge does not check (Apple's are enumeration names).
    static let consumptionStringBytes = 64

    /// What a report keeps of a checked body: Apple's members only, each a boolean, a number or a string of at most
    /// ``consumptionStringBytes`` (cut past it, with its length); anything else a client adds is left out. So a
    /// report is a few hundred bytes whatever the body held.
    static func kept(consumption request: JSONValue, version2: Bool) -> JSONValue {
        var kept: JSONObject = []
        for name in version2 ? consumptionV2Members : consumptionV1Members {
            switch request[name] {
            case .bool(let flag)?: kept.append((name, .bool(flag)))
            case .integer(let number)?: kept.append((name, .integer(number)))
            case .number(let number)?: kept.append((name, .number(number)))
            case .string(let text)?: kept.append((name, .string(text.cut(atUTF8: consumptionStringBytes))))
            case .null?, .array?, .object?, nil: continue
            }
        }
        return .object(kept)
    }

    /// Checks the body — `customerConsented` true, `sampleContentProvided` a boolean; v2: `deliveryStatus` one of
    /// Apple's names; v1: every coded field in its range and `appAccountToken` a UUID or empty — and the
    /// transaction; what is kept of it (``kept(consumption:version2:)``) is what the state and the request log record.
    /// Accepted: 202, no body. The rules Apple documents without a code in its clients (v2's refund preference and
    /// consumption percentage) are not checked.
    func consumption(_ id: String, version2: Bool, body: [UInt8], scope: Scope, now: Date) throws(ServerAPIError) -> JSONValue {
        guard let request = try? JSONValue(parsing: body), request.objectValue != nil else { throw .generalBadRequest }
        guard request["customerConsented"] == .bool(true) else { throw .invalidCustomerConsented }
        guard case .bool? = request["sampleContentProvided"] else { throw .invalidSampleContentProvided }
        if version2 {
            guard request["deliveryStatus"]?.stringValue.flatMap(DeliveryStatus.init(rawValue:)) != nil else { throw .invalidDeliveryStatus }
        } else {
            for field in Self.consumptionV1Fields {
                guard let value = request[field.name]?.integerValue, field.range.contains(value) else { throw field.error }
            }
            guard let token = request["appAccountToken"]?.stringValue, token.isEmpty || UUID(uuidString: token) != nil else { throw .invalidAppAccountToken }
        }
        _ = try transaction(id, scope: scope, now: now)
        return Self.kept(consumption: request, version2: version2)
    }

    // MARK: - Get All Subscription Statuses

    func statuses(_ id: String, query: ServerAPIQuery, scope: Scope, now: Date) throws(ServerAPIError) -> StatusResponse {
        var wanted: Set<SubscriptionStatus>?
        for text in query.values("status") {
            guard let status = Int64(text).flatMap(SubscriptionStatus.init(rawValue:)) else { throw .invalidStatus }
            wanted = (wanted ?? []).union([status])
        }
        let view = try view(of: id, anyID: true, scope: scope, now: now)
        let rendering = view.rendering
        var groups: [String: [LastTransactionsItem]] = [:]
        for (original, t) in SubscriptionHistory.latestOfEachSubscription(view.transactions).sorted(by: { $0.key < $1.key }) {
            let status = rendering.subscriptionStatus(t)
            if let wanted, !wanted.contains(status) { continue }
            let item = LastTransactionsItem(
                status: status, originalTransactionId: original,
                signedTransactionInfo: try signed { () throws(ForgeError) in try rendering.signedTransaction(t) },
                signedRenewalInfo: try signed { () throws(ForgeError) in try rendering.signedRenewal(of: t) })
            groups[rendering.groupIdentifier(t.productID), default: []].append(item)
        }
        return StatusResponse(
            bundleId: rendering.store.bundleID, appAppleId: rendering.appAppleID, environment: rendering.environment,
            data: groups.sorted { $0.key < $1.key }.map { SubscriptionGroupIdentifierItem(subscriptionGroupIdentifier: $0.key, lastTransactions: $0.value) })
    }
}
