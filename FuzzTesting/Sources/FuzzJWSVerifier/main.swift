import StoreForge
import Foundation
import FuzzSupport
import ReceiptModel
@testable import ReferenceValidation
import JWSModel
import _ForgeSupport
import StoreModel

let pki = try? CertificateSet<JWSRole>.bundled()
let context = ValidationContext(
    trustedRoots: [pki?.certificate(.root)].compactMap { $0 }, bundleID: "com.example.app", appAppleID: 1, environment: .production)

/// Arbitrary text through the reference JWS verifier and `forge jws inspect`. The first byte picks the
/// shape: raw text, or a header and payload (split at the first 0x00) encoded into a compact JWS whose
/// signature is the rest, so the JSON and certificate paths are reached without guessing base64url.
func fuzzJWSVerifier(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    guard let mode = bytes.first else { return 0 }
    let rest = Array(bytes.dropFirst())
    let text: String
    if mode % 2 == 0 {
        text = String(decoding: rest, as: UTF8.self)
    } else {
        let split = rest.firstIndex(of: 0) ?? rest.count
        let header = Array(rest[..<split])
        let payload = split < rest.count ? Array(rest[(split + 1)...]) : []
        text = CompactJWS(header: header, payload: payload, signature: Array(payload.suffix(64))).compact
    }
    let report = JWSVerifier().verify(text, context: context)
    _ = Inspection(jws: text, report: report)?.json().serialized(pretty: false)
    _ = Inspection(jws: text)?.text()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzJWSVerifier(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
