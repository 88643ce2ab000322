#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Hummingbird
import HummingbirdCore
import NIOCore
import StoreServer
import _ForgeSupport
import StoreModel

/// `/_forge/…`: change faults while the server runs, read or clear the request log. For the test that owns the
/// server, never a web page (``ControlAccess``): without a control token, loopback peers only, for a loopback `Host` (or
/// the listen host), with no foreign `Origin`, and POSTs as `Content-Type: application/json`; with a token, any client
/// that sends `Authorization: Bearer TOKEN`, and no client without it. A client without an address (in process,
/// HummingbirdTesting's `.router`) is not loopback: it needs the token too — no switch trusts a peer. Every refusal is
/// logged with the rule it broke.
///
/// | route | does |
/// |---|---|
/// | `GET /_forge/faults` | the faults in force, JSON Lines: one object per line, as `POST` takes it |
/// | `POST /_forge/faults` | adds a fault: a JSON object (`{"endpoint":"production","status":21005,"count":2}`) or a spec line, as a JSON string or bare |
/// | `DELETE /_forge/faults` | removes every fault |
/// | `GET /_forge/log` | the request log in memory, JSON Lines; `X-Forge-Log-Dropped` and `X-Forge-Log-Evicted` count what is missing, `X-Forge-Log-Written` is the `seq` up to which the `--log` file is complete; `X-Forge-Requests-In-Flight` and `X-Forge-Body-Bytes-Held` what is being answered now (``Responses/load(of:)``) |
/// | `DELETE /_forge/log` | empties the in-memory log (the `--log` file keeps everything) |
/// | `GET /_forge/scenarios` | each customer's scenario as the server holds it: its seed pinned, the changes the Server API made appended to its timeline (`forge make --spec` and `forge jws make --spec` take each element) |
/// | `GET /_forge/ids` | the ids to call the Server API with, per customer at the server clock: bundle id, environment, appAppleId, appTransactionId, and per purchase the original and latest transaction id, the latest's order id, every transaction id (``ServerAPIService/identifiers(now:)``) |
/// | `GET /_forge/clock` | the server clock: `{"now":"2025-02-01T00:00:00Z"}` |
/// | `POST /_forge/clock` | moves it forward: `{"now":"2025-03-01T00:00:00Z"}`, `{"advance":"P1M"}` (a period) or `{"advance":3600}` (seconds) |
/// | `GET /_forge/ocsp` | with `--ocsp`: the OCSP answers set, `SERIAL=ANSWER` lines |
/// | `POST /_forge/ocsp` | sets one: `"jws-leaf=revoked,reason=keyCompromise"` (a name or a serial in hex, an answer), as a JSON string or bare |
/// | `DELETE /_forge/ocsp` | every certificate `good` again |
struct ControlController: Sendable {
    let faults: FaultPlan
    let log: RequestLog
    let runtime: ServerRuntime
    let access: ControlAccess
    /// The Server API's service: its state (the customers, the clock) and the forge that renders their ids.
    let serverAPI: ServerAPIService
    let ocsp: OCSPService?

    private var state: ServerState { serverAPI.state }

    func addRoutes(to router: Router<ForgeRequestContext>) {
        if let ocsp {
            router.get("/_forge/ocsp") { request, context in
                await guarded(request, context) { Responses.text(ocsp.table.map { $0 + "\n" }.joined()) }
            }
            router.post("/_forge/ocsp") { request, context in
                await posted(request, context) { (body) throws(ServeError) in
                    let spec = Self.specLine(body)
                    do throws(ForgeError) { try ocsp.set(spec: spec) } catch { throw ServeError(.invalidFault, error.message) }
                    return Responses.text(spec + "\n", status: .created)
                }
            }
            router.delete("/_forge/ocsp") { request, context in
                await guarded(request, context) {
                    ocsp.reset()
                    return Responses.text("")
                }
            }
        }
        router.get("/_forge/scenarios") { request, context in
            await guarded(request, context) {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
                let body = (try? encoder.encode(state.customers.map(\.scenario))) ?? Data("[]".utf8)
                return Responses.bytes(.ok, contentType: "application/json", Array(body) + [0x0A])
            }
        }
        router.get("/_forge/ids") { request, context in
            await guarded(request, context) {
                Responses.bytes(.ok, contentType: "application/json", Array((serverAPI.identifiers(now: state.now()).serialized(pretty: false) + "\n").utf8))
            }
        }
        router.get("/_forge/clock") { request, context in
            await guarded(request, context) { clockAnswer() }
        }
        router.post("/_forge/clock") { request, context in
            await posted(request, context) { (body) throws(ServeError) in
                try state.setClock(to: try Self.clockTarget(body, from: state.now()))
                return clockAnswer()
            }
        }
        router.get("/_forge/faults") { request, context in
            await guarded(request, context) {
                let lines = faults.faults.map { $0.json.serialized(pretty: false) + "\n" }.joined()
                return Responses.bytes(.ok, contentType: "application/x-ndjson", Array(lines.utf8))
            }
        }
        router.delete("/_forge/faults") { request, context in
            await guarded(request, context) {
                faults.clear()
                return Responses.text("")
            }
        }
        router.post("/_forge/faults") { request, context in
            await posted(request, context) { (body) throws(ServeError) in
                let fault: Fault
                if let value = try? JSONValue(parsing: body), value.objectValue != nil {
                    fault = try Fault(json: value)
                } else {
                    fault = try Fault(parsing: Self.specLine(body))
                }
                try faults.add(fault)
                return Responses.text(fault.spec + "\n", status: .created)
            }
        }
        router.get("/_forge/log") { request, context in
            await guarded(request, context) {
                var headers: HTTPFields = [:]
                if let dropped = Responses.logDropped { headers[dropped] = String(log.dropped) }
                if let evicted = Responses.logEvicted { headers[evicted] = String(log.evicted) }
                if let name = Responses.logWritten, let written = log.written { headers[name] = String(written) }
                headers += Responses.load(of: runtime)
                return Responses.bytes(.ok, contentType: "application/x-ndjson", Array(log.jsonLines.utf8), headers: headers)
            }
        }
        router.delete("/_forge/log") { request, context in
            await guarded(request, context) {
                log.clear()
                return Responses.text("")
            }
        }
    }

