import Foundation
import ForgeTestSupport
import Testing

/// Issue 20, item 2: a notification derived from a timeline event (`forge jws make notification --event N`): the pair
/// Apple sends for that event, at the event's time, carrying the state the timeline itself gives (nothing stated twice).
@Suite("forge jws make notification --event: the notification of a timeline event", .timeLimit(.minutes(2)))
struct NotificationEventTests {
    /// A monthly subscription bought 2025-01-01 and renewed once (to 2025-03-01), then `events`.
    static func spec(_ events: [[String: String]], in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("spec.json")
        let scenario: [String: Any] = [
            "bundleId": "com.example.app", "now": "2025-01-01T00:00:00Z",
            "purchases": [["productId": "pro.monthly", "purchaseDate": "2025-01-01T00:00:00Z", "period": "P1M", "renewals": 1]],
            "timeline": events,
        ]
        try JSONSerialization.data(withJSONObject: scenario).write(to: path)
        return path.path
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let events: [[String: String]]
        var now: String? = nil
        let type: String
        let subtype: String?
        let status: Int
        let check: @Sendable (_ transaction: [String: Any], _ renewal: [String: Any]) -> Bool
        var testDescription: String { (events.last?["event"] ?? "") + " → " + type + (subtype.map { "/" + $0 } ?? "") }
    }

    static let cases: [Case] = [
        Case(events: [["event": "cancel", "at": "2025-02-10T00:00:00Z"]], type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", status: 1) {
            _, renewal in renewal["autoRenewStatus"] as? Int == 0
        },
        Case(events: [["event": "refund", "at": "2025-02-10T00:00:00Z"]], type: "REFUND", subtype: nil, status: 5) { transaction, _ in
            transaction["revocationDate"] as? Int == 1_739_145_600_000
        },
        Case(events: [["event": "billing-retry", "at": "2025-03-02T00:00:00Z"]], type: "DID_FAIL_TO_RENEW", subtype: nil, status: 3) { _, renewal in
            renewal["isInBillingRetryPeriod"] as? Bool == true
        },
        Case(events: [["event": "grace-period", "at": "2025-03-02T00:00:00Z"]], type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", status: 4) {
            _, renewal in renewal["gracePeriodExpiresDate"] is Int
        },
        Case(
            events: [["event": "billing-retry", "at": "2025-03-02T00:00:00Z"], ["event": "recover", "at": "2025-03-05T00:00:00Z"]], type: "DID_RENEW",
            subtype: "BILLING_RECOVERY", status: 1
        ) { transaction, renewal in transaction["transactionReason"] as? String == "RENEWAL" && renewal["isInBillingRetryPeriod"] as? Bool == false },
        Case(
            events: [["event": "billing-retry", "at": "2025-03-02T00:00:00Z"], ["event": "billing-retry-ended", "at": "2025-03-20T00:00:00Z"]], type: "EXPIRED",
            subtype: "BILLING_RETRY", status: 2
        ) { _, renewal in renewal["expirationIntent"] as? Int == 2 },
        Case(events: [["event": "product-withdrawn", "at": "2025-02-10T00:00:00Z"]], now: "2025-03-05T00:00:00Z", type: "EXPIRED", subtype: "PRODUCT_NOT_FOR_SALE", status: 2) {
            _, renewal in renewal["expirationIntent"] as? Int == 4
        },
        Case(
            events: [["event": "price-increase", "at": "2025-02-10T00:00:00Z", "consent": "accepted"]], type: "PRICE_INCREASE", subtype: "ACCEPTED", status: 1
        ) { _, renewal in renewal["priceIncreaseStatus"] as? Int == 1 },
        Case(
            events: [["event": "change-product", "at": "2025-02-10T00:00:00Z", "to": "pro.lite"]], type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE",
            status: 1
        ) { _, renewal in renewal["autoRenewProductId"] as? String == "pro.lite" },
    ]

