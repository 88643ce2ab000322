import ForgeCrypto
import Foundation
import ReceiptCorpus
import StoreForge
import ReceiptModel
import ReferenceValidation
import ReceiptValidationServer
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport

/// The validation cache may only save work, never change an answer.
@Suite("ValidationCache", .timeLimit(.minutes(2)))
struct ValidationCacheTests {
    private struct Answer: Equatable {
        let verdict: ValidationReport.Verdict
        let errorClass: ErrorClass?
        let message: String
    }

    /// Every vector's answer, receipts by the receipt validator and JWS by the JWS verifier, both on `cache`.
    private func answers(_ cache: ValidationCache?) throws -> [String: Answer] {
        let directory = Repository.vectors
        let manifest = try ManifestIO.load(from: directory)
        let harness = try ReferenceHarness(vectorsDirectory: directory)
        var answers: [String: Answer] = [:]
        for vector in manifest.vectors {
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(vector.file)))
            let context = ValidationContext(
                trustedRoots: harness.anchors[vector.context.trustAnchor].map { [$0] } ?? [], bundleID: vector.context.bundleId,
                appVersion: vector.context.appVersion, deviceID: vector.context.deviceId.flatMap(DeviceID.init)?.bytes, appAppleID: vector.context.appAppleId,
                environment: vector.context.environment, now: try #require(ReceiptDate.parse(vector.context.now)))
            let validator: any ArtefactValidator = vector.context.artifactKind == .receipt ? ReferenceValidator(cache: cache) : JWSVerifier(cache: cache)
            let report = validator.check(bytes, as: vector.context.artifactKind, context: context)
            answers[vector.id.text] = Answer(verdict: report.verdict, errorClass: report.errorClass, message: report.message)
        }
        return answers
    }

    @Test("every corpus vector, receipts and JWS: the same verdict, error class and message with the cache disabled, cold and warm")
    func neverChangesAVerdict() throws {
        let uncached = try answers(nil)
        let cache = ValidationCache()
        let cold = try answers(cache)
        let afterCold = cache.statistics
        let warm = try answers(cache)
        #expect(uncached.count == corpusVectorCount())
        for (id, answer) in uncached.sorted(by: { $0.key < $1.key }) {
            #expect(cold[id] == answer, "\(id) cold")
            #expect(warm[id] == answer, "\(id) warm")
        }
        // The warm pass computed nothing new: every certificate and chain was a hit.
        #expect(cache.statistics.misses == afterCold.misses)
        #expect(cache.statistics.hits > afterCold.hits)
    }

    @Test("A chain verdict inside every certificate's validity holds at any such instant: JWS signed a day apart share one; at the edges each second is its own")
    func verdictAcrossInstants() throws {
        let directory = Repository.vectors
        let harness = try ReferenceHarness(vectorsDirectory: directory)
        let manifest = try ManifestIO.load(from: directory)
        let vector = try #require(manifest.vectors.first(where: { $0.context.artifactKind == .jwsTransaction && $0.expected.verdict == .valid }))
        let text = String(decoding: try Data(contentsOf: directory.appendingPathComponent(vector.file)), as: UTF8.self)
        let report = JWSVerifier(cache: nil).verify(text, context: ValidationContext(trustedRoots: harness.anchors[vector.context.trustAnchor].map { [$0] } ?? []))
        let chain = report.certificates
        try #require(chain.count == 3)
        let cache = ValidationCache()
        let roots = harness.anchors[vector.context.trustAnchor].map { [$0] } ?? []
        let inside = chain[0].notBefore.addingTimeInterval(86_400 * 30)
        _ = cache.chain(leaf: chain[0], intermediates: [chain[1]], trustedRoots: roots, at: inside)
        let cold = cache.statistics
        _ = cache.chain(leaf: chain[0], intermediates: [chain[1]], trustedRoots: roots, at: inside.addingTimeInterval(86_400))
        #expect(cache.statistics.hits == cold.hits + 1 && cache.statistics.misses == cold.misses)
        // After the leaf expires the verdict is computed at that second, and it is not the one inside.
        let after = chain[0].notAfter.addingTimeInterval(10)
        let expired = cache.chain(leaf: chain[0], intermediates: [chain[1]], trustedRoots: roots, at: after)
        #expect(expired == ChainVerifier.verify(leaf: chain[0], intermediates: [chain[1]], trustedRoots: roots, at: after))
        #expect(cache.statistics.misses == cold.misses + 1)
        if case .trusted = expired { Issue.record("an expired leaf is not trusted") }
    }

    @Test("a full cache starts over instead of growing, and still answers correctly")
    func bounded() throws {
        let tiny = ValidationCache(capacity: 1)
        let uncached = try answers(nil)
        #expect(try answers(tiny) == uncached)
    }

    private func corpusVectorCount() -> Int {
        (try? ManifestIO.load(from: Repository.vectors).vectors.count) ?? -1
    }
}