    private func clockAnswer() -> Response {
        let body: JSONValue = .object([("now", .string(ReceiptDate.format(state.now())))])
        return Responses.bytes(.ok, contentType: "application/json", Array(body.serialized(pretty: false).utf8))
    }

    /// Where `POST /_forge/clock` moves the clock: `{"now": DATE}`, `{"advance": "P1M"}` or `{"advance": SECONDS}`.
    static func clockTarget(_ body: [UInt8], from now: Date) throws(ServeError) -> Date {
        let usage = #"send {"now":"2025-03-01T00:00:00Z"}, {"advance":"P1M"} or {"advance":3600}"#
        guard let request = try? JSONValue(parsing: body), request.objectValue != nil else { throw ServeError(.invalidClock, "the body is not a JSON object: \(usage)") }
        if let text = request["now"]?.stringValue {
            guard let date = ReceiptDate.parse(text) else { throw ServeError(.invalidClock, "'now' \(text) is not a date like 2025-03-01T00:00:00Z") }
            return date
        }
        if let seconds = request["advance"]?.integerValue, (0...ServerLimits.maximumClockAdvance).contains(seconds) {
            return now.addingTimeInterval(TimeInterval(seconds))
        }
        if let text = request["advance"]?.stringValue, let period = SubscriptionPeriod(text) {
            return period.advance(now, by: 1)
        }
        throw ServeError(.invalidClock, "\(usage) (seconds from 0 to \(ServerLimits.maximumClockAdvance))")
    }

    /// A spec line as a control POST sends it: a JSON string (`"any:close,count=1"`), or the bare line.
    static func specLine(_ body: [UInt8]) -> String {
        let text = (try? JSONValue(parsing: body))?.stringValue ?? String(decoding: body, as: UTF8.self)
        return text.trimmingWhitespace(newlines: true)
    }

    /// A control POST: refused, or its body (at most ``ServerLimits/maximumControlBody``) handed to `answer`, whose
    /// error is a 400 with its message (409 when the faults are full).
    private func posted(
        _ request: Request, _ context: ForgeRequestContext, _ answer: @escaping @Sendable ([UInt8]) throws(ServeError) -> Response
    ) async -> Response {
        if let refusal = refusal(request, context) { return refusal }
        let body: HeldBody
        do throws(ServerRefusal) { body = try await runtime.bodies.collect(request, maximum: ServerLimits.maximumControlBody) } catch {
            return Responses.refusal(error, appleShape: false)
        }
        defer { body.release() }
        let bytes = body.bytes
        let outcome: Result<Response, ServeError>
        do throws(ServerRefusal) { outcome = try await runtime.pool.answer { Result { () throws(ServeError) in try answer(bytes) } } } catch {
            return Responses.refusal(error, appleShape: false)
        }
        switch outcome {
        case .success(let response): return response
        case .failure(let error): return Responses.text(error.message + "\n", status: error.code == .tooManyFaults ? .conflict : .badRequest)
        }
    }

    /// `answer` for a client the control routes admit, made on the pool: the log and the scenarios can be megabytes
    /// to encode, and a state file to write, none of it for an event loop.
    private func guarded(_ request: Request, _ context: ForgeRequestContext, _ answer: @escaping @Sendable () -> Response) async -> Response {
        if let refused = refusal(request, context) { return refused }
        do throws(ServerRefusal) { return try await runtime.pool.answer(answer) } catch { return Responses.refusal(error, appleShape: false) }
    }

    /// Nil when the client may use the control routes; else the refusal to send (``ControlAccess``), logged with the rule
    /// it broke. A refused request's body is not read: the connection closes after the answer.
    private func refusal(_ request: Request, _ context: ForgeRequestContext) -> Response? {
        let host = HTTPFields.Element.Name("Host")
        let said = ControlAccess.Request(
            method: request.method.rawValue, peer: context.remoteAddress?.ipAddress,
            hosts: [request.head.authority].compactMap { $0 } + (host.map { request.headers[values: $0] } ?? []),
            origins: request.headers[values: .origin], contentTypes: request.headers[values: .contentType], authorization: request.headers[.authorization])
        guard let refused = access.refusal(said) else { return nil }
        log.record([
            ("endpoint", .string("control")), ("method", .string(request.method.rawValue)), ("path", .string(request.uri.path)),
            ("httpStatus", .integer(Int64(refused.refusal.httpStatus))), ("refused", .string(refused.refusal.code.rawValue)), ("rule", .string(refused.rule.rawValue)),
        ])
        var headers: HTTPFields = [.connection: "close"]
        if refused.refusal.code == .controlUnauthorized { headers[.wwwAuthenticate] = #"Bearer realm="forge""# }
        return Responses.refusal(refused.refusal, appleShape: false, headers: headers)
    }
}
