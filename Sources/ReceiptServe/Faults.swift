public import ReceiptForge
public import ReceiptModel
import Synchronization
public import ForgeSupport
import StoreModel

/// Why `forge serve` cannot do what it was asked. Compared by code only.
public struct ServeError: CodedError, Sendable {
    public enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// A fault spec (flag or control route) is malformed.
        case invalidFault
        /// The request log cannot be written.
        case logFailed
        /// ``ServerLimits/maximumFaults`` are in force already.
        case tooManyFaults
        /// The server cannot listen where it was asked: the port is taken, the address is not this machine's,
        /// the port needs privileges, or the host does not resolve (`forge serve` exits 69).
        case cannotListen
        /// `POST /_forge/clock` asked for a time the clock cannot take (backwards, or outside the writable dates).
        case invalidClock
        public var description: String { rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// A failure on demand: what one endpoint does instead of (or before) answering, for how many requests.
///
/// Written as `[ENDPOINT:]ACTION[,KEY=VALUE…]` on the command line, or as the same keys in a JSON object
/// on the control route:
///
/// | key | meaning |
/// |---|---|
/// | `endpoint` | `production`, `sandbox` or `any` (default) |
/// | `status=N` | answer HTTP 200 with `{"status": N}` (21100–21199 add `is-retryable`) |
/// | `retryable=true\|false` | the `is-retryable` of a 211xx status (default true) |
/// | `http=N` | answer HTTP N (e.g. 500, 503) with a plain-text body |
/// | `close` | send the headers and half the body, then close the connection |
/// | `not-json` | answer HTTP 200 with an HTML error page, as a proxy in front of Apple might |
/// | `latency=MS` | wait before answering (alone: a slow but correct answer) |
/// | `count=N` | only the next N matching requests (default: every request until cleared) |
/// | `percent=P` | only P% of matching requests, drawn from the server's seeded generator |
public struct Fault: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        case status(VerifyReceiptStatus, retryable: Bool?)
        case http(Int)
        case close
        case notJSON
        /// Only the latency.
        case none
    }

    public var endpoint: AppleEndpoint?
    public var action: Action
    public var latencyMilliseconds: Int
    public var count: Int?
    public var percent: Int?

    public init(endpoint: AppleEndpoint? = nil, action: Action, latencyMilliseconds: Int = 0, count: Int? = nil, percent: Int? = nil) {
        self.endpoint = endpoint
        self.action = action
        self.latencyMilliseconds = latencyMilliseconds
        self.count = count
        self.percent = percent
    }

    static let keys = ["endpoint", "status", "retryable", "http", "close", "not-json", "latency", "count", "percent"]

