import Foundation
import ForgeTestSupport
import Testing

/// Issue 40, item 2: what Apple added to its payloads in 2025–26, emitted from the store model, not only by `--set`:
/// how a refund took the transaction back (`revocationType`, `revocationPercentage`), offer codes on one-time
/// purchases (`offerDiscountType` ONE_TIME), the retention offer (`offerType` 5), a consumption request's reason and
/// a custom link token's type. Apple's Python library decodes each where it models it.
@Suite("forge jws make: Apple's 2025–26 fields, from the store", .timeLimit(.minutes(2)))
struct AppleSince2025Tests {
    static let now = "2026-01-05T00:00:00Z"

    /// A consumable with a one-time offer code, and a subscription with a retention offer, both bought with them.
    static let scenario = """
        {"bundleId": "com.example.app",
         "products": [
           {"productId": "com.example.gems", "type": "consumable", "price": "4.99",
            "offers": [{"kind": "offer-code", "id": "GEMS50", "paymentMode": "one-time", "price": "2.49"}]},
           {"productId": "com.example.pro", "type": "auto-renewable", "period": "P1M", "price": "9.99", "familyShareable": true,
            "offers": [{"kind": "retention", "id": "STAY", "paymentMode": "pay-as-you-go", "period": "P1M", "periods": 3, "price": "4.99"}]}],
         "purchases": [
           {"productId": "com.example.gems", "promo": "GEMS50", "purchaseDate": "2026-01-01T00:00:00Z"},
           {"productId": "com.example.pro", "promo": "STAY", "purchaseDate": "2026-01-01T00:00:00Z"}],
         "timeline": [{"event": "refund", "productId": "com.example.gems", "at": "2026-01-02T00:00:00Z", "percentage": 50000}]}
        """

    /// Writes `text` as a scenario in `directory`.
    static func spec(_ text: String, in directory: URL, named name: String = "scenario.json") throws -> String {
        let file = directory.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    /// `forge jws make KIND --spec SPEC …`'s payload, or the failure.
    static func payload(_ kind: String, spec: String, _ arguments: [String] = []) async throws -> (status: Int32, payload: [String: Any]?, stderr: String) {
        let made = try await forge(arguments: ["jws", "make", kind, "--spec", spec, "--now", now, "-q", "--format", "json"] + arguments)
        let payload = made.status == 0 ? (try JSONSerialization.jsonObject(with: made.stdout) as? [String: Any])?["payload"] as? [String: Any] : nil
        return (made.status, payload, made.stderr)
    }

    @Test("A prorated refund says REFUND_PRORATED and its share in milli-percent; a full one REFUND_FULL; a family member's loss FAMILY_REVOKE")
    func revocationType() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = try Self.spec(Self.scenario, in: directory)
        let prorated = try await Self.payload("transaction", spec: spec, ["--about", "com.example.gems"])
        #expect(prorated.payload?["revocationType"] as? String == "REFUND_PRORATED", "\(prorated.stderr)")
        #expect(prorated.payload?["revocationPercentage"] as? Int == 50_000)

        let full = try Self.spec(Self.scenario.replacingOccurrences(of: ", \"percentage\": 50000", with: ""), in: directory, named: "full.json")
        let refunded = try await Self.payload("transaction", spec: full, ["--about", "com.example.gems"])
        #expect(refunded.payload?["revocationType"] as? String == "REFUND_FULL", "\(refunded.stderr)")
        #expect(refunded.payload?["revocationPercentage"] == nil)

        // Not refunded: neither member.
        let kept = try await Self.payload("transaction", spec: spec, ["--about", "com.example.pro"])
        #expect(kept.status == 0 && kept.payload?["revocationType"] == nil && kept.payload?["revocationPercentage"] == nil, "\(kept.stderr)")

        // A family member's shared subscription, taken back by the purchaser's refund: REVOKE, FAMILY_REVOKE.
        let family = try Self.spec(
            """
            {"purchases": [{"productId": "com.example.family", "purchaseDate": "2025-12-01T00:00:00Z", "period": "P1M", "ownership": "FAMILY_SHARED"}],
             "timeline": [{"event": "refund", "at": "2025-12-10T00:00:00Z"}]}
            """, in: directory, named: "family.json")
        let revoked = try await Self.payload("notification", spec: family, ["--event", "1"])
        #expect(revoked.payload?["notificationType"] as? String == "REVOKE", "\(revoked.stderr)")
        let signed = try #require((revoked.payload?["data"] as? [String: Any])?["signedTransactionInfo"] as? String)
        #expect(try Self.claims(of: signed)["revocationType"] as? String == "FAMILY_REVOKE")
    }

