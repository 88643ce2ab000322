import CLibFuzzer
import Foundation
import ReceiptModel

/// Any bytes through the three decoders a receipt meets: transport, container, payload (and each purchase).
func fuzzReceiptDecoder(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    if let der = try? ReceiptInput.decode(bytes).der, let container = try? ReceiptContainer(berEncoded: der),
       let payload = container.payload, let receipt = try? AppReceipt(payloadBytes: payload) {
        _ = receipt.inAppPurchases.count
    }
    // The payload decoder alone, on the raw bytes: payloads are what validators parse after the signature.
    _ = try? AppReceipt(payloadBytes: bytes)
    return 0
}

// SwiftPM aliases `main` to this file's entry point (lld keeps that alias over libFuzzer's own `main`,
// which is linked but never runs), so the top-level code below initializes the globals above and then
// runs libFuzzer's driver. libFuzzer's `main` needs the symbol to link.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzReceiptDecoder(data.map(UnsafeRawPointer.init), size) }

var argumentCount = CommandLine.argc
var argumentValues: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argumentCount, &argumentValues) { data, size in testOneInput(data, size) })
