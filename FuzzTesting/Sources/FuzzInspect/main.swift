import FuzzSupport
import Foundation
import StoreForge
import ReceiptModel
@testable import ReferenceValidation
import _ForgeSupport
import StoreModel

let pki = try? CertificateSet<CertificateRole>.bundled()
let context = ValidationContext(
    trustedRoots: [pki?[.root].certificate].compactMap { $0 }, bundleID: "com.example.app",
    now: Date(timeIntervalSince1970: 1_750_000_000))

let transactionContext = ValidationContext(
    trustedRoots: [pki?[.intermediateSHA1].certificate].compactMap { $0 }, bundleID: "com.example.app", now: Date(timeIntervalSince1970: 1_750_000_000))

/// What `forge inspect` prints, as text and JSON, for arbitrary bytes: as a receipt, and as an iOS 6 transaction
/// receipt (its old-style plists, signature blob and checks) when they are one.
func fuzzInspect(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let report = ReferenceValidator().validate(bytes, context: context)
    let inspection = Inspection(receipt: report, source: "fuzz", inputSize: bytes.count, includeChecks: true)
    _ = inspection.text()
    _ = inspection.json().serialized(pretty: false)
    if let transactionReceipt = TransactionReceiptInspection(bytes, source: "fuzz") {
        let checked = Inspection(transactionReceipt, report: TransactionReceiptValidator().validate(bytes, context: transactionContext))
        _ = checked.text()
        _ = checked.json().serialized(pretty: false)
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzInspect(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
