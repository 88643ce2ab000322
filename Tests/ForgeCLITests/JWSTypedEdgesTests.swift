import Foundation
import ForgeTestSupport
import Testing
import ForgeSupport
import StoreModel

/// `forge jws make`'s typed edges (issue 20, items 1 and 6): Apple's environment, notification type and subtype
/// vocabularies, the pairs Apple sends, `--app-apple-id`, and `--set`/`--unset` by JSON pointer against Apple's schema.
@Suite("forge jws make: typed edges", .timeLimit(.minutes(10)))
struct JWSTypedEdgesTests {
    static let now = "2025-01-01T00:00:00Z"
    static let root = repositoryRoot.appendingPathComponent("Certificates/jws/jws-root-g3.pem").path
    static let python = repositoryRoot.appendingPathComponent(".oracles/asl/bin/python")
    static var hasOracle: Bool { FileManager.default.isExecutableFile(atPath: python.path) }
    static let oracle = repositoryRoot.appendingPathComponent("examples/oracles/asl_verify_jws.py").path

    /// `forge jws make KIND …` with `--format json`: the exit status and, on success, the payload.
    static func make(_ kind: String, _ arguments: [String]) throws -> (status: Int32, payload: [String: Any]?, stderr: String) {
        let made = try forgeBlocking(arguments: ["jws", "make", kind, "--now", now, "-q", "--format", "json"] + arguments)
        let payload = made.status == 0 ? (try JSONSerialization.jsonObject(with: made.stdout) as? [String: Any])?["payload"] as? [String: Any] : nil
        return (made.status, payload, made.stderr)
    }

