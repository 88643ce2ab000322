import Foundation
import ForgeTestSupport
import ReceiptConformance
import Testing
import _ForgeSupport
import StoreModel

/// `stdio:` against real persistent processes, well-behaved and hostile (most of them in Python).
@Suite("forge run --target stdio:", .timeLimit(.minutes(2)))
struct StdioCLITests {
    static let vectors = Repository.vectors.path

    /// A Python harness: answers hello, then runs `body` (which sees `m`, the validate message, and `send`).
    static func harness(_ body: String, in directory: URL, name: String) throws -> String {
        let script = directory.appendingPathComponent(name)
        try """
        import json, sys
        def send(x): print(json.dumps(x) if isinstance(x, dict) else x, flush=True)
        state = {"count": 0, "held": []}
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] == "hello":
                send({"type": "hello", "protocol": 1, "implementation": "hostile", "features": ["device-hash", "xcode", "sha1", "robustness", "large"], "errorGranularity": "none", "clockInjection": True, "maxConcurrency": 2})
            elif m["type"] == "validate":
                state["count"] += 1
        \(body.split(separator: "\n").map { "        " + $0 }.joined(separator: "\n"))
        """.write(to: script, atomically: true, encoding: .utf8)
        return "stdio:\(try Oracle.python.required().path) \(script.path)"
    }