    /// Parses the command-line form, e.g. `production:status=21005,count=2` or `sandbox:http=503,percent=25`.
    public init(parsing spec: String) throws(ServeError) {
        var text = Substring(spec)
        var pairs: [(String, String)] = []
        if let colon = text.firstIndex(of: ":"), !text[..<colon].contains("=") {
            pairs.append(("endpoint", String(text[..<colon])))
            text = text[text.index(after: colon)...]
        }
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "=", maxSplits: 1)
            pairs.append((String(pieces.first ?? ""), pieces.count > 1 ? String(pieces[1]) : "true"))
        }
        try self.init(pairs: pairs, source: "'\(spec)'")
    }

    /// Parses the control route's form: `{"endpoint": "production", "status": 21005, "count": 2}`.
    public init(json: JSONValue) throws(ServeError) {
        guard let object = json.objectValue else { throw ServeError(.invalidFault, "a fault is a JSON object, e.g. {\"status\": 21005, \"count\": 2}") }
        try self.init(pairs: object.map { ($0.key, $0.value.scalarText ?? "") }, source: "the JSON fault")
    }

    private init(pairs: [(String, String)], source: String) throws(ServeError) {
        var endpoint: AppleEndpoint?
        var actions: [Action] = []
        var retryable: Bool?
        var latency = 0
        var count: Int?
        var percent: Int?
        func number(_ key: String, _ value: String, _ range: ClosedRange<Int>) throws(ServeError) -> Int {
            guard let number = Int(value), range.contains(number) else {
                throw ServeError(.invalidFault, "\(source): \(key) must be a whole number in \(range.lowerBound)...\(range.upperBound), not '\(value)'")
            }
            return number
        }
        func flag(_ key: String, _ value: String) throws(ServeError) -> Bool {
            guard let flag = ["true": true, "false": false, "1": true, "0": false][value] else {
                throw ServeError(.invalidFault, "\(source): \(key) must be true or false, not '\(value)'")
            }
            return flag
        }
        for (key, value) in pairs {
            switch key {
            case "endpoint":
                if value != "any" {
                    guard let named = AppleEndpoint(rawValue: value) else {
                        throw ServeError(.invalidFault, "\(source): the endpoint is production, sandbox or any, not '\(value)'")
                    }
                    endpoint = named
                }
            case "status":
                let code = VerifyReceiptStatus(Int64(try number(key, value, 0...99_999)))
                guard code.isDocumented, code != .valid else {
                    throw ServeError(.invalidFault, "\(source): status \(value) is not an error Apple documents (21000–21010, 21100–21199)")
                }
                actions.append(.status(code, retryable: nil))
            case "retryable": retryable = try flag(key, value)
            case "http": actions.append(.http(try number(key, value, 400...599)))
            case "close": if try flag(key, value) { actions.append(.close) }
            case "not-json": if try flag(key, value) { actions.append(.notJSON) }
            case "latency": latency = try number(key, value, 0...600_000)
            case "count": count = try number(key, value, 1...1_000_000)
            case "percent": percent = try number(key, value, 1...100)
            default:
                throw ServeError(.invalidFault, "\(source): unknown key '\(key)'; known: \(Self.keys.joined(separator: ", "))")
            }
        }
        guard actions.count <= 1 else { throw ServeError(.invalidFault, "\(source): give one of status, http, close and not-json, not several") }
        var action = actions.first ?? .none
        if action == .none, latency == 0 {
            throw ServeError(.invalidFault, "\(source): say what goes wrong: status=N, http=N, close, not-json or latency=MS")
        }
        if let retryable {
            guard case .status(let code, _) = action, code.isInternalRange else {
                throw ServeError(.invalidFault, "\(source): retryable applies to statuses 21100–21199 only")
            }
            action = .status(code, retryable: retryable)
        }
        self.init(endpoint: endpoint, action: action, latencyMilliseconds: latency, count: count, percent: percent)
    }

    /// The control route's form, as `POST /_forge/faults` takes it and `GET /_forge/faults` lists it (one per
    /// line): `Fault(json: fault.json) == fault`.
    public var json: JSONValue {
        var members: JSONObject = [("endpoint", .string(endpoint?.rawValue ?? "any"))]
        switch action {
        case .status(let code, let retryable):
            members["status"] = .integer(code.rawValue)
            if let retryable { members["retryable"] = .bool(retryable) }
        case .http(let code): members["http"] = .integer(Int64(code))
        case .close: members["close"] = .bool(true)
        case .notJSON: members["not-json"] = .bool(true)
        case .none: break
        }
        if latencyMilliseconds > 0 { members["latency"] = .integer(Int64(latencyMilliseconds)) }
        if let count { members["count"] = .integer(Int64(count)) }
        if let percent { members["percent"] = .integer(Int64(percent)) }
        return .object(members)
    }

    /// The command-line form, as written to the log.
    public var spec: String {
        var parts: [String] = []
        switch action {
        case .status(let code, let retryable):
            parts.append("status=\(code.rawValue)")
            if let retryable { parts.append("retryable=\(retryable)") }
        case .http(let code): parts.append("http=\(code)")
        case .close: parts.append("close")
        case .notJSON: parts.append("not-json")
        case .none: break
        }
        if latencyMilliseconds > 0 { parts.append("latency=\(latencyMilliseconds)") }
        if let count { parts.append("count=\(count)") }
        if let percent { parts.append("percent=\(percent)") }
        return (endpoint?.rawValue ?? "any") + ":" + parts.joined(separator: ",")
    }
}

/// The faults in force, shared by every request: the first fault that matches a request's endpoint (and
/// its percentage draw) applies, and a counted fault is used up. Percentages come from a seeded
/// generator, so a run with the same requests in the same order fails the same ones. At most
/// ``ServerLimits/maximumFaults`` are in force at once: every request looks through them.
public final class FaultPlan: Sendable {
    private struct State {
        var faults: [Fault]
        var random: SeededGenerator
    }
    private let state: Mutex<State>

    public init(_ faults: [Fault] = [], seed: UInt64 = 0) throws(ServeError) {
        guard faults.count <= ServerLimits.maximumFaults else { throw Self.full }
        state = Mutex(State(faults: faults, random: SeededGenerator(seed: seed)))
    }

    public func add(_ fault: Fault) throws(ServeError) {
        let added = state.withLock { state in
            guard state.faults.count < ServerLimits.maximumFaults else { return false }
            state.faults.append(fault)
            return true
        }
        guard added else { throw Self.full }
    }

    private static let full = ServeError(
        .tooManyFaults, "at most \(ServerLimits.maximumFaults) faults are in force at once; DELETE /_forge/faults (or use count=N) first")

    public func clear() { state.withLock { $0.faults.removeAll() } }

    /// The faults in force, with what is left of their counts.
    public var faults: [Fault] { state.withLock { $0.faults } }

    /// The fault that applies to the next request on `endpoint`, if any, counting it as used.
    public func next(for endpoint: AppleEndpoint) -> Fault? {
        state.withLock { state in
            for index in state.faults.indices where state.faults[index].endpoint.map({ $0 == endpoint }) ?? true {
                let fault = state.faults[index]
                if let percent = fault.percent, state.random.below(100) >= UInt64(percent) { continue }
                if let count = fault.count {
                    if count <= 1 { state.faults.remove(at: index) } else { state.faults[index].count = count - 1 }
                }
                return fault
            }
            return nil
        }
    }
}
