#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import ReceiptCorpus
import _ForgeSupport

/// `--shard k/n`: vector `id` belongs to shard `(first 8 bytes of SHA-256(id), big-endian) mod n`,
/// numbered from 1. Membership depends on the id alone, so shards stay stable as the corpus grows
/// and CI jobs can split a run without coordinating.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    /// Parses `k/n` with 1 ≤ k ≤ n.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    public var description: String { "\(index)/\(count)" }

    public func contains(_ id: String) -> Bool {
        Self.bucket(of: id, count: count) == index - 1
    }

    static func bucket(of id: String, count: Int) -> Int {
        let digest = CorpusDigest.sha256(Data(id.utf8))
        let prefix = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(prefix % UInt64(count))
    }
}

extension RunResults {
    /// `forge run merge`: one run from the results of its shards. The shards must come from the same
    /// suite, implementation and profile, and no vector may appear twice; the duration is the longest
    /// shard's, as shards run side by side.
    public static func merged(_ parts: [RunResults]) throws(ConformanceError) -> RunResults {
        guard var merged = parts.first else { throw ConformanceError(.invalidResults, "nothing to merge") }
        for part in parts.dropFirst() {
            guard part.suite == merged.suite, part.implementation == merged.implementation, part.profile == merged.profile else {
                throw ConformanceError(
                    .invalidResults,
                    "cannot merge results of \(part.implementation) (suite \(part.suite), profile \(part.profile ?? "none")) with \(merged.implementation) (suite \(merged.suite), profile \(merged.profile ?? "none"))"
                )
            }
            // Older files record no selection: they judged every artefact.
            let (these, those) = (merged.artifacts?.artifacts ?? ArtifactGroup.allCases, part.artifacts?.artifacts ?? ArtifactGroup.allCases)
            guard these == those else {
                throw ConformanceError(
                    .invalidResults,
                    "cannot merge results judging artifacts \(those.map(\.rawValue).joined(separator: ", ")) with results judging \(these.map(\.rawValue).joined(separator: ", "))"
                )
            }
            if let mine = merged.corpus?.manifestSHA256, let theirs = part.corpus?.manifestSHA256, mine != theirs {
                throw ConformanceError(.invalidResults, "cannot merge results of different corpora (manifest sha256 \(theirs) and \(mine))")
            }
            if let excluded = part.artifacts?.excluded, let sum = merged.artifacts?.excluded.addingReportingOverflow(excluded) {
                merged.artifacts?.excluded = sum.overflow ? .max : sum.partialValue  // a count: the schema keeps it ≥ 0
            }
            merged.results += part.results
            merged.durationMilliseconds = max(merged.durationMilliseconds, part.durationMilliseconds)
            merged.canaryDiagnosis = [merged.canaryDiagnosis, part.canaryDiagnosis].compactMap { $0 }.joined(separator: " | ").nilIfEmpty
            merged.stoppedEarly = [merged.stoppedEarly, part.stoppedEarly].compactMap { $0 }.joined(separator: " | ").nilIfEmpty
            merged.expiredBaselineEntries = Array(Set(merged.expiredBaselineEntries + part.expiredBaselineEntries)).sorted()
            let unstarted = Set((merged.unavailableServices ?? []) + (part.unavailableServices ?? [])).sorted()
            merged.unavailableServices = unstarted.isEmpty ? nil : unstarted
            merged.errorBudget = [merged.errorBudget, part.errorBudget].compactMap { $0 }.max()
        }
        var seen = Set<String>()
        for result in merged.results where !seen.insert(result.id).inserted {
            throw ConformanceError(.invalidResults, "vector \(result.id) appears in more than one shard")
        }
        merged.results.sort { $0.id < $1.id }
        merged.counts = counting(merged.results)
        merged.shard = nil
        return merged
    }
}

extension RunResults {
    /// The shards merged, with every vector of `manifest` that no shard ran added as SKIP (returned too, so
    /// the caller can name them): a merged run always accounts for the whole corpus.
    public static func merged(_ parts: [RunResults], corpus manifest: Manifest) throws(ConformanceError) -> (RunResults, missing: [Vector]) {
        var merged = try merged(parts)
        let ran = Set(merged.results.map(\.id))
        // Vectors of artefacts the run did not select are left out, as the run left them out, and counted as such.
        let selection = merged.artifacts
        let missing = manifest.vectors.filter { !ran.contains($0.id.text) && selection?.includes($0) != false }
        merged.artifacts?.excluded = manifest.vectors.count { selection?.includes($0) == false }
        guard !missing.isEmpty else { return (merged, []) }
        merged.results += missing.map { vector in
            VectorResult(
                id: vector.id.text, revision: vector.revision, severity: vector.severity, outcome: .skip, expected: vector.expected.verdict,
                expectedErrorClasses: vector.expected.errorClasses.map(\.rawValue), verdict: nil, errorClass: nil,
                message: "not run: in none of the merged shards", durationMicroseconds: 0)
        }
        return (try Self.merged([merged]), missing)
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