    /// Apple's SignedDataVerifier on `arguments`' JWS: its JSON line (verdict, decoded fields).
    static func appleVerdict(_ kind: String, environment: String, appAppleID: String, _ arguments: [String]) throws -> [String: Any] {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("\(kind).jws").path
        let made = try forgeBlocking(arguments: ["jws", "make", kind, "--now", now, "-q", "-o", path] + arguments)
        #expect(made.status == 0, "\(made.stderr)")
        let result = try runBlocking(python, [oracle, root, environment, "com.example.app", appAppleID, kind, path])
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.text)\(result.stderr)")
    }

    @Test("--environment takes Apple's values exactly: sandbox, SANDBOX and Banana exit 64 with the list; Sandbox and Xcode are the claims made")
    func environment() throws {
        for wrong in ["sandbox", "SANDBOX", "Banana", "ProductionSandbox"] {
            let made = try Self.make("transaction", ["--product", "p", "--environment", wrong])
            #expect(made.status == 64, "\(wrong) was accepted: \(made.payload?["environment"] ?? "")")
            #expect(["Production", "Sandbox", "Xcode", "LocalTesting"].allSatisfy(made.stderr.contains), "\(made.stderr)")
        }
        for environment in ["Production", "Sandbox", "Xcode", "LocalTesting"] {
            let transaction = try Self.make("transaction", ["--product", "p", "--environment", environment])
            #expect(transaction.status == 0 && transaction.payload?["environment"] as? String == environment, "\(transaction.stderr)")
            let app = try Self.make("app-transaction", ["--environment", environment])
            #expect(app.payload?["receiptType"] as? String == environment)
        }
        let help = try forgeBlocking("jws", "make", "--help")
        #expect(help.text.contains("Production") && help.text.contains("LocalTesting"))
        // `forge make`'s --environment is the receipt type, in Apple's spelling too.
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receipt = directory.appendingPathComponent("receipt.der").path
        #expect(try forgeBlocking("make", "--product", "p", "--environment", "sandbox", "--now", Self.now, "-q", "-o", receipt).status == 64)
        #expect(try forgeBlocking("make", "--product", "p", "--environment", "ProductionVPPSandbox", "--now", Self.now, "-q", "-o", receipt).status == 0)
        guard Self.hasOracle else { return }
        let accepted = try Self.appleVerdict("transaction", environment: "Sandbox", appAppleID: "-", ["--product", "p", "--environment", "Sandbox"])
        #expect(accepted["verdict"] as? String == "accept", "\(accepted)")
    }

    @Test("--notification-type and --subtype take Apple's values; a pair Apple never sends exits 64 naming it")
    func notificationVocabulary() throws {
        for arguments in [["--notification-type", "BANANA"], ["--notification-type", "refund"], ["--subtype", "initial_buy"]] {
            let made = try Self.make("notification", ["--product", "p"] + arguments)
            #expect(made.status == 64, "\(arguments) was accepted")
            #expect(made.stderr.contains("SUBSCRIBED") || made.stderr.contains("INITIAL_BUY"), "\(made.stderr)")
        }
        for (type, subtype) in [("REFUND", "INITIAL_BUY"), ("EXPIRED", "GRACE_PERIOD"), ("DID_RENEW", "VOLUNTARY"), ("TEST", "SUMMARY")] {
            let made = try Self.make("notification", ["--product", "p", "--notification-type", type, "--subtype", subtype])
            #expect(made.status == 64 && made.stderr.contains(type) && made.stderr.contains(subtype), "\(type)/\(subtype): \(made.status) \(made.stderr)")
        }
        // EXPIRED always says why; SUBSCRIBED always says how.
        #expect(try Self.make("notification", ["--product", "p", "--notification-type", "EXPIRED"]).status == 64)
        for (type, subtype) in [("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"), ("EXPIRED", "PRODUCT_NOT_FOR_SALE"), ("EXTERNAL_PURCHASE_TOKEN", "CREATED")] {
            let made = try Self.make("notification", ["--product", "p", "--type", "auto-renewable", "--notification-type", type, "--subtype", subtype])
            #expect(made.status == 0 && made.payload?["notificationType"] as? String == type && made.payload?["subtype"] as? String == subtype, "\(made.stderr)")
        }
    }

    @Test("TEST needs no --product and then carries no transaction, as Apple's does; Apple's library accepts it")
    func testNotification() throws {
        let made = try Self.make("notification", ["--notification-type", "TEST", "--app-apple-id", "1234"])
        #expect(made.status == 0, "\(made.stderr)")
        let data = try #require(made.payload?["data"] as? [String: Any])
        #expect(data["signedTransactionInfo"] == nil && data["signedRenewalInfo"] == nil && data["status"] == nil)
        #expect(data["bundleId"] as? String == "com.example.app" && data["environment"] as? String == "Production" && data["appAppleId"] as? Int == 1234)
        #expect(made.payload?["subtype"] == nil)
        guard Self.hasOracle else { return }
        let verdict = try Self.appleVerdict("notification", environment: "Production", appAppleID: "1234", ["--notification-type", "TEST", "--app-apple-id", "1234"])
        #expect(verdict["verdict"] as? String == "accept", "\(verdict)")
        #expect((verdict["decoded"] as? [String: Any])?["notificationType"] as? String == "TEST")
    }

    @Test("--app-apple-id goes where Apple's payloads carry it: notification data, AppTransaction, realtime; never a transaction")
    func appAppleID() throws {
        let notification = try Self.make("notification", ["--product", "p", "--notification-type", "ONE_TIME_CHARGE", "--app-apple-id", "1234"])
        #expect(notification.status == 0, "\(notification.stderr)")
        #expect((notification.payload?["data"] as? [String: Any])?["appAppleId"] as? Int == 1234 && notification.payload?["appAppleId"] == nil)
        #expect(try Self.make("app-transaction", ["--app-apple-id", "1234"]).payload?["appAppleId"] as? Int == 1234)
        #expect(try Self.make("realtime", ["--product", "p", "--app-apple-id", "1234"]).payload?["appAppleId"] as? Int == 1234)
        #expect(try Self.make("transaction", ["--product", "p", "--app-apple-id", "1234"]).payload?["appAppleId"] == nil)
        #expect(try Self.make("transaction", ["--product", "p", "--app-apple-id", "0"]).status == 64)
        guard Self.hasOracle else { return }
        let verdict = try Self.appleVerdict(
            "notification", environment: "Production", appAppleID: "1234", ["--product", "p", "--notification-type", "ONE_TIME_CHARGE", "--app-apple-id", "1234"])
        #expect(verdict["verdict"] as? String == "accept", "\(verdict)")
    }

    @Test("--set/--unset take JSON pointers into Apple's schema; unknown keys and numbers JSON cannot carry exit 64")
    func pointers() throws {
        let nested = try Self.make(
            "notification", ["--product", "p", "--notification-type", "ONE_TIME_CHARGE", "--set", "/data/appAppleId=1234", "--unset", "/data/bundleVersion"])
        #expect(nested.status == 0, "\(nested.stderr)")
        let data = try #require(nested.payload?["data"] as? [String: Any])
        #expect(data["appAppleId"] as? Int == 1234 && data["bundleVersion"] == nil)
        #expect(nested.payload?["/data/appAppleId"] == nil && nested.payload?["appAppleId"] == nil)
        // A bare name is the top-level member, as before.
        #expect(try Self.make("transaction", ["--product", "p", "--set", "storefront=\"FRA\""]).payload?["storefront"] as? String == "FRA")
        for (kind, assignment, key) in [
            ("notification", "appAppleId=1234", "appAppleId"), ("notification", "data.appAppleId=1234", "data.appAppleId"),
            ("transaction", "futureField=1", "futureField"), ("notification", "/data/futureField=1", "futureField"),
        ] {
            let made = try Self.make(kind, ["--product", "p", "--set", assignment] + (kind == "notification" ? ["--notification-type", "ONE_TIME_CHARGE"] : []))
            #expect(made.status == 64 && made.stderr.contains(key), "\(assignment): \(made.status) \(made.stderr)")
        }
        let allowed = try Self.make("transaction", ["--product", "p", "--set", "futureField=1", "--allow-unknown-keys"])
        #expect(allowed.status == 0 && allowed.payload?["futureField"] as? Int == 1)
        for number in ["1e400", "-1e400", "[1e999]"] {
            let made = try Self.make("transaction", ["--product", "p", "--set", "price=\(number)"])
            #expect(made.status == 64, "price=\(number) was written as \(String(describing: made.payload?["price"]))")
        }
        #expect(try Self.make("transaction", ["--product", "p", "--set", "price=NaN"]).status == 64)
        #expect(try Self.make("notification", ["--product", "p", "--notification-type", "ONE_TIME_CHARGE", "--set", "/summary/productId=\"x\""]).status == 64)  // no summary here
    }
}
