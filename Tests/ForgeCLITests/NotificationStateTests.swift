import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

/// Issue 20, item 2: a notification's type and subtype imply the state of the subscription it carries, and the
/// nested transaction and renewal info show that state, decoded by `forge jws inspect` and by Apple's library.
@Suite("forge jws make notification: the state each pair implies", .timeLimit(.minutes(2)))
struct NotificationStateTests {
    static let now = "2025-01-01T00:00:00Z"
    static let nowMilliseconds = 1_735_689_600_000
    static let subscription = ["--product", "pro.monthly", "--type", "auto-renewable"]

    /// What a pair implies, as Apple documents it; nil: not asserted.
    struct Implied: CustomTestStringConvertible, Sendable {
        let type: String
        let subtype: String?
        let status: Int
        var lapsed: Bool
        var expirationIntent: Int?
        var autoRenewStatus: Int
        var billingRetry = false
        var grace = false
        var revoked = false
        var renewal = false
        var priceIncreaseStatus: Int?
        /// `inAppOwnershipType`: REVOKE is about a purchase shared through Family Sharing.
        var ownership = "PURCHASED"
        /// Renewal info's `autoRenewProductId` is another product than `productId` (a pending downgrade).
        var renewsAsOther = false

        var pair: String { type + (subtype.map { "/" + $0 } ?? "") }
        var testDescription: String { pair }
    }

