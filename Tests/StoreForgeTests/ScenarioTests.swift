import Foundation
import ForgeCrypto
import StoreForge
import ReceiptModel
import Testing
import _ForgeSupport
import StoreModel

@Suite("Scenarios, determinism and the device hash", .timeLimit(.minutes(2)))
struct ScenarioTests {
    @Test("Same scenario, seed and time give the same bytes; another seed gives other bytes")
    func determinism() throws {
        let scenario = Scenario(seed: 42, purchases: [Purchase(productID: "p", renewals: 3, trial: true)])
        let first = try sharedForge.make(scenario, now: pinnedNow).bytes
        #expect(try sharedForge.make(scenario, now: pinnedNow).bytes == first)
        var reseeded = scenario
        reseeded.seed = 43
        #expect(try sharedForge.make(reseeded, now: pinnedNow).bytes != first)
        // Without a seed, the seed is derived from the inputs: still reproducible, still input-dependent.
        reseeded.seed = nil
        let derived = try sharedForge.make(reseeded, now: pinnedNow)
        #expect(try sharedForge.make(reseeded, now: pinnedNow).bytes == derived.bytes)
        #expect(try sharedForge.make(reseeded, now: pinnedNow.addingTimeInterval(1)).seed != derived.seed)
        for preset in Preset.allCases {
            let pinned = Scenario(preset: preset, seed: 7, purchases: [Purchase(productID: "p")])
            #expect(try sharedForge.make(pinned, now: pinnedNow).bytes == sharedForge.make(pinned, now: pinnedNow).bytes)
        }
    }

    @Test(
        "The device hash is SHA-1(device id ‖ opaque value ‖ bundle-id attribute value with its tag and length)",
        arguments: ["956328D9-CC6A-47F4-BE40-6953FB0AB6C7", "f8:ff:c2:1e:91:82"])
    func deviceHash(deviceID: String) throws {
        let decoded = try Decoded(Scenario(bundleID: "com.example.app", deviceID: deviceID))
        let device = try #require(DeviceID(deviceID))
        #expect(device.bytes.count == (deviceID.contains(":") ? 6 : 16))
        let opaque = try #require(decoded.receipt.opaqueValue)
        let tlv: [UInt8] = [0x0C, 15] + Array("com.example.app".utf8)
        #expect(decoded.receipt.bundleIDValue == tlv)
        #expect(decoded.receipt.sha1Hash == (try DigestAlgorithm.sha1.digest(device.bytes + opaque + tlv)))
        // The common bug (hashing the bare string) gives another value.
        #expect(decoded.receipt.sha1Hash != (try DigestAlgorithm.sha1.digest(device.bytes + opaque + Array("com.example.app".utf8))))
    }

    @Test("Long and non-ASCII bundle ids keep their full TLV (long-form length) in the hash")
    func longBundleID() throws {
        let bundle = String(repeating: "é", count: 100)  // 200 bytes of UTF-8: length needs 0x81 0xC8
        let decoded = try Decoded(Scenario(bundleID: bundle, deviceID: "956328D9-CC6A-47F4-BE40-6953FB0AB6C7"))
        let tlv = [0x0C, 0x81, 0xC8] + Array(bundle.utf8)
        #expect(decoded.receipt.bundleIDValue == tlv)
        let device = DeviceID("956328D9-CC6A-47F4-BE40-6953FB0AB6C7")!.bytes
        #expect(decoded.receipt.sha1Hash == (try DigestAlgorithm.sha1.digest(device + decoded.receipt.opaqueValue! + tlv)))
    }

