import Foundation
import ReceiptConformance
import ReceiptCorpus
import ReceiptModel
public import ReferenceValidation
import ReceiptServe
import ForgeSupport
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
public struct HarnessRoutes: Sendable {
    public struct Response: Sendable {
        public var status: Int
        public var body: [UInt8]
        public var contentType = "application/json"
    }

    let harness: ReferenceHarness
    let verifyReceipt: VerifyReceiptService

    public init(harness: ReferenceHarness) {
        self.harness = harness
        let root = harness.anchors[TrustAnchorID.forgeRoot].map { [$0] } ?? []
        verifyReceipt = VerifyReceiptService(configuration: .init(trustedRoots: root, namedAnchors: harness.anchors))
    }

    /// The routes above, as a server registers them; any other path is a 404, another method a 405.
    public static let routes: [(method: String, path: String)] = [("GET", "/hello"), ("POST", "/validate"), ("POST", "/verifyReceipt")]

    /// Whether a refusal on `path` takes Apple's verifyReceipt shape (HTTP 200, `{"status": 21000…}`).
    public static func answersLikeApple(path: String) -> Bool { route(path) == "/verifyReceipt" }

    private static func route(_ path: String) -> String { String(path.prefix { $0 != "?" }) }

    /// The answer to one request; `headers` keyed by lower-case name.
    public func respond(method: String, path: String, headers: [String: String], body: [UInt8]) -> Response {
        let route = Self.route(path)
        switch (method, route) {
        case ("GET", "/hello"):
            return json(200, harness.helloMessage())
        case ("POST", "/validate"):
            guard let request = try? JSONDecoder().decode(ValidateRequest.self, from: Data(body)) else {
                let seq = (try? JSONValue(parsing: body))?["seq"]?.integerValue.map(Int.init) ?? -1
                return json(400, HarnessReply.errored(seq: seq, message: "the body is not a validate message (harness protocol v1)"))
            }
            return json(200, harness.reply(to: request))
        case ("POST", "/verifyReceipt"):
            let answer = verifyReceipt.answer(endpoint: .production, body: body, overrides: .init(headers: headers))
            return Response(status: 200, body: Array(answer.body.serialized(pretty: false).utf8))
        case _ where Self.routes.contains { $0.path == route }:
            return Response(status: 405, body: Array("method \(method) is not allowed on \(route)\n".utf8), contentType: "text/plain")
        default:
            let known = Self.routes.map { "\($0.method) \($0.path)" }.joined(separator: ", ")
            return Response(status: 404, body: Array("no route \(route): \(known)\n".utf8), contentType: "text/plain")
        }
    }

    private func json(_ status: Int, _ value: some Encodable) -> Response {
        Response(status: status, body: Array((try? JSONEncoder().encode(value)) ?? Data(#"{"type":"errored","seq":-1,"message":"cannot encode"}"#.utf8)))
    }
}