    /// A refund ends the subscription as the timeline's `refund` event does for the receipt: revoked, auto-renew off,
    /// expiration intent 1.
    static let pairs: [Implied] = [
        Implied(type: "EXPIRED", subtype: "VOLUNTARY", status: 2, lapsed: true, expirationIntent: 1, autoRenewStatus: 0),
        Implied(type: "EXPIRED", subtype: "BILLING_RETRY", status: 2, lapsed: true, expirationIntent: 2, autoRenewStatus: 0),
        Implied(type: "EXPIRED", subtype: "PRICE_INCREASE", status: 2, lapsed: true, expirationIntent: 3, autoRenewStatus: 0, priceIncreaseStatus: 0),
        Implied(type: "EXPIRED", subtype: "PRODUCT_NOT_FOR_SALE", status: 2, lapsed: true, expirationIntent: 4, autoRenewStatus: 0),
        Implied(type: "REFUND", subtype: nil, status: 5, lapsed: false, expirationIntent: 1, autoRenewStatus: 0, revoked: true),
        Implied(type: "REVOKE", subtype: nil, status: 5, lapsed: false, expirationIntent: 1, autoRenewStatus: 0, revoked: true, ownership: "FAMILY_SHARED"),
        Implied(type: "DID_FAIL_TO_RENEW", subtype: nil, status: 3, lapsed: true, expirationIntent: 2, autoRenewStatus: 1, billingRetry: true),
        Implied(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", status: 4, lapsed: true, autoRenewStatus: 1, billingRetry: true, grace: true),
        Implied(type: "GRACE_PERIOD_EXPIRED", subtype: nil, status: 3, lapsed: true, expirationIntent: 2, autoRenewStatus: 1, billingRetry: true),
        Implied(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", status: 1, lapsed: false, autoRenewStatus: 0),
        Implied(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", status: 1, lapsed: false, autoRenewStatus: 1),
        Implied(type: "DID_RENEW", subtype: nil, status: 1, lapsed: false, autoRenewStatus: 1, renewal: true),
        Implied(type: "DID_RENEW", subtype: "BILLING_RECOVERY", status: 1, lapsed: false, autoRenewStatus: 1, renewal: true),
        Implied(type: "PRICE_INCREASE", subtype: "PENDING", status: 1, lapsed: false, autoRenewStatus: 1, priceIncreaseStatus: 0),
        Implied(type: "PRICE_INCREASE", subtype: "ACCEPTED", status: 1, lapsed: false, autoRenewStatus: 1, priceIncreaseStatus: 1),
        Implied(type: "SUBSCRIBED", subtype: "INITIAL_BUY", status: 1, lapsed: false, autoRenewStatus: 1),
        Implied(type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", status: 1, lapsed: false, autoRenewStatus: 1, renewsAsOther: true),
        Implied(type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", status: 1, lapsed: false, autoRenewStatus: 1),
    ]

    /// Apple's `SignedDataVerifier` (Production, our EC root, app id 1234) on the notification at `path`: its JSON
    /// verdict line. Only in a test that `.requires(.appleLibrary)`.
    static func appleVerdict(_ path: String) async throws -> [String: Any] {
        let result = try await run(
            try Oracle.appleLibrary.required(), [JWSCLITests.appleVerifier, JWSCLITests.root, "Production", "com.example.app", "1234", "notification", path])
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.text)\(result.stderr)")
    }

    /// `forge jws make notification` for `pair` into `directory`: the file and the exit status.
    static func make(_ implied: Implied, _ extra: [String] = [], in directory: URL) async throws -> (path: String, result: RunResult) {
        let path = directory.appendingPathComponent("\(implied.pair.replacingOccurrences(of: "/", with: "-")).jws").path
        var arguments = ["jws", "make", "notification", "--now", now, "-q", "-o", path, "--notification-type", implied.type] + subscription + extra
        if let subtype = implied.subtype { arguments += ["--subtype", subtype] }
        return (path, try await forge(arguments: arguments))
    }

    @Test("Each pair's notification, decoded by forge jws inspect, carries the state it implies", arguments: pairs)
    func decodedState(_ implied: Implied) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (path, made) = try await Self.make(implied, in: directory)
        try #require(made.status == 0, "\(made.stderr)")
        let inspected = try json(try await forge("jws", "inspect", path, "--json"))
        let payload = try #require(inspected["payload"] as? [String: Any])
        #expect(payload["notificationType"] as? String == implied.type && payload["subtype"] as? String == implied.subtype)
        let data = try #require(payload["data"] as? [String: Any])
        #expect(data["status"] as? Int == implied.status, "status \(data["status"] ?? "none")")
        let nested = try #require(inspected["nested"] as? [String: Any])
        let transaction = try #require((nested["signedTransactionInfo"] as? [String: Any])?["payload"] as? [String: Any])
        let renewal = try #require((nested["signedRenewalInfo"] as? [String: Any])?["payload"] as? [String: Any])
        let expires = try #require(transaction["expiresDate"] as? Int)
        #expect((expires <= Self.nowMilliseconds) == implied.lapsed, "expiresDate \(expires)")
        #expect(renewal["expirationIntent"] as? Int == implied.expirationIntent, "expirationIntent \(renewal["expirationIntent"] ?? "none")")
        #expect(renewal["autoRenewStatus"] as? Int == implied.autoRenewStatus)
        #expect(renewal["isInBillingRetryPeriod"] as? Bool == implied.billingRetry)
        let grace = renewal["gracePeriodExpiresDate"] as? Int
        #expect(implied.grace ? (grace ?? 0) > Self.nowMilliseconds : grace == nil, "gracePeriodExpiresDate \(grace ?? 0)")
        #expect((transaction["revocationDate"] != nil) == implied.revoked && (transaction["revocationReason"] != nil) == implied.revoked)
        #expect(transaction["transactionReason"] as? String == (implied.renewal ? "RENEWAL" : "PURCHASE"))
        if implied.renewal { #expect(transaction["transactionId"] as? String != transaction["originalTransactionId"] as? String) }
        #expect(renewal["priceIncreaseStatus"] as? Int == implied.priceIncreaseStatus)
        #expect(transaction["inAppOwnershipType"] as? String == implied.ownership)
        let renewsAs = renewal["autoRenewProductId"] as? String
        #expect((renewsAs != transaction["productId"] as? String) == implied.renewsAsOther, "autoRenewProductId \(renewsAs ?? "none")")
    }

    @Test("Apple's library verifies each pair's notification and its nested JWS, and decodes the same state", .requires(.appleLibrary), arguments: pairs)
    func appleDecodes(_ implied: Implied) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (path, made) = try await Self.make(implied, ["--app-apple-id", "1234"], in: directory)
        try #require(made.status == 0, "\(made.stderr)")
        let verdict = try await Self.appleVerdict(path)
        #expect(verdict["verdict"] as? String == "accept", "\(verdict)")
        let decoded = try #require(verdict["decoded"] as? [String: Any])
        #expect(decoded["notificationType"] as? String == implied.type && decoded["subtype"] as? String == implied.subtype)
        #expect(decoded["status"] as? Int == implied.status)
        let transaction = try #require(decoded["transaction"] as? [String: Any])
        let renewal = try #require(decoded["renewal"] as? [String: Any])
        #expect(((transaction["expiresDate"] as? Int ?? 0) <= Self.nowMilliseconds) == implied.lapsed)
        #expect((transaction["revocationDate"] != nil) == implied.revoked)
        #expect(transaction["transactionReason"] as? String == (implied.renewal ? "RENEWAL" : "PURCHASE"))
        #expect(renewal["expirationIntent"] as? Int == implied.expirationIntent)
        #expect(renewal["autoRenewStatus"] as? Int == implied.autoRenewStatus)
        #expect(renewal["isInBillingRetryPeriod"] as? Bool == implied.billingRetry)
        #expect((renewal["gracePeriodExpiresDate"] != nil) == implied.grace)
        #expect(transaction["inAppOwnershipType"] as? String == implied.ownership)
        #expect((renewal["autoRenewProductId"] as? String != renewal["productId"] as? String) == implied.renewsAsOther)
    }

    @Test("TEST carries no transaction even when a product is given, as Apple's: data is the app, bundle and environment")
    func testCarriesNoTransaction() async throws {
        let made = try await forge(
            "jws", "make", "notification", "--notification-type", "TEST", "--product", "pro.monthly", "--type", "auto-renewable", "--now", Self.now, "-q",
            "--format", "json")
        try #require(made.status == 0, "\(made.stderr)")
        let payload = try #require(try json(made)["payload"] as? [String: Any])
        let data = try #require(payload["data"] as? [String: Any])
        #expect(Set(data.keys) == ["bundleId", "environment", "appAppleId"] || Set(data.keys) == ["bundleId", "environment"], "\(data.keys.sorted())")
    }

    @Test("ONE_TIME_CHARGE is about a one-time purchase: an auto-renewable product exits 64 saying so; a consumable is signed")
    func oneTimeChargeNeedsOneTimePurchase() async throws {
        let subscription = try await forge(arguments: ["jws", "make", "notification", "--notification-type", "ONE_TIME_CHARGE", "--now", Self.now, "-q"] + Self.subscription)
        #expect(subscription.status == 64 && subscription.stderr.contains("auto-renewable"), "\(subscription.status) \(subscription.stderr)")
        let consumable = try await forge(
            "jws", "make", "notification", "--notification-type", "ONE_TIME_CHARGE", "--product", "gems", "--type", "consumable", "--now", Self.now, "-q",
            "--format", "json")
        #expect(consumable.status == 0, "\(consumable.stderr)")
    }

    @Test("A refunded non-subscription carries revocationDate and revocationReason, and no status")
    func refundedPurchase() async throws {
        let made = try await forge("jws", "make", "notification", "--notification-type", "REFUND", "--product", "gems", "--now", Self.now, "-q", "--format", "json")
        try #require(made.status == 0, "\(made.stderr)")
        let payload = try #require(try json(made)["payload"] as? [String: Any])
        let data = try #require(payload["data"] as? [String: Any])
        #expect(data["status"] == nil && data["signedRenewalInfo"] == nil)
        let path = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: path) }
        let file = path.appendingPathComponent("t.jws")
        try Data(((data["signedTransactionInfo"] as? String ?? "") + "\n").utf8).write(to: file)
        let transaction = try #require(try json(try await forge("jws", "inspect", file.path, "--json"))["payload"] as? [String: Any])
        #expect(transaction["revocationDate"] as? Int == Self.nowMilliseconds && transaction["revocationReason"] as? Int == 0)
    }

    @Test("A pair that contradicts explicit flags exits 64 saying which")
    func contradictions() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(Implied, [String], [String])] = [
            (Self.pairs[0], ["--expires", "2025-06-01T00:00:00Z"], ["EXPIRED/VOLUNTARY", "2025-06-01T00:00:00Z"]),
            (Self.pairs[9], ["--expired"], ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "expired"]),
            // A grace period of 16 days after a period that ended a month ago is over: not the grace period the pair says.
            (Self.pairs[7], ["--expires", "2024-12-01T00:00:00Z"], ["DID_FAIL_TO_RENEW/GRACE_PERIOD", "status 4", "status 3"]),
            (Self.pairs[11], ["--expires", "2025-01-20T00:00:00Z"], ["DID_RENEW", "2025-01-20T00:00:00Z"]),
        ]
        for (implied, flags, words) in cases {
            let made = try await Self.make(implied, flags, in: directory).result
            #expect(made.status == 64, "\(implied.pair) \(flags): \(made.status) \(made.stderr)")
            #expect(words.allSatisfy(made.stderr.contains), "\(made.stderr)")
        }
        // A subscription's state on a product stated consumable (with no type stated, the pair makes it auto-renewable).
        let consumable = try await forge(
            "jws", "make", "notification", "--notification-type", "EXPIRED", "--subtype", "VOLUNTARY", "--product", "gems", "--type", "consumable", "--now",
            Self.now, "-q", "-o", directory.appendingPathComponent("n.jws").path)
        #expect(consumable.status == 64 && consumable.stderr.contains("auto-renewable"), "\(consumable.stderr)")
        // Flags that agree with the pair are welcome: an explicit past expiry for EXPIRED, renewals for DID_RENEW.
        #expect(try await Self.make(Self.pairs[0], ["--expires", "2024-12-20T00:00:00Z"], in: directory).result.status == 0)
        #expect(try await Self.make(Self.pairs[11], ["--renewals", "2"], in: directory).result.status == 0)
    }

    @Test(
        "A spec whose timeline holds the pair's events gives the same state in verifyReceipt's JSON (forge make) and in the notification",
        arguments: [
            ("EXPIRED", "BILLING_RETRY", #"[{"event":"billing-retry","at":"2024-12-31T00:00:00Z"},{"event":"billing-retry-ended","at":"2025-01-01T00:00:00Z"}]"#),
            ("EXPIRED", "PRODUCT_NOT_FOR_SALE", #"[{"event":"product-withdrawn","at":"2025-01-01T00:00:00Z"}]"#),
            ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", #"[{"event":"grace-period","at":"2024-12-31T00:00:00Z"}]"#),
        ])
    func receiptAgrees(_ type: String, _ subtype: String, _ timeline: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = directory.appendingPathComponent("spec.json")
        try Data(#"{"bundleId":"com.example.app","seed":7,"purchases":[{"productId":"pro.monthly","expired":true}],"timeline":\#(timeline)}"#.utf8).write(to: spec)
        let receipt = try json(try await forge("make", "--spec", spec.path, "--now", Self.now, "--format", "json", "-q"))
        let pending = try #require((receipt["pending_renewal_info"] as? [[String: Any]])?.first)
        let latest = try #require((receipt["latest_receipt_info"] as? [[String: Any]])?.first)
        let path = directory.appendingPathComponent("n.jws").path
        let made = try await forge("jws", "make", "notification", "--spec", spec.path, "--now", Self.now, "--notification-type", type, "--subtype", subtype, "-q", "-o", path)
        try #require(made.status == 0, "\(made.stderr)")
        let nested = try #require(try json(try await forge("jws", "inspect", path, "--json"))["nested"] as? [String: Any])
        let transaction = try #require((nested["signedTransactionInfo"] as? [String: Any])?["payload"] as? [String: Any])
        let renewal = try #require((nested["signedRenewalInfo"] as? [String: Any])?["payload"] as? [String: Any])
        #expect((renewal["expirationIntent"] as? Int).map(String.init) == pending["expiration_intent"] as? String)
        #expect(String(renewal["autoRenewStatus"] as? Int ?? -1) == pending["auto_renew_status"] as? String)
        #expect((renewal["isInBillingRetryPeriod"] as? Bool == true ? "1" : "0") == pending["is_in_billing_retry_period"] as? String)
        #expect((renewal["gracePeriodExpiresDate"] as? Int).map(String.init) == pending["grace_period_expires_date_ms"] as? String)
        #expect(String(transaction["expiresDate"] as? Int ?? 0) == latest["expires_date_ms"] as? String)
        #expect(transaction["transactionId"] as? String == latest["transaction_id"] as? String)
    }
}
