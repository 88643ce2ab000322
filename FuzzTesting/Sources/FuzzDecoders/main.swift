import FuzzSupport
import Foundation
import ReceiptConformance
import ReceiptCorpus
import _ForgeSupport
import StoreModel

/// The JSON a user's files and harnesses hand the runner: a manifest (decoded and linted), a baseline
/// (applied to a run), a response mapping, a results.json, and every harness message.
func fuzzDecoders(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    let decoder = JSONDecoder()
    if let manifest = try? ManifestIO.decode(data) { _ = Linter.lint(manifest, vectorsDirectory: nil) }
    if let baseline = try? decoder.decode(Baseline.self, from: data) {
        var results = RunResults.exemplar
        _ = baseline.apply(to: &results, today: "2026-01-01")
    }
    if let mapping = try? ResponseMapping.load(data) {
        _ = mapping.request(for: .exemplar, password: "secret", environment: ["ACME_TOKEN": "t"])
        _ = mapping.reply(seq: 1, httpStatus: 200, body: data)
    }
    // An endpoint's answer, read through Apple's verifyReceipt mapping (JSON pointers, status codes).
    _ = ResponseMapping.verifyReceipt.reply(seq: 1, httpStatus: 200, body: data)
    if let results = try? decoder.decode(RunResults.self, from: data) { _ = results.exitCode; _ = results.failureSummary }
    _ = try? decoder.decode(HarnessHello.self, from: data)
    _ = try? decoder.decode(HarnessReply.self, from: data)
    _ = try? decoder.decode(ValidateRequest.self, from: data)
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzDecoders(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
