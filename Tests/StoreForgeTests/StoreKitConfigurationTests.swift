import Foundation
import _ForgeSupport
import JWSModel
import StoreForge
import StoreModel
import Testing
import AppStoreVocabulary

/// Issue 25: Xcode `.storekit` files (versions 2, 3 and 4, written here in Xcode's own layout) read into the scenario's
/// products, and the receipts and JWS a purchase of them makes.
@Suite("StoreKit configuration files", .timeLimit(.minutes(2)))
struct StoreKitConfigurationTests {
    /// A file of `version`: a consumable, a non-consumable, a non-renewing subscription and one group of two
    /// subscriptions. Version 2 has no offer codes, version 3 adds them, version 4 win-back offers; `extra` is spliced
    /// into the first subscription (unknown keys, or a replaced member).
    static func file(version: Int, storefront: String = "GBR", timeRate: String = #""_timeRate" : 15"#, monthly: String = "") -> String {
        let codeOffers =
            version >= 3
            ? #"""
            "codeOffers" : [ { "displayPrice" : "0.99", "eligibility" : [ "new" ], "internalID" : "C1", "isStackable" : true,
              "numberOfPeriods" : 2, "paymentMode" : "payAsYouGo", "referenceName" : "SPRING", "subscriptionPeriod" : "P1M" } ],
            """# : ""
        let winback =
            version >= 4
            ? #"""
            "winbackOffers" : [ { "displayPrice" : "19.99", "internalID" : "W1", "numberOfPeriods" : 1, "offerID" : "winback-year",
              "paymentMode" : "payUpFront", "referenceName" : "Back", "subscriptionPeriod" : "P1Y" } ],
            """# : ""
        return """
            {
              "identifier" : "ABCD1234",
              "nonRenewingSubscriptions" : [
                { "displayPrice" : "14.99", "familyShareable" : false, "internalID" : "N1",
                  "localizations" : [ { "description" : "A season", "displayName" : "Season", "locale" : "en_US" } ],
                  "productID" : "season", "referenceName" : "Season", "type" : "NonRenewingSubscription" }
              ],
              "products" : [
                { "displayPrice" : "0.99", "familyShareable" : false, "internalID" : "P1", "localizations" : [ ],
                  "productID" : "coins", "referenceName" : "Coins", "type" : "Consumable" },
                { "displayPrice" : "29.99", "familyShareable" : true, "internalID" : "P2", "localizations" : [ ],
                  "productID" : "lifetime", "referenceName" : "Lifetime", "type" : "NonConsumable" }
              ],
              "settings" : { "_locale" : "en_GB", "_storefront" : "\(storefront)", "_storeKitErrors" : [ ], \(timeRate) },
              "subscriptionGroups" : [
                { "id" : "21000001", "localizations" : [ ], "name" : "Pro",
                  "subscriptions" : [
                    { "adHocOffers" : [ { "displayPrice" : "4.99", "internalID" : "A1", "numberOfPeriods" : 3, "offerID" : "half-price",
                        "paymentMode" : "payAsYouGo", "referenceName" : "Half", "subscriptionPeriod" : "P1M" } ],
                      \(codeOffers)
                      \(winback)
                      "displayPrice" : "9.99", "familyShareable" : true, "groupNumber" : 2, "internalID" : "S1",
                      "introductoryOffer" : { "internalID" : "I1", "numberOfPeriods" : 1, "paymentMode" : "free", "subscriptionPeriod" : "P1W" },
                      "localizations" : [ { "description" : "Monthly", "displayName" : "Pro Monthly", "locale" : "en_US" } ],
                      \(monthly)
                      "productID" : "pro.monthly", "recurringSubscriptionPeriod" : "P1M", "referenceName" : "Pro Monthly",
                      "subscriptionGroupID" : "21000001", "type" : "RecurringSubscription" },
                    { "adHocOffers" : [ ], "displayPrice" : "99.99", "familyShareable" : false, "groupNumber" : 1, "internalID" : "S2",
                      "introductoryOffer" : { "displayPrice" : "24.99", "internalID" : "I2", "numberOfPeriods" : 3, "paymentMode" : "payUpFront",
                        "subscriptionPeriod" : "P1M" },
                      "productID" : "pro.yearly", "recurringSubscriptionPeriod" : "P1Y", "referenceName" : "Pro Yearly",
                      "subscriptionGroupID" : "21000001", "type" : "RecurringSubscription" },
                    { "displayPrice" : "4.99", "groupNumber" : 3, "internalID" : "S3",
                      "introductoryOffer" : { "displayPrice" : "1.99", "internalID" : "I3", "numberOfPeriods" : 2, "paymentMode" : "payAsYouGo",
                        "subscriptionPeriod" : "P1W" },
                      "productID" : "pro.weekly", "recurringSubscriptionPeriod" : "P1W", "referenceName" : "Pro Weekly",
                      "subscriptionGroupID" : "21000001", "type" : "RecurringSubscription" }
                  ] }
              ],
              "version" : { "major" : \(version), "minor" : 0 }
            }
            """
    }

    static func read(_ text: String) throws(StoreKitFileError) -> StoreKitConfiguration { try StoreKitConfiguration.read(Array(text.utf8)) }

    static let now = ReceiptDate.parse("2025-06-01T00:00:00Z") ?? Date()

    @Test("Versions 2, 3 and 4: every product type, the group and its levels, each offer kind the version has, the storefront and the time rate")
    func everyVersion() throws {
        for version in 2...4 {
            let configuration = try Self.read(Self.file(version: version))
            #expect(configuration.version == version)
            #expect(configuration.products.map(\.productID) == ["coins", "lifetime", "season", "pro.monthly", "pro.yearly", "pro.weekly"])
            #expect(configuration.products.map(\.type) == [.consumable, .nonConsumable, .nonRenewing, .autoRenewable, .autoRenewable, .autoRenewable])
            #expect(configuration.groups == [.init(id: "21000001", name: "Pro", productIDs: ["pro.monthly", "pro.yearly", "pro.weekly"])])
            #expect(configuration.storefront == "GBR" && configuration.timeRate == .monthlyRenewalEveryThirtySeconds)
            #expect(configuration.names["season"] == "Season" && configuration.names["coins"] == "Coins")
            let monthly = try #require(configuration.products.first { $0.productID == "pro.monthly" })
            #expect(monthly.period == "P1M" && monthly.group == "21000001" && monthly.groupLevel == 2 && monthly.price == "9.99")
            #expect(monthly.familyShareable == true && monthly.priceMilliunits == 9990)
            #expect(monthly.introductoryOffer == SubscriptionOffer(kind: .introductory, paymentMode: .freeTrial, period: "P1W", periods: 1))
            var expected = [SubscriptionOffer(kind: .promotional, id: "half-price", paymentMode: .payAsYouGo, period: "P1M", periods: 3, price: "4.99")]
            if version >= 3 { expected.append(SubscriptionOffer(kind: .offerCode, id: "SPRING", paymentMode: .payAsYouGo, period: "P1M", periods: 2, price: "0.99")) }
            if version >= 4 { expected.append(SubscriptionOffer(kind: .winBack, id: "winback-year", paymentMode: .payUpFront, period: "P1Y", periods: 1, price: "19.99")) }
            #expect(monthly.offers == expected, "version \(version)")
            let yearly = try #require(configuration.products.first { $0.productID == "pro.yearly" })
            #expect(yearly.introductoryOffer?.paymentMode == .payUpFront && yearly.introductoryOffer?.priceMilliunits == 24_990)
        }
        // The older name of the time rate, and a file without settings.
        let older = try Self.read(Self.file(version: 3, timeRate: #""_compatibilityTimeRate" : 1"#))
        #expect(older.timeRate == .oneHourIsOneDay && older.timeRate?.storeSecondsPerSecond == 24)
        #expect(XcodeTimeRate.monthlyRenewalEveryHour.storeSecondsPerSecond == 720)
    }

    @Test("Keys forge does not read are passed over, at every level, as Apple adds them")
    func unknownKeysTolerated() throws {
        var text = Self.file(version: 4, monthly: #""promotionalImage" : { "url" : "x" }, "billingPlans" : [ ],"#)
        text = text.replacingOccurrences(of: #""identifier" : "ABCD1234","#, with: #""identifier" : "ABCD1234", "appPolicies" : { "eula" : "" },"#)
        text = text.replacingOccurrences(of: #""_locale" : "en_GB","#, with: #""_locale" : "en_GB", "_askToBuyEnabled" : false, "_futureSetting" : [ 1 ],"#)
        let configuration = try Self.read(text)
        #expect(configuration.products.count == 6)
    }

    @Test("A known key of the wrong type or an impossible value is refused with its JSON path; so is a file that is not JSON")
    func refusals() throws {
        let subscription = "subscriptionGroups[0].subscriptions[0]"
        let cases: [(String, String, String)] = [
            (#""major" : 4"#, #""major" : 5"#, "version.major"),
            (#""major" : 4"#, #""major" : "4""#, "version.major"),
            (#""type" : "Consumable""#, #""type" : "Consumables""#, "products[0].type"),
            (#""type" : "NonRenewingSubscription""#, #""type" : "Consumable""#, "nonRenewingSubscriptions[0].type"),
            (#""displayPrice" : "0.99""#, #""displayPrice" : 0.99"#, "products[0].displayPrice"),
            (#""displayPrice" : "0.99""#, #""displayPrice" : "-1""#, "products[0].displayPrice"),
            (#""familyShareable" : true, "internalID" : "P2""#, #""familyShareable" : "yes", "internalID" : "P2""#, "products[1].familyShareable"),
            (#""productID" : "coins""#, #""productID" : "lifetime""#, "products[1].productID"),
            (#""paymentMode" : "free""#, #""paymentMode" : "freeTrial""#, "\(subscription).introductoryOffer.paymentMode"),
            (#""subscriptionPeriod" : "P1W" }"#, #""subscriptionPeriod" : "weekly" }"#, "\(subscription).introductoryOffer.subscriptionPeriod"),
            (#""numberOfPeriods" : 3, "offerID""#, #""numberOfPeriods" : 0, "offerID""#, "\(subscription).adHocOffers[0].numberOfPeriods"),
            (#""offerID" : "half-price""#, #""offerID" : """#, "\(subscription).adHocOffers[0].offerID"),
            (#""recurringSubscriptionPeriod" : "P1M""#, #""recurringSubscriptionPeriod" : "P0M""#, "\(subscription).recurringSubscriptionPeriod"),
            (#""groupNumber" : 2"#, #""groupNumber" : -2"#, "\(subscription).groupNumber"),
            (
                #""subscriptionGroupID" : "21000001", "type" : "RecurringSubscription" },"#, #""subscriptionGroupID" : "9", "type" : "RecurringSubscription" },"#,
                "\(subscription).subscriptionGroupID"
            ),
            (#""_storefront" : "GBR""#, #""_storefront" : "XYZ""#, "settings._storefront"),
            (#""_timeRate" : 15"#, #""_timeRate" : 7"#, "settings._timeRate"),
            (#""subscriptionGroups" : ["#, #""subscriptionGroups" : {}, "x" : ["#, "subscriptionGroups"),
        ]
        for (original, replacement, path) in cases {
            let text = Self.file(version: 4)
            #expect(text.contains(original), "the fixture lacks \(original)")
            do {
                _ = try Self.read(text.replacingOccurrences(of: original, with: replacement))
                Issue.record("\(replacement) was accepted")
            } catch {
                #expect(error.code == .invalid && error.keyPath == path, "\(replacement): \(error.code) at \(error.keyPath): \(error.message)")
                #expect(error.message.contains(path), "\(error.message)")
            }
        }
        #expect(throws: StoreKitFileError(.notJSON, "", keyPath: "")) { try Self.read("{ not json") }
        #expect(throws: StoreKitFileError(.invalid, "", keyPath: "")) { try Self.read("[]") }
    }

    @Test("A product id the file does not define is refused, listing the ids it does")
    func unknownProduct() throws {
        let configuration = try Self.read(Self.file(version: 4))
        do {
            _ = try configuration.scenario(purchasing: ["pro.monthly", "pro.daily"])
            Issue.record("pro.daily was accepted")
        } catch {
            #expect(error.code == .unknownProduct && error.message.contains("pro.daily"), "\(error.message)")
            #expect(configuration.products.allSatisfy { error.message.contains($0.productID) }, "\(error.message)")
        }
        // Without ids: every product, one subscription of the group.
        #expect(try configuration.scenario(purchasing: []).purchases.map(\.productID) == ["coins", "lifetime", "season", "pro.monthly"])
    }

    @Test("The scenario forge storekit scenario writes reads back as the same products and storefront")
    func scenarioRoundTrip() throws {
        let scenario = try Self.read(Self.file(version: 4)).scenario(purchasing: ["pro.monthly"])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let decoded = try Scenario.decode(json: try encoder.encode(scenario))
        #expect(decoded.products == scenario.products && decoded.storefront == "GBR" && decoded.purchases == scenario.purchases)
    }

    /// A store of `purchase` of the version-4 file, looked at on 2025-06-01.
    static func store(_ purchase: Purchase, timeline: [TimelineEvent]? = nil) throws -> Store {
        var scenario = try read(file(version: 4)).scenario(purchasing: [purchase.productID])
        scenario.purchases = [purchase]
        scenario.timeline = timeline
        return try Store(scenario, now: now)
    }

    @Test("The introductory offer makes the first periods: a free week, three months paid up front as one, two paid weeks")
    func introductoryPeriods() throws {
        let day = 86_400.0
        let start = try #require(ReceiptDate.parse("2025-01-01T00:00:00Z"))
        // Free trial of P1W, then monthly.
        let monthly = try Self.store(Purchase(productID: "pro.monthly", purchaseDate: "2025-01-01T00:00:00Z", renewals: 2)).transactions
        #expect(monthly.map(\.isTrialPeriod) == [true, false, false] && monthly.allSatisfy { !$0.isInIntroOfferPeriod })
        #expect(monthly[0].expiresDate == start.addingTimeInterval(7 * day))
        #expect(monthly[1].expiresDate == SubscriptionPeriod.month.advance(start.addingTimeInterval(7 * day), by: 1))
        // Pay up front: one transaction of P3M, then yearly.
        let yearly = try Self.store(Purchase(productID: "pro.yearly", purchaseDate: "2025-01-01T00:00:00Z", renewals: 1)).transactions
        #expect(yearly.map(\.isInIntroOfferPeriod) == [true, false])
        #expect(yearly[0].expiresDate == ReceiptDate.parse("2025-04-01T00:00:00Z"))
        #expect(yearly[1].expiresDate == ReceiptDate.parse("2026-04-01T00:00:00Z"))
        // Pay as you go, two periods of P1W, then weekly; counted back from an end date too.
        let weekly = try Self.store(Purchase(productID: "pro.weekly", expiresDate: "2025-05-01T00:00:00Z", renewals: 3)).transactions
        #expect(weekly.map(\.isInIntroOfferPeriod) == [true, true, false, false])
        #expect(weekly.last?.expiresDate == ReceiptDate.parse("2025-05-01T00:00:00Z"))
        #expect(zip(weekly, weekly.dropFirst()).allSatisfy { $0.expiresDate == $1.purchaseDate })
        // A purchase can decline the offer.
        let declined = try Self.store(Purchase(productID: "pro.monthly", renewals: 1, trial: false)).transactions
        #expect(declined.allSatisfy { !$0.isTrialPeriod && !$0.isInIntroOfferPeriod })
        // And may not ask for another kind than the product has.
        #expect(throws: ForgeError(.conflictingOptions, "")) { try Self.store(Purchase(productID: "pro.monthly", intro: true)) }
        #expect(throws: ForgeError(.conflictingOptions, "")) { try Self.store(Purchase(productID: "pro.monthly", type: .consumable)) }
        #expect(throws: ForgeError(.invalidScenario, "")) { try Self.store(Purchase(productID: "pro.monthly", promo: "not-an-offer")) }
    }

    /// The payload of `kind` of `purchase` (the version-4 file).
    static func payload(_ purchase: Purchase, kind: JWSKind = .transaction, timeline: [TimelineEvent]? = nil, options: JWSOptions = JWSOptions()) throws -> JSONValue {
        var scenario = try read(file(version: 4)).scenario(purchasing: [purchase.productID])
        scenario.purchases = [purchase]
        scenario.timeline = timeline
        return try Forge(receiptPKI: .bundled()).make(kind, scenario: scenario, now: now, options: options).payload
    }

    @Test("JWS fields from the file: group, storefront and its currency, price, and each offer's type, discount type, id, price and period")
    func jwsFields() throws {
        let trial = try Self.payload(Purchase(productID: "pro.monthly"))
        #expect(trial["subscriptionGroupIdentifier"] == .string("21000001") && trial["storefront"] == .string("GBR"))
        #expect(trial["storefrontId"] == .string("143444") && trial["currency"] == .string("GBP"))
        #expect(trial["offerType"] == .integer(1) && trial["offerDiscountType"] == .string("FREE_TRIAL") && trial["price"] == .integer(0))
        #expect(trial["offerPeriod"] == .string("P1W"))
        let full = try Self.payload(Purchase(productID: "pro.monthly", renewals: 1))
        #expect(full["price"] == .integer(9990) && full["offerType"] == nil && full["offerDiscountType"] == nil)
        let upFront = try Self.payload(Purchase(productID: "pro.yearly"))
        #expect(upFront["offerDiscountType"] == .string("PAY_UP_FRONT") && upFront["price"] == .integer(24_990) && upFront["offerPeriod"] == .string("P3M"))
        for (offer, type, discount, price) in [
            ("half-price", 2, "PAY_AS_YOU_GO", 4990), ("SPRING", 3, "PAY_AS_YOU_GO", 990), ("winback-year", 4, "PAY_UP_FRONT", 19_990),
        ] {
            let payload = try Self.payload(Purchase(productID: "pro.monthly", renewals: 2, promo: offer))
            #expect(payload["offerType"] == .integer(Int64(type)) && payload["offerIdentifier"] == .string(offer), "\(offer)")
            #expect(payload["offerDiscountType"] == .string(discount) && payload["price"] == .integer(Int64(price)), "\(offer)")
        }
        // Products without a subscription: their own price and type, no group.
        let coins = try Self.payload(Purchase(productID: "coins"))
        #expect(coins["price"] == .integer(990) && coins["type"] == .string("Consumable") && coins["subscriptionGroupIdentifier"] == nil)
        #expect(try Self.payload(Purchase(productID: "season"))["type"] == .string("Non-Renewing Subscription"))
        // --price and --currency still win over the file.
        let given = try Self.payload(Purchase(productID: "coins"), options: JWSOptions(currency: "EUR", price: 1000))
        #expect(given["price"] == .integer(1000) && given["currency"] == .string("EUR"))
    }

    @Test("Renewal info: the price it renews at, and a lapsed subscription's win-back offers")
    func renewalInfo() throws {
        let active = try Self.payload(Purchase(productID: "pro.monthly", renewals: 1), kind: .renewal)
        #expect(active["renewalPrice"] == .integer(9990) && active["currency"] == .string("GBP") && active["eligibleWinBackOfferIds"] == nil)
        let lapsed = try Self.payload(Purchase(productID: "pro.monthly", expired: true, renewals: 1), kind: .renewal)
        #expect(lapsed["eligibleWinBackOfferIds"] == .array([.string("winback-year")]))
    }

    @Test("Groups drive changes of product: down a level renews as it from the next period; up a level is an upgrade at once; another group is refused")
    func groupChanges() throws {
        let change = { (to: String) in [TimelineEvent(.changeProduct, at: "2025-05-15T00:00:00Z", productID: "pro.monthly", to: to)] }
        // A free week from April 10, then a month to May 17: in force at the change, May 15.
        let purchase = Purchase(productID: "pro.monthly", purchaseDate: "2025-04-10T00:00:00Z", renewals: 1)
        // Down: the renewal info says what it renews as, at that product's price; the period in force is untouched.
        let down = try Self.store(purchase, timeline: change("pro.weekly"))
        #expect(down.history.pendingRenewals.first?.autoRenewProductID == "pro.weekly" && down.transactions.allSatisfy { !$0.isUpgraded })
        let downRenewal = try Self.payload(purchase, kind: .renewal, timeline: change("pro.weekly"))
        #expect(downRenewal["autoRenewProductId"] == .string("pro.weekly") && downRenewal["renewalPrice"] == .integer(4990))
        #expect(down.scenario.notification(for: change("pro.weekly")[0])! == (.didChangeRenewalPref, .downgrade))
        // Up: the period in force ends as upgraded, a yearly period of the same subscription starts then, a purchase.
        let up = try Self.store(purchase, timeline: change("pro.yearly"))
        let upgraded = try #require(up.transactions.first { $0.isUpgraded })
        let yearly = try #require(up.transactions.last)
        #expect(upgraded.productID == "pro.monthly" && yearly.productID == "pro.yearly" && yearly.upgradedFrom == "pro.monthly")
        #expect(yearly.originalTransactionID == upgraded.originalTransactionID && yearly.purchaseDate == ReceiptDate.parse("2025-05-15T00:00:00Z"))
        #expect(yearly.expiresDate == ReceiptDate.parse("2026-05-15T00:00:00Z"))
        #expect(up.history.pendingRenewals.map(\.productID) == ["pro.yearly"] && up.history.pendingRenewals.first?.autoRenewProductID == "pro.yearly")
        #expect(up.scenario.notification(for: change("pro.yearly")[0])! == (.didChangeRenewalPref, .upgrade))
        let latest = try Self.payload(purchase, timeline: change("pro.yearly"))
        #expect(latest["productId"] == .string("pro.yearly") && latest["transactionReason"] == .string("PURCHASE") && latest["price"] == .integer(99_990))
        var options = JWSOptions(productID: "pro.monthly")
        options.productID = "pro.monthly"
        let before = try Self.payload(purchase, timeline: change("pro.yearly"), options: options)
        #expect(before["isUpgraded"] == .bool(true) && before["productId"] == .string("pro.monthly"))
        // A later renewal named after the old product renews the new one.
        var later = try Self.read(Self.file(version: 4)).scenario(purchasing: ["pro.monthly"])
        later.purchases = [purchase]
        later.timeline = change("pro.yearly") + [TimelineEvent(.renew, productID: "pro.monthly")]
        let reissuedAt = try #require(ReceiptDate.parse("2026-06-01T00:00:00Z"))
        let renewed = try Store(later, now: Self.now, reissuedAt: reissuedAt)
        #expect(renewed.transactions.suffix(2).map(\.productID) == ["pro.yearly", "pro.yearly"])
        #expect(renewed.transactions.last?.expiresDate == ReceiptDate.parse("2027-05-15T00:00:00Z"))
        var scenario = try Self.read(Self.file(version: 4)).scenario(purchasing: ["pro.monthly"])
        scenario.products?.append(ProductDefinition(productID: "other.monthly", type: .autoRenewable, period: "P1M", group: "999", groupLevel: 5))
        scenario.timeline = [TimelineEvent(.changeProduct, at: "2025-05-15T00:00:00Z", productID: "pro.monthly", to: "other.monthly")]
        #expect(throws: ForgeError(.invalidScenario, "")) { try Store(scenario, now: Self.now) }
    }

    @Test("REVOKE (family sharing) needs a family-shareable product")
    func familySharing() throws {
        let options = JWSOptions(notificationType: .known(.revoke))
        #expect(throws: ForgeError(.conflictingOptions, "")) { try Self.payload(Purchase(productID: "pro.yearly"), kind: .notification, options: options) }
        let shared = try Self.payload(Purchase(productID: "lifetime"), kind: .notification, options: options)
        #expect(shared["notificationType"] == .string("REVOKE"))
    }

    @Test("A notification's type and subtype are Apple's types; a value Apple has not documented is kept as written, and claims nothing")
    func undocumentedNotificationType() throws {
        #expect(WireValue<NotificationType>("DID_RENEW") == .known(.didRenew))
        #expect(WireValue<NotificationSubtype>("FUTURE_SUBTYPE") == .unknown("FUTURE_SUBTYPE"))
        let options = JWSOptions(notificationType: WireValue("FUTURE_TYPE"), subtype: WireValue("FUTURE_SUBTYPE"))
        let payload = try Self.payload(Purchase(productID: "pro.monthly"), kind: .notification, options: options)
        #expect(payload["notificationType"] == .string("FUTURE_TYPE"))
        #expect(payload["subtype"] == .string("FUTURE_SUBTYPE"))
        #expect(payload["data"]?["signedTransactionInfo"] != nil)
    }
}
