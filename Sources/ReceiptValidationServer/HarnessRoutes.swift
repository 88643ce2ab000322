#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptConformance
import ReceiptCorpus
import ReceiptModel
import ReferenceValidation
import StoreServer
import _ForgeSupport
import StoreModel

/// What `forge validate --listen` answers, independent of the socket plumbing:
///
/// | route | body in | body out |
/// |---|---|---|
/// | `GET /hello` | – | the harness hello (protocol v1) |
/// | `POST /validate` | a `validate` message | `result` / `errored` (protocol v1) |
/// | `POST /verifyReceipt` | `{"receipt-data", "password"}` | `{"status", "environment", "receipt", …}` like Apple's |
///
/// `/verifyReceipt` is `forge serve`'s production endpoint without history or faults
/// (``VerifyReceiptService``): it reads the vector's context from the runner's `X-Forge-*` headers;
/// without them it judges at the wall clock under the test root, as Apple's endpoint would under Apple's.
package struct HarnessRoutes: Sendable {
    package struct Response: Sendable {
        package var status: Int
        package var body: [UInt8]
        package var contentType = "application/json"
    }

    let harness: ReferenceHarness
    let verifyReceipt: VerifyReceiptService

    package init(harness: ReferenceHarness) {
        self.harness = harness
        let root = harness.anchors[TrustAnchorID.forgeRoot].map { [$0] } ?? []
        verifyReceipt = VerifyReceiptService(configuration: .init(trustedRoots: root, namedAnchors: harness.anchors))
    }

    /// The routes above: what a server registers. Any other path is a 404 (``notFound(path:)``), another method on one
    /// of these paths a 405 (``methodNotAllowed(_:on:)``).
    package enum Route: String, CaseIterable, Sendable {
        case hello
        case validate
        case verifyReceipt

        package var path: String { "/" + rawValue }
        /// The one method the route takes.
        package var method: String { self == .hello ? "GET" : "POST" }
        /// Whether a refusal takes Apple's verifyReceipt shape (HTTP 200, `{"status": 21000…}`).
        package var answersLikeApple: Bool { self == .verifyReceipt }
    }

    /// The answer to one request of `route`; `headers` keyed by lower-case name.
    package func respond(to route: Route, headers: [String: String], body: [UInt8]) -> Response {
        switch route {
        case .hello:
            return json(200, harness.helloMessage())
        case .validate:
            guard let request = try? JSONDecoder().decode(ValidateRequest.self, from: Data(body)) else {
                let seq = (try? JSONValue(parsing: body))?["seq"]?.integerValue.map(Int.init) ?? -1
                return json(400, HarnessReply.errored(seq: seq, message: "the body is not a validate message (harness protocol v1)"))
            }
            return json(200, harness.reply(to: request))
        case .verifyReceipt:
            let answer = verifyReceipt.answer(endpoint: .production, body: body, overrides: .init(headers: headers))
            return Response(status: 200, body: Array(answer.body.serialized(pretty: false).utf8))
        }
    }

    package static func methodNotAllowed(_ method: String, on route: Route) -> Response {
        Response(status: 405, body: Array("method \(method) is not allowed on \(route.path)\n".utf8), contentType: "text/plain")
    }

    package static func notFound(path: String) -> Response {
        let known = Route.allCases.map { "\($0.method) \($0.path)" }.joined(separator: ", ")
        return Response(status: 404, body: Array("no route \(path): \(known)\n".utf8), contentType: "text/plain")
    }

    private func json(_ status: Int, _ value: some Encodable) -> Response {
        Response(status: status, body: Array((try? JSONEncoder().encode(value)) ?? Data(#"{"type":"errored","seq":-1,"message":"cannot encode"}"#.utf8)))
    }
}
