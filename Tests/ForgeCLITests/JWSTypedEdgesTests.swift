import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

/// `forge jws make`'s typed edges (issue 20, items 1 and 6): Apple's environment, notification type and subtype
/// vocabularies, the pairs Apple sends, `--app-apple-id`, and `--set`/`--unset` by JSON pointer against Apple's schema.
@Suite("forge jws make: typed edges", .timeLimit(.minutes(2)))
struct JWSTypedEdgesTests {
    static let now = "2025-01-01T00:00:00Z"

    /// `forge jws make KIND …` with `--format json`: the exit status and, on success, the payload.
    static func make(_ kind: String, _ arguments: [String]) async throws -> (status: Int32, payload: [String: Any]?, stderr: String) {
        let made = try await forge(arguments: ["jws", "make", kind, "--now", now, "-q", "--format", "json"] + arguments)
        let payload = made.status == 0 ? (try JSONSerialization.jsonObject(with: made.stdout) as? [String: Any])?["payload"] as? [String: Any] : nil
        return (made.status, payload, made.stderr)
    }

    /// Apple's SignedDataVerifier on `arguments`' JWS: its JSON line (verdict, decoded fields). Only in a test that
    /// `.requires(.appleLibrary)`.
    static func appleVerdict(_ kind: String, environment: String, appAppleID: String, _ arguments: [String]) async throws -> [String: Any] {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("\(kind).jws").path
        let made = try await forge(arguments: ["jws", "make", kind, "--now", now, "-q", "-o", path] + arguments)
        #expect(made.status == 0, "\(made.stderr)")
        let result = try await run(
            try Oracle.appleLibrary.required(), [JWSCLITests.appleVerifier, JWSCLITests.root, environment, "com.example.app", appAppleID, kind, path])
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.text)\(result.stderr)")
    }

    @Test("--environment takes Apple's values exactly: sandbox, SANDBOX and Banana exit 64 with the list; Sandbox and Xcode are the claims made")
    func environment() async throws {
        for wrong in ["sandbox", "SANDBOX", "Banana", "ProductionSandbox"] {
            let made = try await Self.make("transaction", ["--product", "p", "--environment", wrong])
            #expect(made.status == 64, "\(wrong) was accepted: \(made.payload?["environment"] ?? "")")
            #expect(["Production", "Sandbox", "Xcode", "LocalTesting"].allSatisfy(made.stderr.contains), "\(made.stderr)")
        }
        for environment in ["Production", "Sandbox", "Xcode", "LocalTesting"] {
            let transaction = try await Self.make("transaction", ["--product", "p", "--environment", environment])
            #expect(transaction.status == 0 && transaction.payload?["environment"] as? String == environment, "\(transaction.stderr)")
            let app = try await Self.make("app-transaction", ["--environment", environment])
            #expect(app.payload?["receiptType"] as? String == environment)
        }
        let help = try await forge("jws", "make", "--help")
        #expect(help.text.contains("Production") && help.text.contains("LocalTesting"))
        // `forge make`'s --environment is the receipt type, in Apple's spelling too.
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receipt = directory.appendingPathComponent("receipt.der").path
        #expect(try await forge("make", "--product", "p", "--environment", "sandbox", "--now", Self.now, "-q", "-o", receipt).status == 64)
        #expect(try await forge("make", "--product", "p", "--environment", "ProductionVPPSandbox", "--now", Self.now, "-q", "-o", receipt).status == 0)
    }

    @Test("--notification-type and --subtype take Apple's values; a pair Apple never sends exits 64 naming it")
    func notificationVocabulary() async throws {
        for arguments in [["--notification-type", "BANANA"], ["--notification-type", "refund"], ["--subtype", "initial_buy"]] {
            let made = try await Self.make("notification", ["--product", "p"] + arguments)
            #expect(made.status == 64, "\(arguments) was accepted")
            #expect(made.stderr.contains("SUBSCRIBED") || made.stderr.contains("INITIAL_BUY"), "\(made.stderr)")
        }
        for (type, subtype) in [("REFUND", "INITIAL_BUY"), ("EXPIRED", "GRACE_PERIOD"), ("DID_RENEW", "VOLUNTARY"), ("TEST", "SUMMARY")] {
            let made = try await Self.make("notification", ["--product", "p", "--notification-type", type, "--subtype", subtype])
            #expect(made.status == 64 && made.stderr.contains(type) && made.stderr.contains(subtype), "\(type)/\(subtype): \(made.status) \(made.stderr)")
        }
        // EXPIRED always says why; SUBSCRIBED always says how.
        #expect(try await Self.make("notification", ["--product", "p", "--notification-type", "EXPIRED"]).status == 64)
        for (type, subtype) in [("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"), ("EXPIRED", "PRODUCT_NOT_FOR_SALE"), ("EXTERNAL_PURCHASE_TOKEN", "CREATED")] {
            let made = try await Self.make("notification", ["--product", "p", "--type", "auto-renewable", "--notification-type", type, "--subtype", subtype])
            #expect(made.status == 0 && made.payload?["notificationType"] as? String == type && made.payload?["subtype"] as? String == subtype, "\(made.stderr)")
        }
    }

    @Test("TEST needs no --product and then carries no transaction, as Apple's does")
    func testNotification() async throws {
        let made = try await Self.make("notification", ["--notification-type", "TEST", "--app-apple-id", "1234"])
        #expect(made.status == 0, "\(made.stderr)")
        let data = try #require(made.payload?["data"] as? [String: Any])
        #expect(data["signedTransactionInfo"] == nil && data["signedRenewalInfo"] == nil && data["status"] == nil)
        #expect(data["bundleId"] as? String == "com.example.app" && data["environment"] as? String == "Production" && data["appAppleId"] as? Int == 1234)
        #expect(made.payload?["subtype"] == nil)
    }

    @Test("--app-apple-id goes where Apple's payloads carry it: notification data, AppTransaction, realtime; never a transaction")
    func appAppleID() async throws {
        let notification = try await Self.make("notification", ["--product", "p", "--notification-type", "ONE_TIME_CHARGE", "--app-apple-id", "1234"])
        #expect(notification.status == 0, "\(notification.stderr)")
        #expect((notification.payload?["data"] as? [String: Any])?["appAppleId"] as? Int == 1234 && notification.payload?["appAppleId"] == nil)
        #expect(try await Self.make("app-transaction", ["--app-apple-id", "1234"]).payload?["appAppleId"] as? Int == 1234)
        #expect(try await Self.make("realtime", ["--product", "p", "--app-apple-id", "1234"]).payload?["appAppleId"] as? Int == 1234)
        #expect(try await Self.make("transaction", ["--product", "p", "--app-apple-id", "1234"]).payload?["appAppleId"] == nil)
        #expect(try await Self.make("transaction", ["--product", "p", "--app-apple-id", "0"]).status == 64)
    }

    @Test(
        "Apple's library accepts what the typed edges make: a Sandbox transaction, a TEST notification and a ONE_TIME_CHARGE with --app-apple-id",
        .requires(.appleLibrary))
    func appleAccepts() async throws {
        let sandbox = try await Self.appleVerdict("transaction", environment: "Sandbox", appAppleID: "-", ["--product", "p", "--environment", "Sandbox"])
        #expect(sandbox["verdict"] as? String == "accept", "\(sandbox)")
        let test = try await Self.appleVerdict("notification", environment: "Production", appAppleID: "1234", ["--notification-type", "TEST", "--app-apple-id", "1234"])
        #expect(test["verdict"] as? String == "accept", "\(test)")
        #expect((test["decoded"] as? [String: Any])?["notificationType"] as? String == "TEST")
        let charge = try await Self.appleVerdict(
            "notification", environment: "Production", appAppleID: "1234", ["--product", "p", "--notification-type", "ONE_TIME_CHARGE", "--app-apple-id", "1234"])
        #expect(charge["verdict"] as? String == "accept", "\(charge)")
    }

    @Test("--set/--unset take JSON pointers into Apple's schema; unknown keys and numbers JSON cannot carry exit 64")
    func pointers() async throws {
        let nested = try await Self.make(
            "notification", ["--product", "p", "--notification-type", "ONE_TIME_CHARGE", "--set", "/data/appAppleId=1234", "--unset", "/data/bundleVersion"])
        #expect(nested.status == 0, "\(nested.stderr)")
        let data = try #require(nested.payload?["data"] as? [String: Any])
        #expect(data["appAppleId"] as? Int == 1234 && data["bundleVersion"] == nil)
        #expect(nested.payload?["/data/appAppleId"] == nil && nested.payload?["appAppleId"] == nil)
        // A bare name is the top-level member, as before.
        #expect(try await Self.make("transaction", ["--product", "p", "--set", "storefront=\"FRA\""]).payload?["storefront"] as? String == "FRA")
        for (kind, assignment, key) in [
            ("notification", "appAppleId=1234", "appAppleId"), ("notification", "data.appAppleId=1234", "data.appAppleId"),
            ("transaction", "futureField=1", "futureField"), ("notification", "/data/futureField=1", "futureField"),
        ] {
            let made = try await Self.make(kind, ["--product", "p", "--set", assignment] + (kind == "notification" ? ["--notification-type", "ONE_TIME_CHARGE"] : []))
            #expect(made.status == 64 && made.stderr.contains(key), "\(assignment): \(made.status) \(made.stderr)")
        }
        let allowed = try await Self.make("transaction", ["--product", "p", "--set", "futureField=1", "--allow-unknown-keys"])
        #expect(allowed.status == 0 && allowed.payload?["futureField"] as? Int == 1)
        for number in ["1e400", "-1e400", "[1e999]"] {
            let made = try await Self.make("transaction", ["--product", "p", "--set", "price=\(number)"])
            #expect(made.status == 64, "price=\(number) was written as \(String(describing: made.payload?["price"]))")
        }
        #expect(try await Self.make("transaction", ["--product", "p", "--set", "price=NaN"]).status == 64)
        // No summary here.
        #expect(try await Self.make("notification", ["--product", "p", "--notification-type", "ONE_TIME_CHARGE", "--set", "/summary/productId=\"x\""]).status == 64)
    }
}
