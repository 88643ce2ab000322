import Foundation
import ReceiptCorpus
import ReceiptForge
import ReceiptModel
import ReferenceValidation
import Testing
import ForgeSupport
import StoreModel

/// The validation cache may only save work, never change an answer.
@Suite("ValidationCache")
struct ValidationCacheTests {
    private struct Answer: Equatable {
        let verdict: ValidationReport.Verdict
        let errorClass: ErrorClass?
        let message: String
    }

    private func answers(_ validator: ReferenceValidator) throws -> [String: Answer] {
        let directory = repositoryRoot.appendingPathComponent("Vectors")
        let manifest = try ManifestIO.load(from: directory)
        let harness = try ReferenceHarness(vectorsDirectory: directory)
        var answers: [String: Answer] = [:]
        for vector in manifest.vectors {
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(vector.file)))
            let context = ValidationContext(
                trustedRoots: harness.anchors[vector.context.trustAnchor].map { [$0] } ?? [], bundleID: vector.context.bundleId,
                appVersion: vector.context.appVersion, deviceID: vector.context.deviceId.flatMap(DeviceID.init)?.bytes,
                environment: vector.context.environment, now: try #require(ReceiptDate.parse(vector.context.now)))
            let report = validator.validate(bytes, context: context)
            answers[vector.id] = Answer(verdict: report.verdict, errorClass: report.errorClass, message: report.message)
        }
        return answers
    }

    @Test("every corpus vector: the same verdict, error class and message with the cache disabled, cold and warm")
    func neverChangesAVerdict() throws {
        let uncached = try answers(ReferenceValidator(cache: nil))
        let cache = ValidationCache()
        let cold = try answers(ReferenceValidator(cache: cache))
        let afterCold = cache.statistics
        let warm = try answers(ReferenceValidator(cache: cache))
        #expect(uncached.count == corpusVectorCount())
        for (id, answer) in uncached.sorted(by: { $0.key < $1.key }) {
            #expect(cold[id] == answer, "\(id) cold")
            #expect(warm[id] == answer, "\(id) warm")
        }
        // The warm pass computed nothing new: every certificate and chain was a hit.
        #expect(cache.statistics.misses == afterCold.misses)
        #expect(cache.statistics.hits > afterCold.hits)
    }

    @Test("a full cache starts over instead of growing, and still answers correctly")
    func bounded() throws {
        let tiny = ValidationCache(capacity: 1)
        let uncached = try answers(ReferenceValidator(cache: nil))
        #expect(try answers(ReferenceValidator(cache: tiny)) == uncached)
    }

    private func corpusVectorCount() -> Int {
        (try? ManifestIO.load(from: repositoryRoot.appendingPathComponent("Vectors")).vectors.count) ?? -1
    }
}
