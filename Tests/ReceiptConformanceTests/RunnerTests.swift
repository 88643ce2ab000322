import Foundation
import ForgeCrypto
import ReceiptConformance
import ReceiptCorpus
import ReceiptForge
import ReceiptModel
import ReceiptValidation
import Testing

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let vectorsDirectory = repositoryRoot.appendingPathComponent("Vectors")
let manifest = try! ManifestIO.load(from: vectorsDirectory)

/// Says the same thing to every receipt.
struct Constant: ReceiptValidator {
    let verdict: HarnessReply.Verdict
    let errorClass: String?
    var features: [String] = Array(manifest.features.keys)
    func hello() async -> HarnessHello { HarnessHello(implementation: "constant", features: features, errorGranularity: .coarse, maxConcurrency: 4) }
    func validate(_ request: ValidateRequest) async -> HarnessReply {
        .result(seq: request.seq, verdict: verdict, errorClass: errorClass, message: nil, decoded: nil)
    }
}

@Suite("Conformance runner")
struct RunnerTests {
    @Test("The reference validator is conformant to the corpus: no false accepts, false rejects or wrong reasons")
    func reference() async throws {
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: vectorsDirectory, profile: "apple-compatible").run(ReferenceHarness(vectorsDirectory: vectorsDirectory))
        let failures = results.results.filter { $0.outcome != .pass && $0.outcome != .skip }
        #expect(failures.map { "\($0.id): \($0.outcome.rawValue) \($0.errorClass ?? "") \($0.message ?? "")" } == [])
        #expect(results.exitCode == 0)
        #expect(results.results.count == manifest.vectors.count)
        #expect(results.canaryDiagnosis == nil)
    }

    @Test("An accept-everything validator passes the canaries, then every invalid vector is a FALSE_ACCEPT (exit 1)")
    func acceptAll() async throws {
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: vectorsDirectory).run(Constant(verdict: .accept, errorClass: nil))
        let invalid = manifest.vectors.filter { $0.expected.verdict == .invalid }.count
        #expect(results.counts["FALSE_ACCEPT"] == invalid)
        #expect(results.exitCode == 1)
    }

    @Test("A reject-everything validator fails the canaries: the run stops with exit 2 and a diagnosis")
    func rejectAll() async throws {
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: vectorsDirectory)
            .run(Constant(verdict: .reject, errorClass: "chain.untrusted"))
        #expect(results.exitCode == 2)
        #expect(results.results.count == manifest.vectors.count)
        #expect(results.counts["SKIP"] == manifest.vectors.filter { !$0.canary }.count)
        #expect(results.canaryDiagnosis?.contains("trust anchor") == true)
    }

    @Test("Vectors needing an undeclared feature are SKIPs, never dropped")
    func featureSkips() async throws {
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: vectorsDirectory)
            .run(Constant(verdict: .accept, errorClass: nil, features: []))
        #expect(results.results.count == manifest.vectors.count)
        #expect(results.counts["SKIP"] == manifest.vectors.filter { !$0.features.isEmpty }.count)
    }
}