    static func runCorpus(_ target: String, _ extra: [String] = []) async throws -> (RunResult, [[String: Any]]) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let results = directory.appendingPathComponent("results.json")
        let outcome = try await forge(arguments: ["run", "--target", target, "--vectors", vectors, "--results", results.path, "--parallel", "2"] + extra)
        let parsed = try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any]
        return (outcome, parsed?["results"] as? [[String: Any]] ?? [])
    }

    @Test("The reference harness over stdio is conformant, and the Python example speaks the protocol", .requires(.python, .openssl))
    func wellBehaved() async throws {
        let (reference, results) = try await Self.runCorpus("stdio:\(Binaries.forge.path) validate --harness --vectors \(Self.vectors)", ["--profile", "apple-compatible"])
        #expect(reference.status == 0, "\(reference.text)")
        #expect(results.count == corpusCount && results.allSatisfy(agrees))
        let (python, pythonResults) = try await Self.runCorpus(
            "stdio:\(try Oracle.python.required().path) \(Repository.file("examples/stdio-harness.py").path) \(Self.vectors)",
            ["--run", "valid::*", "--run", "signature::appstore-*"])
        #expect(pythonResults.count == 25)
        #expect(python.text.contains("PASS"))
    }

    @Test("What the runner says conforms to the protocol: hello with the suite first, validate without the expected answer, stop last", .requires(.python))
    func runnerMessages() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("received.ndjson")
        let script = directory.appendingPathComponent("recorder.py")
        try """
        import json, sys
        log = open(sys.argv[1], "a")
        for line in sys.stdin:
            log.write(line)
            log.flush()
            m = json.loads(line)
            if m["type"] == "hello":
                print(json.dumps({"type": "hello", "protocol": 1, "implementation": "recorder", "features": [], "errorGranularity": "none", "clockInjection": True, "maxConcurrency": 1}), flush=True)
            elif m["type"] == "validate":
                print(json.dumps({"type": "result", "seq": m["seq"], "verdict": "accept"}), flush=True)
            else:
                break
        """.write(to: script, atomically: true, encoding: .utf8)
        let (outcome, results) = try await Self.runCorpus(
            "stdio:\(try Oracle.python.required().path) \(script.path) \(log.path)", ["--run", "valid::appstore-*", "--run", "chain::foreign-root"])
        #expect(outcome.status == 1, "accepting chain::foreign-root is a false accept: \(outcome.text)")
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map { Data($0.utf8) }
        let checker = try ProtocolChecker()
        for line in lines { #expect(checker.check(runnerMessage: line) == [], "\(String(decoding: line, as: UTF8.self))") }
        let messages = try lines.map { try #require(try JSONSerialization.jsonObject(with: $0) as? [String: Any]) }
        let suite = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.vectors).appendingPathComponent("manifest.json"))) as? [String: Any])
        #expect(messages.first?["type"] as? String == "hello" && messages.first?["suite"] as? String == (suite["suite"] as? [String: Any])?["version"] as? String)
        #expect(messages.last?["type"] as? String == "stop")
        let requests = messages.filter { $0["type"] as? String == "validate" }
        let sent = results.filter { $0["outcome"] as? String != "SKIP" }.count
        #expect(sent > 1 && requests.count == sent && requests.allSatisfy { $0["expected"] == nil && ($0["context"] as? [String: Any])?["now"] != nil })
    }

    @Test(
        "A harness that says hello but never answers times out on the canaries: exit 2, the rest listed as not run, nothing left running",
        .requires(.python, .pgrep))
    func silent() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let silent = try Self.harness("pass", in: directory, name: "silent.py")
        let (silentRun, silentResults) = try await Self.runCorpus(silent, ["--run", "valid::appstore-no-purchases", "--run", "chain::foreign-root", "--timeout", "2"])
        #expect(silentRun.status == 2)
        #expect(silentRun.text.contains("CANARIES FAILED") && silentRun.text.contains("did not answer in time"), "\(silentRun.text)")
        #expect(silentResults.count == 2)
        #expect(silentResults.contains { $0["outcome"] as? String == "TIMEOUT" } && silentResults.contains { ($0["message"] as? String)?.hasPrefix("not run") == true })
        try await HostileHarnessTests.expectNothingRunning(directory)
    }

    @Test("--validate-protocol turns replies that break the schema into ERROR naming the JSON pointer; without it they are read leniently", .requires(.python))
    func validateProtocol() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Well-formed except for an extra key on every reply.
        let sloppy = try Self.harness(
            """
            send({"type": "result", "seq": m["seq"], "verdict": "accept", "confidence": 0.9})
            """, in: directory, name: "sloppy.py")
        let selection = ["--run", "valid::appstore-*", "--parallel", "1"]
        let (lenient, lenientResults) = try await Self.runCorpus(sloppy, selection)
        #expect(lenient.status == 0, "\(lenient.text)")
        #expect(lenientResults.allSatisfy(agrees))
        let (strict, strictResults) = try await Self.runCorpus(sloppy, selection + ["--validate-protocol"])
        #expect(strict.status == 2)
        #expect(!strictResults.isEmpty && strictResults.allSatisfy { $0["outcome"] as? String != "PASS" })
        let message = strictResults.first { $0["outcome"] as? String == "ERROR" }?["message"] as? String ?? ""
        #expect(message.contains("protocol violation") && message.contains("confidence"), "\(message)")

        // The reference harness conforms to its own schema, over stdio and exec alike.
        let reference = "\(Binaries.forge.path) validate --harness --vectors \(Self.vectors)"
        for target in ["stdio:\(reference)", "exec:\(reference)"] {
            let (run, results) = try await Self.runCorpus(target, ["--run", "valid::*", "--run", "chain::*", "--validate-protocol", "--profile", "apple-compatible"])
            #expect(run.status == 0, "\(target): \(run.text)")
            #expect(results.count == 41 && results.allSatisfy(agrees), "\(target)")
        }
    }

    @Test("A harness that never says hello is an infrastructure failure with a diagnosis")
    func noHello() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("mute.sh")
        try "#!/bin/sh\necho 'Welcome to my validator!'\ncat > /dev/null\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let outcome = try await forge("run", "--target", "stdio:\(script.path)", "--vectors", Self.vectors, "--timeout", "1")
        #expect(outcome.status == 2)
        #expect(outcome.text.contains("handshake failed") && outcome.text.contains("Welcome"))
    }
}
