import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport

/// Issue 25 through the built binary: `forge storekit`, `--storekit` on make, jws make, notify and serve, their exit
/// codes, and one file's products agreeing across a receipt, a JWS and the Server API over a socket.
@Suite("forge storekit and --storekit", .timeLimit(.minutes(2)))
struct StoreKitCLITests {
    static let example = Repository.file("examples/storekit/Products.storekit").path
    static let now = "2025-06-01T00:00:00Z"
    static let products = ["com.example.coins", "com.example.lifetime", "com.example.season", "com.example.pro.monthly", "com.example.pro.yearly"]

    /// The example with `original` replaced, in `directory`.
    static func broken(_ original: String, _ replacement: String, in directory: URL) throws -> String {
        let text = try String(contentsOfFile: example, encoding: .utf8)
        #expect(text.contains(original), "the example lacks \(original)")
        let path = directory.appendingPathComponent("broken.storekit").path
        try text.replacingOccurrences(of: original, with: replacement).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("show lists products, groups, offers, storefront and time rate (and --json); scenario writes a spec make and jws make take")
    func showAndScenario() async throws {
        let shown = try await forge("storekit", "show", Self.example)
        #expect(shown.status == 0, "\(shown.stderr)")
        for text in Self.products + ["group Pro (21482563) level 1", "storefront GBR (143444, GBP)", "time rate", "win-back winback-year: pay-up-front 1 × P1Y 19.99 GBP"] {
            #expect(shown.text.contains(text), "\(text) in \(shown.text)")
        }
        let listed = try json(try await forge("storekit", "show", Self.example, "--json"))
        #expect(listed["storefront"] as? String == "GBR" && listed["timeRate"] as? Int == 10 && listed["version"] as? Int == 4)
        #expect((listed["products"] as? [[String: Any]])?.compactMap { $0["productId"] as? String } == Self.products)
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = directory.appendingPathComponent("scenario.json").path
        let written = try await forge("storekit", "scenario", Self.example, "--product", "com.example.pro.monthly", "-o", spec)
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try await forge("make", "--spec", spec, "--now", Self.now, "-q", "-o", directory.appendingPathComponent("r.der").path).status == 0)
        let made = try json(try await forge("jws", "make", "transaction", "--spec", spec, "--now", Self.now, "-q", "--format", "json"))
        let payload = try #require(made["payload"] as? [String: Any])
        #expect(payload["storefront"] as? String == "GBR" && payload["offerDiscountType"] as? String == "FREE_TRIAL" && payload["price"] as? Int == 0)
        // Without --product: every product, one subscription of the group.
        let all = try json(try await forge("storekit", "scenario", Self.example))
        #expect((all["purchases"] as? [[String: Any]])?.compactMap { $0["productId"] as? String } == Array(Self.products.dropLast()))
        #expect(try await forge("storekit", "--help").text.contains("--storekit"))
    }

    @Test("A bad file exits 65 naming the JSON path, in every command; a product the file lacks exits 64 listing its ids")
    func exitCodes() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bad = try Self.broken(#""paymentMode" : "payUpFront""#, #""paymentMode" : "upFront""#, in: directory)
        let path = "subscriptionGroups[0].subscriptions[0].winbackOffers[0].paymentMode"
        let commands: [[String]] = [
            ["storekit", "show", bad], ["storekit", "scenario", bad],
            ["make", "--storekit", bad, "--product", "com.example.coins", "-o", directory.appendingPathComponent("r.der").path],
            ["jws", "make", "transaction", "--storekit", bad, "--product", "com.example.coins"],
            ["notify", "http://127.0.0.1:9/", "--storekit", bad, "--product", "com.example.coins"],
            ["serve", "--listen", "127.0.0.1:0", "--storekit", bad],
        ]
        for command in commands {
            let result = try await forge(arguments: command)
            #expect(result.status == 65 && result.stderr.contains(path), "\(command): \(result.status) \(result.stderr)")
        }
        let notJSON = directory.appendingPathComponent("not.storekit").path
        try "{ \"version\" : ".write(toFile: notJSON, atomically: true, encoding: .utf8)
        #expect(try await forge("storekit", "show", notJSON).status == 65)
        for command in [
            ["storekit", "scenario", Self.example, "--product", "com.example.nope"],
            ["make", "--storekit", Self.example, "--product", "com.example.nope", "-o", directory.appendingPathComponent("r.der").path],
            ["jws", "make", "transaction", "--storekit", Self.example, "--product", "com.example.nope"],
            ["serve", "--listen", "127.0.0.1:0", "--storekit", Self.example, "--product", "com.example.nope"],
        ] {
            let result = try await forge(arguments: command)
            #expect(result.status == 64 && result.stderr.contains("com.example.nope"), "\(command): \(result.status) \(result.stderr)")
            #expect(Self.products.allSatisfy(result.stderr.contains), "the ids are listed: \(result.stderr)")
        }
    }

