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

/// Responses shared by the routes.
enum Responses {
    /// The methods of IANA's HTTP Method Registry (RFC 9110 §9, RFC 5789, WebDAV, and QUERY, which schemathesis sends):
    /// those a served path answers 405 to when it does not take them. The router resolves a path before its method, so
    /// each is a route of its own; a token outside the registry is the router's 404.
    static let methodsOfHTTP: [HTTPRequest.Method] =
        [.get, .head, .post, .put, .delete, .patch, .options, .trace, .connect]
        + [
            "ACL", "BASELINE-CONTROL", "BIND", "CHECKIN", "CHECKOUT", "COPY", "LABEL", "LINK", "LOCK", "MERGE", "MKACTIVITY", "MKCALENDAR", "MKCOL",
            "MKREDIRECTREF", "MKWORKSPACE", "MOVE", "ORDERPATCH", "PRI", "PROPFIND", "PROPPATCH", "QUERY", "REBIND", "REPORT", "SEARCH", "UNBIND",
            "UNCHECKOUT", "UNLINK", "UNLOCK", "UPDATE", "UPDATEREDIRECTREF", "VERSION-CONTROL",
        ].compactMap { HTTPRequest.Method($0) }

    /// A request's headers by lower-case name, as the socket-free routes take them.
    static func headers(of request: Request) -> [String: String] {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        return headers
    }

    /// `GET /_forge/log`'s counts of what it does not hold.
    static let logDropped = HTTPFields.Element.Name("X-Forge-Log-Dropped")
    static let logEvicted = HTTPFields.Element.Name("X-Forge-Log-Evicted")
    /// With `--log FILE`, the `seq` up to which the file is complete (``RequestLog/written``).
    static let logWritten = HTTPFields.Element.Name("X-Forge-Log-Written")
    static let requestsInFlight = HTTPFields.Element.Name("X-Forge-Requests-In-Flight")
    static let bodyBytesHeld = HTTPFields.Element.Name("X-Forge-Body-Bytes-Held")

    /// What the server is busy with as it answers (`GET /_forge/log`, the harness's `GET /hello`): the other
    /// requests begun and not yet answered, and the bytes of request bodies read and not yet answered. A client
    /// (a test) waits on them to know a request it sent has begun, or that its body has been read, before it acts.
    static func load(of runtime: ServerRuntime) -> HTTPFields {
        var fields: HTTPFields = [:]
        // This request is one of those in flight: the others are counted.
        if let requestsInFlight { fields[requestsInFlight] = String(max(0, runtime.inFlight - 1)) }
        if let bodyBytesHeld { fields[bodyBytesHeld] = String(runtime.bodies.bytesHeld) }
        return fields
    }

    static func bytes(_ status: HTTPResponse.Status, contentType: String, _ body: [UInt8], headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func text(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        bytes(status, contentType: "text/plain", Array(body.utf8))
    }

    /// A refusal: Apple's shape (HTTP 200, `status` 21000 or 21005) on the verifyReceipt endpoints, else
    /// `{"error", "message"}` with the HTTP status that says the same. A refused body is not read on: the
    /// connection closes after the answer.
    static func refusal(_ refusal: ServerRefusal, appleShape: Bool, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        let bodyRefused: Set<ServerRefusal.Code> = [.bodyTooLarge, .bodyMalformed, .bodyIncomplete, .bodiesInFlight]
        if bodyRefused.contains(refusal.code) { fields[.connection] = "close" }
        let json = appleShape ? refusal.verifyReceiptJSON : refusal.json
        return bytes(appleShape ? .ok : .init(code: refusal.httpStatus), contentType: "application/json", Array(json.serialized(pretty: false).utf8), headers: fields)
    }

    /// Whatever a fault waits before answering: its `latency=MS`.
    static func wait(for fault: Fault?) async {
        guard let fault, fault.latencyMilliseconds > 0 else { return }
        try? await Task.sleep(for: .milliseconds(fault.latencyMilliseconds))
    }

    /// The `close` fault on either API: the headers promise the whole `body`, half of it is sent, then the connection is closed.
    static func halfSent(_ status: HTTPResponse.Status, contentType: String, _ body: [UInt8]) -> Response {
        let half = ByteBuffer(bytes: body.prefix(body.count / 2))
        return Response(
            status: status, headers: [.contentType: contentType, .contentLength: String(body.count)],
            body: ResponseBody(contentLength: body.count) { writer in
                try await writer.write(half)
                throw ClosedOnPurpose()
            })
    }

    struct ClosedOnPurpose: Error {}
}
