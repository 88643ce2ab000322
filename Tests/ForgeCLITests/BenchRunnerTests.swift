import Foundation
import ForgeTestSupport
import Testing

/// `forge bench runner`: what it measures is what it says it measures.
@Suite("forge bench runner", .timeLimit(.minutes(2)))
struct BenchRunnerTests {
    static let vectors = Repository.vectors.path

    @Test("--run and --skip select as forge run does: 'jws-*' measures the StoreKit 2 vectors alone and says how many; a pattern selecting nothing is exit 64")
    func selection() async throws {
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.vectors + "/manifest.json"))) as? [String: Any])
        let ids = (manifest["vectors"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        let jws = ids.filter { $0.hasPrefix("jws-") }.count
        let valid = ids.filter { $0.hasPrefix("jws-valid::") }.count
        #expect(jws > 0 && valid > 0)
        let text = try await forge("bench", "runner", "--vectors", Self.vectors, "--run", "jws-*", "--seconds", "0.3", "--rounds", "1")
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.text.contains("— \(jws) vectors per pass"), "\(text.text)")
        let skipping = try await forge("bench", "runner", "--vectors", Self.vectors, "--run", "jws-*", "--skip", "jws-valid::*", "--seconds", "0.3", "--rounds", "1")
        #expect(skipping.text.contains("— \(jws - valid) vectors per pass"), "\(skipping.text)")
        let json = try await forge("bench", "runner", "--vectors", Self.vectors, "--run", "jws-valid::*", "--seconds", "0.3", "--rounds", "1", "--json")
        let rows = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]])
        #expect(rows.count == 1 && (rows.first?["vectorsPerSecond"] as? Int ?? 0) > 0, "\(json.text)")
        let none = try await forge("bench", "runner", "--vectors", Self.vectors, "--run", "no-such-vector*", "--seconds", "0.3")
        #expect(none.status == 64 && none.stderr.contains("no vector of the corpus is selected by --run 'no-such-vector*'"), "\(none.stderr)")
    }
}
