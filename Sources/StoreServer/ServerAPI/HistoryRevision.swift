#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport

/// Transaction history's `revision`: a durable cursor, not a page number (server-api-facts §2). It names the
/// last record a client has seen in the history's order (modification date, then transaction id), so an
/// ascending client that keeps the revision of its last page sees only what was added or modified after it,
/// however the timeline has moved since. Opaque to clients: base64url of `1:A|D[:MILLIS:ID]`.
///
/// Not authenticated, unlike ``PaginationToken``, on purpose: Apple tells clients to keep it for the next sync, so it
/// must stay good across restarts (`--state`), and it holds nothing worth forging. It has no expiry to cheat, and a
/// made-up one only says where to start reading the history of the transaction in the path, which the caller's token
/// may read whole from the start anyway. Its text is bounded and checked field by field; anything else is 4000005.
struct HistoryRevision: Sendable, Hashable {
    /// A record's place in the history: when it last changed (epoch ms), then its id (digits, by value).
    struct Key: Sendable, Hashable, Comparable {
        let modified: Int64
        let transactionID: String

        static func < (lhs: Key, rhs: Key) -> Bool {
            if lhs.modified != rhs.modified { return lhs.modified < rhs.modified }
            if lhs.transactionID.count != rhs.transactionID.count { return lhs.transactionID.count < rhs.transactionID.count }
            return lhs.transactionID < rhs.transactionID
        }
    }

    let ascending: Bool
    /// The last record seen; nil before the first.
    let after: Key?

    init(ascending: Bool, after: Key?) {
        self.ascending = ascending
        self.after = after
    }

    /// Whether `key` comes after this cursor in its order.
    func precedes(_ key: Key) -> Bool {
        guard let after else { return true }
        return ascending ? after < key : key < after
    }

    var token: String {
        var text = "1:" + (ascending ? "A" : "D")
        if let after { text += ":\(after.modified):\(after.transactionID)" }
        return Base64URL.encode(Array(text.utf8))
    }

    /// Nil for anything this server did not write (Apple: 4000005).
    init?(token: String) {
        guard token.count <= 256, let bytes = Base64URL.decode(token), let text = String(bytes: bytes, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 4, parts[0] == "1", parts[1] == "A" || parts[1] == "D" else { return nil }
        ascending = parts[1] == "A"
        if parts.count == 4 {
            guard let modified = Int64(parts[2]), modified >= 0, ServerAPIIdentifier.isWellFormed(String(parts[3])) else { return nil }
            after = Key(modified: modified, transactionID: String(parts[3]))
        } else {
            after = nil
        }
    }
}

/// Apple's transaction ids: decimal digits (`forge` writes 15 to 18).
enum ServerAPIIdentifier {
    /// Longer than any id Apple or `forge` writes (a UInt64 has 20 digits).
    static let maximumLength = 20

    static func isWellFormed(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maximumLength && id.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }
}
