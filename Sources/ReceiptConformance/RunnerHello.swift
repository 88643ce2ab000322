/// The runner's opening message (`{"type":"hello","protocol":1,"suite":"…"}`), which the harness answers
/// with a `HarnessHello`. A type of its own so every transport writes the same bytes and the protocol
/// schema is generated from it.
public struct RunnerHello: Codable, Sendable, Hashable {
    public var type = HarnessProtocol.MessageType.hello.rawValue
    public var `protocol`: Int
    /// The corpus version being run (`Manifest.suite.version`).
    public var suite: String

    public init(suite: String, protocol: Int = HarnessProtocol.version) {
        self.protocol = `protocol`
        self.suite = suite
    }
}

/// The runner's last message (`{"type":"stop"}`): the harness may exit.
public struct StopMessage: Codable, Sendable, Hashable {
    public var type = HarnessProtocol.MessageType.stop.rawValue

    public init() {}
}
