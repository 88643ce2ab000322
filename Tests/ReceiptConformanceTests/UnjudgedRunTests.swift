import Foundation
import ReceiptConformance
import ReceiptCorpus
import Testing
import ForgeTestSupport

/// A run that could not judge what it selected is an infrastructure failure (exit 2), never "conformant": a service
/// its vectors need (the OCSP responder of `online` vectors) that could not start, or every vector SKIP.
@Suite(.timeLimit(.minutes(2)))
struct UnjudgedRunTests {
    static let online = manifest.vectors.filter { $0.features.contains(Feature.online.rawValue) }.map(\.id.text)

    /// The runner over the `online` vectors alone, with a responder that cannot start.
    static func runWithoutResponder(_ validator: some ReceiptValidator, also: (Vector) -> Bool = { _ in false }) async throws -> RunResults {
        var runner = ConformanceRunner(manifest: manifest, vectorsDirectory: Repository.vectors, profile: "apple-compatible")
        runner.services = [
            FeatureService(feature: .online, name: "the OCSP responder on 127.0.0.1:6960") { throw Refused() }
        ]
        return try await runner.run(validator) { $0.features.contains(Feature.online.rawValue) || also($0) }
    }

    struct Refused: Error, CustomStringConvertible { var description: String { "cannot listen: Address already in use" } }

    @Test("the responder could not start: every online vector SKIP with why, the run exit 2 and says so in every report")
    func responderDidNotStart() async throws {
        let results = try await Self.runWithoutResponder(Constant(verdict: .accept, errorClass: nil))
        let reason = "the OCSP responder on 127.0.0.1:6960 could not start: cannot listen: Address already in use"
        #expect(Self.online.count >= 16 && results.results.map(\.id).sorted() == Self.online.sorted())
        #expect(results.results.allSatisfy { $0.outcome == .skip && $0.message == reason })
        #expect(results.unavailableServices == [reason])
        #expect(results.exitCode == 2)
        let console = ConsoleReport.summary(results)
        #expect(console.contains("infrastructure failure (exit 2)") && !console.contains("conformant"), "\(console)")
        #expect(console.contains("Not judged: the OCSP responder on 127.0.0.1:6960 could not start"), "\(console)")
        #expect(ConsoleReport.outcome(results, quiet: true).contains("NOT JUDGED: the OCSP responder"))
        #expect(MarkdownReport.render(results, manifest: manifest).contains("### Not judged"))
        #expect(HTMLReport.render(results, manifest: manifest).contains("<strong>Not judged:</strong>"))
        #expect(results.failureSummary.contains("NOT JUDGED: "))
    }

    @Test("the other vectors judged do not make it conformant: the online ones were not; merged shards keep the reason")
    func partlyJudged() async throws {
        let results = try await Self.runWithoutResponder(Constant(verdict: .accept, errorClass: nil)) { $0.id.family == "valid" }
        #expect(results.results.contains { $0.outcome == .pass })
        #expect(results.exitCode == 2 && results.notJudged?.hasPrefix("the OCSP responder") == true)
        var judged = results
        judged.results.removeAll { Self.online.contains($0.id) }
        judged.unavailableServices = nil
        #expect(judged.exitCode == 0, "the same run with its responder up")
        let merged = try RunResults.merged([judged, results.withoutResults(judged.results.map(\.id))])
        #expect(merged.unavailableServices == results.unavailableServices && merged.exitCode == 2)
    }

    @Test("a run whose every vector is SKIP judged nothing: exit 2, naming the commonest reason; an empty shard is not that")
    func judgedNothing() async throws {
        let offline = Constant(verdict: .accept, errorClass: nil, features: [])
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: Repository.vectors, profile: "apple-compatible").run(offline) {
            $0.features.contains(Feature.online.rawValue)
        }
        #expect(results.results.allSatisfy { $0.outcome == .skip } && results.unavailableServices == nil)
        #expect(results.exitCode == 2)
        #expect(
            results.notJudged == "nothing was judged: all \(Self.online.count) vectors are SKIP (feature not declared by the harness: online)",
            "\(results.notJudged ?? "nil")")
        var empty = results
        empty.results = []
        #expect(empty.notJudged == nil && empty.exitCode == 0)
    }
}

extension RunResults {
    /// The same run keeping only the results not in `ids`.
    fileprivate func withoutResults(_ ids: [String]) -> RunResults {
        var copy = self
        copy.results.removeAll { ids.contains($0.id) }
        return copy
    }
}
