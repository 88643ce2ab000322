public import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The condition a test waited for did not hold by its deadline.
public struct ConditionNotMet: Error, CustomStringConvertible {
    public let what: String
    public let within: Duration
    public init(what: String, within: Duration) {
        self.what = what
        self.within = within
    }
    public var description: String { "\(what): not so within \(within)" }
}

/// Waits, without blocking a thread, until `condition` holds — a server's own signal: a log entry, a delivery
/// record, a file written — looking again every `every`; throws ``ConditionNotMet`` at `within`. Never a fixed
/// delay: a fast machine goes on at once, a slow one waits up to the deadline.
public func eventually(
    _ what: String, within: Duration = .seconds(60), every: Duration = .milliseconds(20), _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + within
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else { throw ConditionNotMet(what: what, within: within) }
        try await Task.sleep(for: every)
    }
}

/// An answer to a request a test made over a socket.
public struct HTTPAnswer: Sendable {
    public let status: Int
    public let headers: [String: String]
    public let body: Data
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object.
    public func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else { throw NotJSON(output: text) }
        return object
    }

    /// A header's value, its name in any case.
    public func header(_ name: String) -> String? { headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value }
}

/// One request to a server the test started (on loopback), with a deadline over the whole exchange.
public func request(
    _ url: String, method: String = "GET", headers: [String: String] = [:], body: Data? = nil, within: Duration = .seconds(30)
) async throws -> HTTPAnswer {
    guard let target = URL(string: url) else { throw NotAURL(text: url) }
    var request = URLRequest(url: target)
    request.httpMethod = method
    request.httpBody = body
    request.timeoutInterval = Double(within.components.seconds) + 1
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    guard let http = response as? HTTPURLResponse else { throw NotAURL(text: url) }
    var fields: [String: String] = [:]
    for (name, value) in http.allHeaderFields {
        if let name = name as? String, let value = value as? String { fields[name] = value }
    }
    return HTTPAnswer(status: http.statusCode, headers: fields, body: data)
}

/// A JSON POST (`Content-Type: application/json`, as the control routes require).
public func post(_ url: String, json: String, headers: [String: String] = [:]) async throws -> HTTPAnswer {
    try await request(url, method: "POST", headers: headers.merging(["Content-Type": "application/json"]) { mine, _ in mine }, body: Data(json.utf8))
}

/// Whether a `GET /_forge/log` answer says the `--log` file holds all it lists: its `X-Forge-Log-Written` (every line up
/// to that `seq` is in the file or counted in `X-Forge-Log-Dropped`) reaches the `seq` of its last line.
public func logFileComplete(written: String?, lines body: Data) -> Bool {
    guard let written = written.flatMap({ Int($0) }) else { return false }
    let last = body.split(separator: 0x0A).last.flatMap { (try? JSONSerialization.jsonObject(with: Data($0))) as? [String: Any] }
    return written >= (last?["seq"] as? Int ?? 0)
}

/// Waits until the `--log` file of the server at `base` holds every request the server logged so far, as the server
/// says (``logFileComplete(written:lines:)``); the last `GET /_forge/log` answer.
@discardableResult
public func logFileWritten(_ base: String, headers: [String: String] = [:], within: Duration = .seconds(60)) async throws -> HTTPAnswer {
    var answer: HTTPAnswer?
    try await eventually("\(base)'s --log file written (X-Forge-Log-Written)", within: within) {
        let log = try await request(base + "/_forge/log", headers: headers)
        answer = log
        return logFileComplete(written: log.header("X-Forge-Log-Written"), lines: log.body)
    }
    guard let answer else { throw NotAURL(text: base + "/_forge/log") }
    return answer
}

public struct NotAURL: Error, CustomStringConvertible {
    public let text: String
    public var description: String { "not an HTTP URL, or no HTTP answer: \(text)" }
}
