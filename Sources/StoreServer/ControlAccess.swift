#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport

/// Who may use the control routes (`/_forge/*`): the test that owns the server, never a web page that a browser on the
/// same machine has open (DESIGN §8). Socket-free: the HTTP layer hands over what the request said.
///
/// With a control token, the token decides: `Authorization: Bearer TOKEN`, from any address (a page cannot add that
/// header to a request to another origin without a CORS preflight, which this server never grants). Without one, a
/// request must pass every rule below, in this order:
///
/// | rule | refused (403 unless said) | because |
/// |---|---|---|
/// | `peer` | a peer that is not loopback | another machine needs the token |
/// | `host` | a `Host` that is not `localhost`, 127.0.0.0/8, `[::1]` or the exact listen host (any port) | DNS rebinding: a page whose own name now resolves to 127.0.0.1 sends its own name |
/// | `origin` | an `Origin` that is not loopback, `null` included (a sandboxed frame, a file) | a browser names the page that sent the request |
/// | `content-type` | a POST whose `Content-Type` is not `application/json`: **415** | a page may send `text/plain`, a form or `multipart/form-data` without asking (a CORS "simple request"), never JSON |
///
/// A request without `Host` or `Origin` is not refused for it: browsers always send `Host`, and `Origin` with every
/// cross-origin request and every POST.
package struct ControlAccess: Sendable {
    /// The rule a request broke; `rawValue` is its name in the request log.
    package enum Rule: String, Sendable, Hashable, CaseIterable {
        case peer
        case host
        case origin
        case contentType = "content-type"
        case tokenMissing = "token-missing"
        case tokenWrong = "token-wrong"
    }

    /// What a request said that the rules look at.
    package struct Request: Sendable {
        package var method: String
        /// The peer's numeric address; nil when there is none (in process).
        package var peer: String?
        /// Every `Host` the request carried (HTTP/1.1's first one becomes the request's authority).
        package var hosts: [String]
        package var origins: [String]
        package var contentTypes: [String]
        package var authorization: String?

        package init(method: String, peer: String?, hosts: [String], origins: [String], contentTypes: [String], authorization: String?) {
            self.method = method
            self.peer = peer
            self.hosts = hosts
            self.origins = origins
            self.contentTypes = contentTypes
            self.authorization = authorization
        }
    }

    /// A refused request: the rule it broke, and the refusal to answer.
    package struct Refusal: Sendable {
        package let rule: Rule
        package let refusal: ServerRefusal
    }

    /// `--control-token`: when set, the only thing checked.
    package let token: String?
    /// The host the server listens on, as `--listen` named it (`0.0.0.0`, `::`, an address or a name).
    package let listenHost: String

    package init(token: String?, listenHost: String) {
        self.token = token
        let host = listenHost.lowercased()
        self.listenHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// Nil when `request` may use the control routes; else why not.
    package func refusal(_ request: Request) -> Refusal? {
        if let token { return Self.tokenRefusal(request.authorization, token: token) }
        let peer = request.peer ?? "an unknown address"
        guard ServerAddress.isLoopback(peer) else {
            return Refusal(
                rule: .peer,
                refusal: ServerRefusal(
                    .controlForbidden,
                    "the control routes (/_forge/*) answer loopback clients only, not \(Self.quoted(peer)); start the server with \(ServeOption.controlToken) TOKEN and send Authorization: Bearer TOKEN"
                ))
        }
        if let host = request.hosts.first(where: { !isOwnHost($0) }) {
            return Refusal(
                rule: .host,
                refusal: ServerRefusal(
                    .controlForbidden,
                    "the control routes (/_forge/*) answer requests for localhost, 127.0.0.1, [::1] or \(listenHost) only, not Host \(Self.quoted(host)) (a web page's name rebound to this machine is refused); or start the server with \(ServeOption.controlToken) TOKEN"
                ))
        }
        if let origin = request.origins.first(where: { !Self.isLoopbackOrigin($0) }) {
            return Refusal(
                rule: .origin,
                refusal: ServerRefusal(
                    .controlForbidden,
                    "the control routes (/_forge/*) do not answer web pages: Origin \(Self.quoted(origin)) is not loopback; or start the server with \(ServeOption.controlToken) TOKEN"
                ))
        }
        if request.method == "POST", request.contentTypes.count != 1 || !Self.isJSON(request.contentTypes[0]) {
            let sent = request.contentTypes.isEmpty ? "none" : request.contentTypes.map(Self.quoted).joined(separator: ", ")
            return Refusal(
                rule: .contentType,
                refusal: ServerRefusal(
                    .controlUnsupportedMediaType,
                    "a control POST (/_forge/*) must send Content-Type: application/json (sent: \(sent)), which a web page cannot send without asking first"))
        }
        return nil
    }

    private static func tokenRefusal(_ authorization: String?, token: String) -> Refusal? {
        if let authorization, ConstantTime.equal(Array(authorization.utf8), Array(("Bearer " + token).utf8)) { return nil }
        let why =
            authorization == nil
            ? "need Authorization: Bearer TOKEN (the server's \(ServeOption.controlToken))" : "were sent another token than the server's \(ServeOption.controlToken)"
        return Refusal(rule: authorization == nil ? .tokenMissing : .tokenWrong, refusal: ServerRefusal(.controlUnauthorized, "the control routes (/_forge/*) \(why)"))
    }

    /// Whether a `Host` names this machine by loopback or as the server listens: `NAME[:PORT]` or `[IPv6][:PORT]`.
    func isOwnHost(_ host: String) -> Bool {
        guard let name = Self.name(ofAuthority: host) else { return false }
        return ServerAddress.isLoopback(name) || name == listenHost
    }

    /// Whether an `Origin` is `http://` or `https://` of a loopback host, nothing after it.
    static func isLoopbackOrigin(_ origin: String) -> Bool {
        let lowered = origin.lowercased()
        guard let scheme = ["http://", "https://"].first(where: lowered.hasPrefix), let name = name(ofAuthority: String(lowered.dropFirst(scheme.count))) else {
            return false
        }
        return ServerAddress.isLoopback(name)
    }

    /// The host of `NAME[:PORT]` or `[IPv6][:PORT]`, lower-cased; nil when it is not one (a path, user info, a bad port).
    static func name(ofAuthority authority: String) -> String? {
        let name: Substring, rest: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            name = authority[authority.index(after: authority.startIndex)..<close]
            rest = authority[authority.index(after: close)...]
        } else {
            let colon = authority.firstIndex(of: ":") ?? authority.endIndex
            name = authority[..<colon]
            rest = authority[colon...]
        }
        guard !name.isEmpty, !name.contains(where: { "/@?#[] ".contains($0) }) else { return nil }
        if let colon = rest.first {
            guard colon == ":", rest.count <= 6, rest.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        }
        return name.lowercased()
    }

    /// `application/json`, with or without parameters (`; charset=utf-8`).
    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return mediaType.trimmingWhitespace().lowercased() == "application/json"
    }

    /// A value the client sent, quoted and cut to a length a message (and the log line that copies it) can hold.
    static func quoted(_ value: String) -> String {
        "'" + (value.count > 80 ? value.prefix(80) + "…" : value) + "'"
    }
}
