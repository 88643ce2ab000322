/// Where a server listens, over HTTP or (with credentials) HTTPS, and what it bounds: what the CLI parses from
/// `--listen`, `--tls-*`, `--threads` and the limits, and what the servers are built from, one type for both.
public struct ServerListener: Sendable {
    public var host: String
    public var port: Int
    /// The certificate and key HTTPS is served with; HTTP when nil.
    public var tls: ServingCredentials?
    /// Event-loop threads; nil shares the process's (one per core).
    public var threads: Int?
    public var limits: ServerLimits

    public init(host: String, port: Int, tls: ServingCredentials? = nil, threads: Int? = nil, limits: ServerLimits = ServerLimits()) {
        self.host = host
        self.port = port
        self.tls = tls
        self.threads = threads
        self.limits = limits
    }
}
