#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Hummingbird
import HummingbirdCore
import NIOCore
import StoreForge
import StoreServer
import _ForgeSupport

/// `POST /ocsp[/…]` and `GET /ocsp/…/BASE64` (RFC 6960 Appendix A): the TEST PKIs' OCSP responder
/// (``OCSPService``), each answer logged with the certificates asked about and what was said.
struct OCSPController: Sendable {
    let service: OCSPService
    let log: RequestLog
    let runtime: ServerRuntime

    func addRoutes(to router: Router<ForgeRequestContext>) {
        for path in ["/ocsp", "/ocsp/**"] {
            router.post(RouterPath(path)) { request, _ in await respond(request) }
            router.get(RouterPath(path)) { request, _ in await respond(request) }
        }
    }

    private func respond(_ request: Request) async -> Response {
        let path = String(request.uri.path.dropFirst("/ocsp".count))
        let der: [UInt8]
        var held: HeldBody?
        if request.method == .post {
            do throws(ServerRefusal) { held = try await runtime.bodies.collect(request, maximum: OCSPService.maximumRequestBytes) } catch {
                return Responses.refusal(error, appleShape: false)
            }
            der = held?.bytes ?? []
        } else {
            der = OCSPService.getRequest(path: path) ?? []
        }
        // The body counts against the budget until the answer is made; the answer is signed on the pool, not on
        // the event loop that read the request.
        defer { held?.release() }
        let service = service
        let reply: OCSPResponder.Reply
        do { reply = try await runtime.pool.answer { service.respond(path: path, request: der) } } catch {
            return Responses.refusal(error, appleShape: false)
        }
        log.record(["endpoint": .string("ocsp"), "path": .string(request.uri.path), "status": .integer(Int64(reply.status)), "answer": .string(reply.summary)])
        if reply.delaySeconds > 0 { try? await Task.sleep(for: .seconds(reply.delaySeconds)) }
        return reply.status == 200
            ? Responses.bytes(.ok, contentType: "application/ocsp-response", reply.body)
            : Responses.bytes(.init(code: reply.status), contentType: "text/plain", reply.body)
    }
}
