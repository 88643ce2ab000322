import Foundation
import _ForgeSupport
import ForgeTestSupport
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import StoreModel
import Testing

/// Issue 43, item 5: `forge serve`'s verifyReceipt answers an iOS 6 transaction receipt as Apple did, in process
/// through the application `forge serve` builds (``VerifyReceiptServeTests/application(scenarios:sharedSecret:legacyExpired:faults:seed:log:)``).
@Suite("forge serve's verifyReceipt and iOS 6 transaction receipts (app.test(.router))", .timeLimit(.minutes(2)))
struct TransactionReceiptServeTests {
    /// A transaction receipt of `json`'s latest purchase, made at its `now`, in base64 (what an app posted).
    static func receipt(_ json: String, version: TransactionReceiptVersion = .v3, transactionID: String? = nil) throws -> String {
        let scenario = try VerifyReceiptServeTests.scenario(json)
        let made = try #require(scenario.now.flatMap(ReceiptDate.parse))
        return try Forge.bundled().makeTransactionReceipt(scenario, now: made, version: version, transactionID: transactionID).base64
    }

    static let subscription = #"{"now": "2025-03-20T00:00:00Z", "purchases": [{"productId": "pro.yearly", "period": "P1Y", "purchaseDate": "2025-03-01T00:00:00Z"}]}"#
    static let expired = #"{"now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "pro.weekly", "expired": true}]}"#
    static let sandbox = #"{"preset": "sandbox", "now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "coins", "type": "consumable", "quantity": 5}]}"#

    static func object(_ value: Any?) -> [String: String]? { value as? [String: String] }

    @Test("Status 0 with the flat receipt of underscore keys, latest_receipt_info an object and latest_receipt; both versions")
    func valid() async throws {
        let v2 = try Self.receipt(Self.subscription, version: .v2), v3 = try Self.receipt(Self.subscription)
        try await VerifyReceiptServeTests.application().test(.router) { client in
            for receipt in [v2, v3] {
                let answer = try await VerifyReceiptServeTests.verify(client, ["receipt-data": receipt])
                #expect(VerifyReceiptServeTests.status(answer) == 0, "\(answer)")
                let flat = try #require(Self.object(answer["receipt"]), "receipt is a flat object of strings: \(answer)")
                for key in [
                    "original_purchase_date_pst", "original_transaction_id", "original_purchase_date_ms", "transaction_id", "quantity", "product_id",
                    "bvrs", "purchase_date_ms", "purchase_date", "original_purchase_date", "purchase_date_pst", "bid", "item_id", "unique_identifier",
                    "unique_vendor_identifier", "expires_date", "expires_date_formatted", "expires_date_formatted_pst",
                ] {
                    #expect(flat[key] != nil, "receipt.\(key) in \(flat.keys.sorted())")
                }
                #expect(flat["product_id"] == "pro.yearly" && flat["bid"] == "com.example.app" && flat["quantity"] == "1")
                let latest = try #require(Self.object(answer["latest_receipt_info"]), "latest_receipt_info is an object, not an array: \(answer)")
                #expect(latest["transaction_id"] == flat["transaction_id"])
                #expect(answer["latest_receipt"] as? String == receipt)
                #expect(answer["latest_expired_receipt_info"] == nil)
            }
        }
    }

