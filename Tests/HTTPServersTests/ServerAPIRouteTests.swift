import Foundation
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport

/// Issue 22: the App Store Server API of `forge serve` in process, through the same application builder as
/// forge-http. The socket and Apple's Python client are in `Tests/ForgeCLITests/ServerAPITests.swift`.
@Suite("The App Store Server API in process (app.test(.router))", .timeLimit(.minutes(2)))
struct ServerAPIRouteTests {
    /// The customers of `examples/server-api/` (`forge serve --scenario` takes the same files): a sandbox one with 24
    /// monthly periods and a non-consumable by `now`, later two renewals and a refund; a production one of another app.
    static let examples = Repository.file("examples/server-api")
    static var sandboxScenario: String { (try? String(contentsOf: examples.appendingPathComponent("sandbox-customer.json"), encoding: .utf8)) ?? "" }
    static var productionScenario: String { (try? String(contentsOf: examples.appendingPathComponent("production-customer.json"), encoding: .utf8)) ?? "" }
    static let clock = "2025-01-01T00:00:00Z"
    static let later = "2025-03-01T00:00:00Z"

    static func scenarios() throws -> [Scenario] {
        try [sandboxScenario, productionScenario].map { try Scenario.decode(json: Data($0.utf8)) }
    }

    static func application(noAuth: Bool = true, log: RequestLog? = nil, rateLimits: ServerAPIRateLimits? = nil) throws -> ForgeApplication {
        let service = try ServerAPIService(
            scenarios: try scenarios(), forge: try Forge.bundled(),
            configuration: .init(now: ReceiptDate.parse(clock), access: noAuth ? .open : .closed, rateLimits: rateLimits))
        return try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), serverAPI: service,
            faults: try FaultPlan(), log: try log ?? RequestLog(file: nil, capacity: 100))
    }

    /// `X-Forge-Now: date`: the server clock for one request.
    static func clockHeader(_ date: String) throws -> HTTPFields {
        var fields = HTTPFields()
        fields[try #require(HTTPFields.Element.Name("X-Forge-Now"))] = date
        return fields
    }

    static func object(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8))) as? [String: Any] ?? [:]
    }

    static func payload(_ compact: Any?) -> [String: Any] {
        guard let text = compact as? String else { return [:] }
        let parts = text.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    static func transactions(_ response: TestResponse) -> [[String: Any]] {
        (object(response)["signedTransactions"] as? [Any] ?? []).map(payload)
    }

    /// The ids of the sandbox customer at `clock`, by product, in purchase order.
    static func sandboxIDs() throws -> [String: [String]] {
        let scenario = try Scenario.decode(json: Data(sandboxScenario.utf8))
        let at = try #require(ReceiptDate.parse(clock))
        let store = try Forge.bundled().rendering(scenario, madeAt: at, now: at).store
        return Dictionary(grouping: store.transactions.sorted { $0.purchaseDate < $1.purchaseDate }, by: \.productID).mapValues { $0.map(\.transactionID) }
    }

    /// An error answer exactly as Apple's: the family's status, `application/json` and nothing else, both members.
    static func expectError(_ response: TestResponse, _ error: ServerAPIError, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status.code == error.httpStatus, sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/json", sourceLocation: sourceLocation)
        #expect(String(buffer: response.body) == #"{"errorCode":\#(error.code),"errorMessage":"\#(error.message)"}"#, sourceLocation: sourceLocation)
    }

    @Test("Without --no-auth every /inApps route answers 401 with an empty body; verifyReceipt is unchanged")
    func closedWithoutNoAuth() async throws {
        let ids = try Self.sandboxIDs()
        try await Self.application(noAuth: false).test(.router) { client in
            for uri in ["/sandbox/inApps/v1/transactions/\(ids["lifetime"]?.first ?? "")", "/inApps/v2/history/1", "/sandbox/inApps/v1/subscriptions/1"] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .unauthorized && response.body.readableBytes == 0 && response.headers[.contentType] == nil, "\(uri)")
            }
            #expect(try await client.execute(uri: "/verifyReceipt", method: .get).status == .ok)
        }
    }

    @Test(
        "Get Transaction Info: the signed transaction of the id, in its own environment only (by path prefix, or by Apple's host name in Host); 4000006, 4040010; paths are case-sensitive"
    )
    func transactionInfo() async throws {
        let ids = try Self.sandboxIDs()
        let id = try #require(ids["pro.monthly"]?[3])
        let log = try RequestLog(file: nil, capacity: 100)
        try await Self.application(log: log).test(.router) { client in
            let found = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get)
            #expect(found.status == .ok && found.headers[.contentType] == "application/json")
            let payload = Self.payload(Self.object(found)["signedTransactionInfo"])
            #expect(payload["transactionId"] as? String == id && payload["environment"] as? String == "Sandbox")
            #expect(payload["bundleId"] as? String == "com.example.api" && payload["productId"] as? String == "pro.monthly")
            Self.expectError(try await client.execute(uri: "/inApps/v1/transactions/\(id)", method: .get), .transactionIDNotFound)
            Self.expectError(try await client.execute(uri: "/sandbox/inApps/v1/transactions/123456789", method: .get), .transactionIDNotFound)
            Self.expectError(try await client.execute(uri: "/sandbox/inApps/v1/transactions/12ab", method: .get), .invalidTransactionID)
            Self.expectError(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)x", method: .get), .invalidTransactionID)
            #expect(try await client.execute(uri: "/sandbox/inapps/v1/transactions/\(id)", method: .get).status == .notFound)
            // Apple's host names in Host: the sandbox's serves the sandbox at the root, production's production.
            for (host, status) in [
                ("api.storekit-sandbox.apple.com", HTTPResponse.Status.ok), ("API.storekit-sandbox.apple.com:443", .ok), ("api.storekit.apple.com", .notFound),
            ] {
                // In process the Host field stands for the authority HTTP/1.1's Host header becomes on a socket.
                var fields = HTTPFields()
                fields[try #require(HTTPFields.Element.Name("Host"))] = host
                let byHost = try await client.execute(uri: "/inApps/v1/transactions/\(id)", method: .get, headers: fields)
                #expect(byHost.status == status, "\(host)")
            }
            #expect(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .post).status == .methodNotAllowed)
        }
        let lines = log.jsonLines.split(separator: "\n").compactMap { try? JSONValue(parsing: Array($0.utf8)) }
        #expect(lines.first?["endpoint"]?.stringValue == "transactionInfo" && lines.first?["httpStatus"]?.integerValue == 200)
        #expect(lines.first?["errorCode"] == .null && lines.first?["environment"]?.stringValue == "sandbox")
        #expect(lines.dropFirst().first?["errorCode"]?.integerValue == 4_040_010)
    }

    @Test(
        "--rate-limits apple: the sandbox's 5 transaction-info requests a second pass, the sixth is 429, 4290000 with Retry-After the next second in UNIX ms; a new second admits again; endpoints count apart; production allows 50"
    )
    func rateLimits() async throws {
        let id = try #require(try Self.sandboxIDs()["pro.monthly"]?[3])
        let log = try RequestLog(file: nil, capacity: 200)
        // The limiter counts on its own clock, never X-Forge-Now (ServerClockOrderTests): here one the test moves.
        let clock = ManualClock("2025-01-01T00:00:07Z")
        try await Self.application(log: log, rateLimits: clock.limits).test(.router) { client in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<6 { statuses.append(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get).status) }
            #expect(statuses == Array(repeating: .ok, count: 5) + [.tooManyRequests])
            let refused = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get)
            Self.expectError(refused, .rateLimitExceeded)
            #expect(refused.headers[try #require(HTTPFields.Element.Name("Retry-After"))] == "1735689608000", "the next second, in ms")
            // Another endpoint has its own count; the next second admits again.
            #expect(try await client.execute(uri: "/sandbox/inApps/v2/history/\(id)", method: .get).status == .ok)
            clock.advance(seconds: 1)
            #expect(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)", method: .get).status == .ok)
            // Production: 50 a second (an unknown id still counts: Apple limits requests, not answers).
            var production: [HTTPResponse.Status] = []
            for _ in 0..<51 { production.append(try await client.execute(uri: "/inApps/v1/transactions/123456789", method: .get).status) }
            #expect(production.filter { $0 == .notFound }.count == 50 && production.last == .tooManyRequests)
        }
        let entries = log.jsonLines.split(separator: "\n").filter { $0.contains("\"retryAfter\"") }
        #expect(entries.count == 3, "each refusal is logged with its Retry-After")
    }

    @Test("History v2: 20 a page, hasMore, the customer found by any of its ids; an ascending revision is a durable cursor once the timeline moves")
    func historyPagingAndRevision() async throws {
        let ids = try Self.sandboxIDs()
        let monthly = try #require(ids["pro.monthly"])
        #expect(monthly.count == 24)
        try await Self.application().test(.router) { client in
            let first = try await client.execute(uri: "/sandbox/inApps/v2/history/\(monthly[5])", method: .get)
            #expect(first.status == .ok)
            let page1 = Self.object(first)
            #expect(Self.transactions(first).count == 20 && page1["hasMore"] as? Bool == true)
            #expect(page1["bundleId"] as? String == "com.example.api" && page1["environment"] as? String == "Sandbox")
            let revision1 = try #require(page1["revision"] as? String)
            let second = try await client.execute(uri: "/sandbox/inApps/v2/history/\(monthly[0])?revision=\(revision1)", method: .get)
            let page2 = Self.object(second)
            #expect(Self.transactions(second).count == 5 && page2["hasMore"] as? Bool == false)
            let seen = (Self.transactions(first) + Self.transactions(second)).compactMap { $0["transactionId"] as? String }
            #expect(Set(seen) == Set(monthly + (ids["lifetime"] ?? [])) && seen.count == 25)
            let purchases = Self.transactions(first).compactMap { $0["purchaseDate"] as? Int }
            #expect(purchases == purchases.sorted())
            // The durable cursor: later, only the two renewals and the refunded purchase (modified then).
            let revision2 = try #require(page2["revision"] as? String)
            let headers = try Self.clockHeader(Self.later)
            let moved = try await client.execute(uri: "/sandbox/inApps/v2/history/\(monthly[0])?revision=\(revision2)", method: .get, headers: headers)
            let added = Self.transactions(moved)
            #expect(added.count == 3 && Self.object(moved)["hasMore"] as? Bool == false)
            #expect(added.last?["transactionId"] as? String == ids["lifetime"]?.first && added.last?["revocationDate"] != nil)
            // The same cursor at the same clock: nothing new.
            #expect(Self.transactions(try await client.execute(uri: "/sandbox/inApps/v2/history/\(monthly[0])?revision=\(revision2)", method: .get)).isEmpty)
        }
    }

    @Test("History v2 filters: productId, productType, DESCENDING, startDate/endDate, revoked, inAppOwnershipType, subscriptionGroupIdentifier")
    func historyFilters() async throws {
        let ids = try Self.sandboxIDs()
        let monthly = try #require(ids["pro.monthly"])
        let base = "/sandbox/inApps/v2/history/\(monthly[0])"
        try await Self.application().test(.router) { client in
            func count(_ query: String, headers: HTTPFields = [:]) async throws -> Int {
                Self.transactions(try await client.execute(uri: base + "?" + query, method: .get, headers: headers)).count
            }
            #expect(try await count("productId=lifetime") == 1)
            #expect(try await count("productId=lifetime&productId=pro.monthly&sort=DESCENDING") == 20)
            #expect(try await count("productType=NON_CONSUMABLE") == 1)
            #expect(try await count("productType=AUTO_RENEWABLE&productType=CONSUMABLE") == 20)
            // 2024-01-01 ≤ purchaseDate < 2024-07-01: six monthly periods and the lifetime purchase.
            #expect(try await count("startDate=1704067200000&endDate=1719792000000") == 7)
            #expect(try await count("inAppOwnershipType=FAMILY_SHARED") == 0)
            #expect(try await count("revoked=true") == 0)
            let later = try Self.clockHeader(Self.later)
            #expect(try await count("revoked=True", headers: later) == 1)
            let descending = Self.transactions(try await client.execute(uri: base + "?sort=DESCENDING", method: .get))
            #expect(descending.first?["transactionId"] as? String == monthly.last)
            let group = try #require(descending.first?["subscriptionGroupIdentifier"] as? String)
            #expect(try await count("subscriptionGroupIdentifier=\(group)&productId=pro.monthly&startDate=1704067200000") == 12)
        }
    }

    @Test("History v2 errors: 4000005 revision, 4000006 id, 4000013/15/16 dates, 4000021 sort, 4000022 type, 4000023 product, 4000024 group, 4000026 ownership, 4000030 revoked")
    func historyErrors() async throws {
        let id = try #require(try Self.sandboxIDs()["lifetime"]?.first)
        let base = "/sandbox/inApps/v2/history/\(id)"
        try await Self.application().test(.router) { client in
            let ascending = try #require(Self.object(try await client.execute(uri: base, method: .get))["revision"] as? String)
            for (query, error) in [
                ("revision=garbage", ServerAPIError.invalidRequestRevision), ("revision=\(ascending)&sort=DESCENDING", .invalidRequestRevision),
                ("startDate=yesterday", .invalidStartDate), ("endDate=-5", .invalidEndDate), ("startDate=2000&endDate=1000", .startDateAfterEndDate),
                ("startDate=1000&endDate=1000", .startDateAfterEndDate), ("sort=UP", .invalidSort), ("productType=SUBSCRIPTION", .invalidProductType),
                ("productId=", .invalidProductID), ("subscriptionGroupIdentifier=", .invalidSubscriptionGroupIdentifier),
                ("inAppOwnershipType=GIFTED", .invalidInAppOwnershipType), ("revoked=maybe", .invalidRevoked),
            ] {
                Self.expectError(try await client.execute(uri: base + "?" + query, method: .get), error)
            }
            Self.expectError(try await client.execute(uri: "/sandbox/inApps/v2/history/not-an-id", method: .get), .invalidTransactionID)
            Self.expectError(try await client.execute(uri: "/sandbox/inApps/v2/history/42", method: .get), .transactionIDNotFound)
        }
    }

    @Test("All Subscription Statuses: one group, the latest transaction and renewal info of each subscription, status= filter, 4000031")
    func subscriptionStatuses() async throws {
        let ids = try Self.sandboxIDs()
        let lifetime = try #require(ids["lifetime"]?.first)
        try await Self.application().test(.router) { client in
            let answer = try await client.execute(uri: "/sandbox/inApps/v1/subscriptions/\(lifetime)", method: .get)
            let body = Self.object(answer)
            #expect(answer.status == .ok && body["environment"] as? String == "Sandbox" && body["bundleId"] as? String == "com.example.api")
            let groups = body["data"] as? [[String: Any]] ?? []
            let last = (groups.first?["lastTransactions"] as? [[String: Any]])?.first ?? [:]
            #expect(groups.count == 1 && last["status"] as? Int == 1 && last["originalTransactionId"] as? String == ids["pro.monthly"]?.first)
            let transaction = Self.payload(last["signedTransactionInfo"])
            #expect(transaction["transactionId"] as? String == ids["pro.monthly"]?.last)
            #expect(transaction["subscriptionGroupIdentifier"] as? String == groups.first?["subscriptionGroupIdentifier"] as? String)
            #expect(Self.payload(last["signedRenewalInfo"])["originalTransactionId"] as? String == ids["pro.monthly"]?.first)
            let expiredOnly = Self.object(try await client.execute(uri: "/sandbox/inApps/v1/subscriptions/\(lifetime)?status=2&status=5", method: .get))
            #expect((expiredOnly["data"] as? [Any])?.isEmpty == true)
            Self.expectError(try await client.execute(uri: "/sandbox/inApps/v1/subscriptions/\(lifetime)?status=9", method: .get), .invalidStatus)
            Self.expectError(try await client.execute(uri: "/inApps/v1/subscriptions/\(lifetime)", method: .get), .transactionIDNotFound)
        }
    }

    @Test("Refund History v2: empty until the refund, then the refunded transaction; its revision is a durable cursor; 4000005, 4040010")
    func refundHistory() async throws {
        let ids = try Self.sandboxIDs()
        let lifetime = try #require(ids["lifetime"]?.first)
        let base = "/sandbox/inApps/v2/refund/lookup/\(try #require(ids["pro.monthly"]?.first))"
        try await Self.application().test(.router) { client in
            let before = try await client.execute(uri: base, method: .get)
            #expect(before.status == .ok && Self.transactions(before).isEmpty && Self.object(before)["hasMore"] as? Bool == false)
            let revision = try #require(Self.object(before)["revision"] as? String)
            let after = try await client.execute(uri: base + "?revision=" + revision, method: .get, headers: try Self.clockHeader(Self.later))
            let refunded = Self.transactions(after)
            #expect(refunded.count == 1 && refunded.first?["transactionId"] as? String == lifetime && refunded.first?["revocationReason"] != nil)
            let seen = try #require(Self.object(after)["revision"] as? String)
            #expect(Self.transactions(try await client.execute(uri: base + "?revision=" + seen, method: .get, headers: try Self.clockHeader(Self.later))).isEmpty)
            Self.expectError(try await client.execute(uri: base + "?revision=%%%", method: .get), .invalidRequestRevision)
            Self.expectError(try await client.execute(uri: "/inApps/v2/refund/lookup/\(lifetime)", method: .get), .transactionIDNotFound)
        }
    }

    @Test("Get App Transaction Info: the customer's signed AppTransaction, found by any of its ids (the appTransactionId too)")
    func appTransactionInfo() async throws {
        let ids = try Self.sandboxIDs()
        let lifetime = try #require(ids["lifetime"]?.first)
        try await Self.application().test(.router) { client in
            let answer = try await client.execute(uri: "/sandbox/inApps/v1/transactions/appTransactions/\(lifetime)", method: .get)
            let app = Self.payload(Self.object(answer)["signedAppTransactionInfo"])
            #expect(answer.status == .ok && app["bundleId"] as? String == "com.example.api" && app["receiptType"] as? String == "Sandbox")
            let appTransactionID = try #require(app["appTransactionId"] as? String)
            let byApp = try await client.execute(uri: "/sandbox/inApps/v1/transactions/appTransactions/\(appTransactionID)", method: .get)
            #expect(Self.payload(Self.object(byApp)["signedAppTransactionInfo"])["appTransactionId"] as? String == appTransactionID)
            let info = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(lifetime)", method: .get)
            #expect(Self.payload(Self.object(info)["signedTransactionInfo"])["appTransactionId"] as? String == appTransactionID)
            Self.expectError(try await client.execute(uri: "/sandbox/inApps/v1/transactions/appTransactions/x1", method: .get), .invalidTransactionID)
            Self.expectError(try await client.execute(uri: "/inApps/v1/transactions/appTransactions/\(lifetime)", method: .get), .transactionIDNotFound)
        }
    }

    @Test("Send Consumption Information v2: 202 with no body, the body recorded in the request log; 4000000, 4000035, 4000041, 4000036, 4040010")
    func consumption() async throws {
        let id = try #require(try Self.sandboxIDs()["lifetime"]?.first)
        let uri = "/sandbox/inApps/v2/transactions/consumption/\(id)"
        let log = try RequestLog(file: nil, capacity: 100)
        let valid = #"{"customerConsented":true,"sampleContentProvided":false,"deliveryStatus":"DELIVERED","refundPreference":"DECLINE"}"#
        try await Self.application(log: log).test(.router) { client in
            let accepted = try await client.execute(uri: uri, method: .put, body: ByteBuffer(string: valid))
            #expect(accepted.status == .accepted && accepted.body.readableBytes == 0)
            for (body, error) in [
                ("not json", ServerAPIError.generalBadRequest),
                (#"{"customerConsented":false,"sampleContentProvided":false,"deliveryStatus":"DELIVERED"}"#, .invalidCustomerConsented),
                (#"{"customerConsented":true,"deliveryStatus":"DELIVERED"}"#, .invalidSampleContentProvided),
                (#"{"customerConsented":true,"sampleContentProvided":true,"deliveryStatus":"LOST"}"#, .invalidDeliveryStatus),
            ] {
                Self.expectError(try await client.execute(uri: uri, method: .put, body: ByteBuffer(string: body)), error)
            }
            Self.expectError(
                try await client.execute(uri: "/sandbox/inApps/v2/transactions/consumption/42", method: .put, body: ByteBuffer(string: valid)),
                .transactionIDNotFound)
            #expect(try await client.execute(uri: uri, method: .get).status == .methodNotAllowed)
        }
        let first = log.jsonLines.split(separator: "\n").first.flatMap { try? JSONValue(parsing: Array($0.utf8)) }
        #expect(first?["endpoint"]?.stringValue == "consumptionV2" && first?["httpStatus"]?.integerValue == 202)
        #expect(first?["consumption"]?["deliveryStatus"]?.stringValue == "DELIVERED")
    }

    /// A v1 consumption body with every coded field in range, with `changes` applied.
    static func consumptionV1Body(_ changes: [String: Any]) throws -> ByteBuffer {
        let valid: [String: Any] = [
            "customerConsented": true, "consumptionStatus": 1, "platform": 1, "sampleContentProvided": false, "deliveryStatus": 0,
            "appAccountToken": "", "accountTenure": 3, "playTime": 2, "lifetimeDollarsRefunded": 0, "lifetimeDollarsPurchased": 4, "userStatus": 1,
        ]
        return ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: valid.merging(changes) { $1 }))
    }

    @Test("Send Consumption Information v1: 202 for a body with every coded field in range; each field's own error (4000032-42), 4000033 for a token not a UUID")
    func consumptionV1() async throws {
        let id = try #require(try Self.sandboxIDs()["lifetime"]?.first)
        let uri = "/sandbox/inApps/v1/transactions/consumption/\(id)"
        try await Self.application().test(.router) { client in
            #expect(try await client.execute(uri: uri, method: .put, body: try Self.consumptionV1Body([:])).status == .accepted)
            #expect(try await client.execute(uri: uri, method: .put, body: try Self.consumptionV1Body(["appAccountToken": UUID().uuidString])).status == .accepted)
            for (field, value, error) in [
                ("consumptionStatus", 4, ServerAPIError.invalidConsumptionStatus), ("platform", 3, .invalidPlatform), ("deliveryStatus", 6, .invalidDeliveryStatus),
                ("accountTenure", 8, .invalidAccountTenure), ("playTime", -1, .invalidPlayTime), ("lifetimeDollarsRefunded", 8, .invalidLifetimeDollarsRefunded),
                ("lifetimeDollarsPurchased", 8, .invalidLifetimeDollarsPurchased), ("userStatus", 5, .invalidUserStatus),
            ] as [(String, Int, ServerAPIError)] {
                Self.expectError(try await client.execute(uri: uri, method: .put, body: try Self.consumptionV1Body([field: value])), error)
            }
            Self.expectError(try await client.execute(uri: uri, method: .put, body: try Self.consumptionV1Body(["appAccountToken": "not-a-uuid"])), .invalidAppAccountToken)
            Self.expectError(try await client.execute(uri: uri, method: .put, body: try Self.consumptionV1Body(["customerConsented": false])), .invalidCustomerConsented)
        }
    }

    @Test("Finish Transaction: 200 with no body for a transaction of the environment, logged; 4000006, 4040010; POST only")
    func finishTransaction() async throws {
        let id = try #require(try Self.sandboxIDs()["pro.monthly"]?.last)
        let log = try RequestLog(file: nil, capacity: 100)
        try await Self.application(log: log).test(.router) { client in
            let finished = try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)/finish", method: .post)
            #expect(finished.status == .ok && finished.body.readableBytes == 0)
            Self.expectError(try await client.execute(uri: "/inApps/v1/transactions/\(id)/finish", method: .post), .transactionIDNotFound)
            Self.expectError(try await client.execute(uri: "/sandbox/inApps/v1/transactions/1a/finish", method: .post), .invalidTransactionID)
            #expect(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(id)/finish", method: .get).status == .methodNotAllowed)
        }
        let first = log.jsonLines.split(separator: "\n").first.flatMap { try? JSONValue(parsing: Array($0.utf8)) }
        #expect(first?["endpoint"]?.stringValue == "finishTransaction" && first?["transactionId"]?.stringValue == id)
    }

    @Test("ServerAPIError: every code's status is its family's")
    func errorStatusIsTheFamilys() {
        let family: [Int64: Int] = [400: 400, 403: 403, 404: 404, 409: 409, 429: 429, 500: 500]
        for error in ServerAPIError.allCases { #expect(error.httpStatus == family[error.code / 10_000], "\(error)") }
    }

    @Test("ServerAPIError: every code is one of Apple's APIError values (the Python client's enum)", .requires(.appleLibrary))
    func errorVocabularyIsApples() async throws {
        let listed = try await run(
            try Oracle.appleLibrary.required(), ["-c", "from appstoreserverlibrary.api_client import APIError; print(' '.join(str(e.value) for e in APIError))"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let apple = Set(listed.text.split(whereSeparator: \.isWhitespace).compactMap { Int64($0) })
        #expect(apple.count > 80)
        for error in ServerAPIError.allCases { #expect(apple.contains(error.code), "\(error.code) is not one of Apple's APIError values") }
    }
}

/// Issue 22, item 4: Get Notification History derived from the store at the request's clock.
@Suite("Get Notification History in process", .timeLimit(.minutes(2)))
struct NotificationHistoryRouteTests {
    static func kinds(at clock: String, from start: String) async throws -> [String] {
        let startDate = try #require(ReceiptDate.parse(start)), end = try #require(ReceiptDate.parse(clock))
        let body = #"{"startDate":\#(ReceiptDate.milliseconds(startDate) ?? 0),"endDate":\#((ReceiptDate.milliseconds(end) ?? 0) + 1)}"#
        return try await ServerAPIRouteTests.application().test(.router) { client in
            let response = try await client.execute(
                uri: "/sandbox/inApps/v1/notifications/history", method: .post, headers: try ServerAPIRouteTests.clockHeader(clock),
                body: ByteBuffer(string: body))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let items = ServerAPIRouteTests.object(response)["notificationHistory"] as? [[String: Any]] ?? []
            #expect(items.allSatisfy { $0["sendAttempts"] as? [Any] != nil })
            return items.map { item in
                let payload = ServerAPIRouteTests.payload(item["signedPayload"])
                return "\(payload["notificationType"] ?? "")/\(payload["subtype"] ?? "-")"
            }
        }
    }

    @Test("The first purchase of a subscription is SUBSCRIBED/INITIAL_BUY, a non-consumable ONE_TIME_CHARGE, a renewal DID_RENEW, each at its own instant")
    func derivedFromTheStore() async throws {
        #expect(try await Self.kinds(at: "2023-02-01T00:00:00Z", from: "2023-01-05T00:00:00Z") == ["SUBSCRIBED/INITIAL_BUY"])
        #expect(try await Self.kinds(at: "2024-06-10T00:00:00Z", from: "2024-05-12T00:00:00Z") == ["DID_RENEW/-", "ONE_TIME_CHARGE/-"])
    }

    @Test("Errors are Apple's, exactly: a body that is not JSON 4000000, no startDate 4000015, no endDate 4000016")
    func bodyErrors() async throws {
        try await ServerAPIRouteTests.application().test(.router) { client in
            for (body, error) in [("nope", ServerAPIError.generalBadRequest), (#"{"endDate":1}"#, .invalidStartDate), (#"{"startDate":1}"#, .invalidEndDate)] {
                let response = try await client.execute(uri: "/sandbox/inApps/v1/notifications/history", method: .post, body: ByteBuffer(string: body))
                ServerAPIRouteTests.expectError(response, error)
            }
        }
    }
}

/// Issue 22's benchmark note: a read at a pinned clock is answered from the cache, and any change of the state misses it.
@Suite("Server API answers kept by state version", .timeLimit(.minutes(2)))
struct ResponseCacheRouteTests {
    @Test("A second GET at the same clock is the same bytes from the cache (logged as cached); an extension changes the state and the next GET renders again")
    func cachedUntilTheStateChanges() async throws {
        let log = try RequestLog(file: nil, capacity: 100)
        let scenario = try Scenario.decode(json: Data(ServerAPIRouteTests.sandboxScenario.utf8))
        let at = try #require(ReceiptDate.parse(ServerAPIRouteTests.clock))
        let store = try Forge.bundled().rendering(scenario, madeAt: at, now: at).store
        let latest = try #require(store.transactions.filter { $0.productID == "pro.monthly" }.max { $0.purchaseDate < $1.purchaseDate })
        try await ServerAPIRouteTests.application(log: log).test(.router) { client in
            let uri = "/sandbox/inApps/v1/transactions/\(latest.transactionID)"
            let first = try await client.execute(uri: uri, method: .get)
            let second = try await client.execute(uri: uri, method: .get)
            #expect(first.status == .ok && String(buffer: first.body) == String(buffer: second.body))
            let extended = try await client.execute(
                uri: "/sandbox/inApps/v1/subscriptions/extend/\(latest.originalTransactionID)", method: .put,
                body: ByteBuffer(string: #"{"extendByDays":3,"extendReasonCode":0,"requestIdentifier":"cache"}"#))
            #expect(extended.status == .ok, "\(String(buffer: extended.body))")
            let third = try await client.execute(uri: uri, method: .get)
            let expires = ServerAPIRouteTests.payload(ServerAPIRouteTests.object(third)["signedTransactionInfo"])["expiresDate"] as? Int64
            #expect(expires == latest.expiresDate.flatMap(ReceiptDate.milliseconds).map { $0 + 3 * 86_400_000 })
        }
        let lines = log.jsonLines.split(separator: "\n").map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
        #expect(lines.map { $0["cached"] as? Bool ?? false } == [false, true, false, false], "\(log.jsonLines)")
    }
}