    /// `forge jws make notification --event` of the case's last event, into `directory`: the file.
    static func make(_ testCase: Case, in directory: URL) async throws -> String {
        let spec = try Self.spec(testCase.events, in: directory)
        let path = directory.appendingPathComponent("n.jws").path
        var arguments = ["jws", "make", "notification", "--spec", spec, "--event", String(testCase.events.count), "--app-apple-id", "1234", "-q", "-o", path]
        if let now = testCase.now { arguments += ["--now", now] }
        let made = try await forge(arguments: arguments)
        try #require(made.status == 0, "\(made.stderr)")
        return path
    }

    @Test("Each event's notification: Apple's pair for it, signed at the event's time, with the timeline's state", arguments: cases)
    func eventNotification(_ testCase: Case) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try await Self.make(testCase, in: directory)
        let inspected = try json(try await forge("jws", "inspect", path, "--json"))
        let payload = try #require(inspected["payload"] as? [String: Any])
        #expect(payload["notificationType"] as? String == testCase.type && payload["subtype"] as? String == testCase.subtype, "\(payload)")
        let at = testCase.now ?? testCase.events.last?["at"] ?? ""
        let signed = try #require(ISO8601DateFormatter().date(from: at))
        #expect(payload["signedDate"] as? Int == Int(signed.timeIntervalSince1970) * 1000)
        let data = try #require(payload["data"] as? [String: Any])
        #expect(data["status"] as? Int == testCase.status)
        let nested = try #require(inspected["nested"] as? [String: Any])
        let transaction = try #require((nested["signedTransactionInfo"] as? [String: Any])?["payload"] as? [String: Any])
        let renewal = try #require((nested["signedRenewalInfo"] as? [String: Any])?["payload"] as? [String: Any])
        #expect(testCase.check(transaction, renewal), "transaction \(transaction)\nrenewal \(renewal)")
        // The state came from the timeline once: a refund is not stated a second time.
        if testCase.type == "REFUND" { #expect(transaction["revocationReason"] != nil) }
    }

