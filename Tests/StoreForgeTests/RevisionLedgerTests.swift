import Foundation
import ReceiptConformance
import ReceiptCorpus
import StoreForge
import Testing
import _ForgeSupport
import ForgeTestSupport
import StoreModel

/// Results cite `id@revision`, so a vector whose bytes, context, expectation or provenance change must get a
/// new revision. The ledger records a fingerprint of everything a verdict depends on, per vector and
/// revision; this test fails when a vector changes under the same revision.
///
/// After bumping revisions (or adding vectors), record them:
/// `RECEIPT_FORGE_RECORD_REVISIONS=1 swift test --filter RevisionLedgerTests`.
@Suite("Vector revisions", .timeLimit(.minutes(2)))
struct RevisionLedgerTests {
    static let ledgerFile = Repository.file("Tests/StoreForgeTests/Fixtures/vector-revisions.json")

    struct Entry: Codable, Equatable {
        var revision: Int
        var fingerprint: String
    }

    /// What a verdict depends on: the bytes (by digest), the words, the context and the expectation; and the
    /// provenance that replays the bytes.
    struct Judged: Encodable {
        var sha256, description: String
        var flags: [String], features: [String], severity: Severity, canary: Bool
        var context: Context, expected: ReceiptCorpus.Expectation, provenance: Provenance
    }

    static func fingerprint(_ vector: Vector) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let judged = Judged(
            sha256: vector.sha256, description: vector.description, flags: vector.flags, features: vector.features,
            severity: vector.severity, canary: vector.canary, context: vector.context, expected: vector.expected, provenance: vector.provenance)
        return CorpusDigest.sha256Hex(try encoder.encode(judged))
    }

    @Test("A vector that changed has a higher revision than the one recorded; no recorded vector disappears without notice")
    func ledger() throws {
        let manifest = try ManifestIO.load(from: Repository.vectors)
        var current: [String: Entry] = [:]
        for vector in manifest.vectors { current[vector.id.text] = Entry(revision: vector.revision, fingerprint: try Self.fingerprint(vector)) }
        if ProcessInfo.processInfo.environment["RECEIPT_FORGE_RECORD_REVISIONS"] == "1" {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try FileManager.default.createDirectory(at: Self.ledgerFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            try encoder.encode(current).write(to: Self.ledgerFile, options: .atomic)
            return
        }
        let recorded = try JSONDecoder().decode([String: Entry].self, from: Data(contentsOf: Self.ledgerFile))
        for (id, now) in current.sorted(by: { $0.key < $1.key }) {
            guard let before = recorded[id] else {
                Issue.record("\(id) is not in the revision ledger: record it (RECEIPT_FORGE_RECORD_REVISIONS=1)")
                continue
            }
            #expect(now.revision >= before.revision, "\(id): revision went down from \(before.revision) to \(now.revision)")
            if now.revision == before.revision {
                #expect(
                    now.fingerprint == before.fingerprint,
                    "\(id) changed (bytes, description, flags, context, expectation or provenance) but kept revision \(now.revision): bump it in VectorCatalogue")
            }
        }
        let retired = Set(recorded.keys).subtracting(current.keys)
        #expect(retired.isEmpty, "retired ids must never be reused; remove them from the ledger deliberately: \(retired.sorted())")
    }
}
