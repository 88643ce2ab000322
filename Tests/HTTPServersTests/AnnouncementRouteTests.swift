import AppStoreVocabulary
import Foundation
import Hummingbird
import NIOCore
import ReferenceValidation
import StoreForge
import StoreServer
import HTTPServers
import Testing
import _ForgeSupport
import StoreModel

/// Issue 39, item 3: which notification Apple sends for an event has one owner, the store model. For every kind of
/// timeline event, what Get Notification History lists beside what the store without the event lists is the pair
/// ``Scenario/notification(for:)`` names (`forge jws make --event`'s), at the event's instant.
@Suite("Notification history: the store model's pair for every timeline event", .timeLimit(.minutes(2)))
struct AnnouncementRouteTests {
    static let clock = "2025-05-01T00:00:00Z"

    /// A monthly subscription bought 2025-01-01 and renewed once (to 2025-03-01), in a group of two levels; then `event`.
    static func scenario(_ event: TimelineEvent?, ownership: OwnershipType? = nil) -> Scenario {
        Scenario(
            bundleID: "com.example.announce", now: "2025-01-01T00:00:00Z",
            purchases: [Purchase(productID: "pro.monthly", purchaseDate: "2025-01-01T00:00:00Z", renewals: 1, period: "P1M", ownership: ownership)],
            timeline: event.map { [$0] },
            products: [
                ProductDefinition(productID: "pro.monthly", type: .autoRenewable, period: "P1M", group: "pro", groupLevel: 2),
                ProductDefinition(productID: "pro.premium", type: .autoRenewable, period: "P1M", group: "pro", groupLevel: 1),
                ProductDefinition(productID: "pro.lite", type: .autoRenewable, period: "P1M", group: "pro", groupLevel: 3),
            ])
    }

    /// Every kind, once (a change of product twice: down and up), and a refund of a purchase shared through Family Sharing.
    static let cases: [(event: TimelineEvent, ownership: OwnershipType?)] = [
        (TimelineEvent(.renew), nil), (TimelineEvent(.cancel, at: "2025-02-10T00:00:00Z"), nil), (TimelineEvent(.refund, at: "2025-02-10T00:00:00Z"), nil),
        (TimelineEvent(.refund, at: "2025-02-10T00:00:00Z"), .familyShared), (TimelineEvent(.billingRetry, at: "2025-03-02T00:00:00Z"), nil),
        (TimelineEvent(.gracePeriod, at: "2025-03-02T00:00:00Z"), nil), (TimelineEvent(.recover, at: "2025-03-05T00:00:00Z"), nil),
        (TimelineEvent(.priceIncrease, at: "2025-02-10T00:00:00Z"), nil), (TimelineEvent(.priceIncrease, at: "2025-02-10T00:00:00Z", consent: .accepted), nil),
        (TimelineEvent(.priceIncrease, at: "2025-02-10T00:00:00Z", consent: .declined), nil),
        (TimelineEvent(.changeProduct, at: "2025-02-10T00:00:00Z", to: "pro.lite"), nil),
        (TimelineEvent(.changeProduct, at: "2025-02-10T00:00:00Z", to: "pro.premium"), nil), (TimelineEvent(.accountDeleted, at: "2025-02-10T00:00:00Z"), nil),
        (TimelineEvent(.billingRetryEnded, at: "2025-03-10T00:00:00Z"), nil), (TimelineEvent(.productWithdrawn, at: "2025-02-10T00:00:00Z"), nil),
        (TimelineEvent(.extend, at: "2025-02-10T00:00:00Z", days: 5), nil),
        (TimelineEvent(.appAccountToken, at: "2025-02-10T00:00:00Z", token: "6F1D1C0E-3B1A-4E8B-9C55-0F2B7A4C9D11"), nil),
        (TimelineEvent(.consentRevoked, at: "2025-02-10T00:00:00Z"), nil),
        (TimelineEvent(.refundRequest, at: "2025-02-10T00:00:00Z", requestReason: .fulfillmentIssue), nil),
    ]

    /// Get Notification History's pairs (`TYPE/SUBTYPE`) for `scenario`'s store at ``clock``, with each one's instant.
    static func history(_ scenario: Scenario) async throws -> [String] {
        try await payloads(scenario).map { "\($0["notificationType"] ?? "")/\($0["subtype"] ?? "-")@\($0["signedDate"] ?? "")" }
    }

    /// Get Notification History's signed payloads, decoded, for `scenario`'s store at ``clock`` (of `transactionID`'s
    /// purchase only, when given).
    static func payloads(_ scenario: Scenario, transactionID: String? = nil) async throws -> [[String: Any]] {
        try await signedPayloads(scenario, transactionID: transactionID).map(ServerAPIRouteTests.payload)
    }

