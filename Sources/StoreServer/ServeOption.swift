/// The options of `forge serve` that the server's messages point the operator to (a 401 without keys, a 403 on the
/// control routes, a busy `--state` file): their spelling has this one owner, and the CLI declares those options
/// under these names, so a message cannot name a flag that is gone.
package enum ServeOption: String, CaseIterable, Sendable, CustomStringConvertible {
    case scenario, state, fault
    case ocspCA = "ocsp-ca"
    case apiKey = "api-key"
    case issuerID = "issuer-id"
    case noAuth = "no-auth"
    case controlToken = "control-token"
    case readTimeout = "read-timeout"
    case shutdownGrace = "shutdown-grace"
    case notifyCA = "notify-ca"

    /// `--control-token`, as a message writes it.
    package var description: String { "--" + rawValue }
}
