import CLibFuzzer
import Foundation
import ReceiptForge
import ReceiptModel
import ReceiptValidation

let pki = try? TestPKI.bundled()
let context = ValidationContext(trustedRoots: [pki?[.root].certificate].compactMap { $0 }, bundleID: "com.example.app",
                                now: Date(timeIntervalSince1970: 1_750_000_000))

/// What `forge inspect` prints, as text and JSON, for arbitrary bytes.
func fuzzInspect(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let report = ReferenceValidator().validate(bytes, context: context)
    let inspection = Inspection(report: report, source: "fuzz", inputSize: bytes.count, includeChecks: true)
    _ = inspection.text()
    _ = inspection.json().serialized(pretty: false)
    return 0
}

// SwiftPM aliases `main` to this file's entry point (lld keeps that alias over libFuzzer's own `main`,
// which is linked but never runs), so the top-level code below initializes the globals above and then
// runs libFuzzer's driver. libFuzzer's `main` needs the symbol to link.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzInspect(data.map(UnsafeRawPointer.init), size) }

var argumentCount = CommandLine.argc
var argumentValues: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argumentCount, &argumentValues) { data, size in testOneInput(data, size) })
