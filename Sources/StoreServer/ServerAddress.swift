/// Where a server is bound (or a client connects from), as the socket says: what `forge serve` and
/// `forge validate --listen` print, and what the control routes check.
package struct ServerAddress: Sendable, Hashable {
    /// A numeric address (`127.0.0.1`, `0.0.0.0`, `::1`), as bound.
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, IPv6 in brackets: for URLs.
    package var authority: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// Whether only this machine can reach it: 127.0.0.0/8, `::1`, or IPv4 loopback mapped into IPv6.
    package var isLoopback: Bool { Self.isLoopback(host) }

    /// Whether `host` (numeric, or `localhost`) is a loopback address.
    package static func isLoopback(_ host: String) -> Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "::1" || lowered == "0:0:0:0:0:0:0:1" { return true }
        let v4 = lowered.hasPrefix("::ffff:") ? String(lowered.dropFirst("::ffff:".count)) : lowered
        let octets = v4.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { UInt8($0) != nil } && octets.first == "127"
    }
}
