import Foundation
import ForgeTestSupport
import Testing

/// Issue 21, items 3 (first sentence) and 4: what the reports say. `--validate-protocol` names the JSON pointer and
/// the values it expected; the HTML report carries the per-family table, the corpus and a reproduce command per
/// failing vector that really reproduces it; results.json names the corpus it judged.
@Suite("forge run reports: protocol violations, families, corpus and reproduce commands", .timeLimit(.minutes(2)))
struct RunReportContentTests {
    static let vectors = Repository.vectors.path

    /// Rejects exactly when it is given everything as the run gives it (a receipt's DER on stdin, the trust anchor
    /// file, the vector's id and artefact), so only an exact reproduction exits 1 again.
    static let pickyRejecter =
        "exit:sh -c 'test -s \"$RF_TRUST_ANCHOR\" && test -n \"$RF_ID\" && test \"$RF_ARTIFACT\" = receipt && test \"$(head -c 1 | od -An -tx1 | tr -d \" \\n\")\" = 30 && exit 1; exit 0'"

    /// `&amp;` and friends back to text, for a command read out of the HTML report.
    static func unescaped(_ html: String) -> String {
        html.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// Every reproduce command of an HTML report.
    static func reproduceCommands(_ html: String) -> [String] {
        html.matches(of: /<pre class="reproduce">([^<]*)<\/pre>/).map { unescaped(String($0.1)) }
    }

    static func sh(_ command: String) async throws -> RunResult { try await run(URL(fileURLWithPath: "/bin/sh"), ["-c", command]) }

    /// A stdio harness answering every request with `reply` (`SEQ` stands for the request's seq).
    static func yesHarness(_ reply: String, in directory: URL) throws -> String {
        let harness = directory.appendingPathComponent("yes.py")
        try """
        import json, sys
        for line in sys.stdin:
            message = json.loads(line)
            if message["type"] == "hello":
                print(json.dumps({"type": "hello", "protocol": 1, "implementation": "yes", "features": [], "errorGranularity": "none",
                                  "clockInjection": True, "maxConcurrency": 1}), flush=True)
            elif message["type"] == "validate":
                print('\(reply)'.replace("SEQ", str(message["seq"])), flush=True)
            else:
                break
        """.write(to: harness, atomically: true, encoding: .utf8)
        return "stdio:\(try Oracle.python.required().path) \(harness.path)"
    }

    @Test(
        "--validate-protocol prints the pointer and the expected values: /verdict: expected one of accept, reject, got \"yes\"", .requires(.python),
        arguments: [
            (transport: "stdio", reply: #"{"type":"result","seq":SEQ,"verdict":"yes"}"#), (transport: "stdio", reply: #"{"verdict":"yes"}"#),
            (transport: "exec", reply: #"{"type":"result","seq":0,"verdict":"yes"}"#),
        ])
    func protocolViolationLine(transport: String, reply: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let target =
            transport == "stdio"
            ? try Self.yesHarness(reply, in: directory)
            : "exec:sh -c 'cat >/dev/null; echo \"\(reply.replacingOccurrences(of: "\"", with: "\\\""))\"'"
        let result = try await forge(arguments: ["run", "--vectors", Self.vectors, "--target", target, "--run", "valid::*", "--validate-protocol"])
        #expect(result.status == 2, "\(result.text)\(result.stderr)")
        let expected = #"/verdict: expected one of accept, reject, got "yes""#
        let lines = result.text.split(separator: "\n").filter { $0.hasPrefix("ERROR") && $0.contains("got nothing") }
        #expect(!lines.isEmpty && lines.allSatisfy { $0.contains("protocol violation: ") && $0.hasSuffix(expected) }, "\(result.text)")
    }

    @Test("The HTML report has the per-family table, the target and corpus, and an exit: reproduce line that reproduces")
    func htmlReport() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let html = directory.appendingPathComponent("report.html"), results = directory.appendingPathComponent("results.json")
        let result = try await forge(arguments: [
            "run", "--vectors", Self.vectors, "--target", Self.pickyRejecter, "--run", "valid::*", "--run", "binding::*", "--html", html.path,
            "--results", results.path,
        ])
        #expect(result.status == 2, "the canaries are rejected: \(result.text)")
        let page = try String(contentsOf: html, encoding: .utf8)
        for shown in [
            "<h2>Families</h2>", "<td><code>valid</code></td>", "<td><code>binding</code></td>", "Corpus <code>\(Self.vectors)</code>",
            "Artifacts: receipt (default",
        ] {
            #expect(page.contains(shown), "the page shows \(shown)")
        }

        let commands = Self.reproduceCommands(page)
        let failing =
            try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])["results"] as? [[String: Any]]
        #expect(commands.count == failing?.filter { $0["outcome"] as? String == "FALSE_REJECT" }.count, "one per failing vector")
        let command = try #require(commands.first)
        #expect(command.hasPrefix("RF_ID=") && command.contains("RF_TRUST_ANCHOR=\(Self.vectors)/anchors/") && command.contains(" < "), "\(command)")
        #expect(!command.contains("\n"), "one line")
        #expect(try await Self.sh(command).status == 1, "the line rejects again, as in the run: \(command)")
        // …and without the environment it accepts: the line carries what the harness needed.
        let bare = try #require(command.range(of: "sh -c ")).lowerBound
        #expect(try await Self.sh(String(command[bare...])).status == 0)
    }

    @Test("A stdio reproduce line sends hello, the validate message and stop; the harness answers it", .requires(.python))
    func stdioReproduce() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = directory.appendingPathComponent("harness.py")
        try """
        import base64, json, sys
        for line in sys.stdin:
            message = json.loads(line)
            if message["type"] == "hello":
                print(json.dumps({"type": "hello", "protocol": 1, "implementation": "rejecter", "features": [], "errorGranularity": "none",
                                  "clockInjection": True, "maxConcurrency": 1}), flush=True)
            elif message["type"] == "validate":
                size = len(base64.b64decode(message["input"]["data"]))
                print(json.dumps({"type": "result", "seq": message["seq"], "verdict": "reject", "message": "%s %d bytes" % (message["id"], size)}), flush=True)
            else:
                break
        """.write(to: harness, atomically: true, encoding: .utf8)
        let html = directory.appendingPathComponent("report.html")
        let result = try await forge(arguments: [
            "run", "--vectors", Self.vectors, "--target", "stdio:\(try Oracle.python.required().path) \(harness.path)", "--run", "valid::*", "--html", html.path,
        ])
        #expect(result.status == 2, "\(result.text)")
        let command = try #require(Self.reproduceCommands(try String(contentsOf: html, encoding: .utf8)).first)
        #expect(command.hasPrefix("printf ") && command.contains("base64 < "), "\(command)")
        let replayed = try await Self.sh(command)
        let id = try #require(command.firstMatch(of: /"id":"([^"]+)"/)).1
        let manifest = try Data(contentsOf: URL(fileURLWithPath: Self.vectors).appendingPathComponent("manifest.json"))
        let entries = (try JSONSerialization.jsonObject(with: manifest) as? [String: Any])?["vectors"] as? [[String: Any]] ?? []
        let file = try #require(entries.first { $0["id"] as? String == String(id) }?["file"] as? String)
        let size = try Data(contentsOf: URL(fileURLWithPath: Self.vectors).appendingPathComponent(file)).count
        #expect(replayed.text.contains("\(id) \(size) bytes"), "the harness got the vector whole: \(replayed.text)\(replayed.stderr)")
    }

    @Test("results.json names the corpus it judged: its path and the SHA-256 of its manifest", .requires(.openssl))
    func resultsNameTheCorpus() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let results = directory.appendingPathComponent("results.json")
        let result = try await forge(arguments: ["run", "--vectors", Self.vectors, "--target", "swift:reference", "--run", "valid::*", "--results", results.path])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])
        let corpus = try #require(object["corpus"] as? [String: Any])
        #expect(corpus["path"] as? String == Self.vectors)
        let digest = try await openssl(["dgst", "-sha256", "-r", Self.vectors + "/manifest.json"]).text.prefix { $0 != " " }
        #expect(corpus["manifestSHA256"] as? String == String(digest))
        // …and the results schema, which says what results.json holds, knows both new members.
        let schema = try String(contentsOf: URL(fileURLWithPath: Self.vectors).appendingPathComponent("schema/results.schema.json"), encoding: .utf8)
        #expect(schema.contains("\"corpus\"") && schema.contains("\"artifacts\""))
    }
}
