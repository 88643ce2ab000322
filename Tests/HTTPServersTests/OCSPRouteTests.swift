import Foundation
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import Testing
import _ForgeSupport
import ForgeTestSupport

/// `forge serve --ocsp` in process: the OCSP routes and their control route through the application forge-http
/// serves; the responder itself, fed every truncation and every flipped byte of a real request, never traps.
@Suite("The OCSP responder in process (app.test(.router))", .requires(.openssl), .timeLimit(.minutes(2)))
struct OCSPRouteTests {
    static let jws = Repository.file("Certificates/jws")

    /// A request for the bundled JWS leaf, as `openssl ocsp` writes it (SHA-256 CertID, a nonce).
    static func request() async throws -> [UInt8] {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("request.der")
        let made = try await openssl([
            "ocsp", "-sha256", "-issuer", jws.appendingPathComponent("jws-wwdr-g6.pem").path, "-cert", jws.appendingPathComponent("jws-signing.pem").path,
            "-reqout", out.path,
        ])
        try #require(made.status == 0, "openssl ocsp: \(made.stderr)")
        return Array(try Data(contentsOf: out))
    }

    static func application(_ ocsp: OCSPService, controlToken: String) throws -> ForgeApplication {
        try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), faults: try FaultPlan(),
            log: try RequestLog(file: nil, capacity: 10), controlToken: controlToken, ocsp: ocsp)
    }

    /// `OCSPResponse { responseStatus ENUMERATED, … }`: the status byte of a DER response.
    static func responseStatus(_ body: ByteBuffer) -> UInt8? {
        let bytes = Array(body.readableBytesView)
        guard bytes.count >= 5, bytes[0] == 0x30 else { return nil }
        let start = bytes[1] & 0x80 == 0 ? 2 : 2 + Int(bytes[1] & 0x7F)
        guard bytes.count > start + 2, bytes[start] == 0x0A, bytes[start + 1] == 0x01 else { return nil }
        return bytes[start + 2]
    }

    @Test("POST and GET /ocsp answer as the control route says; a path naming an answer wins; the control route needs the token")
    func routes() async throws {
        let request = try await Self.request()
        let service = try OCSPService()
        try await Self.application(service, controlToken: "t0ken").test(.router) { client in
            let good = try await client.execute(uri: "/ocsp", method: .post, headers: [.contentType: "application/ocsp-request"], body: ByteBuffer(bytes: request))
            #expect(good.status == .ok && good.headers[.contentType] == "application/ocsp-response" && Self.responseStatus(good.body) == 0)
            let encoded = Data(request).base64EncodedString().addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let viaGet = try await client.execute(uri: "/ocsp/" + encoded, method: .get)
            #expect(viaGet.status == .ok && Self.responseStatus(viaGet.body) == 0)

            let refused = try await client.execute(uri: "/_forge/ocsp", method: .post, body: ByteBuffer(string: "jws-leaf=try-later"))
            #expect(refused.status == .unauthorized)
            let bearer: HTTPFields = [.authorization: "Bearer t0ken"]
            let bad = try await client.execute(uri: "/_forge/ocsp", method: .post, headers: bearer, body: ByteBuffer(string: "jws-leaf=sometimes"))
            #expect(bad.status == .badRequest && String(buffer: bad.body).contains("unknown OCSP answer"))
            let set = try await client.execute(uri: "/_forge/ocsp", method: .post, headers: bearer, body: ByteBuffer(string: "jws-leaf=try-later"))
            #expect(set.status == .created)
            let listed = try await client.execute(uri: "/_forge/ocsp", method: .get, headers: bearer)
            #expect(String(buffer: listed.body) == "799c4e1b639c2a235c335b0a=try-later\n")
            let later = try await client.execute(uri: "/ocsp", method: .post, body: ByteBuffer(bytes: request))
            #expect(Self.responseStatus(later.body) == 3)
            let named = try await client.execute(uri: "/ocsp/http-500/wwdrg6", method: .post, body: ByteBuffer(bytes: request))
            #expect(named.status == .internalServerError)
            #expect(try await client.execute(uri: "/_forge/ocsp", method: .delete, headers: bearer).status == .ok)
            let again = try await client.execute(uri: "/ocsp", method: .post, body: ByteBuffer(bytes: request))
            #expect(Self.responseStatus(again.body) == 0)
        }
    }

    @Test("Every truncation and every flipped byte of a real request, and 2,000 seeded random bodies: an answer every time, never a trap")
    func hostileRequests() async throws {
        let request = try await Self.request()
        let service = try OCSPService()
        var answered = 0
        func ask(_ body: [UInt8]) {
            let reply = service.respond(path: "", request: body)
            #expect(reply.status == 200 && reply.body.first == 0x30, "\(body)")
            answered += 1
        }
        for length in 0..<request.count { ask(Array(request.prefix(length))) }
        for index in request.indices {
            var flipped = request
            flipped[index] ^= 0xFF
            ask(flipped)
        }
        var random = SeededGenerator(seed: 26)
        for _ in 0..<2000 {
            let count = Int(random.next(upperBound: UInt64(request.count * 2)))
            ask((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
        #expect(answered == 2 * request.count + 2000)
        // The untouched request is answered good; a truncated one is malformedRequest (1).
        #expect(service.respond(path: "", request: request).body.starts(with: [0x30]))
        #expect(service.respond(path: "", request: Array(request.dropLast())).body == [0x30, 0x03, 0x0A, 0x01, 0x01])
    }

    @Test("An OCSP request's body counts against the body budget until its answer is sent, a slow answer's wait included (issue 38)")
    func bodyHeldUntilAnswered() async throws {
        let request = try await Self.request()
        try await Self.application(try OCSPService(), controlToken: "t0ken").test(.router) { client in
            let bearer: HTTPFields = [.authorization: "Bearer t0ken"]
            let slow = try await client.execute(uri: "/_forge/ocsp", method: .post, headers: bearer, body: ByteBuffer(string: "jws-leaf=slow,seconds=25"))
            #expect(slow.status == .created, "\(String(buffer: slow.body))")
            let asked = Task {
                try await client.execute(uri: "/ocsp", method: .post, headers: [.contentType: "application/ocsp-request"], body: ByteBuffer(bytes: request))
            }
            defer { asked.cancel() }
            func held() async throws -> String? {
                try await client.execute(uri: "/_forge/log", method: .get, headers: bearer).headers[try #require(HTTPFields.Element.Name("X-Forge-Body-Bytes-Held"))]
            }
            try await eventually("the request's body is held while its slow answer waits", within: .seconds(20)) { try await held() == String(request.count) }
            asked.cancel()
            try await eventually("given back once the request ended", within: .seconds(60)) { try await held() == "0" }
        }
    }
}
