#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Synchronization

/// Answers of the read-only endpoints, kept by everything they depend on: the request (environment, app,
/// method, path, query, body), the clock to the millisecond and the state's version. The same inputs render
/// the same bytes (RFC 6979 signatures), so a repeated GET at a pinned clock (`--now`, `X-Forge-Now`) costs
/// no signature, and any change of the state (a new version) or of the clock misses.
final class ResponseCache: Sendable {
    struct Key: Hashable {
        let request: String
        let body: [UInt8]
        let milliseconds: Int64
        let version: UInt64
    }

    /// What the cache holds at most; past it, it starts again empty (answers are a few KiB to a few hundred).
    static let maximumBytes = 64 << 20

    private struct Entries {
        var answers: [Key: ServerAPIResponse] = [:]
        var bytes = 0
    }
    private let entries = Mutex(Entries())

    func answer(_ key: Key) -> ServerAPIResponse? { entries.withLock { $0.answers[key] } }

    func keep(_ response: ServerAPIResponse, for key: Key) {
        let size = response.body.count + key.body.count + key.request.utf8.count
        guard size <= Self.maximumBytes / 16 else { return }
        entries.withLock { entries in
            if entries.bytes + size > Self.maximumBytes { entries = Entries() }
            entries.answers[key] = response
            entries.bytes += size
        }
    }
}
