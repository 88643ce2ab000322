import Foundation
import ReceiptConformance
import ReceiptCorpus
import ReceiptModel
public import ReceiptValidation

/// What `forge validate --listen` answers, independent of the socket plumbing:
///
/// | route | body in | body out |
/// |---|---|---|
/// | `GET /hello` | – | the harness hello (protocol v1) |
/// | `POST /validate` | a `validate` message | `result` / `errored` (protocol v1) |
/// | `POST /verifyReceipt` | `{"receipt-data", "password"}` | `{"status", "environment", "receipt", …}` like Apple's |
///
/// `/verifyReceipt` reads the vector's context from `X-Forge-Now`, `X-Forge-Trust-Anchor`,
/// `X-Forge-Bundle-Id`, `X-Forge-App-Version`, `X-Forge-Device-Id` and `X-Forge-Environment`
/// (what the runner's built-in verifyreceipt mapping sends); without them it judges at the wall clock
/// under the test root, as Apple's endpoint would under Apple's.
public struct HarnessRoutes: Sendable {
    /// The largest request body a listener should accept.
    public static let maximumBody = 32 << 20

    public struct Response: Sendable {
        public var status: Int
        public var body: [UInt8]
        public var contentType = "application/json"
    }

    let harness: ReferenceHarness

    public init(harness: ReferenceHarness) { self.harness = harness }

    /// The answer to one request; `headers` keyed by lower-case name.
    public func respond(method: String, path: String, headers: [String: String], body: [UInt8]) -> Response {
        let route = String(path.prefix { $0 != "?" })
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
            guard let receiptData = (try? JSONValue(parsing: body))?["receipt-data"]?.stringValue else {
                return Response(status: 200, body: Array(#"{"status":21000}"#.utf8))  // Apple: the request body was not readable
            }
            let context = Context(
                now: headers["x-forge-now"] ?? ReceiptDate.format(Date()), trustAnchor: headers["x-forge-trust-anchor"] ?? TrustAnchorID.forgeRoot,
                bundleId: headers["x-forge-bundle-id"], appVersion: headers["x-forge-app-version"],
                deviceId: headers["x-forge-device-id"], environment: headers["x-forge-environment"])
            return Response(status: 200, body: Array(harness.verifyReceipt(receiptData: receiptData, context: context).serialized(pretty: false).utf8))
        case (_, "/hello"), (_, "/validate"), (_, "/verifyReceipt"):
            return Response(status: 405, body: Array("method \(method) is not allowed on \(route)\n".utf8), contentType: "text/plain")
        default:
            return Response(status: 404, body: Array("no route \(route): GET /hello, POST /validate, POST /verifyReceipt\n".utf8), contentType: "text/plain")
        }
    }

    private func json(_ status: Int, _ value: some Encodable) -> Response {
        Response(status: status, body: Array((try? JSONEncoder().encode(value)) ?? Data(#"{"type":"errored","seq":-1,"message":"cannot encode"}"#.utf8)))
    }
}
