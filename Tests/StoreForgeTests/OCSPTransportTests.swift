import AppStoreVocabulary
import Foundation
import ForgeCrypto
import _ForgeSupport
import JWSModel
import ReceiptCorpus
import StoreForge
import StoreServer
@testable import ReferenceValidation
import StoreModel
import Synchronization
import Testing
import ForgeTestSupport

/// The online check's transport is injected (issue 39, item 8): the verifier hands each OCSP request to it and
/// applies the answer it brings back, with no socket and no thread of its own; the default transport's blocking wait
/// runs on a thread of its own, never on the caller's.
@Suite("The online check's injected transport", .timeLimit(.minutes(1)))
struct OCSPTransportTests {
    /// The vectors' instant: the responder answers and the verifier judges at it, never at the wall clock.
    static let now = ReceiptDate.parse("2025-06-15T12:00:00Z") ?? Date()
    static let root = try! X509Certificate(derEncoded: [UInt8](Data(contentsOf: Repository.vectors.appendingPathComponent("anchors/forge-jws-root.der"))))
    static let context = ValidationContext(
        trustedRoots: [root], bundleID: "com.example.app", appAppleID: 944_567_740, environment: .production, now: now)

    /// No socket: each request goes to forge's responder in process, at the path its URL names (after `/ocsp`),
    /// and is kept with its URL.
    final class InProcessTransport: OCSPTransport {
        let sent = Mutex<[(url: String, request: [UInt8])]>([])
        let responder = try! OCSPService(clock: { OCSPTransportTests.now })

        func post(_ request: [UInt8], to url: String, timeout: Duration, maximumBytes: Int) async throws(OCSPTransportFailure) -> OCSPHTTPAnswer {
            sent.withLock { $0.append((url, request)) }
            let path = URL(string: url)?.path ?? ""
            let reply = responder.respond(path: String(path.dropFirst("/ocsp".count)), request: request)
            return OCSPHTTPAnswer(status: reply.status, body: reply.body)
        }
    }

    /// A transport whose deadline always passes first.
    struct LateTransport: OCSPTransport {
        func post(_ request: [UInt8], to url: String, timeout: Duration, maximumBytes: Int) async throws(OCSPTransportFailure) -> OCSPHTTPAnswer {
            throw OCSPTransportFailure(.deadline, "no answer within \(timeout)")
        }
    }

    static func verify(_ name: String, transport: some OCSPTransport) async throws -> JWSReport {
        let text = try String(contentsOf: Repository.vectors.appendingPathComponent("jws-online/\(name).jws"), encoding: .utf8)
        return await JWSVerifier().verify(
            Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8), as: .transaction, context: context, online: OnlineRevocation(transport: transport, now: { Self.now }))
    }

    @Test("The verifier sends the intermediate's request, then the leaf's, to the URLs their AIA names, and applies the answers")
    func requestsAndAnswers() async throws {
        let transport = InProcessTransport()
        let report = try await Self.verify("good", transport: transport)
        #expect(report.verdict == .valid, "\(report.message)")
        #expect(report.checks.contains { $0.name == .revocation && $0.status == .passed })
        let sent = transport.sent.withLock { $0 }
        #expect(sent.map(\.url) == ["http://127.0.0.1:6960/ocsp/good", "http://127.0.0.1:6960/ocsp/good"])
        // The first request is the intermediate's, under the root: a SHA-256 CertID and its nonce, byte for byte.
        let intermediate = try #require(report.certificates.dropFirst().first)
        let identity = try #require(Self.root.ocspIdentity)
        let expected = OnlineRevocation.request(
            nameHash: try DigestAlgorithm.sha256.digest(identity.nameDER), keyHash: try DigestAlgorithm.sha256.digest(identity.keyBits),
            serial: intermediate.serialNumber, nonce: Array(try DigestAlgorithm.sha256.digest(intermediate.derRepresentation).prefix(16)))
        #expect(sent.first?.request == expected)

        let revoked = try await Self.verify("leaf-revoked", transport: InProcessTransport())
        #expect(revoked.verdict == .invalid && revoked.errorClass == .chainRevoked, "\(revoked.message)")
    }

    @Test("A transport that brings back nothing by its deadline: chain.revocation-unavailable, with its reason")
    func deadline() async throws {
        let report = try await Self.verify("good", transport: LateTransport())
        #expect(report.errorClass == .chainRevocationUnavailable)
        #expect(report.message == "revocation: the intermediate: http://127.0.0.1:6960/ocsp/good: no answer within 10.0 seconds", "\(report.message)")
    }
}