    @Test("Expired, renewals, cancellation, trial, intro and promo shape the subscription history")
    func subscriptionHistory() throws {
        let expired = try Decoded(Scenario(purchases: [Purchase(productID: "p", expired: true, renewals: 2, trial: true)]))
        let purchases = expired.receipt.inAppPurchases.sorted { $0.purchaseDate! < $1.purchaseDate! }
        #expect(purchases.count == 3)
        #expect(purchases.last?.expiresDate == pinnedNow.addingTimeInterval(-86_400))
        #expect(Set(purchases.map(\.originalTransactionID)).count == 1)
        #expect(Set(purchases.map(\.transactionID)).count == 3)
        #expect(zip(purchases, purchases.dropFirst()).allSatisfy { $0.expiresDate == $1.purchaseDate })
        #expect(purchases.map(\.isTrialPeriod) == [true, false, false])
        #expect(purchases.allSatisfy { $0.productType == 3 && $0.webOrderLineItemID != 0 })

        let active = try Decoded(Scenario(purchases: [Purchase(productID: "p", cancelled: .appIssue, intro: true, promo: "WINBACK", period: "P1Y")]))
        let only = try #require(active.receipt.inAppPurchases.first)
        #expect(only.expiresDate! > pinnedNow)
        #expect(only.cancellationDate != nil && only.cancellationDate! <= pinnedNow)
        #expect(only.isInIntroOfferPeriod == true && only.promotionalOfferID == "WINBACK")
        #expect(SubscriptionPeriod("P1Y")!.advance(only.purchaseDate!, by: 1) == only.expiresDate)

        let pinned = try Decoded(Scenario(purchases: [Purchase(productID: "p", expiresDate: "2025-01-31T00:00:00Z", renewals: 1)]))
        let dates = pinned.receipt.inAppPurchases.compactMap(\.expiresDate).sorted()
        #expect(dates.map { ReceiptDate.format($0) } == ["2024-12-31T00:00:00Z", "2025-01-31T00:00:00Z"])
    }

    @Test("Contradictions are refused and name both sides, as flags or as spec keys")
    func conflicts() {
        func message(_ purchase: Purchase) -> String? {
            do {
                _ = try sharedForge.make(Scenario(purchases: [purchase]), now: pinnedNow)
                return nil
            } catch {
                #expect(error.code == .conflictingOptions || error.code == .invalidScenario)
                return error.message
            }
        }
        // Key paths here; the CLI says them as its flags (FlagNamingTests).
        #expect(
            message(Purchase(productID: "p", expiresDate: "2025-01-01T00:00:00Z", expired: true))?.contains(
                "'purchases[0].expired' conflicts with 'purchases[0].expiresDate'") == true)
        #expect(
            message(Purchase(productID: "p", type: .consumable, expired: true))?.contains("'purchases[0].expired' conflicts with 'purchases[0].type' consumable")
                == true)
        #expect(message(Purchase(productID: "p", trial: true, intro: true))?.contains("'purchases[0].trial' conflicts with 'purchases[0].intro'") == true)
        #expect(message(Purchase(productID: "p", renewals: -1))?.contains("'purchases[0].renewals'") == true)
        #expect(message(Purchase(productID: "p", period: "P1Q"))?.contains("ISO 8601") == true)
        #expect(message(Purchase(productID: "p", purchaseDate: "yesterday"))?.contains("'purchases[0].purchaseDate'") == true)
    }

    @Test("Spec files decode, and unknown keys are refused")
    func specFiles() throws {
        let json = #"{"preset":"sandbox","bundleId":"com.a","seed":9,"purchases":[{"productId":"x","type":"consumable","quantity":3}]}"#
        let scenario = try Scenario.decode(json: Data(json.utf8))
        #expect(scenario.preset == .sandbox && scenario.bundleID == "com.a" && scenario.purchases.first?.quantity == 3)
        #expect(throws: ForgeError(.invalidScenario, "")) { try Scenario.decode(json: Data(#"{"bundleID":"typo"}"#.utf8)) }
        #expect(throws: ForgeError(.invalidScenario, "")) { try Scenario.decode(json: Data(#"{"purchases":[{"productId":"x","expird":true}]}"#.utf8)) }
        #expect(throws: ForgeError(.invalidScenario, "")) { try Scenario.decode(json: Data(#"{"preset":"appstore-2031"}"#.utf8)) }
        #expect(throws: ForgeError(.invalidScenario, "")) { try Scenario.decode(json: Data("[1]".utf8)) }
    }
}
