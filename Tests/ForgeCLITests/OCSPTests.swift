import Foundation
import ForgeTestSupport
import Testing

/// Issue 26 through the built binary and real sockets: `forge serve --ocsp` judged by two independent clients,
/// `openssl ocsp` (SHA-1 and SHA-256 CertIDs, nonces, RSA and EC issuers, delegates) and Apple's own Python
/// `SignedDataVerifier` with online checks on, against a `forge ca init --jws --ocsp-url` set.
@Suite("forge serve --ocsp", .timeLimit(.minutes(2)), .requires(.openssl))
struct OCSPTests {
    static let jws = Repository.file("Certificates/jws").path

    /// Sets what the server says about `certificate` through the control route.
    static func answer(_ server: BackgroundServer, _ spec: String) async throws {
        let reset = try await request(server.url + "/_forge/ocsp", method: "DELETE")
        #expect(reset.status == 200, "\(reset.text)")
        guard !spec.isEmpty else { return }
        let set = try await post(server.url + "/_forge/ocsp", json: spec)
        #expect(set.status == 201, "\(spec): \(set.text)")
    }

    /// `openssl ocsp` asking about `certificate` (issued by `issuer`, chaining to `root`), with its output.
    static func ask(_ server: BackgroundServer, certificate: String, issuer: String, root: String, digest: String = "-sha1") async throws -> String {
        let result = try await openssl(["ocsp", digest, "-issuer", issuer, "-cert", certificate, "-url", server.url + "/ocsp", "-CAfile", root, "-resp_text"])
        return result.text + result.stderr
    }

