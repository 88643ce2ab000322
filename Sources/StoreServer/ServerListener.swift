/// Where a server listens, over HTTP or (with credentials) HTTPS, and what it bounds: what the CLI parses from
/// `--listen`, `--tls-*`, `--threads` and the limits, and what the servers are built from, one type for both.
package struct ServerListener: Sendable {
    package var host: String
    package var port: Int
    /// The certificate and key HTTPS is served with; HTTP when nil.
    package var tls: ServingCredentials?
    /// Event-loop threads; nil shares the process's (one per core).
    package var threads: Int?
    package var limits: ServerLimits

    package init(host: String, port: Int, tls: ServingCredentials? = nil, threads: Int? = nil, limits: ServerLimits = ServerLimits()) {
        self.host = host
        self.port = port
        self.tls = tls
        self.threads = threads
        self.limits = limits
    }
}
