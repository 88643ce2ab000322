import HTTPTypes
import Hummingbird
import StoreServer
import ReceiptValidationServer

/// `forge validate --listen`'s routes (``HarnessRoutes``) in the router: GETs answered at once, POSTs on the pool
/// (validation is the heavy part) once their body is read. What the harness does not take is routed too, worded as
/// ``HarnessRoutes`` words it, at once and without reading the body: another method HTTP defines on one of its paths a
/// 405, any other path a 404.
struct HarnessController: Sendable {
    let routes: HarnessRoutes
    let runtime: ServerRuntime

    func addRoutes(to router: Router<ForgeRequestContext>) {
        for route in HarnessRoutes.Route.allCases {
            let taken = HTTPRequest.Method(route.method) ?? .post
            router.on(RouterPath(route.path), method: taken) { request, _ in await respond(route, request) }
            for method in Responses.methodsOfHTTP where method != taken {
                router.on(RouterPath(route.path), method: method) { request, _ in
                    Self.response(HarnessRoutes.methodNotAllowed(request.method.rawValue, on: route))
                }
            }
        }
        for path in ["/", "/**"] {
            for method in Responses.methodsOfHTTP {
                router.on(RouterPath(path), method: method) { request, _ in Self.response(HarnessRoutes.notFound(path: request.uri.path)) }
            }
        }
    }

    private func respond(_ route: HarnessRoutes.Route, _ request: Request) async -> Response {
        let headers = Responses.headers(of: request)
        guard request.method == .post else {
            var response = Self.response(routes.respond(to: route, headers: headers, body: []))
            if route == .hello { response.headers += Responses.load(of: runtime) }
            return response
        }
        let body: HeldBody
        do { body = try await runtime.bodies.collect(request, maximum: ServerLimits.maximumBody) } catch {
            return Responses.refusal(error, appleShape: route.answersLikeApple)
        }
        defer { body.release() }
        let routes = routes, bytes = body.bytes
        do {
            return Self.response(try await runtime.pool.answer { routes.respond(to: route, headers: headers, body: bytes) })
        } catch {
            return Responses.refusal(error, appleShape: route.answersLikeApple)
        }
    }

    private static func response(_ answer: HarnessRoutes.Response) -> Response {
        Responses.bytes(.init(code: answer.status), contentType: answer.contentType, answer.body)
    }
}