    @Test("21007 and 21008 for the other environment's endpoint, 21002 for what is not a receipt or whose blob is broken, 21003 for another root")
    func statuses() async throws {
        let sandbox = try Self.receipt(Self.sandbox), production = try Self.receipt(Self.subscription)
        let truncated = try Data(contentsOf: Repository.vectors.appendingPathComponent("transaction-receipt/truncated-blob.plist")).base64EncodedString()
        let foreign = try Data(contentsOf: Repository.vectors.appendingPathComponent("transaction-receipt/chain-to-another-root.plist")).base64EncodedString()
        try await VerifyReceiptServeTests.application().test(.router) { client in
            #expect(VerifyReceiptServeTests.status(try await VerifyReceiptServeTests.verify(client, ["receipt-data": sandbox])) == 21007)
            let inSandbox = try await VerifyReceiptServeTests.verify(client, "/sandbox/verifyReceipt", ["receipt-data": sandbox])
            #expect(VerifyReceiptServeTests.status(inSandbox) == 0 && Self.object(inSandbox["receipt"])?["quantity"] == "5", "\(inSandbox)")
            #expect(inSandbox["latest_receipt_info"] == nil, "a consumable has no subscription to report")
            #expect(VerifyReceiptServeTests.status(try await VerifyReceiptServeTests.verify(client, "/sandbox/verifyReceipt", ["receipt-data": production])) == 21008)
            for malformed in [truncated, Data("{ \"purchase-info\" = ".utf8).base64EncodedString()] {
                let answer = try await VerifyReceiptServeTests.verify(client, ["receipt-data": malformed])
                #expect(VerifyReceiptServeTests.status(answer) == 21002, "\(answer)")
            }
            let untrusted = try await VerifyReceiptServeTests.verify(client, ["receipt-data": foreign])
            #expect(VerifyReceiptServeTests.status(untrusted) == 21003 && untrusted["forge_error_class"] as? String == "chain.untrusted", "\(untrusted)")
        }
    }

    @Test("An expired subscription: 21006 with latest_receipt_info and latest_expired_receipt_info (objects) under --legacy-expired-status, else 0")
    func expired() async throws {
        let receipt = try Self.receipt(Self.expired)
        try await VerifyReceiptServeTests.application(legacyExpired: true).test(.router) { client in
            let answer = try await VerifyReceiptServeTests.verify(client, ["receipt-data": receipt])
            #expect(VerifyReceiptServeTests.status(answer) == 21006, "\(answer)")
            let latest = try #require(Self.object(answer["latest_receipt_info"]), "\(answer)")
            let expired = try #require(Self.object(answer["latest_expired_receipt_info"]), "\(answer)")
            #expect(latest == expired && expired["product_id"] == "pro.weekly" && Self.object(answer["receipt"]) != nil)
        }
        try await VerifyReceiptServeTests.application().test(.router) { client in
            let answer = try await VerifyReceiptServeTests.verify(client, ["receipt-data": receipt])
            #expect(VerifyReceiptServeTests.status(answer) == 0 && answer["latest_expired_receipt_info"] == nil, "\(answer)")
        }
    }

    @Test("From the scenario's timeline: the latest period is the app receipt answer's, re-issued as a transaction receipt; billing retry ends it (21006)")
    func timeline() async throws {
        let scenario = try VerifyReceiptServeTests.scenario(VerifyReceiptServeTests.history)
        let made = try #require(scenario.now.flatMap(ReceiptDate.parse))
        let first = try Forge.bundled().makeTransactionReceipt(scenario, now: made, version: .v2)
        let appReceipt = try VerifyReceiptServeTests.receipt(VerifyReceiptServeTests.history)
        try await VerifyReceiptServeTests.application(scenarios: [VerifyReceiptServeTests.history]).test(.router) { client in
            let app = try await VerifyReceiptServeTests.verify(client, ["receipt-data": appReceipt])
            let appLatest = try #require((app["latest_receipt_info"] as? [[String: Any]])?.first, "\(app)")
            let answer = try await VerifyReceiptServeTests.verify(client, ["receipt-data": first.base64])
            #expect(VerifyReceiptServeTests.status(answer) == 0, "\(answer)")
            let latest = try #require(Self.object(answer["latest_receipt_info"]), "\(answer)")
            #expect(latest["transaction_id"] == appLatest["transaction_id"] as? String, "the timeline's latest renewal: \(latest) vs \(appLatest)")
            #expect(latest["transaction_id"] != first.transaction.transactionID && latest["original_transaction_id"] == first.transaction.originalTransactionID)
            #expect(latest["expires_date"] == appLatest["expires_date_ms"] as? String)
            let reissued = try #require(answer["latest_receipt"] as? String)
            #expect(reissued != first.base64, "latest_receipt is the latest period's own transaction receipt")
        }
        try await VerifyReceiptServeTests.application(scenarios: [VerifyReceiptServeTests.history], legacyExpired: true).test(.router) { client in
            let answer = try await VerifyReceiptServeTests.verify(client, ["receipt-data": first.base64])
            #expect(VerifyReceiptServeTests.status(answer) == 21006, "in billing retry since 2025-03-15, the server's clock 2025-04-01: \(answer)")
        }
    }
}
