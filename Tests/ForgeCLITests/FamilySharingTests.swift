import AppStoreVocabulary
import Foundation
import ForgeTestSupport
import Testing

/// Issue 39, item 1: Family Sharing is a fact of the transaction (`Transaction.ownership`), set by the purchase's
/// `ownership` in the scenario, and the JWS renders it from there.
@Suite("forge jws make: inAppOwnershipType from the purchase's ownership", .timeLimit(.minutes(2)))
struct FamilySharingTests {
    @Test("A FAMILY_SHARED purchase renders FAMILY_SHARED in `forge jws make transaction`; the purchase beside it stays PURCHASED")
    func familySharedTransaction() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = directory.appendingPathComponent("spec.json")
        let scenario: [String: Any] = [
            "preset": "sandbox", "bundleId": "com.example.family", "now": "2025-01-01T00:00:00Z",
            "purchases": [
                ["productId": "pro.monthly", "purchaseDate": "2024-11-15T00:00:00Z", "period": "P1M", "renewals": 1, "ownership": "FAMILY_SHARED"],
                ["productId": "lifetime", "type": "non-consumable", "purchaseDate": "2024-06-01T00:00:00Z"],
            ],
        ]
        try JSONSerialization.data(withJSONObject: scenario).write(to: spec)
        for (product, ownership) in [("pro.monthly", "FAMILY_SHARED"), ("lifetime", "PURCHASED")] {
            let made = try await forge("jws", "make", "transaction", "--spec", spec.path, "--about", product, "-q", "--format", "json")
            try #require(made.status == 0, "\(made.stderr)")
            let payload = try #require(try json(made)["payload"] as? [String: Any])
            #expect(payload["productId"] as? String == product)
            #expect(payload["inAppOwnershipType"] as? String == ownership)
        }
        // verifyReceipt's JSON of the receipt `forge make` forges says the same, per transaction.
        let receipt = try await forge("make", "--spec", spec.path, "-q", "--format", "json")
        try #require(receipt.status == 0, "\(receipt.stderr)")
        let inApp = try #require((try json(receipt)["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])
        #expect(Set(inApp.compactMap { $0["product_id"] as? String }) == ["pro.monthly", "lifetime"])
        for purchase in inApp {
            #expect(purchase["in_app_ownership_type"] as? String == (purchase["product_id"] as? String == "lifetime" ? "PURCHASED" : "FAMILY_SHARED"))
        }
        // Only Apple's documented values: anything else is a scenario error naming the key.
        var unknown = scenario
        unknown["purchases"] = [["productId": "lifetime", "type": "non-consumable", "ownership": "GIFTED"]]
        try JSONSerialization.data(withJSONObject: unknown).write(to: spec)
        let refused = try await forge("jws", "make", "transaction", "--spec", spec.path, "-q")
        #expect(refused.status == 65 && refused.stderr.contains("'purchases[0].ownership'") && refused.stderr.contains("FAMILY_SHARED"), "\(refused.stderr)")
    }
}