    /// Get Notification History's signed payloads for `scenario`'s store at ``clock``.
    static func signedPayloads(_ scenario: Scenario, transactionID: String? = nil) async throws -> [String] {
        let clock = try #require(ReceiptDate.parse(Self.clock))
        let service = try ServerAPIService(scenarios: [scenario], forge: try Forge.bundled(), configuration: .init(now: clock, access: .open))
        let application = try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), serverAPI: service,
            faults: try FaultPlan(), log: try RequestLog(file: nil, capacity: 100))
        let start = try #require(ReceiptDate.parse("2024-12-01T00:00:00Z").flatMap(ReceiptDate.milliseconds))
        let end = try #require(ReceiptDate.milliseconds(clock)) + 1
        let filter = transactionID.map { #","transactionId":"\#($0)""# } ?? ""
        return try await application.test(.router) { client in
            let response = try await client.execute(
                uri: "/inApps/v1/notifications/history", method: .post, body: ByteBuffer(string: #"{"startDate":\#(start),"endDate":\#(end)\#(filter)}"#))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let items = ServerAPIRouteTests.object(response)["notificationHistory"] as? [[String: Any]] ?? []
            return items.compactMap { $0["signedPayload"] as? String }
        }
    }

    @Test("Each event adds to the history exactly the pair Scenario.notification(for:) names (none for an account deletion or a token), at its instant")
    func historyIsTheStoreModels() async throws {
        let clock = try #require(ReceiptDate.parse(Self.clock))
        for (event, ownership) in Self.cases {
            let scenario = Self.scenario(event, ownership: ownership)
            var added = try await Self.history(scenario)
            for pair in try await Self.history(Self.scenario(nil, ownership: ownership)) {
                if let index = added.firstIndex(of: pair) { added.remove(at: index) }
            }
            let expected = scenario.notification(for: event)
            let name = "\(event.event.rawValue)\(ownership.map { " (\($0.rawValue))" } ?? "")"
            // A renewal's instant is the start of the period it adds (the latest one's end), any other event's its own.
            let at = try #require(event.at.flatMap(ReceiptDate.parse) ?? ReceiptDate.parse("2025-03-01T00:00:00Z"))
            let milliseconds = try #require(ReceiptDate.milliseconds(at))
            let wanted = expected.map { ["\($0.type.rawValue)/\($0.subtype?.rawValue ?? "-")@\(milliseconds)"] } ?? []
            #expect(added == wanted, "\(name): the history adds \(added), the store model names \(wanted)")
            // The store model's own list says the same.
            let made = try #require(ReceiptDate.parse("2025-01-01T00:00:00Z"))
            let store = try Store(scenario, now: made, reissuedAt: clock)
            let announced = store.announcements.filter { $0.date == at }.map { "\($0.type.rawValue)/\($0.subtype?.rawValue ?? "-")" }
            if let expected { #expect(announced.contains("\(expected.type.rawValue)/\(expected.subtype?.rawValue ?? "-")"), "\(name): \(announced)") }
        }
    }

    @Test("A refund-request event is in the history as CONSUMPTION_REQUEST about the product's latest transaction, with its consumptionRequestReason")
    func refundRequestInHistory() async throws {
        for (reason, expected) in [(ConsumptionRequestReason?.some(.legal), "LEGAL"), (nil, "UNINTENDED_PURCHASE")] {
            let scenario = Self.scenario(TimelineEvent(.refundRequest, at: "2025-02-10T00:00:00Z", requestReason: reason))
            let requests = try await Self.payloads(scenario).filter { $0["notificationType"] as? String == "CONSUMPTION_REQUEST" }
            try #require(requests.count == 1, "\(requests)")
            let data = try #require(requests[0]["data"] as? [String: Any], "\(requests[0])")
            #expect(data["consumptionRequestReason"] as? String == expected, "\(data)")
            let transaction = ServerAPIRouteTests.payload(data["signedTransactionInfo"])
            #expect(transaction["revocationDate"] == nil, "a request refunds nothing: \(transaction)")
        }
    }

    @Test(
        "A consent-revoked event is in the history as RESCIND_CONSENT about the app: appData (no data) with the store's signed AppTransaction; filtered by a transaction, it is not listed"
    )
    func consentRevokedInHistory() async throws {
        let scenario = Self.scenario(TimelineEvent(.consentRevoked, at: "2025-02-10T00:00:00Z"))
        let rescinded = try await Self.payloads(scenario).filter { $0["notificationType"] as? String == "RESCIND_CONSENT" }
        try #require(rescinded.count == 1, "\(rescinded)")
        let payload = rescinded[0]
        #expect(payload["data"] == nil && payload["signedDate"] as? Int == 1_739_145_600_000, "\(payload)")
        let appData = try #require(payload["appData"] as? [String: Any], "\(payload)")
        #expect(appData["bundleId"] as? String == "com.example.announce" && appData["environment"] as? String == "Production", "\(appData)")
        let appTransaction = ServerAPIRouteTests.payload(appData["signedAppTransactionInfo"])
        #expect(appTransaction["bundleId"] as? String == "com.example.announce" && appTransaction["receiptType"] as? String == "Production", "\(appTransaction)")
        #expect(appTransaction["appAppleId"] as? Int == appData["appAppleId"] as? Int && appData["appAppleId"] != nil)
        // The reference verifier binds appData and verifies the AppTransaction in it, under the bundled TEST root.
        let compact = try #require(
            try await Self.signedPayloads(scenario).first { ServerAPIRouteTests.payload($0)["notificationType"] as? String == "RESCIND_CONSENT" })
        var context = ValidationContext(
            trustedRoots: [try CertificateSet<JWSRole>.bundled().certificate(.root)], bundleID: "com.example.announce", environment: .production)
        context.appAppleID = (appData["appAppleId"] as? Int).map(Int64.init)
        let report = JWSVerifier(cache: nil).verify(compact, as: .notification, context: context)
        #expect(report.verdict == .valid, "\(report.message)")
        #expect(report.findings.nested.map(\.field) == ["signedAppTransactionInfo"])
        // Get Notification History of one purchase lists what is about that purchase, not about the app.
        let made = try #require(ReceiptDate.parse("2025-01-01T00:00:00Z"))
        let transactionID = try #require(try Store(scenario, now: made).transactions.first?.transactionID)
        let filtered = try await Self.payloads(scenario, transactionID: transactionID).compactMap { $0["notificationType"] as? String }
        #expect(!filtered.isEmpty && !filtered.contains("RESCIND_CONSENT"), "\(filtered)")
    }
}
