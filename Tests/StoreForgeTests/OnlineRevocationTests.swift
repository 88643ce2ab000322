import Foundation
import ForgeCrypto
import _ForgeSupport
import ReceiptCorpus
import StoreForge
import StoreServer
@testable import ReferenceValidation
import Testing

/// The reference verifier's online check against forge's responder, socket-free: each answer the responder can give
/// is judged as Apple's strictest verifier would, and no response, however broken, traps it.
@Suite("The reference verifier's OCSP check", .timeLimit(.minutes(2)))
struct OnlineRevocationTests {
    static let pki = try! CertificateSet<JWSRole>.bundled()
    static let leaf = pki.certificate(.leaf), intermediate = pki.certificate(.intermediate)
    static let nonce = Array(repeating: UInt8(0x5A), count: 16)

    /// The reference verifier's request for the bundled leaf, answered by forge's responder at `path`.
    static func response(_ path: String) throws -> OCSPResponder.Reply {
        let identity = try #require(intermediate.ocspIdentity)
        let request = OnlineRevocation.request(
            nameHash: try DigestAlgorithm.sha256.digest(identity.nameDER), keyHash: try DigestAlgorithm.sha256.digest(identity.keyBits), serial: leaf.serialNumber,
            nonce: nonce)
        return try OCSPService().respond(path: path, request: request)
    }

    static func judged(_ body: [UInt8]) -> String {
        do {
            switch try OnlineRevocation().judge(body, certificate: leaf, issuer: intermediate, nonce: nonce) {
            case .good: return "good"
            case .failed(let errorClass, _): return errorClass.rawValue
            }
        } catch { return "refused" }
    }

    @Test("Each answer of the responder, judged: good and a delegate are good; revoked is chain.revoked; the rest is no usable answer")
    func everyAnswer() throws {
        let expected: [OCSPAnswer.Kind: String] = [
            .good: "good", .delegate: "good", .revoked: "chain.revoked", .unknown: "chain.revocation-unknown", .tryLater: "chain.revocation-unknown",
            .malformed: "chain.revocation-unknown", .unauthorized: "chain.revocation-unknown", .stale: "chain.revocation-unknown",
            .noNextUpdate: "chain.revocation-unknown", .wrongKey: "refused", .delegateWithoutEKU: "refused", .garbage: "refused",
        ]
        for (kind, verdict) in expected {
            let reply = try Self.response("/\(kind.rawValue)")
            #expect(Self.judged(reply.body) == verdict, "\(kind.rawValue)")
        }
        #expect(try Self.response("/http-500").status == 500)
        // The request carries the nonce, and the response echoes it: another nonce is refused.
        let good = try Self.response("")
        #expect((try? OnlineRevocation().judge(good.body, certificate: Self.leaf, issuer: Self.intermediate, nonce: [1, 2, 3])) == nil)
        // An answer about another certificate is no answer about this one.
        #expect((try? OnlineRevocation().judge(good.body, certificate: Self.intermediate, issuer: Self.intermediate, nonce: Self.nonce)) == nil)
    }

    @Test(
        "Every truncation and every flipped byte of a good response, and every cut of an HTTP answer: judged or refused, never a trap, never good when altered in its signed part")
    func hostileResponses() throws {
        let body = try Self.response("").body
        for length in 0..<body.count { #expect(Self.judged(Array(body.prefix(length))) != "good", "\(length)") }
        var goods = 0
        for index in body.indices {
            var flipped = body
            flipped[index] ^= 0xFF
            if Self.judged(flipped) == "good" { goods += 1 }
        }
        // Every byte counts: the signed ResponseData, and around it the tags, the response type, the signature
        // algorithm and the BIT STRING's unused-bits octet (two flips there once stayed good).
        #expect(goods == 0, "\(goods) flipped responses still judged good")
        let http = Array("HTTP/1.1 200 OK\r\nContent-Type: application/ocsp-response\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        for length in 0...http.count { _ = OneShotHTTP.parse(Array(http.prefix(length))) }
        #expect(OneShotHTTP.parse(http)?.status == 200 && OneShotHTTP.parse(http)?.body == body)
        #expect(OneShotHTTP.parse(Array("HTTP/1.0 500 Internal Server Error\r\n\r\n".utf8))?.status == 500)
    }
}