    @Test("A refund's percentage is checked: only on refunds, more than 0 and less than 100000 milli-percent; exit 65 naming the field")
    func percentageIsChecked() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (wrong, expected) in [
            (Self.scenario.replacingOccurrences(of: "50000", with: "100000"), "percentage"),
            (Self.scenario.replacingOccurrences(of: "50000", with: "0"), "percentage"),
            (
                Self.scenario.replacingOccurrences(of: "\"event\": \"refund\"", with: "\"event\": \"cancel\"").replacingOccurrences(
                    of: "com.example.gems\", \"at", with: "com.example.pro\", \"at"), "refund"
            ),
        ] {
            let made = try await Self.payload("transaction", spec: try Self.spec(wrong, in: directory, named: "wrong.json"))
            #expect(made.status == 65 && made.stderr.contains(expected), "\(made.status): \(made.stderr)")
        }
    }

    @Test("An offer code on a consumable is offerType 3, offerDiscountType ONE_TIME at its price, no offerPeriod; receipts do not show it")
    func oneTimeOffer() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = try Self.spec(Self.scenario, in: directory)
        let made = try await Self.payload("transaction", spec: spec, ["--about", "com.example.gems"])
        let payload = try #require(made.payload, "\(made.stderr)")
        #expect(payload["offerType"] as? Int == 3 && payload["offerIdentifier"] as? String == "GEMS50")
        #expect(payload["offerDiscountType"] as? String == "ONE_TIME" && payload["price"] as? Int == 2490 && payload["offerPeriod"] == nil)
        // The receipt's promotional_offer_id is a subscription offer's only.
        let receipt = try await forge(arguments: ["make", "--spec", spec, "--now", Self.now, "-q", "--format", "json"])
        let text = String(decoding: receipt.stdout, as: UTF8.self)
        #expect(receipt.status == 0 && !text.contains("GEMS50") && text.contains("\"promotional_offer_id\": \"STAY\""), "\(receipt.stderr)")
    }

    @Test("One-time offers are offer codes on one-time products only; a one-time purchase's promo names one its product defines")
    func oneTimeOffersAreChecked() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases = [
            // A subscription's offer paid one-time.
            (Self.scenario.replacingOccurrences(of: "\"paymentMode\": \"pay-as-you-go\"", with: "\"paymentMode\": \"one-time\""), "one-time"),
            // A consumable's offer that is not an offer code.
            (Self.scenario.replacingOccurrences(of: "\"kind\": \"offer-code\"", with: "\"kind\": \"promotional\""), "offer-code"),
            // A consumable's promo without its product defined.
            (
                """
                {"purchases": [{"productId": "com.example.coins", "type": "consumable", "promo": "X"}]}
                """, "products"
            ),
        ]
        for (wrong, expected) in cases {
            let made = try await Self.payload("transaction", spec: try Self.spec(wrong, in: directory, named: "wrong.json"))
            #expect(made.status == 65 && made.stderr.contains(expected), "\(made.status): \(made.stderr)")
        }
    }

    @Test("A retention offer is offerType 5, which Apple's library keeps as a raw value")
    func retentionOffer() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try await Self.payload("transaction", spec: try Self.spec(Self.scenario, in: directory), ["--about", "com.example.pro"])
        #expect(made.payload?["offerType"] as? Int == 5 && made.payload?["offerIdentifier"] as? String == "STAY", "\(made.stderr)")
    }

    @Test("CONSUMPTION_REQUEST carries data.consumptionRequestReason (UNINTENDED_PURCHASE unless --consumption-request-reason)")
    func consumptionRequestReason() async throws {
        let base = ["--product", "com.example.gems", "--type", "consumable", "--notification-type", "CONSUMPTION_REQUEST"]
        for (arguments, reason) in [([String](), "UNINTENDED_PURCHASE"), (["--consumption-request-reason", "LEGAL"], "LEGAL")] {
            let made = try await JWSTypedEdgesTests.make("notification", base + arguments)
            #expect((made.payload?["data"] as? [String: Any])?["consumptionRequestReason"] as? String == reason, "\(made.stderr)")
        }
        // Only a consumption request has one.
        let renewed = try await JWSTypedEdgesTests.make("notification", ["--product", "p", "--type", "auto-renewable"])
        #expect(renewed.status == 0 && (renewed.payload?["data"] as? [String: Any])?["consumptionRequestReason"] == nil)
        #expect(try await JWSTypedEdgesTests.make("notification", base + ["--consumption-request-reason", "legal"]).status == 64)
    }

    @Test("A custom link token carries tokenType and tokenExpirationDate after its creation; other tokens neither")
    func customLinkToken() async throws {
        let base = ["--product", "p", "--notification-type", "EXTERNAL_PURCHASE_TOKEN", "--subtype", "UNREPORTED"]
        let custom = try await JWSTypedEdgesTests.make("notification", base + ["--token-type", "ACQUISITION"])
        let token = try #require(custom.payload?["externalPurchaseToken"] as? [String: Any], "\(custom.stderr)")
        #expect(token["tokenType"] as? String == "ACQUISITION")
        let created = try #require(token["tokenCreationDate"] as? Int), expires = try #require(token["tokenExpirationDate"] as? Int)
        #expect(expires > created)
        let plain = try await JWSTypedEdgesTests.make("notification", base)
        let older = try #require(plain.payload?["externalPurchaseToken"] as? [String: Any], "\(plain.stderr)")
        #expect(older["tokenType"] == nil && older["tokenExpirationDate"] == nil)
    }

    @Test("Apple's Python library decodes each new value from forge's signed payloads", .requires(.appleLibrary))
    func appleDecodes() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = try Self.spec(Self.scenario, in: directory)
        func verdict(_ kind: String, _ arguments: [String]) async throws -> [String: Any] {
            let path = directory.appendingPathComponent("\(kind).jws").path
            let made = try await forge(arguments: ["jws", "make", kind, "--now", Self.now, "-q", "-o", path, "--app-apple-id", "1234"] + arguments)
            #expect(made.status == 0, "\(made.stderr)")
            let result = try await run(
                try Oracle.appleLibrary.required(), [JWSCLITests.appleVerifier, JWSCLITests.root, "Production", "com.example.app", "1234", kind, path])
            let line = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.text)\(result.stderr)")
            #expect(line["verdict"] as? String == "accept", "\(line)")
            return line["decoded"] as? [String: Any] ?? [:]
        }
        let gems = try await verdict("transaction", ["--spec", spec, "--about", "com.example.gems"])
        #expect(gems["revocationType"] as? String == "REFUND_PRORATED" && gems["revocationPercentage"] as? Int == 50_000, "\(gems)")
        #expect(gems["offerDiscountType"] as? String == "ONE_TIME" && gems["offerType"] as? Int == 3, "\(gems)")
        let pro = try await verdict("transaction", ["--spec", spec, "--about", "com.example.pro"])
        #expect(pro["rawOfferType"] as? Int == 5 && pro["offerType"] == nil, "Apple's library keeps 5 raw: \(pro)")
        let consumption = try await verdict(
            "notification",
            ["--product", "com.example.gems", "--type", "consumable", "--notification-type", "CONSUMPTION_REQUEST", "--consumption-request-reason", "FULFILLMENT_ISSUE"])
        #expect(consumption["consumptionRequestReason"] as? String == "FULFILLMENT_ISSUE", "\(consumption)")
    }

    /// The claims of a compact JWS, undecoded by any verifier.
    static func claims(of compact: String) throws -> [String: Any] {
        let parts = compact.split(separator: ".")
        try #require(parts.count == 3)
        var text = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        let data = try #require(Data(base64Encoded: text))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
