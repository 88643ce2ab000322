#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import HTTPTypes
import Hummingbird
import NIOCore
import StoreServer
import _ForgeSupport

/// The App Store Server API (``ServerAPIService``) in the router: every endpoint registered in one group per
/// environment — production at the root (`/inApps/…`; the environment whose Apple host name `Host` carries,
/// ``ServerAPIEnvironment/atRoot(host:)``), `/sandbox/inApps/…`, `/local-testing/inApps/…` — answered on the pool;
/// each request logged with its environment, endpoint, HTTP status, `errorCode`, the token check's outcome (`kid`
/// accepted or `auth` the rule refused) and the fault applied.
///
/// What Apple answers beside its endpoints is routed too, so nothing under `/inApps/` reaches the router's own 404:
/// another method HTTP defines on an endpoint's path is a 405 whose `Allow` names the methods the path takes; any
/// other path under `inApps/` a 404 with no body, logged as endpoint `unknown`.
///
/// A fault (``FaultPlan``) applies once the service has admitted the request — after authentication, so a fault never
/// lets an unauthenticated client through, and after the rate limit, so a 429 does not spend a counted fault — and
/// before the endpoint runs, so a faulted request changes nothing. Its latency is waited here, off the pool.
struct ServerAPIController: Sendable {
    let service: ServerAPIService
    let faults: FaultPlan
    let log: RequestLog
    let runtime: ServerRuntime

    func addRoutes(to router: Router<ForgeRequestContext>) {
        for mount in ServerAPIEnvironment.allCases {
            let group = router.group(RouterPath(mount.prefix))
            // Each path the API serves, the endpoint the log names for it (the first), and the methods it takes.
            var paths: [String: (endpoint: ServerAPIService.Endpoint, methods: [HTTPRequest.Method])] = [:]
            for endpoint in ServerAPIService.Endpoint.allCases {
                let route = endpoint.route
                paths[route.path, default: (endpoint, [])].methods.append(route.method)
                group.on(RouterPath(route.path), method: route.method) { request, context in
                    await respond(endpoint, route.parameters, mount, request, context)
                }
                // HEAD is GET without the body (RFC 9110 §9.3.2).
                if route.method == .get {
                    group.on(RouterPath(route.path), method: .head) { request, context in
                        await respond(endpoint, route.parameters, mount, request, context)
                    }
                }
            }
            for (path, (endpoint, taken)) in paths {
                let allowed = taken + (taken.contains(.get) ? [.head] : [])
                for method in Responses.methodsOfHTTP where !allowed.contains(method) {
                    group.on(RouterPath(path), method: method) { request, _ in
                        // RFC 9110 §15.5.6: a 405 names the methods the resource takes.
                        let note = "\(endpoint.rawValue) takes \(Self.list(taken)), not \(request.method.rawValue)"
                        var refused = ServerAPIResponse.empty(405, endpoint: endpoint.rawValue, note: note)
                        refused.headers = [("Allow", Self.list(taken))]
                        return refuse(refused, mount, request)
                    }
                }
            }
            for method in Responses.methodsOfHTTP {
                group.on("inApps/**", method: method) { request, _ in
                    refuse(.empty(404, endpoint: "unknown", note: "no Server API endpoint at \(request.uri.path)"), mount, request)
                }
            }
        }
    }

    private static func list(_ methods: [HTTPRequest.Method]) -> String { methods.map(\.rawValue).joined(separator: ", ") }

    /// The environment a request at `mount` is served in, and the start of its log entry.
    private func entry(_ mount: ServerAPIEnvironment, _ request: Request) -> (ServerAPIEnvironment, JSONObject, [String: String]) {
        // HTTP/1.1 `Host` becomes the request's authority; a request built in process may carry it as a field.
        let headers = Responses.headers(of: request)
        let host = headers["host"] ?? request.head.authority
        let environment = mount == .production ? ServerAPIEnvironment.atRoot(host: host) : mount
        let entry: JSONObject = [
            ("api", .string("server")), ("environment", .string(environment.rawValue)), ("method", .string(request.method.rawValue)),
            ("path", .string(request.uri.path)),
        ]
        return (environment, entry, headers)
    }

