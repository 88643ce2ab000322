import FuzzSupport
import Foundation
import StoreForge
import ReceiptModel
@testable import ReferenceValidation
import StoreModel
import _ForgeSupport

let pki = try? CertificateSet<CertificateRole>.bundled()
let context = ValidationContext(
    trustedRoots: [pki?[.root].certificate, pki?[.storeKit].certificate].compactMap { $0 },
    bundleID: "com.example.app", appVersion: "1",
    deviceID: DeviceID("6A9C1D2E-3B4F-4A5B-8C7D-9E0F1A2B3C4D")?.bytes, environment: .production,
    now: Date(timeIntervalSince1970: 1_750_000_000))

/// Arbitrary bytes through every step of the reference validator, bindings included.
func fuzzReferenceValidator(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let report = ReferenceValidator().validate(bytes, context: context)
    _ = report.message
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzReferenceValidator(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
