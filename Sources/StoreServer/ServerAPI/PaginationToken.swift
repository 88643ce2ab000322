#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ForgeCrypto
import _ForgeSupport

/// Get Notification History's `paginationToken`: bound to the request's filters, the last record sent and when it was
/// issued (on the server clock), and authenticated by an HMAC-SHA256 under ``key``, so a client can neither make one
/// (say, dated in the year 9999, which would never expire) nor alter one. Opaque to clients: base64url of
/// `1:FINGERPRINT:ISSUED_MS:KEY` followed by its 32-byte MAC.
///
/// The key is random, made once per process (one `forge serve`) and never written anywhere: a token outlives neither
/// ``ServerAPIService/paginationTokenLifetime`` nor the server that issued it. After a restart, `--state` or not, a
/// client gets 4000014 for its token and asks for the first page again, as Apple's clients do for any invalid token.
/// (The history's `revision` is another matter: ``HistoryRevision``.)
struct PaginationToken {
    let fingerprint: UInt64
    let after: String
    let issued: Date

    /// The MAC key: 32 bytes from the system's cryptographically secure generator, once per process. It signs answers,
    /// never anything that makes vectors.
    static let key: [UInt8] = {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }()
    static let macLength = 32

    init(fingerprint: UInt64, after: String, issued: Date) {
        self.fingerprint = fingerprint
        self.after = after
        self.issued = issued
    }

    var token: String {
        let text = Array("1:\(fingerprint):\(ReceiptDate.milliseconds(issued) ?? 0):\(after)".utf8)
        return Base64URL.encode(text + Self.mac(text))
    }

    /// Nil for anything this server did not write (Apple: 4000014): not ours, altered, or from before a restart.
    init?(token: String) {
        guard token.utf8.count <= 512, let bytes = Base64URL.decode(token), bytes.count > Self.macLength else { return nil }
        let signed = Array(bytes.dropLast(Self.macLength))
        let expected = Self.mac(signed)
        guard expected.count == Self.macLength, ConstantTime.equal(expected, bytes.suffix(Self.macLength)),
            let text = String(bytes: signed, encoding: .utf8)
        else { return nil }
        let parts = text.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "1", let fingerprint = UInt64(parts[1]), let issued = Int64(parts[2]),
            let date = ReceiptDate.instant(milliseconds: Double(issued))
        else { return nil }
        self.fingerprint = fingerprint
        self.issued = date
        after = String(parts[3])
    }

    /// The MAC of `text`; empty if OpenSSL failed, which no token then matches.
    private static func mac(_ text: [UInt8]) -> [UInt8] { (try? HMACSHA256.mac(key: key, message: text)) ?? [] }
}
