import Foundation
import _ForgeSupport
import ForgeTestSupport
import ReceiptCorpus
import StoreForge
import ReceiptModel
import StoreModel
import Testing

/// Issue 39, item 6: `forge make --format json` renders verifyReceipt's JSON from the store the receipt is made from,
/// the server from the bytes it is sent. One renderer takes one `VerifyReceiptJSON.Receipt`; this is the proof that
/// the two ways of getting it agree, field for field and byte for byte, on every scenario the repository ships.
@Suite("verifyReceipt JSON from the store equals verifyReceipt JSON from the decoded receipt", .timeLimit(.minutes(2)))
struct VerifyReceiptRenderingTests {
    struct Case: CustomStringConvertible {
        let description: String
        let scenario: Scenario
        let now: String
    }

    /// `examples/*.json` and `examples/server-api/*.json` that are scenarios, every receipt vector's scenario (its
    /// mutations left out: they change the bytes on purpose), and under every preset one scenario with each kind of
    /// purchase, a refund, a trial, an intro offer and a promotional offer.
    static func cases() throws -> [Case] {
        var cases: [Case] = []
        for folder in ["examples", "examples/server-api"] {
            let directory = Repository.file(folder)
            for file in try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil).sorted(by: { $0.path < $1.path })
            where file.pathExtension == "json" {
                guard let scenario = try? Scenario.decode(json: Data(contentsOf: file)) else { continue }
                cases.append(Case(description: "\(folder)/\(file.lastPathComponent)", scenario: scenario, now: "2025-06-15T12:00:00Z"))
            }
        }
        for spec in VectorCatalogue.all where spec.artifact == .receipt {
            var scenario = spec.scenario
            scenario.seed = spec.seed
            cases.append(Case(description: spec.id, scenario: scenario, now: spec.made ?? spec.now))
        }
        for preset in Preset.allCases {
            let purchases = [
                Purchase(productID: "com.example.pro", renewals: 3, intro: true, period: "P1M"),
                Purchase(productID: "com.example.yearly", expired: true, trial: true, promo: "SPRING", period: "P1Y"),
                Purchase(productID: "com.example.coins", type: .consumable, quantity: 5),
                Purchase(productID: "com.example.level", type: .nonConsumable, cancelled: .appIssue),
                Purchase(productID: "com.example.season", type: .nonRenewing),
            ]
            cases.append(Case(description: "every kind under \(preset.rawValue)", scenario: Scenario(preset: preset, seed: 7, purchases: purchases), now: "2025-06-15T12:00:00Z"))
        }
        return cases
    }

    @Test("Every example, corpus and preset scenario: the same Receipt value and the same JSON bytes; every field is exercised")
    func storeRenderingIsTheDecodedOne() throws {
        let forge = try Forge.bundled()
        var seen = Set<String>()
        let all = try Self.cases()
        #expect(all.count > 60, "\(all.count) scenarios")
        for item in all {
            let now = try #require(ReceiptDate.parse(item.now))
            let made = try forge.make(item.scenario, now: now)
            let decoded = VerifyReceiptJSON.Receipt(try AppReceipt(payloadBytes: made.payload))
            let rendered = made.verifyReceipt
            #expect(rendered == decoded, "\(item)")
            let extras = VerifyReceiptJSON.Extras(
                cancellationReasons: made.history.cancellationReasons, latestReceipt: Data(made.bytes).base64EncodedString(), requestDate: made.now,
                now: made.now, pendingRenewals: made.history.pendingRenewals)
            let fromStore = VerifyReceiptJSON.response(for: rendered, extras: extras).serialized()
            let fromBytes = VerifyReceiptJSON.response(for: try AppReceipt(payloadBytes: made.payload), extras: extras).serialized()
            #expect(fromStore == fromBytes, "\(item)")
            seen.formUnion(Self.presentFields(of: decoded))
        }
        // A field the store rendering dropped is caught only where the receipt has it: make sure each one appears.
        let every = Self.fieldNames(of: EmptyShapes.receipt) + Self.fieldNames(of: EmptyShapes.purchase).map { "inApp." + $0 }
        #expect(Set(every).subtracting(seen).isEmpty, "never present in any scenario: \(Set(every).subtracting(seen).sorted())")
    }

    /// The labels of the stored properties whose value is present (not nil, not false, not empty) in the receipt or
    /// any of its purchases.
    static func presentFields(of receipt: VerifyReceiptJSON.Receipt) -> Set<String> {
        var present = Set(Mirror(reflecting: receipt).children.filter { isPresent($0.value) }.compactMap(\.label))
        for purchase in receipt.inApp {
            present.formUnion(Mirror(reflecting: purchase).children.filter { isPresent($0.value) }.compactMap { $0.label.map { "inApp." + $0 } })
        }
        return present
    }

    static func fieldNames(of value: Any) -> [String] { Mirror(reflecting: value).children.compactMap(\.label) }

    private static func isPresent(_ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return false }
            return isPresent(wrapped)
        }
        if let flag = value as? Bool { return flag }
        if let list = value as? [EmptyShapes.Element] { return !list.isEmpty }
        return true
    }
}

/// Empty values of the two shapes, for their field names.
enum EmptyShapes {
    typealias Element = VerifyReceiptJSON.Purchase
    static let purchase = VerifyReceiptJSON.Purchase(
        quantity: nil, productID: nil, transactionID: nil, originalTransactionID: nil, purchaseDate: nil, originalPurchaseDate: nil, productType: nil,
        expiresDate: nil, webOrderLineItemID: nil, cancellationDate: nil, isTrialPeriod: nil, isInIntroOfferPeriod: nil, promotionalOfferID: nil)
    static let receipt = VerifyReceiptJSON.Receipt(
        receiptType: nil, appItemID: nil, bundleID: nil, appVersion: nil, downloadID: nil, versionExternalIdentifier: nil, creationDate: nil,
        requestDate: nil, originalPurchaseDate: nil, originalAppVersion: nil, expirationDate: nil, inApp: [])
}
