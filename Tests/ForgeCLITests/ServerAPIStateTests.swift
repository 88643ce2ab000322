import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport

/// Issue 22, items 1, 3, 4 and 5: the endpoints that change or announce the store — Extend a Subscription Renewal
/// Date (one and mass, with status), Set App Account Token, Look Up Order ID, Request a Test Notification and its
/// status, Get Notification History, history v1 — as Apple's Python client meets them over a real socket, every signed
/// field verified by `SignedDataVerifier`. What each answers, the clock walking the timeline and the state replayed
/// are proven in process (`ServerAPIStateRouteTests`).
@Suite("forge serve: Server API state, extensions, tokens, notifications, by Apple's client", .timeLimit(.minutes(2)))
struct ServerAPIStateTests {
    /// 2025-01-01T00:00:00Z, the clock the server starts at; the sandbox customer's monthly period then runs to 2025-01-15.
    static let start: Int64 = 1_735_689_600_000
    static let day: Int64 = 86_400_000
    static let january15: Int64 = 1_736_899_200_000

    struct IDs {
        let original: String
        let latest: String
        let lifetime: String
        let productionOrder: String
        let productionTransaction: String
        /// Apple's verifier needs it in Production.
        let productionApp: Int
    }

    /// The example customers' ids as `forge jws make` names them (the order id on its stderr).
    static func ids() async throws -> IDs {
        func made(_ spec: String, about: String? = nil) async throws -> (payload: [String: Any], order: String?) {
            let result = try await forge(arguments: ["jws", "make", "transaction", "--spec", spec] + (about.map { ["--about", $0] } ?? []))
            #expect(result.status == 0, "\(result.stderr)")
            let order = result.stderr.split(separator: "\n").first { $0.hasPrefix("forge: order id: ") }.map { String($0.dropFirst("forge: order id: ".count)) }
            return (ServerAPITests.payload(result.text.trimmingCharacters(in: .whitespacesAndNewlines)), order)
        }
        let monthly = try await made(ServerAPITests.sandbox).payload
        let lifetime = try await made(ServerAPITests.sandbox, about: "lifetime").payload
        let production = try await made(ServerAPITests.production)
        let appAppleID = try #require(try await ServerAPITests.made(ServerAPITests.production, kind: "app-transaction").payload["appAppleId"] as? Int)
        return IDs(
            original: try #require(monthly["originalTransactionId"] as? String), latest: try #require(monthly["transactionId"] as? String),
            lifetime: try #require(lifetime["transactionId"] as? String), productionOrder: try #require(production.order),
            productionTransaction: try #require(production.payload["transactionId"] as? String), productionApp: appAppleID)
    }

    static func drive(
        _ server: BackgroundServer, _ calls: [[String: Any]], bundle: String = "com.example.api", environment: String = "sandbox", app: Int? = nil,
        asynchronous: Bool = false
    ) async throws -> [[String: Any]] {
        try await ServerAPITests.drive(
            server.url, calls, bundle: bundle, ["--environment", environment] + (app.map { ["--app-apple-id", String($0)] } ?? []) + (asynchronous ? ["--async"] : []))
    }

    static func apiError(_ result: [String: Any]) -> Int? { result["apiError"] as? Int }

    @Test(
        "Apple's Python client (sync, and httpx for the token) meets the endpoints that change the store: test notifications and their history (4040007 without a webhook, 4040008, 4000012/13/18/19/20), Set App Account Token (4000183/87, 4040010), Extend a Subscription Renewal Date and its RENEWAL_EXTENDED (4000008/9/10/11, 4030004/5, 4040005), Look Up Order ID, mass extension and its status, history v1 (4000027/28, 4040009); every signed field verified",
        .requires(.appleLibrary))
    func appleClientChangesTheStore() async throws {
        let ids = try await Self.ids()
        // A sandbox webhook that refuses every connection: the TEST is still sent (and fails), as Apple's would.
        let server = try await ServerAPITests.start(["--no-auth", "--notify-sandbox", "http://127.0.0.1:9/apple"])
        defer { server.kill() }

        // Notifications first, while the history holds only what the store derived.
        let production = try await Self.drive(server, [["call": "requestTest"]], bundle: "com.example.prod", environment: "production", app: ids.productionApp)
        #expect(production.map(Self.apiError) == [4_040_007], "production has no webhook: \(production)")
        let window: [String: Any] = ["call": "notificationHistory", "startDate": Self.start - 29 * Self.day, "endDate": Self.start + Self.day]
        let asked = try await Self.drive(
            server, [["call": "requestTest"], window, ["call": "testStatus", "token": "00000000-0000-0000-0000-000000000000"], ["call": "testStatus", "token": "nope"]])
        let token = try #require(asked[0]["testNotificationToken"] as? String, "\(asked)")
        let kinds = (asked[1]["notifications"] as? [[String: Any]] ?? []).map { "\($0["notificationType"] ?? "")/\($0["subtype"] ?? "-")" }
        #expect(kinds == ["DID_RENEW/-", "TEST/-"], "\(asked[1])")
        #expect(asked[2...].map(Self.apiError) == [4_040_008, 4_000_020], "\(asked)")
        let notified = try await Self.drive(
            server,
            [
                ["call": "testStatus", "token": token],
                ["call": "notificationHistory", "startDate": Self.start - 31 * Self.day, "endDate": Self.start],
                ["call": "notificationHistory", "startDate": Self.start, "endDate": Self.start - Self.day],
                ["call": "notificationHistory", "startDate": Self.start - Self.day, "endDate": Self.start, "transactionId": ids.latest, "notificationType": "TEST"],
                [
                    "call": "raw", "method": "POST", "path": "/inApps/v1/notifications/history",
                    "body": ["startDate": Self.start - Self.day, "endDate": Self.start, "notificationSubtype": "UPGRADE"],
                ],
                ["call": "notificationHistory", "startDate": Self.start - Self.day, "endDate": Self.start, "notificationType": "TEST", "notificationSubtype": "UPGRADE"],
            ])
        let status = notified[0]["signedPayload"] as? [String: Any]
        #expect(status?["notificationType"] as? String == "TEST" && (status?["data"] as? [String: Any])?["bundleId"] as? String == "com.example.api", "\(notified[0])")
        #expect(notified[1...].map(Self.apiError) == [4_000_012, 4_000_013, 4_000_019, 4_000_018, 4_000_018], "\(notified[1...])")

        // Set App Account Token, by the sync client and by httpx.
        let appAccountToken = "7E3FB20B-4CDB-47CC-936D-99D65F608138"
        for asynchronous in [false, true] {
            let results = try await Self.drive(
                server,
                [
                    ["call": "setAppAccountToken", "transactionId": ids.original, "appAccountToken": appAccountToken],
                    ["call": "info", "transactionId": ids.latest],
                    ["call": "statuses", "transactionId": ids.latest],
                    ["call": "setAppAccountToken", "transactionId": ids.original, "appAccountToken": "not-a-uuid"],
                    ["call": "setAppAccountToken", "transactionId": ids.latest, "appAccountToken": appAccountToken],
                    ["call": "setAppAccountToken", "transactionId": "999999999", "appAccountToken": appAccountToken],
                ], asynchronous: asynchronous)
            #expect(results[0]["ok"] as? Bool == true, "\(results[0])")
            #expect((results[1]["signedTransactionInfo"] as? [String: Any])?["appAccountToken"] as? String == appAccountToken.lowercased(), "\(results[1])")
            let renewal = ((results[2]["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first?["signedRenewalInfo"] as? [String: Any]
            #expect(renewal?["appAccountToken"] as? String == appAccountToken.lowercased())
            #expect(results[3...].map(Self.apiError) == [4_000_183, 4_000_187, 4_040_010], "\(results[3...])")
        }

        // Extend a Subscription Renewal Date.
        let extensions = try await Self.drive(
            server,
            [
                ["call": "extend", "transactionId": ids.original, "extendByDays": 10, "extendReasonCode": 1, "requestIdentifier": "first"],
                ["call": "extend", "transactionId": ids.original, "extendByDays": 10, "extendReasonCode": 1, "requestIdentifier": "first"],
                ["call": "info", "transactionId": ids.latest],
                ["call": "statuses", "transactionId": ids.latest],
                ["call": "extend", "transactionId": ids.original, "extendByDays": 5, "requestIdentifier": "second"],
                ["call": "extend", "transactionId": ids.original, "extendByDays": 5, "requestIdentifier": "third"],
                ["call": "extend", "transactionId": ids.original, "extendByDays": 91, "requestIdentifier": "long"],
                [
                    "call": "raw", "method": "PUT", "path": "/inApps/v1/subscriptions/extend/\(ids.original)",
                    "body": ["extendByDays": 1, "extendReasonCode": 7, "requestIdentifier": "why"],
                ],
                ["call": "raw", "method": "PUT", "path": "/inApps/v1/subscriptions/extend/\(ids.original)", "body": ["extendByDays": 1, "extendReasonCode": 0]],
                ["call": "extend", "transactionId": "12ab", "extendByDays": 1, "requestIdentifier": "bad-id"],
                ["call": "extend", "transactionId": "999999999", "extendByDays": 1, "requestIdentifier": "unknown"],
                ["call": "extend", "transactionId": ids.lifetime, "extendByDays": 1, "requestIdentifier": "not-a-subscription"],
            ])
        let extended = Self.january15 + 10 * Self.day
        #expect(extensions[0]["success"] as? Bool == true && extensions[0]["effectiveDate"] as? Int64 == extended, "\(extensions[0])")
        #expect(extensions[0]["originalTransactionId"] as? String == ids.original && extensions[0]["webOrderLineItemId"] is String)
        #expect(extensions[1]["effectiveDate"] as? Int64 == extended, "the retried request identifier answers as the first time")
        #expect((extensions[2]["signedTransactionInfo"] as? [String: Any])?["expiresDate"] as? Int64 == extended, "\(extensions[2])")
        let renewal = ((extensions[3]["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first?["signedRenewalInfo"] as? [String: Any]
        #expect(renewal?["renewalDate"] as? Int64 == extended, "\(extensions[3])")
        #expect(extensions[4]["effectiveDate"] as? Int64 == extended + 5 * Self.day, "a second extension adds to the first")
        #expect(extensions[5...].map(Self.apiError) == [4_030_005, 4_000_009, 4_000_010, 4_000_011, 4_000_008, 4_040_005, 4_030_004], "\(extensions[5...])")
        #expect(extensions[5...].map { $0["httpStatus"] as? Int } == [403, 400, 400, 400, 400, 404, 403])
        let announced = try await Self.drive(
            server, [["call": "notificationHistory", "startDate": Self.start - Self.day, "endDate": Self.start + Self.day, "notificationType": "RENEWAL_EXTENDED"]])
        let renewalsExtended = announced[0]["notifications"] as? [[String: Any]] ?? []
        #expect(renewalsExtended.count == 2 && renewalsExtended.allSatisfy { $0["signedDate"] as? Int64 == Self.start }, "one per extension: \(announced[0])")

        // Production: Look Up Order ID, mass extension and its status, history v1.
        let orders = try await Self.drive(
            server,
            [
                ["call": "lookUpOrder", "orderId": ids.productionOrder],
                ["call": "lookUpOrder", "orderId": "NOSUCHORDR"],
                ["call": "info", "transactionId": ids.productionTransaction],
                ["call": "massExtend", "productId": "pro.yearly", "extendByDays": 3, "requestIdentifier": "mass-1"],
                ["call": "massExtensionStatus", "productId": "pro.yearly", "requestIdentifier": "mass-1"],
                ["call": "info", "transactionId": ids.productionTransaction],
                ["call": "massExtensionStatus", "productId": "pro.yearly", "requestIdentifier": "mass-2"],
                ["call": "massExtend", "productId": "pro.yearly", "extendByDays": 3, "requestIdentifier": "mass-3", "storefrontCountryCodes": []],
                ["call": "massExtend", "productId": "pro.yearly", "extendByDays": 3, "requestIdentifier": "mass-4", "storefrontCountryCodes": ["us"]],
                ["call": "history", "transactionId": ids.productionTransaction, "version": 1],
            ], bundle: "com.example.prod", environment: "production", app: ids.productionApp)
        #expect(orders[0]["status"] as? Int == 0, "\(orders[0])")
        #expect((orders[0]["signedTransactions"] as? [[String: Any]])?.map { $0["transactionId"] as? String } == [ids.productionTransaction])
        #expect(orders[1]["status"] as? Int == 1 && (orders[1]["signedTransactions"] as? [Any])?.isEmpty == true, "\(orders[1])")
        #expect(orders[3]["requestIdentifier"] as? String == "mass-1")
        #expect(orders[4]["complete"] as? Bool == true && orders[4]["succeededCount"] as? Int == 1 && orders[4]["failedCount"] as? Int == 0, "\(orders[4])")
        let before = (orders[2]["signedTransactionInfo"] as? [String: Any])?["expiresDate"] as? Int64
        let after = (orders[5]["signedTransactionInfo"] as? [String: Any])?["expiresDate"] as? Int64
        #expect(before.map { $0 + 3 * Self.day } == after, "\(String(describing: before)) → \(String(describing: after))")
        #expect(orders[6...8].map(Self.apiError) == [4_040_009, 4_000_027, 4_000_028], "\(orders[6...8])")
        #expect((orders[9]["signedTransactions"] as? [Any])?.count == 1 && orders[9]["environment"] as? String == "Production", "\(orders[9])")
        // Apple's sandbox has no order lookup: 404, no body, so the client raises without a code.
        let sandbox = try await Self.drive(server, [["call": "lookUpOrder", "orderId": ids.productionOrder]])
        #expect(sandbox.first?["httpStatus"] as? Int == 404 && sandbox.first?["apiError"] is NSNull, "\(sandbox)")
    }
}
