import Foundation
import ForgeTestSupport
import Testing

/// `http://` against real servers on 127.0.0.1: `forge validate --listen` (the harness protocol and
/// the verifyReceipt mapping) and hostile Python servers.
@Suite("forge run --target http://", .timeLimit(.minutes(2)))
struct HTTPCLITests {
    static let vectors = Repository.vectors.path

    static func startReference() async throws -> BackgroundServer {
        try await BackgroundServer.start(["validate", "--listen", "127.0.0.1:0", "--vectors", vectors, "--threads", "2"])
    }

    static func runCorpus(_ arguments: [String]) async throws -> (RunResult, [[String: Any]]) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let results = directory.appendingPathComponent("results.json")
        let outcome = try await forge(arguments: ["run", "--vectors", vectors, "--results", results.path, "--quiet"] + arguments)
        let parsed = try? JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any]
        return (outcome, parsed?["results"] as? [[String: Any]] ?? [])
    }

    @Test("The reference validator over HTTP (protocol v1) is conformant on every vector")
    func harnessProtocol() async throws {
        let server = try await Self.startReference()
        defer { server.kill() }
        let (run, results) = try await Self.runCorpus(["--target", server.url, "--profile", "apple-compatible", "--parallel", "4", "--validate-protocol"])
        #expect(run.status == 0, "\(run.text)\(run.stderr)")
        #expect(results.count == corpusCount && results.allSatisfy(agrees))
    }

    @Test("--mapping verifyreceipt reads Apple's status codes; a mapping file with the exact error class grades reasons finely")
    func verifyReceiptMapping() async throws {
        let server = try await Self.startReference()
        defer { server.kill() }
        let (apple, appleResults) = try await Self.runCorpus(["--target", "\(server.url)/verifyReceipt", "--mapping", "verifyreceipt", "--profile", "apple-compatible"])
        #expect(apple.status == 0, "\(apple.text)\(apple.stderr)")
        // A mapping declares no hello: receipts only by default (verifyReceipt has no JWS), every one of them judged.
        #expect(appleResults.count == corpusReceiptCount && appleResults.allSatisfy(agrees))
        // A reject carries the class the status code stands for: 21003 → signature.
        let tampered = try #require(appleResults.first { $0["id"] as? String == "signature::appstore-payload-bit-flip-middle" })
        #expect(tampered["errorClass"] as? String == "signature")

        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let mapping = directory.appendingPathComponent("fine.json")
        try """
        {"mappingVersion": 1, "name": "forge-fine",
         "request": {"headers": {"X-Forge-Now": "{{now}}", "X-Forge-Trust-Anchor": "{{trustAnchor}}", "X-Forge-Bundle-Id": "{{bundleId}}",
                                 "X-Forge-App-Version": "{{appVersion}}", "X-Forge-Device-Id": "{{deviceId}}", "X-Forge-Environment": "{{environment}}"},
                     "body": {"receipt-data": "{{receipt}}"}},
         "response": {"verdict": "/status", "accept": ["0"], "reject": {"21002": "", "21003": "", "21007": "", "21008": "", "21010": ""},
                      "errorClass": "/forge_error_class", "message": "/forge_message"},
         "granularity": "fine", "features": ["device-hash", "xcode", "sha1", "robustness", "large", "transport-decoding"]}
        """.write(to: mapping, atomically: true, encoding: .utf8)
        let (fine, fineResults) = try await Self.runCorpus(["--target", "\(server.url)/verifyReceipt", "--mapping", mapping.path, "--profile", "apple-compatible"])
        #expect(fine.status == 0, "\(fine.text)\(fine.stderr)")
        #expect(fineResults.count == corpusReceiptCount && fineResults.allSatisfy(agrees))

        try #"{"mappingVersion": 2}"#.write(to: mapping, atomically: true, encoding: .utf8)
        let broken = try await forge("run", "--target", "\(server.url)/verifyReceipt", "--mapping", mapping.path, "--vectors", Self.vectors)
        #expect(broken.status == 65)
        #expect(broken.stderr.contains("fine.json"))
    }

    @Test("A hostile server: hangs become TIMEOUT, HTTP 500 and garbage ERROR, accepting everything FALSE_ACCEPT; every vector is reported", .requires(.python))
    func hostile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("hostile.py")
        try """
        import json, sys, time
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def answer(self, status, body):
                data = body.encode()
                self.send_response(status); self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
            def do_GET(self):
                self.answer(200, json.dumps({"type": "hello", "protocol": 1, "implementation": "hostile-http", "features": [], "errorGranularity": "none", "clockInjection": True, "maxConcurrency": 4}))
            def do_POST(self):
                m = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                family = m["id"].split("::")[0]
                if family == "time": time.sleep(3); self.answer(200, "{}")
                elif family == "chain": self.answer(500, "internal error")
                elif family == "encoding": self.answer(200, "<html>garbage</html>")
                else: self.answer(200, json.dumps({"type": "result", "seq": m["seq"], "verdict": "accept"}))
        server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        print("listening on :%d" % server.server_address[1], flush=True)
        server.serve_forever()
        """.write(to: script, atomically: true, encoding: .utf8)
        let server = try await BackgroundServer.start([script.path], executable: try Oracle.python.required())
        defer { server.kill() }
        let selection = ["--run", "valid::*", "--run", "time::*", "--run", "chain::foreign-root", "--run", "encoding::trailing-*", "--run", "payload::*"]
        let (run, results) = try await Self.runCorpus(["--target", server.url, "--timeout", "1", "--parallel", "4"] + selection)
        #expect(run.status == 2, "\(run.text)")
        let outcomes = Dictionary(results.map { ($0["id"] as? String ?? "", $0["outcome"] as? String ?? "") }, uniquingKeysWith: { first, _ in first })
        #expect(outcomes.filter { $0.key.hasPrefix("time::") }.values.allSatisfy { $0 == "TIMEOUT" })
        #expect(outcomes["chain::foreign-root"] == "ERROR")
        #expect(outcomes.filter { $0.key.hasPrefix("encoding::") }.values.allSatisfy { $0 == "ERROR" })
        #expect(outcomes.filter { $0.key.hasPrefix("payload::") }.values.contains("FALSE_ACCEPT"))
        let listed = try await forge("vectors", "list", "--vectors", Self.vectors).text.split(separator: "\n")
            .filter { line in ["valid::", "time::", "payload::"].contains { line.hasPrefix($0) } }.count
        #expect(results.count >= listed + 1)
        #expect(run.text.contains("TIMEOUT"))
    }

    @Test("https:// through a TLS proxy in front of the reference validator: trusted with --http-ca, refused without it", .requires(.openssl, .python))
    func https() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cert = directory.appendingPathComponent("cert.pem"), key = directory.appendingPathComponent("key.pem")
        let made = try await openssl([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key.path, "-out", cert.path, "-days", "2",
            "-subj", "/CN=receipt-forge test proxy", "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let upstream = try await Self.startReference()
        defer { upstream.kill() }
        let script = directory.appendingPathComponent("tls-proxy.py")
        try """
        import ssl, sys, urllib.request
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
        upstream, cert, key = sys.argv[1], sys.argv[2], sys.argv[3]
        class Proxy(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def relay(self, body):
                request = urllib.request.Request(upstream + self.path, data=body, headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=10) as r: status, data = r.status, r.read()
                except urllib.error.HTTPError as e: status, data = e.code, e.read()
                self.send_response(status); self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
            def do_GET(self): self.relay(None)
            def do_POST(self): self.relay(self.rfile.read(int(self.headers["Content-Length"])))
        server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print("listening on :%d" % server.server_address[1], flush=True)
        server.serve_forever()
        """.write(to: script, atomically: true, encoding: .utf8)
        let proxy = try await BackgroundServer.start([script.path, upstream.url, cert.path, key.path], executable: try Oracle.python.required())
        defer { proxy.kill() }
        let url = "https://127.0.0.1:\(proxy.port)"
        let selection = ["--run", "valid::*", "--run", "chain::*", "--profile", "apple-compatible", "--timeout", "10"]
        let (trusted, results) = try await Self.runCorpus(["--target", url, "--http-ca", cert.path] + selection)
        #expect(trusted.status == 0, "\(trusted.text)\(trusted.stderr)")
        #expect(results.count == 41 && results.allSatisfy(agrees))
        let untrusted = try await forge("run", "--target", url, "--vectors", Self.vectors, "--run", "valid::*")
        #expect(untrusted.status == 2 && untrusted.text.contains("handshake failed"), "\(untrusted.text)")
    }

    @Test("An unreachable target is an infrastructure failure (exit 2) that names the URL")
    func unreachable() async throws {
        // Bind a port, then free it: nothing listens there any more.
        let server = try await Self.startReference()
        let url = server.url
        await server.stop()
        let (run, results) = try await Self.runCorpus(["--target", url, "--run", "valid::*"])
        #expect(run.status == 2)
        #expect(
            results.count == 20 && results.allSatisfy { $0["outcome"] as? String == "SKIP" && ($0["message"] as? String)?.contains("handshake") == true },
            "every selected vector is listed, as not run")
        #expect(run.text.contains(url) || run.stderr.contains(url), "\(run.text)\(run.stderr)")
    }

    @Test("The listening server answers routes it does not know with 404, and bad bodies with protocol errors", .requires(.python))
    func routes() async throws {
        let server = try await Self.startReference()
        defer { server.kill() }
        // Python's urllib as the client: a second, independent HTTP implementation.
        func request(_ path: String, _ body: String?) async throws -> String {
            let script = """
                import sys, urllib.request, urllib.error
                data = None if sys.argv[2] == "-" else sys.argv[2].encode()
                try:
                    r = urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=data), timeout=10); print(r.status, r.read().decode())
                except urllib.error.HTTPError as e:
                    print(e.code, e.read().decode())
                """
            return try await run(try Oracle.python.required(), ["-c", script, server.url + path, body ?? "-"]).text
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try await request("/nope", nil).hasPrefix("404 "))
        #expect(try await request("/validate", nil).hasPrefix("405 "))
        let bad = try await request("/validate", #"{"type":"validate","seq":7}"#)
        #expect(bad.hasPrefix("400 ") && bad.contains("\"errored\"") && bad.contains("\"seq\":7"), "\(bad)")
        let hello = try await request("/hello", nil)
        #expect(hello.hasPrefix("200 ") && hello.contains("\"protocol\":1"))
        let verify = try await request("/verifyReceipt", "not json")
        #expect(verify == #"200 {"status":21000}"#)
    }
}
