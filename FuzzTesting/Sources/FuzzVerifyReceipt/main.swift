import Foundation
import FuzzSupport
import StoreForge
import ReceiptModel
@testable import StoreServer
import _ForgeSupport
import StoreModel

let pki = try? CertificateSet<CertificateRole>.bundled()
let forge = pki.flatMap { try? Forge(receiptPKI: $0) }
let history = Scenario(
    bundleID: "com.example.app", now: "2025-01-01T00:00:00Z",
    purchases: [Purchase(productID: "pro.monthly", purchaseDate: "2024-12-15T00:00:00Z", period: "P1M")],
    timeline: [TimelineEvent(.renew, count: 2), TimelineEvent(.billingRetry, at: "2025-03-15T00:00:00Z")])
let histories = forge.flatMap { forge in (try? ServerState(scenarios: [history], now: nil)).flatMap { try? ServerHistories(state: $0, forge: forge) } } ?? ServerHistories()
let service = VerifyReceiptService(
    configuration: .init(
        trustedRoots: [pki?.certificate(.root)].compactMap { $0 }, sharedSecret: "s3cret", legacyExpiredStatus: true,
        now: Date(timeIntervalSince1970: 1_743_465_600)),
    histories: histories)

/// `forge serve` on arbitrary input. The first byte picks what the rest is: a request body (either
/// endpoint), the receipt inside a well-formed request, a fault spec (flag or JSON), or a scenario with a timeline.
func fuzzVerifyReceipt(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    guard let mode = bytes.first else { return 0 }
    let rest = Array(bytes.dropFirst())
    switch mode % 6 {
    case 0: _ = service.answer(endpoint: .production, body: rest)
    case 1: _ = service.answer(endpoint: .sandbox, body: rest)
    case 2, 3:
        let body = #"{"receipt-data":""# + Data(rest).base64EncodedString() + #"","password":"s3cret","exclude-old-transactions":true}"#
        _ = service.answer(endpoint: mode % 6 == 2 ? .production : .sandbox, body: Array(body.utf8))
    case 4:
        _ = try? Fault(parsing: String(decoding: rest, as: UTF8.self))
        if let json = try? JSONValue(parsing: rest) { _ = try? Fault(json: json) }
    default:
        if let scenario = try? Scenario.decode(json: Data(rest)), scenario.purchases.count <= 4, let forge {
            _ = try? forge.make(scenario, now: Date(timeIntervalSince1970: 1_735_689_600), reissuedAt: Date(timeIntervalSince1970: 1_743_465_600))
        }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzVerifyReceipt(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
