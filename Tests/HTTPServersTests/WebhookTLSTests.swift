import _ForgeSupport
import ForgeTLS
import Foundation
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import Synchronization
import Testing
import ForgeTestSupport

/// The webhook client's TLS (``TLSHandler``, the system's OpenSSL; it was NIOSSL's, and AsyncHTTPClient's before): the system's roots
/// plus `--notify-ca`, the URL's host name sent as SNI and checked against the certificate, an address checked as
/// an address. The webhook is an HTTPS listener in the test, serving what `forge serve --tls` serves: a certificate
/// the TEST root issued for localhost, 127.0.0.1 and ::1.
@Suite("An https:// webhook: trusted through --notify-ca, named by SNI, its certificate checked against the URL's host", .timeLimit(.minutes(2)))
struct WebhookTLSTests {
    static let rootPEM = Repository.file("Certificates/root.pem")
    static let ok = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)

    /// The SNI names the listener was sent, one per handshake (nil: none).
    final class ServerNames: Sendable {
        let names = Mutex<[String?]>([])
    }

    static func serverContext() throws -> TLSContext {
        let credentials = try ServingCredentials.issue(for: "127.0.0.1", by: try CertificateSet<CertificateRole>.bundled())
        return try TLSContext.server(certificateChainDER: credentials.chain, privateKeyPEM: credentials.privateKeyPEM)
    }

    static func notification(_ url: String) throws -> WebhookRequest {
        WebhookRequest(url: try HTTPURL(url), body: Array(#"{"signedPayload":"x"}"#.utf8), timeoutSeconds: 10)
    }

    @Test("Trusted through trustedRootsPEM: https://localhost (its name sent as SNI) and https://127.0.0.1 (no SNI) are SUCCESS")
    func trusted() async throws {
        let names = ServerNames()
        let webhook = try await CannedWebhook.start(Self.ok, tls: try Self.serverContext(), serverNames: names)
        let client = try WebhookClient(timeoutSeconds: 10, trustedRootsPEM: try String(contentsOf: Self.rootPEM, encoding: .utf8))
        for host in ["localhost", "127.0.0.1"] {
            let delivered = await client.deliver(try Self.notification("https://\(host):\(webhook.port)/hook"))
            #expect(delivered.attempt.result == .success && delivered.body == Array("ok".utf8), "\(host): \(delivered.attempt)")
        }
        await webhook.stop()
        #expect(names.names.withLock { $0 } == ["localhost", nil])
        #expect(webhook.requests.count == 2)
    }

    @Test("Without the TEST root the certificate is untrusted: TLS_ISSUE, and no request is sent")
    func untrusted() async throws {
        let webhook = try await CannedWebhook.start(Self.ok, tls: try Self.serverContext())
        let client = try WebhookClient(timeoutSeconds: 10, trustedRootsPEM: nil)
        let delivered = await client.deliver(try Self.notification("https://localhost:\(webhook.port)/hook"))
        await webhook.stop()
        #expect(delivered.attempt.result == .tlsIssue, "\(delivered.attempt)")
        #expect(webhook.requests.isEmpty)
    }

    #if os(Linux)
        @Test("At an address the certificate does not name (127.0.0.2, loopback on Linux) the trusted certificate is TLS_ISSUE")
        func wrongAddress() async throws {
            let webhook = try await CannedWebhook.start(Self.ok, host: "127.0.0.2", tls: try Self.serverContext())
            let client = try WebhookClient(timeoutSeconds: 10, trustedRootsPEM: try String(contentsOf: Self.rootPEM, encoding: .utf8))
            let delivered = await client.deliver(try Self.notification("https://127.0.0.2:\(webhook.port)/hook"))
            await webhook.stop()
            #expect(delivered.attempt.result == .tlsIssue, "\(delivered.attempt)")
            #expect(webhook.requests.isEmpty)
        }
    #endif

    @Test("trustedRootsPEM that is not PEM is refused when the client is made")
    func notPEM() {
        #expect(throws: (any Error).self) { try WebhookClient(timeoutSeconds: 10, trustedRootsPEM: "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n") }
    }
}