    @Test(
        "openssl ocsp: every answer as RFC 6960 says, for the JWS leaf and intermediate (EC) and the receipt leaf (RSA), SHA-1 and SHA-256 CertIDs, the nonce echoed"
    )
    func opensslClient() async throws {
        let server = try await BackgroundServer.start(
            ["serve", "--listen", "127.0.0.1:0", "--ocsp", "--ocsp-answer", "receipt-leaf=revoked,reason=superseded,at=2025-03-01T00:00:00Z"])
        defer { server.kill() }
        let leaf = "\(Self.jws)/jws-signing.pem", intermediate = "\(Self.jws)/jws-wwdr-g6.pem", root = "\(Self.jws)/jws-root-g3.pem"
        // The flag's answer, for the RSA chain: signed sha256WithRSAEncryption by the receipt intermediate.
        let receipt = try await Self.ask(
            server, certificate: certificate("receipt-signing.pem"), issuer: certificate("wwdr-g5.pem"), root: certificate("root.pem"), digest: "-sha256")
        for text in [
            "Response verify OK", "Hash Algorithm: sha256", "revoked", "Revocation Reason: superseded", "Revocation Time: Mar  1 00:00:00 2025 GMT", "sha256WithRSAEncryption",
        ] {
            #expect(receipt.contains(text), "\(text) in \(receipt)")
        }
        #expect(!receipt.contains("no nonce"), "the nonce is echoed: \(receipt)")
        // The intermediate, answered by the root.
        let asked = try await Self.ask(server, certificate: intermediate, issuer: root, root: root)
        #expect(asked.contains("Response verify OK") && asked.contains("jws-wwdr-g6.pem: good") && asked.contains("Hash Algorithm: sha1"), "\(asked)")
        let cases: [(answer: String, expected: [String])] = [
            ("", ["Response verify OK", "jws-signing.pem: good", "Next Update:", "ecdsa-with-SHA384"]),
            ("jws-leaf=revoked,reason=keyCompromise", ["Response verify OK", "jws-signing.pem: revoked", "Reason: keyCompromise"]),
            ("jws-leaf=unknown", ["Response verify OK", "jws-signing.pem: unknown"]),
            ("jws-leaf=try-later", ["Responder Error: trylater (3)"]),
            ("jws-leaf=malformed", ["Responder Error: malformedrequest (1)"]),
            ("jws-leaf=unauthorized", ["Responder Error: unauthorized (6)"]),
            ("jws-leaf=http-500", ["Error querying OCSP responder", "code=500"]),
            ("jws-leaf=garbage", ["Error querying OCSP responder"]),
            ("jws-leaf=stale", ["Response verify OK", "Status times invalid", "status expired"]),
            ("jws-leaf=wrong-key", ["Response Verify Failure", "signature failure"]),
            ("jws-leaf=delegate", ["Response verify OK", "jws-signing.pem: good", "receipt-forge TEST OCSP Responder"]),
            ("jws-leaf=delegate-no-eku", ["Response Verify Failure", "missing ocspsigning usage"]),
        ]
        for (answer, expected) in cases {
            try await Self.answer(server, answer)
            for digest in ["-sha1", "-sha256"] {
                let output = try await Self.ask(server, certificate: leaf, issuer: intermediate, root: root, digest: digest)
                for text in expected { #expect(output.contains(text), "\(answer) \(digest): \(text) in \(output)") }
                if expected.first == "Response verify OK" { #expect(!output.contains("no nonce"), "\(answer): \(output)") }
            }
        }
        try await Self.answer(server, "jws-leaf=no-next-update")
        let noNext = try await Self.ask(server, certificate: leaf, issuer: intermediate, root: root)
        #expect(noNext.contains("jws-signing.pem: good") && !noNext.contains("Next Update"), "\(noNext)")
        // A path that names an answer wins over the table: one responder serves vectors of every state.
        try await Self.answer(server, "")
        let pathNamed = try await openssl(["ocsp", "-issuer", intermediate, "-cert", leaf, "-url", server.url + "/ocsp/revoked/wwdrg6", "-CAfile", root])
        #expect(pathNamed.text.contains("jws-signing.pem: revoked"), "\(pathNamed.text)\(pathNamed.stderr)")
    }

    @Test(
        "GET with the request in the path (RFC 6960 A.1), a body that is no OCSP request (malformedRequest), a certificate of no issuer it serves (unauthorized), slow answers late, a bad --ocsp-answer exits 64, a bad --ocsp-url 64, an unreadable --ocsp-ca 65"
    )
    func wireEdges() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--ocsp"])
        defer { server.kill() }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let requestPath = directory.appendingPathComponent("request.der").path
        let made = try await openssl(["ocsp", "-issuer", "\(Self.jws)/jws-wwdr-g6.pem", "-cert", "\(Self.jws)/jws-signing.pem", "-no_nonce", "-reqout", requestPath])
        #expect(made.status == 0, "\(made.stderr)")
        let encoded =
            try Data(contentsOf: URL(fileURLWithPath: requestPath)).base64EncodedString()
            .addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let got = try await request(server.url + "/ocsp/" + encoded)
        #expect(got.header("Content-Type") == "application/ocsp-response")
        let responsePath = directory.appendingPathComponent("response.der").path
        try got.body.write(to: URL(fileURLWithPath: responsePath))
        let read = try await openssl(["ocsp", "-respin", responsePath, "-resp_text", "-noverify"])
        #expect(read.text.contains("Cert Status: good") && read.text.contains("successful (0x0)"), "\(read.text)\(read.stderr)")

        for body in [Data(), Data("not DER".utf8), Data([0x30, 0x80]), Data([0x30, 0x03, 0x30, 0x01, 0x00])] {
            let answer = try await request(server.url + "/ocsp", method: "POST", body: body)
            #expect(Array(answer.body) == [0x30, 0x03, 0x0A, 0x01, 0x01], "malformedRequest for \(Array(body))")
        }
        // The foreign root's certificate: no issuer the responder serves.
        let foreign = try await openssl(["ocsp", "-issuer", certificate("foreign-root.pem"), "-cert", certificate("foreign-root.pem"), "-url", server.url + "/ocsp"])
        #expect(foreign.text.contains("Responder Error: unauthorized (6)"), "\(foreign.text)\(foreign.stderr)")

        try await Self.answer(server, "jws-leaf=slow,seconds=2")
        // A lower bound only: a loaded machine can make the answer later, never earlier.
        let started = ContinuousClock.now
        let slow = try await openssl(["ocsp", "-issuer", "\(Self.jws)/jws-wwdr-g6.pem", "-cert", "\(Self.jws)/jws-signing.pem", "-url", server.url + "/ocsp", "-noverify"])
        #expect(ContinuousClock.now - started >= .seconds(2), "a slow answer is late, never early")
        #expect(slow.text.contains("jws-signing.pem: good"), "\(slow.text)\(slow.stderr)")

        // The other new options refuse bad input with one line and their exit code, writing nothing.
        let unwritten = directory.appendingPathComponent("never").path
        for (arguments, status, words) in [
            (["ca", "init", "--ocsp-url", "http://127.0.0.1:8960/ocsp", "--out", unwritten], Int32(64), "add --jws"),
            (["ca", "init", "--jws", "--ocsp-url", "ftp://127.0.0.1/ocsp", "--out", unwritten], 64, "must be an http:// URL"),
            (["serve", "--listen", "127.0.0.1:0", "--ocsp-ca", unwritten], 65, "--ocsp-ca: cannot read"),
        ] {
            let refused = try await forge(arguments: arguments)
            #expect(refused.status == status && refused.stderr.contains(words), "\(arguments): \(refused.status) \(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: unwritten))
        for bad in ["jws-leaf=sometimes", "nobody=good", "jws-leaf", "jws-leaf=revoked,reason=bored", "jws-leaf=slow,seconds=999", "jws-leaf=good,reason=keyCompromise"] {
            let refused = try await forge("serve", "--listen", "127.0.0.1:0", "--ocsp-answer", bad)
            #expect(refused.status == 64 && refused.stderr.contains("--ocsp-answer"), "\(bad): \(refused.status) \(refused.stderr)")
        }
    }

    @Test(
        "Apple's Python SignedDataVerifier with online checks on, against forge serve --ocsp-ca and a forge ca init --jws --ocsp-url set: good and a delegate accept; revoked, unknown, stale, no nextUpdate, wrong key, a delegate without the EKU, tryLater fail; HTTP 500 is RETRYABLE",
        .requires(.appleLibrary)
    )
    func appleOnlineChecks() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try freeLoopbackPort()
        let set = directory.appendingPathComponent("pki").path
        let created = try await forge("ca", "init", "--jws", "--ocsp-url", "http://127.0.0.1:\(port)/ocsp", "--out", set)
        #expect(created.status == 0, "\(created.stderr)")
        let aia = try await openssl(["x509", "-in", "\(set)/jws-signing.pem", "-noout", "-ext", "authorityInfoAccess"])
        #expect(aia.text.contains("OCSP - URI:http://127.0.0.1:\(port)/ocsp"), "\(aia.text)")
        let rootAIA = try await openssl(["x509", "-in", "\(set)/jws-root-g3.pem", "-noout", "-ext", "authorityInfoAccess"])
        #expect(!rootAIA.text.contains("OCSP"), "the root names no responder: \(rootAIA.text)")
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:\(port)", "--ocsp-ca", set, "--log-capacity", "1000"])
        defer { server.kill() }
        let transaction = directory.appendingPathComponent("t.jws").path
        let made = try await forge("jws", "make", "transaction", "--jws-certificates", set, "--product", "pro.monthly", "--app-apple-id", "1234", "-o", transaction)
        #expect(made.status == 0, "\(made.stderr)")
        let oracle = Repository.file("examples/oracles/asl_verify_jws.py").path
        let python = try Oracle.appleLibrary.required()
        func verify(_ root: String, _ path: String) async throws -> [String: Any] {
            let result = try await run(python, [oracle, root, "Production", "com.example.app", "1234", "transaction", path], environment: ["ASL_ONLINE": "1"])
            return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.text)\(result.stderr)")
        }
        let cases: [(String, String?)] = [
            ("", nil), ("jws-leaf=delegate", nil), ("jws-leaf=revoked", "VERIFICATION_FAILURE"), ("jws-intermediate=revoked", "VERIFICATION_FAILURE"),
            ("jws-leaf=unknown", "VERIFICATION_FAILURE"), ("jws-leaf=stale", "VERIFICATION_FAILURE"), ("jws-leaf=no-next-update", "VERIFICATION_FAILURE"),
            ("jws-leaf=wrong-key", "VERIFICATION_FAILURE"), ("jws-leaf=delegate-no-eku", "VERIFICATION_FAILURE"), ("jws-leaf=try-later", "VERIFICATION_FAILURE"),
            ("jws-leaf=http-500", "RETRYABLE_VERIFICATION_FAILURE"), ("jws-intermediate=http-500", "RETRYABLE_VERIFICATION_FAILURE"),
        ]
        for (answer, status) in cases {
            try await Self.answer(server, answer)
            let verdict = try await verify("\(set)/jws-root-g3.pem", transaction)
            #expect(verdict["verdict"] as? String == (status == nil ? "accept" : "reject"), "\(answer): \(verdict)")
            #expect(verdict["status"] as? String == status, "\(answer): \(verdict)")
        }
        // Python asks the intermediate first, then the leaf, each with a SHA-256 CertID.
        let logged = try await request(server.url + "/_forge/log")
        let answers = logged.text.split(separator: "\n").filter { $0.contains("\"ocsp\"") }
        #expect(answers.count >= 2 * cases.count - 2, "\(answers.count) OCSP requests logged")
        #expect(
            answers.first?.contains("sha256:748a3c2e110f6606=good") == true && answers.dropFirst().first?.contains("sha256:799c4e1b639c2a235c335b0a=good") == true,
            "\(answers.prefix(2))")
        // The bundled chain names 127.0.0.1 port 1, which refuses: a network error, retryable.
        let bundled = directory.appendingPathComponent("bundled.jws").path
        #expect(try await forge("jws", "make", "transaction", "--product", "pro.monthly", "--app-apple-id", "1234", "-o", bundled).status == 0)
        let refused = try await verify("\(Self.jws)/jws-root-g3.pem", bundled)
        #expect(refused["status"] as? String == "RETRYABLE_VERIFICATION_FAILURE", "\(refused)")
    }
}

/// A port nobody listens on now, for a certificate that must name its responder before the responder starts.
func freeLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    return Int(UInt16(bigEndian: address.sin_port))
}