    /// A 404 or 405 of the API's: logged, no body, the body sent not read.
    private func refuse(_ answer: ServerAPIResponse, _ mount: ServerAPIEnvironment, _ request: Request) -> Response {
        var entry = entry(mount, request).1
        entry += [("fault", .null), ("httpStatus", .integer(Int64(answer.status)))]
        entry += answer.summary
        log.record(entry)
        return Self.response(answer, head: false)
    }

    private func respond(
        _ endpoint: ServerAPIService.Endpoint, _ names: [String], _ mount: ServerAPIEnvironment, _ request: Request, _ context: ForgeRequestContext
    ) async -> Response {
        let (environment, start, headers) = entry(mount, request)
        var entry = start
        var body: [UInt8] = []
        // The body counts against the budget until the answer is made, as verifyReceipt's does: a flood of slow
        // answers cannot hold more bytes than the budget says.
        var held: HeldBody?
        defer { held?.release() }
        if request.method != .get, request.method != .head {
            do throws(ServerRefusal) {
                let collected = try await runtime.bodies.collect(request, maximum: ServerLimits.maximumBody)
                held = collected
                body = collected.bytes
            } catch {
                // In Apple's shape, so the client keeps a code: an unreadable body is a bad request, a server too
                // busy to read it Apple's retryable internal error.
                let apple: ServerAPIError = error.httpStatus < 500 && error.code != .bodyTimeout ? .generalBadRequest : .generalInternalRetryable
                let answer = ServerAPIResponse.error(apple, endpoint: "unread")
                entry += [("fault", .null), ("httpStatus", .integer(Int64(answer.status))), ("refused", .string(error.code.rawValue))]
                entry += answer.summary
                log.record(entry)
                return Self.response(answer, head: false)
            }
        }
        let parameters = names.map { name in
            let raw = context.parameters.get(name) ?? ""
            return raw.percentDecoded ?? raw
        }
        let call = ServerAPIRequest(
            environment: environment, endpoint: endpoint, parameters: parameters, query: request.uri.query ?? "", body: body,
            now: headers["x-forge-now"].flatMap(ReceiptDate.parse), authorization: headers["authorization"])
        let service = service, faults = faults
        let answer: ServerAPIResponse, fault: Fault?
        do {
            (answer, fault) = try await runtime.pool.answer {
                var fault: Fault?
                let answer = service.respond(call) { endpoint in
                    fault = faults.next(for: .serverAPI(environment, endpoint: endpoint))
                    return fault?.serverAPIAnswer(endpoint: endpoint)
                }
                return (answer, fault)
            }
        } catch {
            // Busy or out of time: Apple's retryable internal error, so the client's retry logic is what runs.
            entry.append(("refused", .string(error.code.rawValue)))
            answer = ServerAPIResponse.error(.generalInternalRetryable, endpoint: "unanswered")
            fault = nil
        }
        await Responses.wait(for: fault)
        entry += [("fault", fault.map { .string($0.spec) } ?? .null), ("httpStatus", .integer(Int64(answer.status)))]
        entry += answer.summary
        log.record(entry)
        if fault?.action == .close { return Responses.halfSent(.init(code: answer.status), contentType: answer.contentType ?? ServerAPIService.jsonContentType, answer.body) }
        return Self.response(answer, head: request.method == .head)
    }

    /// The answer as sent; for HEAD, GET's status and headers without the body (RFC 9110 §9.3.2).
    private static func response(_ answer: ServerAPIResponse, head: Bool) -> Response {
        var fields: HTTPFields = [:]
        if let contentType = answer.contentType { fields[.contentType] = contentType }
        for header in answer.headers {
            if let name = HTTPField.Name(header.name) { fields[name] = header.value }
        }
        return Response(status: .init(code: answer.status), headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: head ? [] : answer.body)))
    }
}

