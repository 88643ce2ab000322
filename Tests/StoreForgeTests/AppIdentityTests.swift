import Foundation
import _ForgeSupport
import StoreModel
import Testing

/// Found in issue 23: a production store drew its app's ids (`appAppleId` above all) after one id per
/// transaction, so the app's Apple id changed each time the clock passed a renewal of the timeline, and Apple's
/// verifier, pinned to the app, refused the later notifications. The timeline's transactions now draw from
/// their own ids.
@Suite("The app's ids do not move with the clock", .timeLimit(.minutes(2)))
struct AppIdentityTests {
    @Test("A production store looked at before and after its timeline's renewals has the same appAppleId, developer, download and version ids")
    func stableAcrossRenewals() throws {
        let scenario = try Scenario.decode(
            json: Data(
                #"""
                {"bundleId": "com.example.prod", "now": "2025-01-01T00:00:00Z",
                 "purchases": [{"productId": "pro.monthly", "purchaseDate": "2024-12-15T00:00:00Z", "period": "P1M"}],
                 "timeline": [{"event": "renew", "productId": "pro.monthly", "count": 3}]}
                """#.utf8))
        let madeAt = try #require(ReceiptDate.parse("2025-01-01T00:00:00Z"))
        let before = try Store(scenario, now: madeAt)
        let reissuedAt = try #require(ReceiptDate.parse("2025-03-20T00:00:00Z"))
        let after = try Store(scenario, now: madeAt, reissuedAt: reissuedAt)
        #expect(after.transactions.count == before.transactions.count + 3)
        #expect(before.appItemID != 0 && after.appItemID == before.appItemID)
        #expect(after.developerID == before.developerID && after.downloadID == before.downloadID)
        #expect(after.versionExternalIdentifier == before.versionExternalIdentifier)
        #expect(Array(after.undocumented1710.prefix(before.transactions.count)) == before.undocumented1710)
    }
}
