import StoreForge
import ReceiptModel
import Synchronization
package import _ForgeSupport
import StoreModel

/// Why `forge serve` cannot do what it was asked. Compared by code only.
package struct ServeError: CodedError, Sendable {
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
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
        /// The `--state` file cannot be opened, read or written: missing folder, another server holding it, not a
        /// state file, a full disk. At start `forge serve` exits; while it runs the change is refused.
        case stateFailed
        /// A scenario the server cannot serve (no `now`, not renderable, not the customers of its `--state` file).
        case invalidScenario
        /// The server cannot be put together for a reason of its own (a certificate it cannot issue, a PKI it cannot read).
        case cannotStart
        package var description: String { rawValue }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// Which requests a fault is for: `any`, one of verifyReceipt's two endpoints, or App Store Server API endpoints.
///
/// Written `any`, `production` or `sandbox` (verifyReceipt's), or for the Server API `NAME` (its endpoint in both
/// environments), `production/NAME`, `sandbox/NAME`, or `ENVIRONMENT/any` (every endpoint of one environment;
/// `any/any` every Server API endpoint). NAME is the endpoint as the request log names it (`transactionInfo`, …).
package enum FaultEndpoint: Sendable, Hashable {
    /// Every endpoint of both APIs; a `status` narrows it to the endpoints of the API the code belongs to.
    case any
    case verifyReceipt(AppleEndpoint)
    /// A Server API endpoint by name (nil: every one) in one environment (nil: both).
    case serverAPI(ServerAPIEnvironment?, endpoint: String?)

    /// Parses the written form; `source` names the spec in the message of a refusal.
    init(parsing text: String, source: String) throws(ServeError) {
        if text == "any" {
            self = .any
        } else if let endpoint = AppleEndpoint(rawValue: text) {
            self = .verifyReceipt(endpoint)
        } else {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            var environment: ServerAPIEnvironment?
            if parts.count == 2, parts[0] != "any" {
                guard let named = ServerAPIEnvironment(rawValue: parts[0]) else {
                    throw ServeError(.invalidFault, "\(source): the environment before '/' is production, sandbox or any, not '\(parts[0])'")
                }
                environment = named
            }
            let name = parts.count == 2 ? parts[1] : text
            if parts.count == 2, name == "any" {
                self = .serverAPI(environment, endpoint: nil)
                return
            }
            guard ServerAPIService.Endpoint(rawValue: name) != nil else {
                let names = Self.serverAPINames.joined(separator: ", ")
                throw ServeError(
                    .invalidFault,
                    "\(source): the endpoint is any, production or sandbox (verifyReceipt), or a Server API endpoint as NAME, production/NAME, sandbox/NAME or ENVIRONMENT/any, NAME one of \(names); not '\(text)'"
                )
            }
            self = .serverAPI(environment, endpoint: name)
        }
    }

    /// The Server API's endpoints by the names the request log gives them, for NAME.
    package static var serverAPINames: [String] { ServerAPIService.Endpoint.allCases.map(\.rawValue) }

    /// The written form: `FaultEndpoint(parsing: endpoint.name) == endpoint`.
    package var name: String {
        switch self {
        case .any: "any"
        case .verifyReceipt(let endpoint): endpoint.rawValue
        case .serverAPI(nil, let endpoint?): endpoint
        case .serverAPI(let environment, let endpoint): (environment?.rawValue ?? "any") + "/" + (endpoint ?? "any")
        }
    }

    /// Whether a request at `site` is one of these.
    func contains(_ site: FaultSite) -> Bool {
        switch (self, site) {
        case (.any, _): true
        case (.verifyReceipt(let endpoint), .verifyReceipt(let requested)): endpoint == requested
        case (.serverAPI(let environment, let endpoint), .serverAPI(let requestedEnvironment, let requested)):
            (environment.map { $0 == requestedEnvironment } ?? true) && (endpoint.map { $0 == requested } ?? true)
        default: false
        }
    }
}

/// Where a request is, as faults see it: one of verifyReceipt's endpoints, or a Server API endpoint (by the name the
/// request log gives it) in one environment.
package enum FaultSite: Sendable, Hashable {
    case verifyReceipt(AppleEndpoint)
    case serverAPI(ServerAPIEnvironment, endpoint: String)
}

/// A failure on demand: what one endpoint does instead of (or before) answering, for how many requests. One
/// vocabulary for both APIs: verifyReceipt's and the App Store Server API's.
///
/// Written as `[ENDPOINT:]ACTION[,KEY=VALUE…]` on the command line, or as the same keys in a JSON object
/// on the control route:
///
/// | key | meaning |
/// |---|---|
/// | `endpoint` | ``FaultEndpoint``: `any` (default), `production`, `sandbox`, or a Server API endpoint (`transactionInfo`, `sandbox/transactionHistory`, `sandbox/any`) |
/// | `status=N` | verifyReceipt: HTTP 200 with `{"status": N}` (21100–21199 add `is-retryable`); Server API: Apple's error N (e.g. 5000001) with its HTTP status and `{"errorCode","errorMessage"}`. With `any`, only the endpoints of the code's API |
/// | `retryable=true\|false` | the `is-retryable` of a 211xx status (default true) |
/// | `http=N` | answer HTTP N (e.g. 500, 503) with a plain-text body |
/// | `close` | send the headers and half the body, then close the connection |
/// | `not-json` | an HTML error page, as a proxy in front of Apple might send: HTTP 200 on verifyReceipt (whose clients read the body's status), 503 on the Server API (whose clients read the HTTP status) |
/// | `latency=MS` | wait before answering (alone: a slow but correct answer) |
/// | `count=N` | only the next N matching requests (default: every request until cleared) |
/// | `percent=P` | only P% of matching requests, drawn from the server's seeded generator |
package struct Fault: Sendable, Hashable {
    package enum Action: Sendable, Hashable {
        /// A verifyReceipt status.
        case status(VerifyReceiptStatus, retryable: Bool?)
        /// An App Store Server API error.
        case serverAPIError(ServerAPIError)
        case http(Int)
        case close
        case notJSON
        /// Only the latency.
        case none
    }

    package var endpoint: FaultEndpoint
    package var action: Action
    package var latencyMilliseconds: Int
    package var count: Int?
    package var percent: Int?

    package init(endpoint: FaultEndpoint = .any, action: Action, latencyMilliseconds: Int = 0, count: Int? = nil, percent: Int? = nil) {
        self.endpoint = endpoint
        self.action = action
        self.latencyMilliseconds = latencyMilliseconds
        self.count = count
        self.percent = percent
    }

    static let keys = ["endpoint", "status", "retryable", "http", "close", "not-json", "latency", "count", "percent"]

    /// Parses the command-line form, e.g. `production:status=21005,count=2`, `sandbox:http=503,percent=25` or
    /// `sandbox/transactionInfo:status=5000001,count=1`.
    package init(parsing spec: String) throws(ServeError) {
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
    package init(json: JSONValue) throws(ServeError) {
        guard let object = json.objectValue else { throw ServeError(.invalidFault, "a fault is a JSON object, e.g. {\"status\": 21005, \"count\": 2}") }
        try self.init(pairs: object.map { ($0.key, $0.value.scalarText ?? "") }, source: "the JSON fault")
    }

    private init(pairs: [(String, String)], source: String) throws(ServeError) {
        var endpoint = FaultEndpoint.any
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
            case "endpoint": endpoint = try FaultEndpoint(parsing: value, source: source)
            case "status": actions.append(try Self.status(try number(key, value, 0...9_999_999), source: source))
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
        switch (action, endpoint) {
        case (.status(let code, _), .serverAPI):
            throw ServeError(
                .invalidFault,
                "\(source): \(code.rawValue) is a verifyReceipt status; a Server API endpoint (\(endpoint.name)) answers one of Apple's App Store Server API error codes, e.g. status=5000001"
            )
        case (.serverAPIError(let error), .verifyReceipt(let named)):
            throw ServeError(
                .invalidFault,
                "\(source): \(error.code) is an App Store Server API error; verifyReceipt's \(named.rawValue) endpoint answers the statuses 21000–21010, 21100–21199"
            )
        default: break
        }
        if let retryable {
            guard case .status(let code, _) = action, code.isInternalRange else {
                throw ServeError(.invalidFault, "\(source): retryable applies to verifyReceipt's statuses 21100–21199 only")
            }
            action = .status(code, retryable: retryable)
        }
        self.init(endpoint: endpoint, action: action, latencyMilliseconds: latency, count: count, percent: percent)
    }

    /// The action of `status=code`: a verifyReceipt status or an App Store Server API error, either documented by Apple.
    private static func status(_ code: Int, source: String) throws(ServeError) -> Action {
        let status = VerifyReceiptStatus(Int64(code))
        if status.isDocumented, status != .valid { return .status(status, retryable: nil) }
        if let error = ServerAPIError(rawValue: Int64(code)) { return .serverAPIError(error) }
        let codes = ServerAPIError.allCases.map { String($0.code) }.joined(separator: ", ")
        throw ServeError(
            .invalidFault,
            "\(source): status \(code) is not an error Apple documents: verifyReceipt's 21000–21010, 21100–21199, or the App Store Server API's \(codes)")
    }

    /// Whether the fault is for a request at `site`: its endpoint names it, and a status is of the site's API.
    func applies(to site: FaultSite) -> Bool {
        guard endpoint.contains(site) else { return false }
        switch (action, site) {
        case (.status, .serverAPI), (.serverAPIError, .verifyReceipt): return false
        default: return true
        }
    }

    /// The control route's form, as `POST /_forge/faults` takes it and `GET /_forge/faults` lists it (one per
    /// line): `Fault(json: fault.json) == fault`.
    package var json: JSONValue {
        var members: JSONObject = [("endpoint", .string(endpoint.name))]
        switch action {
        case .status(let code, let retryable):
            members["status"] = .integer(code.rawValue)
            if let retryable { members["retryable"] = .bool(retryable) }
        case .serverAPIError(let error): members["status"] = .integer(error.code)
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
    package var spec: String {
        var parts: [String] = []
        switch action {
        case .status(let code, let retryable):
            parts.append("status=\(code.rawValue)")
            if let retryable { parts.append("retryable=\(retryable)") }
        case .serverAPIError(let error): parts.append("status=\(error.code)")
        case .http(let code): parts.append("http=\(code)")
        case .close: parts.append("close")
        case .notJSON: parts.append("not-json")
        case .none: break
        }
        if latencyMilliseconds > 0 { parts.append("latency=\(latencyMilliseconds)") }
        if let count { parts.append("count=\(count)") }
        if let percent { parts.append("percent=\(percent)") }
        return endpoint.name + ":" + parts.joined(separator: ",")
    }

    /// The plain-text body of `http=N`, on either API.
    package static func httpBody(_ code: Int) -> [UInt8] { Array("forge serve: fault http=\(code)\n".utf8) }

    /// The page of `not-json`, on either API: a proxy's.
    package static let proxyPage = Array(
        "<html><head><title>503 Service Temporarily Unavailable</title></head><body>Service Unavailable</body></html>\n".utf8)

    /// What the Server API sends instead of `endpoint`'s answer: Apple's error, the `http=N` text, the proxy page, or
    /// (for `close`, whose route sends half of it) a JSON body; nil for latency alone (the endpoint answers, late).
    package func serverAPIAnswer(endpoint: String) -> ServerAPIResponse? {
        let summary: JSONObject = [("endpoint", .string(endpoint)), ("errorCode", .null)]
        switch action {
        case .serverAPIError(let error): return .error(error, endpoint: endpoint)
        case .http(let code): return ServerAPIResponse(status: code, contentType: "text/plain", body: Self.httpBody(code), summary: summary)
        case .notJSON: return ServerAPIResponse(status: 503, contentType: "text/html", body: Self.proxyPage, summary: summary)
        case .close:
            let body = Array(#"{"forge_fault":"the connection closes before this body ends"}"#.utf8)
            return ServerAPIResponse(status: 200, contentType: ServerAPIService.jsonContentType, body: body, summary: summary)
        case .status, .none: return nil
        }
    }
}

/// The faults in force, shared by every request: the first fault that matches a request's endpoint (and
/// its percentage draw) applies, and a counted fault is used up. Percentages come from a seeded
/// generator, so a run with the same requests in the same order fails the same ones. At most
/// ``ServerLimits/maximumFaults`` are in force at once: every request looks through them.
package final class FaultPlan: Sendable {
    private struct State {
        var faults: [Fault]
        var random: SeededGenerator
    }
    private let state: Mutex<State>

    package init(_ faults: [Fault] = [], seed: UInt64 = 0) throws(ServeError) {
        guard faults.count <= ServerLimits.maximumFaults else { throw Self.full }
        state = Mutex(State(faults: faults, random: SeededGenerator(seed: seed)))
    }

    package func add(_ fault: Fault) throws(ServeError) {
        let added = state.withLock { state in
            guard state.faults.count < ServerLimits.maximumFaults else { return false }
            state.faults.append(fault)
            return true
        }
        guard added else { throw Self.full }
    }

    private static let full = ServeError(
        .tooManyFaults, "at most \(ServerLimits.maximumFaults) faults are in force at once; DELETE /_forge/faults (or use count=N) first")

    package func clear() { state.withLock { $0.faults.removeAll() } }

    /// The faults in force, with what is left of their counts.
    package var faults: [Fault] { state.withLock { $0.faults } }

    /// The fault that applies to the next request at `site`, if any, counting it as used.
    package func next(for site: FaultSite) -> Fault? {
        state.withLock { state in
            for index in state.faults.indices where state.faults[index].applies(to: site) {
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