extension ServerAPIService.Endpoint {
    /// Where Apple serves the endpoint, below an environment's base URL, with its path parameters in order.
    var route: (method: HTTPRequest.Method, path: String, parameters: [String]) {
        switch self {
        case .transactionInfo: (.get, "inApps/v1/transactions/{transactionId}", ["transactionId"])
        case .transactionHistory: (.get, "inApps/v2/history/{transactionId}", ["transactionId"])
        case .transactionHistoryV1: (.get, "inApps/v1/history/{transactionId}", ["transactionId"])
        case .subscriptionStatuses: (.get, "inApps/v1/subscriptions/{transactionId}", ["transactionId"])
        case .refundHistory: (.get, "inApps/v2/refund/lookup/{transactionId}", ["transactionId"])
        case .orderLookup: (.get, "inApps/v1/lookup/{orderId}", ["orderId"])
        case .appTransactionInfo: (.get, "inApps/v1/transactions/appTransactions/{transactionId}", ["transactionId"])
        case .consumptionV1: (.put, "inApps/v1/transactions/consumption/{transactionId}", ["transactionId"])
        case .consumptionV2: (.put, "inApps/v2/transactions/consumption/{transactionId}", ["transactionId"])
        case .finishTransaction: (.post, "inApps/v1/transactions/{transactionId}/finish", ["transactionId"])
        // Apple's {originalTransactionId}: one name per position of the path (Hummingbird's rule); the log names it.
        case .setAppAccountToken: (.put, "inApps/v1/transactions/{transactionId}/appAccountToken", ["transactionId"])
        case .extendRenewalDate: (.put, "inApps/v1/subscriptions/extend/{originalTransactionId}", ["originalTransactionId"])
        case .massExtendRenewalDate: (.post, "inApps/v1/subscriptions/extend/mass", [])
        case .massExtensionStatus: (.get, "inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}", ["productId", "requestIdentifier"])
        case .requestTestNotification: (.post, "inApps/v1/notifications/test", [])
        case .testNotificationStatus: (.get, "inApps/v1/notifications/test/{testNotificationToken}", ["testNotificationToken"])
        case .notificationHistory: (.post, "inApps/v1/notifications/history", [])
        case .uploadImage: (.put, "inApps/v1/messaging/image/{imageIdentifier}", ["imageIdentifier"])
        case .deleteImage: (.delete, "inApps/v1/messaging/image/{imageIdentifier}", ["imageIdentifier"])
        case .imageList: (.get, "inApps/v1/messaging/image/list", [])
        case .uploadMessage: (.put, "inApps/v1/messaging/message/{messageIdentifier}", ["messageIdentifier"])
        case .deleteMessage: (.delete, "inApps/v1/messaging/message/{messageIdentifier}", ["messageIdentifier"])
        case .messageList: (.get, "inApps/v1/messaging/message/list", [])
        case .configureDefaultMessage: (.put, "inApps/v1/messaging/default/{productId}/{locale}", ["productId", "locale"])
        case .deleteDefaultMessage: (.delete, "inApps/v1/messaging/default/{productId}/{locale}", ["productId", "locale"])
        case .defaultMessage: (.get, "inApps/v1/messaging/default/{productId}/{locale}", ["productId", "locale"])
        case .configureRealtimeURL: (.put, "inApps/v1/messaging/realtime/url", [])
        case .deleteRealtimeURL: (.delete, "inApps/v1/messaging/realtime/url", [])
        case .realtimeURL: (.get, "inApps/v1/messaging/realtime/url", [])
        case .initiatePerformanceTest: (.post, "inApps/v1/messaging/performanceTest", [])
        case .performanceTestResults: (.get, "inApps/v1/messaging/performanceTest/result/{requestId}", ["requestId"])
        }
    }
}