    @Test("Apple's library verifies each event's notification and decodes its pair and status", .requires(.appleLibrary), arguments: cases)
    func appleDecodesEventNotification(_ testCase: Case) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let verdict = try await NotificationStateTests.appleVerdict(try await Self.make(testCase, in: directory))
        #expect(verdict["verdict"] as? String == "accept", "\(verdict)")
        let decoded = try #require(verdict["decoded"] as? [String: Any])
        #expect(decoded["notificationType"] as? String == testCase.type && decoded["subtype"] as? String == testCase.subtype)
        #expect(decoded["status"] as? Int == testCase.status)
    }

    // MARK: - RESCIND_CONSENT (issue 40, item 1)

    /// A consent-revoked event at 2025-02-10 of ``spec(_:in:)``'s scenario.
    static let consentRevoked = ["event": "consent-revoked", "at": "2025-02-10T00:00:00Z"]

    /// `arguments` for `forge jws make notification`, and the file it wrote.
    static func makeNotification(_ arguments: [String], in directory: URL) async throws -> String {
        let path = directory.appendingPathComponent("rescind.jws").path
        let made = try await forge(arguments: ["jws", "make", "notification", "--app-apple-id", "1234", "-q", "-o", path] + arguments)
        try #require(made.status == 0, "\(made.stderr)")
        return path
    }

    @Test(
        "consent-revoked → RESCIND_CONSENT at the event's time: appData (no data) with the app's AppTransaction, signed as forge jws make app-transaction signs it; --notification-type RESCIND_CONSENT alike"
    )
    func consentRevokedNotification() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = try Self.spec([Self.consentRevoked], in: directory)
        for arguments in [["--spec", spec, "--event", "1"], ["--spec", spec, "--notification-type", "RESCIND_CONSENT", "--now", "2025-02-10T00:00:00Z"]] {
            let path = try await Self.makeNotification(arguments, in: directory)
            let inspected = try json(try await forge("jws", "inspect", path, "--json"))
            let payload = try #require(inspected["payload"] as? [String: Any])
            #expect(payload["notificationType"] as? String == "RESCIND_CONSENT" && payload["subtype"] == nil, "\(arguments): \(payload)")
            #expect(payload["data"] == nil && payload["signedDate"] as? Int == 1_739_145_600_000, "\(arguments): \(payload)")
            let appData = try #require(payload["appData"] as? [String: Any], "\(arguments): \(payload)")
            #expect(appData["appAppleId"] as? Int == 1234 && appData["bundleId"] as? String == "com.example.app" && appData["environment"] as? String == "Production")
            let appTransaction = try #require(
                (inspected["nested"] as? [String: Any])?["signedAppTransactionInfo"] as? [String: Any], "\(arguments): no nested AppTransaction")
            #expect((appTransaction["payload"] as? [String: Any])?["receiptType"] as? String == "Production")
            // The very AppTransaction forge jws make app-transaction signs for the app at that instant.
            let made = try await forge(
                "jws", "make", "app-transaction", "--spec", spec, "--now", "2025-02-10T00:00:00Z", "--app-apple-id", "1234", "-q", "-o", "-")
            #expect(appData["signedAppTransactionInfo"] as? String == made.text.trimmingCharacters(in: .whitespacesAndNewlines), "\(arguments)")
            // forge's own verifier binds appData and verifies the AppTransaction in it.
            let validated = try await forge("jws", "validate", path, "--bundle-id", "com.example.app", "--app-apple-id", "1234", "--environment", "Production")
            #expect(validated.status == 0, "\(arguments): \(validated.text)\(validated.stderr)")
        }
    }

    @Test("Apple's library verifies forge's RESCIND_CONSENT and decodes its appData and the AppTransaction in it", .requires(.appleLibrary))
    func appleDecodesRescindConsent() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try await Self.makeNotification(["--spec", try Self.spec([Self.consentRevoked], in: directory), "--event", "1"], in: directory)
        let verdict = try await NotificationStateTests.appleVerdict(path)
        #expect(verdict["verdict"] as? String == "accept", "\(verdict)")
        let decoded = try #require(verdict["decoded"] as? [String: Any])
        #expect(decoded["notificationType"] as? String == "RESCIND_CONSENT")
        let appData = try #require(decoded["appData"] as? [String: Any], "\(decoded)")
        #expect(appData["bundleId"] as? String == "com.example.app" && appData["appAppleId"] as? Int == 1234 && appData["environment"] as? String == "Production")
        let appTransaction = try #require(decoded["appTransaction"] as? [String: Any], "\(decoded)")
        #expect(appTransaction["bundleId"] as? String == "com.example.app" && appTransaction["receiptType"] as? String == "Production")
        #expect((appTransaction["appTransactionId"] as? String)?.isEmpty == false)
    }

    @Test("A consent-revoked event concerns the app: with a productId it exits 65 saying so; without at, it exits 65 asking for it")
    func consentRevokedRefusals() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [([String: String], String)] = [
            (Self.consentRevoked.merging(["productId": "pro.monthly"]) { $1 }, "concerns the app, not a purchase: leave out 'timeline[0].productId'"),
            (["event": "consent-revoked"], "'timeline[0].at' is required for a consent-revoked event"),
        ]
        for (event, words) in cases {
            let result = try await forge("jws", "make", "notification", "--spec", try Self.spec([event], in: directory), "--event", "1", "-q")
            #expect(result.status == 65 && result.stderr.contains(words), "\(event): exit \(result.status): \(result.stderr)")
        }
    }

    @Test("--event refusals exit 64 and say why: out of range, account deletion, an explicit pair, another kind")
    func refusals() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = try Self.spec([["event": "cancel", "at": "2025-02-10T00:00:00Z"], ["event": "account-deleted", "at": "2025-02-20T00:00:00Z"]], in: directory)
        let cases: [([String], String)] = [
            (["notification", "--event", "3"], "has 2 event(s)"),
            (["notification", "--event", "0"], "has 2 event(s)"),
            (["notification", "--event", "2"], "Apple sends no notification"),
            (["notification", "--event", "1", "--notification-type", "REFUND"], "leave out --notification-type"),
            (["transaction", "--event", "1"], "make the kind notification"),
        ]
        for (arguments, words) in cases {
            let result = try await forge(arguments: ["jws", "make"] + arguments + ["--spec", spec, "-q"])
            #expect(result.status == 64, "\(arguments): exit \(result.status)")
            #expect(result.stderr.contains(words), "\(arguments): \(result.stderr)")
        }
    }
}
