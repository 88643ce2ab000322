import AppStoreVocabulary
import Foundation
import StoreForge
import Testing
import _ForgeSupport
import JWSModel
import StoreModel

/// Issue 22: the Server API renders a store's transactions with the forge's one encoder (``StoreRendering``), so
/// what `forge jws make` makes on the device side is what `forge serve` answers for the same scenario.
@Suite("Store rendering for the Server API", .timeLimit(.minutes(2)))
struct ServerAPIRenderTests {
    static let scenario = """
        {"preset": "sandbox", "bundleId": "com.example.api", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-10-15T00:00:00Z", "period": "P1M", "renewals": 2},
                       {"productId": "lifetime", "type": "non-consumable", "purchaseDate": "2024-06-01T00:00:00Z"}],
         "timeline": [{"event": "renew", "productId": "pro.monthly", "count": 2}]}
        """
    static let madeAt = Date(timeIntervalSince1970: 1_735_689_600)  // 2025-01-01T00:00:00Z

    static func payload(_ compact: String) -> JSONValue? {
        let parts = compact.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return nil }
        return try? JSONValue(parsing: bytes)
    }

    @Test(
        "At the scenario's now, the latest transaction renders to the very JWS `make(.transaction)` signs (same id, same payload bytes); so do its renewal info and the AppTransaction"
    )
    func sameBytesAsMake() throws {
        let scenario = try Scenario.decode(json: Data(Self.scenario.utf8))
        let made = try sharedForge.make(.transaction, scenario: scenario, now: Self.madeAt)
        let rendering = try sharedForge.rendering(scenario, madeAt: Self.madeAt, now: Self.madeAt)
        let latest = try #require(rendering.store.transactions.max { $0.purchaseDate < $1.purchaseDate })
        #expect(try rendering.transactionPayload(latest) == made.payload)
        #expect(try rendering.signedTransaction(latest) == made.compact)
        let renewal = try sharedForge.make(.renewal, scenario: scenario, now: Self.madeAt)
        #expect(try rendering.signedRenewal(of: latest) == renewal.compact)
        let appTransaction = try sharedForge.make(.appTransaction, scenario: scenario, now: Self.madeAt)
        #expect(try rendering.signedAppTransaction() == appTransaction.compact)
    }

    @Test("Later, the timeline's renewals are added and the purchases keep their ids; signedDate is the later clock")
    func laterClockKeepsIDs() throws {
        let scenario = try Scenario.decode(json: Data(Self.scenario.utf8))
        let early = try sharedForge.rendering(scenario, madeAt: Self.madeAt, now: Self.madeAt)
        let later = Self.madeAt.addingTimeInterval(60 * 86_400)
        let late = try sharedForge.rendering(scenario, madeAt: Self.madeAt, now: later)
        let earlyIDs = early.store.transactions.map(\.transactionID)
        #expect(earlyIDs.count == 4)
        #expect(Set(earlyIDs).isSubset(of: late.store.transactions.map(\.transactionID)))
        #expect(late.store.transactions.count == 6)
        let first = try #require(late.store.transactions.first)
        let payload = try #require(Self.payload(try late.signedTransaction(first)))
        #expect(payload["signedDate"]?.integerValue == ReceiptDate.milliseconds(later))
        #expect(payload["transactionId"]?.stringValue == first.transactionID)
    }
}
