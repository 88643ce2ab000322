import Foundation
import ForgeCrypto
import StoreForge
import ReceiptModel
import _ForgeSupport
import StoreModel

let pinnedNow = ReceiptDate.parse("2025-06-15T12:00:00Z")!

/// The forge over the bundled PKI, built once.
let sharedForge: Forge = try! Forge.bundled()

/// A made receipt, decoded back: container and payload.
struct Decoded {
    let forged: ForgedReceipt
    let container: ReceiptContainer
    let receipt: AppReceipt

    init(_ scenario: Scenario, now: Date = pinnedNow) throws {
        forged = try sharedForge.make(scenario, now: now)
        container = try ReceiptContainer(berEncoded: forged.bytes)
        receipt = try AppReceipt(payloadBytes: container.payload!)
    }

    var types: [Int] { receipt.payload.entries.map(\.attribute.type) }
    func purchaseTypes(_ index: Int = 0) -> [Int] { receipt.inAppPurchases[index].payload.entries.map(\.attribute.type) }
    func attribute(_ type: Int) -> ReceiptAttribute? { receipt.payload.payload.first(type) }
}