    /// `forge storekit scenario` of the example, at ``now``, with `members` set (purchases, a timeline): a user's
    /// scenario started from the file.
    static func customer(in directory: URL, _ members: [String: Any]) async throws -> URL {
        let spec = directory.appendingPathComponent("customer.json")
        #expect(try await forge("storekit", "scenario", example, "-o", spec.path).status == 0)
        var scenario = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: spec)) as? [String: Any])
        scenario["now"] = now
        scenario.merge(members) { $1 }
        try JSONSerialization.data(withJSONObject: scenario).write(to: spec)
        return spec
    }

    @Test("One file, one scenario: the receipt (through verifyReceipt), the JWS and the Server API's history agree on ids, types, periods and offers")
    func oneFileAgrees() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = try await Self.customer(
            in: directory, ["purchases": [["productId": "com.example.pro.yearly", "purchaseDate": "2024-01-10T00:00:00Z", "renewals": 3]]])
        let receipt = directory.appendingPathComponent("receipt.der")
        #expect(try await forge("make", "--spec", spec.path, "-q", "-o", receipt.path).status == 0)
        let jws = try json(try await forge("jws", "make", "transaction", "--spec", spec.path, "-q", "--format", "json"))
        let latest = try #require(jws["payload"] as? [String: Any])

        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", Self.now, "--scenario", spec.path])
        defer { server.kill() }
        let body = try JSONSerialization.data(withJSONObject: ["receipt-data": try Data(contentsOf: receipt).base64EncodedString()])
        let verified = try await request(server.url + "/verifyReceipt", method: "POST", body: body).json()
        #expect(verified["status"] as? Int == 0, "\(verified)")
        let inApp = try #require((verified["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])
        // Three pay-as-you-go months of the intro offer, then a year: 2024-01-10, 02-10, 03-10, 04-10 to 2025-04-10.
        #expect(inApp.count == 4 && inApp.allSatisfy { $0["product_id"] as? String == "com.example.pro.yearly" }, "\(inApp)")
        #expect(inApp.map { $0["is_in_intro_offer_period"] as? String } == ["true", "true", "true", "false"])
        let latestID = try #require(latest["transactionId"] as? String)
        let history = try await request(server.url + "/inApps/v2/history/\(latestID)")
        #expect(history.status == 200, "\(history.text)")
        let signed = try #require(try history.json()["signedTransactions"] as? [String])
        let served = signed.map(JWSCLITests.payload)
        #expect(Set(served.compactMap { $0["transactionId"] as? String }) == Set(inApp.compactMap { $0["transaction_id"] as? String }))
        #expect(Set(served.compactMap { ($0["expiresDate"] as? Int).map(String.init) }) == Set(inApp.compactMap { $0["expires_date_ms"] as? String }))
        #expect(served.allSatisfy { $0["type"] as? String == "Auto-Renewable Subscription" && $0["subscriptionGroupIdentifier"] as? String == "21482563" })
        #expect(served.allSatisfy { $0["storefront"] as? String == "GBR" && $0["currency"] as? String == "GBP" })
        let offered = served.filter { $0["offerType"] as? Int == 1 }
        #expect(offered.count == 3)
        #expect(offered.allSatisfy { $0["offerDiscountType"] as? String == "PAY_AS_YOU_GO" && $0["price"] as? Int == 4990 && $0["offerPeriod"] as? String == "P3M" })
        #expect(served.filter { $0["offerType"] == nil }.allSatisfy { $0["price"] as? Int == 99_990 })
        let servedLatest = try #require(served.first { $0["transactionId"] as? String == latest["transactionId"] as? String })
        #expect(servedLatest["expiresDate"] as? Int == latest["expiresDate"] as? Int && servedLatest["price"] as? Int == latest["price"] as? Int)
    }

    /// Issue 39 item 5: `forge jws make` took the file's storefront over the spec's, `forge serve` kept the spec's and
    /// ignored the file beside a spec's own products. One rule now (`Scenario.applying(_:)`): what the scenario says
    /// wins, the file fills the rest.
    @Test("One spec and one file give one storefront and one catalogue in jws make and serve: the scenario's own values win, the file fills the rest")
    func oneMergeRule() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = directory.appendingPathComponent("france.json")
        try Data(
            #"""
            {"now": "2025-06-01T00:00:00Z", "storefront": "FRA", "products": [{"productId": "com.example.own", "type": "non-consumable", "price": "4.99"}],
             "purchases": [{"productId": "com.example.pro.monthly", "purchaseDate": "2025-05-20T00:00:00Z"}]}
            """#.utf8
        ).write(to: spec)
        let made = try json(try await forge("jws", "make", "transaction", "--spec", spec.path, "--storekit", Self.example, "-q", "--format", "json"))
        let payload = try #require(made["payload"] as? [String: Any])
        #expect(payload["storefront"] as? String == "FRA" && payload["currency"] as? String == "EUR", "jws make: \(payload)")
        #expect(payload["subscriptionGroupIdentifier"] as? String == "21482563", "the file's product joins the spec's: \(payload)")

        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", Self.now, "--scenario", spec.path, "--storekit", Self.example])
        defer { server.kill() }
        let held = try await request(server.url + "/_forge/scenarios")
        let scenarios = try #require(try JSONSerialization.jsonObject(with: held.body) as? [[String: Any]], "\(held.text)")
        #expect(scenarios.first?["storefront"] as? String == "FRA", "serve: \(held.text)")
        let catalogue = (scenarios.first?["products"] as? [[String: Any]])?.compactMap { $0["productId"] as? String }
        #expect(catalogue == ["com.example.own"] + Self.products, "serve's catalogue: \(catalogue ?? [])")
        let id = try #require(payload["transactionId"] as? String)
        let answer = try await request("\(server.url)/inApps/v1/transactions/\(id)")
        #expect(answer.status == 200, "\(answer.text)")
        let served = JWSCLITests.payload(try #require(try answer.json()["signedTransactionInfo"] as? String, "\(answer.text)"))
        #expect(served["storefront"] as? String == payload["storefront"] as? String && served["price"] as? Int == payload["price"] as? Int, "served: \(served)")
    }

    /// With `ServeCLITests.timeRate`, the only test of a running clock (here the file's `_timeRate`, bounded the same way:
    /// a slower machine only widens what it accepts); every other test pins `--now`.
    @Test("forge serve --storekit: the products join a scenario that defines none, --product adds a customer, and _timeRate is the clock's rate")
    func serveTakesTheFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = directory.appendingPathComponent("plain.json")
        try Data(#"{"now": "2025-06-01T00:00:00Z", "purchases": [{"productId": "com.example.pro.monthly", "renewals": 1}]}"#.utf8).write(to: plain)
        let server = try await BackgroundServer.start([
            "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", Self.now, "--scenario", plain.path, "--storekit", Self.example, "--product", "com.example.lifetime",
        ])
        defer { server.kill() }
        let held = try await request(server.url + "/_forge/scenarios")
        let scenarios = try #require(try JSONSerialization.jsonObject(with: held.body) as? [[String: Any]], "\(held.text)")
        #expect(scenarios.count == 2 && scenarios.allSatisfy { ($0["products"] as? [Any])?.count == 5 && $0["storefront"] as? String == "GBR" })
        #expect((scenarios.last?["purchases"] as? [[String: Any]])?.first?["productId"] as? String == "com.example.lifetime")

        // monthlyRenewalEveryHour: 720 store seconds a wall second. The server reads the wall clock somewhere inside
        // each request, so between its two reads at least the wall time from the first answer to the second request
        // passed, and at most the time around both; each read is whole seconds (±1). A slow machine only widens
        // the window: it can let a wrong rate pass, never fail the right one.
        func clock() async throws -> Date {
            let answer = try await request(server.url + "/_forge/clock")
            return try #require(ReceiptDate.parse(try answer.json()["now"] as? String ?? ""), "\(answer.text)")
        }
        let rate = 720.0
        let aroundStart = Date()
        let first = try await clock()
        let betweenStart = Date()
        try await Task.sleep(for: .seconds(1))  // the time whose passing is measured
        let betweenEnd = Date()
        let second = try await clock()
        let aroundEnd = Date()
        let moved = second.timeIntervalSince(first)
        let least = rate * betweenEnd.timeIntervalSince(betweenStart) - 1, most = rate * aroundEnd.timeIntervalSince(aroundStart) + 1
        #expect(moved >= least && moved <= most, "the clock moved \(moved) s; at \(Int(rate))×, from \(least) to \(most)")
    }

    @Test(
        "Apple's Python library decodes the file's fields from forged JWS: type, offerType, offerDiscountType, price, currency, storefront",
        .requires(.appleLibrary))
    func appleLibraryDecodes() async throws {
        let base = ["--storekit", Self.example, "--preset", "sandbox"]
        let cases: [([String], [String: Any])] = [
            (
                ["--product", "com.example.pro.monthly"],
                ["type": "Auto-Renewable Subscription", "offerType": 1, "offerDiscountType": "FREE_TRIAL", "price": 0, "currency": "GBP", "storefront": "GBR"]
            ),
            (["--product", "com.example.pro.yearly"], ["offerType": 1, "offerDiscountType": "PAY_AS_YOU_GO", "price": 4990, "offerPeriod": "P3M"]),
            (
                ["--product", "com.example.pro.monthly", "--renewals", "2", "--promo", "comeback-50"],
                ["offerType": 2, "offerIdentifier": "comeback-50", "offerDiscountType": "PAY_AS_YOU_GO", "price": 4990]
            ),
            (["--product", "com.example.pro.monthly", "--renewals", "2", "--promo", "PRESS2026"], ["offerType": 3, "offerDiscountType": "FREE_TRIAL", "price": 0]),
            (["--product", "com.example.pro.monthly", "--renewals", "2", "--promo", "winback-year"], ["offerType": 4, "offerDiscountType": "PAY_UP_FRONT"]),
            (["--product", "com.example.coins"], ["type": "Consumable", "price": 990, "currency": "GBP", "storefrontId": "143444"]),
            (["--product", "com.example.season"], ["type": "Non-Renewing Subscription", "price": 14_990]),
        ]
        for (arguments, expected) in cases {
            let verdict = try await JWSTypedEdgesTests.appleVerdict("transaction", environment: "Sandbox", appAppleID: "-", base + arguments)
            #expect(verdict["verdict"] as? String == "accept", "\(arguments): \(verdict)")
            let decoded = try #require(verdict["decoded"] as? [String: Any])
            for (key, value) in expected {
                #expect("\(decoded[key] ?? "absent")" == "\(value)", "\(arguments) \(key): \(decoded[key] ?? "absent") ≠ \(value)")
            }
        }
        let renewal = try await JWSTypedEdgesTests.appleVerdict("renewal", environment: "Sandbox", appAppleID: "-", base + ["--product", "com.example.pro.monthly", "--expired"])
        let decoded = try #require(renewal["decoded"] as? [String: Any])
        #expect(decoded["eligibleWinBackOfferIds"] as? [String] == ["winback-year"] && decoded["renewalPrice"] as? Int == 9990, "\(renewal)")
    }

    @Test(
        "forge notify --storekit: the delivered notification carries the file's product, group and storefront, and Apple's verifier accepts it",
        .requires(.appleLibrary))
    func notifyTakesTheFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("record.jsonl")
        let server = try await NotifyTests.receiver(answering: "200", record: record)
        defer { server.kill() }
        let saved = directory.appendingPathComponent("n.json")
        let sent = try await forge(
            arguments: [
                "notify", server.url + "/apple", "--storekit", Self.example, "--product", "com.example.pro.yearly", "--renewals", "3", "--preset", "sandbox",
                "--now", Self.now, "--notification-type", "DID_RENEW", "--save", saved.path,
            ])
        #expect(sent.status == 0, "\(sent.text) \(sent.stderr)")
        #expect(NotifyTests.records(record).first?["verified"] as? Bool == true, "\(NotifyTests.records(record))")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: saved)) as? [String: Any])
        let payload = JWSCLITests.payload(try #require(body["signedPayload"] as? String))
        let transaction = JWSCLITests.payload(try #require((payload["data"] as? [String: Any])?["signedTransactionInfo"] as? String))
        #expect(transaction["productId"] as? String == "com.example.pro.yearly" && transaction["subscriptionGroupIdentifier"] as? String == "21482563")
        #expect(transaction["storefront"] as? String == "GBR" && transaction["price"] as? Int == 99_990)
    }

    /// A monthly subscriber who moves up the file's group to the yearly product on 2025-05-15: the spec, and the
    /// notification of that event (`forge jws make notification --event 1`) as `--format json` prints it.
    static func upgrade(in directory: URL) async throws -> (spec: URL, made: [String: Any]) {
        let spec = try await Self.customer(
            in: directory,
            [
                "preset": "sandbox", "purchases": [["productId": "com.example.pro.monthly", "purchaseDate": "2025-04-10T00:00:00Z", "renewals": 1]],
                "timeline": [["event": "change-product", "at": "2025-05-15T00:00:00Z", "to": "com.example.pro.yearly"]],
            ])
        return (spec, try json(try await forge("jws", "make", "notification", "--spec", spec.path, "--event", "1", "-q", "--format", "json")))
    }

    @Test("An upgrade up the file's group: --event reports DID_CHANGE_RENEWAL_PREF/UPGRADE about the new product's period, and the Server API's notification history has it")
    func upgradeFromTimeline() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (spec, made) = try await Self.upgrade(in: directory)
        let payload = try #require(made["payload"] as? [String: Any])
        #expect(payload["notificationType"] as? String == "DID_CHANGE_RENEWAL_PREF" && payload["subtype"] as? String == "UPGRADE", "\(payload)")
        let data = try #require(payload["data"] as? [String: Any])
        let transaction = JWSCLITests.payload(try #require(data["signedTransactionInfo"] as? String))
        #expect(transaction["productId"] as? String == "com.example.pro.yearly" && transaction["transactionReason"] as? String == "PURCHASE")
        #expect(transaction["purchaseDate"] as? Int == 1_747_267_200_000, "2025-05-15")

        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", Self.now, "--scenario", spec.path])
        defer { server.kill() }
        let answer = try await post(server.url + "/sandbox/inApps/v1/notifications/history", json: #"{"startDate":1746230400000,"endDate":1748736000000}"#)
        let history = try #require(try answer.json()["notificationHistory"] as? [[String: Any]], "\(answer.text)")
        let pairs = history.map { JWSCLITests.payload($0["signedPayload"] as? String ?? "") }.map { "\($0["notificationType"] ?? "")/\($0["subtype"] ?? "")" }
        #expect(pairs.contains("DID_CHANGE_RENEWAL_PREF/UPGRADE"), "\(pairs)")
        #expect(!pairs.contains("DID_RENEW/"), "the upgrade's period is no renewal: \(pairs)")
    }

    @Test("Apple's verifier accepts the upgrade's notification (DID_CHANGE_RENEWAL_PREF/UPGRADE from the file's group)", .requires(.appleLibrary))
    func appleAcceptsUpgrade() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (_, made) = try await Self.upgrade(in: directory)
        let file = directory.appendingPathComponent("upgrade.jws")
        try Data(try #require(made["jws"] as? String).utf8).write(to: file)
        let checked = try await run(
            try Oracle.appleLibrary.required(), [JWSCLITests.appleVerifier, JWSCLITests.root, "Sandbox", "com.example.app", "-", "notification", file.path])
        #expect(checked.status == 0 && checked.text.contains("UPGRADE"), "Apple's verifier: \(checked.text) \(checked.stderr)")
    }
}
