#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import ReceiptCorpus
import _ForgeSupport

/// Known failures, kept in the repository of the validator under test, so CI gates on changes only.
///
/// Each entry names a vector (`id`) or a set of them (`pattern`, `*` matches anything) and the outcome
/// it tolerates. A tolerated failure becomes XFAIL; a vector that now passes becomes XPASS and a
/// different failure CHANGED_FAILURE, both of which fail the run, as does an entry past its `expires`
/// date (the one place the real clock is used: the caller passes today's date).
public struct Baseline: Codable, Sendable, Hashable {
    public struct Entry: Codable, Sendable, Hashable {
        public var id: String?
        public var pattern: String?
        public var outcome: Outcome
        public var reason: String
        public var issue: String?
        /// `YYYY-MM-DD`; after it the entry must be triaged again.
        public var expires: String?

        public init(id: String? = nil, pattern: String? = nil, outcome: Outcome, reason: String, issue: String? = nil, expires: String? = nil) {
            self.id = id
            self.pattern = pattern
            self.outcome = outcome
            self.reason = reason
            self.issue = issue
            self.expires = expires
        }

        func matches(_ vectorID: String) -> Bool {
            if let id { return id == vectorID }
            return pattern.map { IDPattern.matches(vectorID, $0) } ?? false
        }
    }

    public var schemaVersion = 1
    public var implementation: String
    public var entries: [Entry]

    public init(implementation: String, entries: [Entry]) {
        self.implementation = implementation
        self.entries = entries
    }

    /// Reads a baseline file.
    public static func load(contentsOf url: URL) throws(ConformanceError) -> Baseline {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ConformanceError(.invalidBaseline, "cannot read the baseline \(url.path)")
        }
        do { return try JSONDecoder().decode(Baseline.self, from: data) } catch {
            throw ConformanceError(.invalidBaseline, "\(url.path) is not a baseline file: \(error)")
        }
    }

    /// Today's UTC date (`YYYY-MM-DD`), what `expires` is compared with: the runner's only use of the wall clock.
    public static var today: String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let date = calendar.dateComponents([.year, .month, .day], from: Date())
        return "\(String(date.year ?? 0).leftPadded(4))-\(String(date.month ?? 0).leftPadded(2))-\(String(date.day ?? 0).leftPadded(2))"
    }

    /// Applies the baseline: rewrites tolerated, stale and changed outcomes; returns the expired entries.
    public func apply(to results: inout RunResults, today: String) -> [Entry] {
        for index in results.results.indices {
            let result = results.results[index]
            // Exact ids win over patterns.
            guard let entry = entries.first(where: { $0.id == result.id }) ?? entries.first(where: { $0.id == nil && $0.matches(result.id) }) else { continue }
            switch result.outcome {
            case entry.outcome:
                results.results[index].outcome = .xfail
                results.results[index].message = "known failure: \(entry.reason)\(entry.issue.map { " (\($0))" } ?? "")"
            case .pass, .acceptable:
                results.results[index].outcome = .xpass
                results.results[index].message = "the baseline expects \(entry.outcome.rawValue) (\(entry.reason)) but the vector passes: remove the entry"
            case .skip:
                continue
            default:
                results.results[index].message = "the baseline tolerates \(entry.outcome.rawValue), got \(result.outcome.rawValue): \(result.message ?? "")"
                results.results[index].outcome = .changedFailure
            }
        }
        results.counts = Dictionary(grouping: results.results, by: \.outcome.rawValue).mapValues(\.count)
        let expired = entries.filter { entry in entry.expires.map { $0 < today } ?? false }
        results.expiredBaselineEntries = expired.map { $0.id ?? $0.pattern ?? "?" }
        return expired
    }

    /// A baseline tolerating every failure of `results`, keeping the reasons, issues and expiry dates of
    /// `existing` entries for the same ids.
    public static func written(from results: RunResults, keeping existing: Baseline?) -> Baseline {
        var entries: [Entry] = []
        for result in results.results
        where result.outcome.isConformanceFailure || result.outcome.isInfrastructureFailure
            || result.outcome == .xfail || result.outcome == .changedFailure
        {
            let previous = existing?.entries.first { $0.id == result.id }
            let outcome: Outcome = result.outcome == .xfail ? (previous?.outcome ?? .xfail) : result.outcome
            guard outcome != .xpass else { continue }
            entries.append(
                Entry(
                    id: result.id, outcome: outcome, reason: previous?.reason ?? "TODO: why \(result.id) is \(outcome.rawValue)",
                    issue: previous?.issue, expires: previous?.expires))
        }
        return Baseline(implementation: results.implementation, entries: entries)
    }
}
