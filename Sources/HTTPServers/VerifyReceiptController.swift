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

/// Both verifyReceipt endpoints: a fault if one applies, else the service's answer; each request logged.
struct VerifyReceiptController: Sendable {
    let service: VerifyReceiptService
    let faults: FaultPlan
    let log: RequestLog
    let runtime: ServerRuntime

    func addRoutes(to router: Router<ForgeRequestContext>) {
        for endpoint in AppleEndpoint.allCases {
            router.post(RouterPath(endpoint.path)) { request, _ in await respond(endpoint, request) }
            // Apple: 21000, "the request was not made using the HTTP POST request method".
            router.get(RouterPath(endpoint.path)) { request, _ in await respond(endpoint, request) }
        }
    }

    private func respond(_ endpoint: AppleEndpoint, _ request: Request) async -> Response {
        var entry: JSONObject = [("endpoint", .string(endpoint.rawValue)), ("method", .string(request.method.rawValue)), ("path", .string(request.uri.path))]
        let fault = faults.next(for: .verifyReceipt(endpoint))
        await Responses.wait(for: fault)
        entry.append(("fault", fault.map { .string($0.spec) } ?? .null))

        func json(_ status: VerifyReceiptStatus, _ body: [UInt8], summary: JSONObject = []) -> Response {
            entry += [("httpStatus", .integer(200)), ("status", .integer(status.rawValue))]
            entry += summary
            log.record(entry)
            return Responses.bytes(.ok, contentType: "application/json", body)
        }
        func refused(_ refusal: ServerRefusal) -> Response {
            entry += [("httpStatus", .integer(200)), ("status", refusal.verifyReceiptJSON["status"] ?? .null), ("refused", .string(refusal.code.rawValue))]
            log.record(entry)
            return Responses.refusal(refusal, appleShape: true)
        }
        switch fault?.action {
        case .status(let status, let retryable)?:
            return json(status, Array(VerifyReceiptService.status(status, retryable: retryable).serialized(pretty: false).utf8))
        case .http(let code)?:
            entry += [("httpStatus", .integer(Int64(code))), ("status", .null)]
            log.record(entry)
            return Responses.bytes(.init(code: code), contentType: "text/plain", Fault.httpBody(code))
        case .notJSON?:
            entry += [("httpStatus", .integer(200)), ("status", .null)]
            log.record(entry)
            return Responses.bytes(.ok, contentType: "text/html", Fault.proxyPage)
        case .close?:
            entry += [("httpStatus", .integer(200)), ("status", .null)]
            log.record(entry)
            let body = Array(#"{"status":0,"environment":"Production","forge_fault":"the connection closes before this body ends"}"#.utf8)
            return Responses.halfSent(.ok, contentType: "application/json", body)
        case .serverAPIError?, .none?, nil:
            break
        }
        guard request.method == .post else {
            return json(.unreadableRequest, Array(VerifyReceiptService.status(.unreadableRequest).serialized(pretty: false).utf8))
        }
        let body: HeldBody
        do { body = try await runtime.bodies.collect(request, maximum: ServerLimits.maximumBody) } catch { return refused(error) }
        defer { body.release() }
        let headers = Responses.headers(of: request)
        let service = service
        let bytes = body.bytes
        do {
            let (answer, serialized) = try await runtime.pool.answer {
                let answer = service.answer(endpoint: endpoint, body: bytes, overrides: .init(headers: headers))
                return (answer, Array(answer.body.serialized(pretty: false).utf8))
            }
            return json(answer.status, serialized, summary: answer.summary)
        } catch {
            return refused(error)
        }
    }
}
