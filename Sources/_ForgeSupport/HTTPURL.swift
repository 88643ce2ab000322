#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// An absolute `http://` or `https://` URL that a user or a peer gave (a `--notify` webhook, a `--target`, an
/// OCSP responder, a redirect's `Location`), checked once where it is read: a host, and a port from 1 to 65535,
/// written or the scheme's. Nothing past it hands a socket library a port it cannot hold (NIO traps on one over
/// 65535) or one that Foundation reads as none (`:99999999999999999999` would connect to port 80).
public struct HTTPURL: Sendable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable, CaseIterable {
        case http, https

        public var defaultPort: Int { self == .https ? 443 : 80 }
    }

    /// Why a text is not an HTTPURL: one line that quotes it.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public let scheme: Scheme
    /// The host as written, without an IPv6 address's brackets.
    public let host: String
    /// The port written, else the scheme's.
    public let port: Int
    /// The text as given: what is sent and quoted.
    public let text: String
    /// The same, as Foundation holds it.
    public let url: URL

    public static let ports = 1...65535
    /// Longer texts are refused: no user writes one, and a peer's redirect need not be followed that far.
    public static let maximumLength = 8192

    /// `text` checked: an absolute URL of one of `schemes` (printable ASCII, at most ``maximumLength``
    /// characters) with a host and a port in ``ports``.
    public init(_ text: String, schemes: Set<Scheme> = [.http, .https]) throws(Problem) {
        let quoted = text.count > 200 ? "'\(text.prefix(200))…'" : "'\(text)'"
        let names = Scheme.allCases.filter(schemes.contains).map { "\($0.rawValue)://" }.joined(separator: " or ")
        let notOne = Problem(description: "\(quoted) is not an \(names) URL")
        guard text.utf8.count <= Self.maximumLength, text.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }),
            let separator = text.firstRange(of: "://"), let scheme = Scheme(rawValue: text[..<separator.lowerBound].lowercased()), schemes.contains(scheme),
            let url = URL(string: text), url.scheme?.lowercased() == scheme.rawValue
        else { throw notOne }
        // The authority as written, the user part dropped: Foundation reads a port it cannot hold as none.
        let rest = text[separator.upperBound...]
        var authority = rest.prefix { !"/?#".contains($0) }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let hostText: Substring
        let portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw notOne }
            hostText = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw notOne }
            portText = after.isEmpty ? nil : after.dropFirst()
        } else if let colon = authority.lastIndex(of: ":") {
            hostText = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            hostText = authority
            portText = nil
        }
        guard !hostText.isEmpty, let parsedHost = url.host, !parsedHost.isEmpty else { throw Problem(description: "\(quoted) has no host") }
        var port = scheme.defaultPort
        if let portText, !portText.isEmpty {
            let digits = portText.drop { $0 == "0" }
            guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), digits.count <= 5, let written = Int(digits.isEmpty ? "0" : digits),
                Self.ports.contains(written)
            else { throw Problem(description: "\(quoted): the port must be from \(Self.ports.lowerBound) to \(Self.ports.upperBound), not \(portText)") }
            // What a client connects to is what was checked.
            guard url.port == written else { throw notOne }
            port = written
        }
        self.scheme = scheme
        host = String(hostText)
        self.port = port
        self.text = text
        self.url = url
    }

    /// A redirect's `Location` (absolute, or relative to this URL) as the URL to follow, checked like any other.
    public func resolving(_ location: String) throws(Problem) -> HTTPURL {
        guard let resolved = URL(string: location, relativeTo: url)?.absoluteString else {
            throw Problem(description: "'\(location.prefix(200))' is not a URL")
        }
        return try HTTPURL(resolved)
    }

    public var description: String { text }
}
