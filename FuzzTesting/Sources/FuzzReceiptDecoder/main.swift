import FuzzSupport
import Foundation
import ReceiptModel
import _ForgeSupport
import StoreModel

/// Any bytes through the three decoders a receipt meets: transport, container, payload (and each purchase).
func fuzzReceiptDecoder(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    if let der = try? ReceiptInput.decode(bytes).der, let container = try? ReceiptContainer(berEncoded: der),
        let payload = container.payload, let receipt = try? AppReceipt(payloadBytes: payload)
    {
        _ = receipt.inAppPurchases.count
    }
    // The payload decoder alone, on the raw bytes: payloads are what validators parse after the signature.
    _ = try? AppReceipt(payloadBytes: bytes)
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzReceiptDecoder(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
