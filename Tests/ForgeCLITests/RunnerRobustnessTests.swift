import Foundation
import ForgeTestSupport
import Testing
import ForgeSupport
import StoreModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The runner against harnesses and endpoints that stall, drip, flood or get interrupted, through the built
/// `forge` (and `forge-http`, which it starts for http:// targets), real processes and real sockets on
/// 127.0.0.1. Each test bounds the run it starts: a run that used to hang fails the test instead of hanging it.
@Suite("Runner robustness", .timeLimit(.minutes(10)))
struct RunnerRobustnessTests {
    static let vectors = repositoryRoot.appendingPathComponent("Vectors").path
    /// 20 valid vectors, the canaries among them.
    static let selection = ["--vectors", vectors, "--run", "valid::*", "--profile", "apple-compatible"]

    /// A protocol harness over HTTP that misbehaves as its first argument says: `stall-hello` sends the headers
    /// of its hello and then nothing; `stall-body` and `drip-body` answer /validate with headers and then
    /// nothing, or one byte a second; `big-body` answers a reply larger than any message may be; `big-message`
    /// a reply that fits but whose message is 1 MiB.
    static let httpHarness = """
        import json, sys, time
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
        mode = sys.argv[1]
        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def answer(self, body, stall=False):
                data = body.encode()
                self.send_response(200); self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.flush()
                try:
                    if not stall:
                        self.wfile.write(data)
                    elif mode == "drip-body":
                        for byte in data:
                            self.wfile.write(bytes([byte])); self.wfile.flush(); time.sleep(1)
                    else:
                        time.sleep(600)
                except OSError:
                    pass
            def do_GET(self):
                hello = json.dumps({"type": "hello", "protocol": 1, "implementation": "robustness " + mode,
                                    "features": ["device-hash", "xcode", "sha1", "robustness", "large"],
                                    "errorGranularity": "none", "clockInjection": True, "maxConcurrency": 4})
                self.answer(hello, stall=mode == "stall-hello")
            def do_POST(self):
                m = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = {"type": "result", "seq": m["seq"], "verdict": "accept"}
                if mode == "big-body":
                    reply["message"] = "x" * (5 << 20)
                if mode == "big-message":
                    reply["message"] = "y" * (1 << 20)
                self.answer(json.dumps(reply), stall=mode in ("stall-body", "drip-body"))
        server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        server.daemon_threads = True
        print("listening on :%d" % server.server_address[1], flush=True)
        server.serve_forever()
        """

    /// Starts the Python harness of `httpHarness` in `mode`; the caller stops it.
    static func startHTTPHarness(_ mode: String, in directory: URL) throws -> BlockingServer {
        let script = directory.appendingPathComponent("harness.py")
        try httpHarness.write(to: script, atomically: true, encoding: .utf8)
        return try BlockingServer(URL(fileURLWithPath: "/usr/bin/python3"), [script.path, mode])
    }

    // MARK: - HTTP targets that stall

    @Test("http: a body that stalls or drips after the headers is TIMEOUT within --timeout; the run ends", arguments: ["stall-body", "drip-body"])
    func httpBodyStalls(_ mode: String) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try Self.startHTTPHarness(mode, in: directory)
        defer { server.stop() }
        let results = directory.appendingPathComponent("results.json")
        let run = try Bounded.forge(
            ["run", "--target", server.url, "--timeout", "2", "--parallel", "4", "--results", results.path] + Self.selection, within: .seconds(40))
        try #require(run.finished, "forge run did not end within 40 s against a harness whose body \(mode == "stall-body" ? "stalls" : "drips")")
        #expect(run.status == 2, "\(run.output)")
        let canaries = try Self.results(results).filter { ($0["id"] as? String)?.hasPrefix("valid::") == true && $0["outcome"] as? String != "SKIP" }
        #expect(!canaries.isEmpty)
        for canary in canaries {
            #expect(canary["outcome"] as? String == "TIMEOUT", "\(canary)")
            #expect((canary["message"] as? String ?? "").contains("headers and body"), "the message says what the time limit covers: \(canary)")
        }
    }

    @Test("http: a hello that stalls after its headers fails the handshake within --timeout (exit 2)")
    func httpHelloStalls() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try Self.startHTTPHarness("stall-hello", in: directory)
        defer { server.stop() }
        let results = directory.appendingPathComponent("results.json")
        let run = try Bounded.forge(["run", "--target", server.url, "--timeout", "2", "--results", results.path] + Self.selection, within: .seconds(40))
        try #require(run.finished, "forge run did not end within 40 s against a hello that stalls")
        #expect(run.status == 2, "\(run.output)")
        let diagnosis = try #require(try Self.load(results)["canaryDiagnosis"] as? String)
        #expect(diagnosis.contains("/hello") && diagnosis.contains("within"), "\(diagnosis)")
    }

    @Test("--help says that for http(s) targets --timeout covers the whole exchange")
    func timeoutHelp() throws {
        let help = try forgeBlocking("run", "--help").text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("connect, request, headers and body"), "\(help)")
    }

    @Test("--timeout beyond a day, or not a number, is a usage error (exit 64), not a crash", arguments: ["1e30", "inf", "nan", "0"])
    func timeoutRange(_ value: String) throws {
        let run = try forgeBlocking(arguments: ["run", "--target", "exit:/bin/true", "--timeout", value] + Self.selection)
        #expect(run.status == 64, "\(run.text)\(run.stderr)")
    }

    // MARK: - Harnesses start with a clean signal state

    @Test("exit: and stdio: harnesses start with no signal blocked and none ignored")
    func harnessSignalState() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent("signals.txt")
        // The shell reads its own status (the redirection is the shell's, so /proc/self is the shell).
        let exitScript = directory.appendingPathComponent("exit.sh")
        try """
        #!/bin/sh
        while read -r key value; do
          case $key in SigBlk:|SigIgn:) echo "exit $key $value" >> '\(report.path)';; esac
        done < /proc/self/status
        cat > /dev/null
        exit 0
        """.write(to: exitScript, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: exitScript.path)
        let stdioScript = directory.appendingPathComponent("stdio.py")
        try """
        import json, sys
        with open(sys.argv[1], "a") as out:
            out.writelines("stdio " + line for line in open("/proc/self/status") if line.startswith(("SigBlk", "SigIgn")))
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] == "hello":
                print(json.dumps({"type": "hello", "protocol": 1, "implementation": "signals", "features": ["device-hash"], "errorGranularity": "none",
                                  "clockInjection": True, "maxConcurrency": 1}), flush=True)
            elif m["type"] == "stop":
                break
            else:
                print(json.dumps({"type": "result", "seq": m["seq"], "verdict": "accept"}), flush=True)
        """.write(to: stdioScript, atomically: true, encoding: .utf8)
        for target in ["exit:\(exitScript.path)", "stdio:/usr/bin/python3 \(stdioScript.path) \(report.path)"] {
            let run = try forgeBlocking(arguments: ["run", "--target", target, "--vectors", Self.vectors, "--run", "valid::appstore-no-purchases", "-q"])
            #expect(run.status == 0, "\(target): \(run.text)\(run.stderr)")
        }
        let lines = try String(contentsOf: report, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(lines)")
        for line in lines {
            let words = line.split(whereSeparator: \.isWhitespace)
            let bits = try #require(words.last.flatMap { UInt64($0, radix: 16) }, "\(line)")
            // Signal n is bit n - 1. Python ignores SIGPIPE and SIGXFSZ itself.
            let excused: UInt64 = words[0] == "stdio" && words[1] == "SigIgn:" ? 1 << 12 | 1 << 24 : 0
            #expect(bits & ~excused == 0, "a harness started with signals blocked or ignored: \(line)")
        }
    }

    // MARK: - An interrupted run writes no report

    static let reportNames = ["results.json", "junit.xml", "summary.md", "report.html", "baseline.json"]

    static func reportArguments(_ directory: URL) -> [String] {
        zip(["--results", "--junit", "--markdown", "--html", "--write-baseline"], reportNames).flatMap { [$0, directory.appendingPathComponent($1).path] }
    }

    static func writtenReports(_ directory: URL) -> [String] {
        reportNames.filter { FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path) }
    }

    /// How an interrupted run ended, and what it left.
    struct Interrupted {
        let status: Int32
        let killedBySignal: Bool
        let stderr: String
        let reports: [String]
        let crashes: Int

        /// forge said it was interrupted: its own exit code, or the default action of a signal that came first.
        var wasInterrupted: Bool { killedBySignal || status == 128 + SIGTERM }
    }

    /// Starts forge on `script` writing every report into `directory`, sends SIGTERM once `ready` returns,
    /// and reads what the run left. With `slowStderr`, forge's stderr is a pipe already full, drained only
    /// `drainAfter` past the signal: a CI log slow to take the message, during which the run may go on.
    static func interrupt(
        _ script: URL, reports directory: URL, parallel: Int, slowStderr: Bool, drainAfter: Double, ready: () throws -> Void
    ) throws -> Interrupted {
        let errors = Pipe()
        if slowStderr {
            let writer = errors.fileHandleForWriting.fileDescriptor
            _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK)
            let filler = [UInt8](repeating: 0x2E, count: 4096)
            while write(writer, filler, filler.count) > 0 {}
            while write(writer, filler, 1) > 0 {}
            _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) & ~O_NONBLOCK)
        }
        let forge = Process()
        forge.executableURL = forgeBinary
        forge.arguments =
            ["run", "--target", "exit:\(script.path)", "--timeout", "60", "--parallel", "\(parallel)", "-q"] + selection + reportArguments(directory)
        forge.standardOutput = FileHandle.nullDevice
        forge.standardError = errors
        try forge.run()
        try? errors.fileHandleForWriting.close()
        var drained: Bounded.Drained?
        if !slowStderr { drained = Bounded.drain(errors.fileHandleForReading) }
        try ready()
        kill(forge.processIdentifier, SIGTERM)
        if slowStderr {
            Thread.sleep(forTimeInterval: drainAfter)
            drained = Bounded.drain(errors.fileHandleForReading)
        }
        try #require(Bounded.wait(forge, within: .seconds(20)), "forge did not end after SIGTERM")
        let stderr = String(decoding: (drained?.value ?? Data()).drop { $0 == 0x2E }, as: UTF8.self)
        let results = directory.appendingPathComponent("results.json")
        let crashes = (try? Self.results(results))?.filter { $0["outcome"] as? String == "CRASH" }.count ?? 0
        return Interrupted(
            status: forge.terminationStatus, killedBySignal: forge.terminationReason == .uncaughtSignal, stderr: stderr,
            reports: writtenReports(directory), crashes: crashes)
    }

    @Test("SIGTERM while the interrupt's message waits on a full stderr: the killed harnesses are not reported as CRASH, no report is written")
    func interruptWithSlowStderr() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Each vector is held until its harness is killed (the harness's child carries the directory, for pgrep).
        let script = directory.appendingPathComponent("hang.sh")
        try "#!/bin/sh\ncat > /dev/null\nsh -c \"sleep 600 # \(directory.path)\" & wait\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let run = try Self.interrupt(script, reports: directory, parallel: 4, slowStderr: true, drainAfter: 1.5) {
            try Bounded.waitForProcess(matching: "sleep 600 # \(directory.path)")
        }
        #expect(!run.killedBySignal && run.status == 128 + SIGTERM, "exit \(run.status), \(run.crashes) CRASH reported: \(run.stderr)")
        #expect(run.stderr.contains("no reports written"), "\(run.stderr)")
        #expect(run.reports.isEmpty, "an interrupted run wrote \(run.reports), with \(run.crashes) CRASH")
        try HostileHarnessTests.expectNothingRunning(directory)
    }

    @Test("SIGTERM at 32 moments of a run: either it says it was interrupted and wrote no report, or it finished and reported no CRASH")
    func interruptAtAnyMoment() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("slow.sh")
        try "#!/bin/sh\ncat > /dev/null\nsleep 0.3\nexit 0\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        var interrupted = 0
        for attempt in 0..<32 {
            let reports = directory.appendingPathComponent("run\(attempt)")
            try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
            // From before the handler exists to about the end of the run; every other attempt with a slow stderr.
            let delay = 0.05 + Double(attempt / 2 % 16) * 0.08
            let run = try Self.interrupt(script, reports: reports, parallel: 8, slowStderr: attempt % 2 == 1, drainAfter: Double(attempt % 4) * 0.1) {
                Thread.sleep(forTimeInterval: delay)
            }
            if run.wasInterrupted {
                interrupted += 1
                #expect(run.reports.isEmpty, "attempt \(attempt): interrupted (exit \(run.status)) yet wrote \(run.reports), with \(run.crashes) CRASH")
            } else {
                #expect(!run.stderr.contains("interrupted"), "attempt \(attempt): says it was interrupted but exited \(run.status)")
                #expect(run.reports.count == Self.reportNames.count, "attempt \(attempt): finished (exit \(run.status)) but wrote only \(run.reports)")
                #expect(run.crashes == 0, "attempt \(attempt): exited \(run.status) reporting \(run.crashes) harnesses it killed itself as CRASH")
            }
        }
        #expect(interrupted > 0, "every run finished before its signal")
    }

    // MARK: - Harness messages are bounded

    @Test("http: a response body over the message limit is ERROR while reading it; a 1 MiB message is cut in every report")
    func httpMessageFloods() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for mode in ["big-body", "big-message"] {
            let server = try Self.startHTTPHarness(mode, in: directory)
            defer { server.stop() }
            let reports = directory.appendingPathComponent(mode)
            try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
            let run = try Bounded.forge(
                ["run", "--target", server.url, "--timeout", "10", "--parallel", "2", "--max-errors", "100"] + Self.selection
                    + Self.reportArguments(reports).dropLast(2), within: .seconds(120))
            try #require(run.finished, "forge run did not end within 120 s")
            let results = try Self.results(reports.appendingPathComponent("results.json"))
            let judged = results.filter { $0["outcome"] as? String != "SKIP" }
            #expect(!judged.isEmpty)
            for result in judged {
                let message = result["message"] as? String ?? "", size = message.utf8.count
                let quoted = size > 400 ? "\(message.prefix(150))…\(message.suffix(150))" : message
                #expect(size <= 4200, "\(mode): a message of \(size) bytes in results.json: \(quoted)")
                if mode == "big-body" {
                    let outcome = result["outcome"] as? String ?? ""
                    #expect(outcome == "ERROR", "\(mode): \(outcome)")
                    let named = message.contains("protocol violation: a response body longer than 4194304 bytes")
                    #expect(named, "\(mode): \(quoted)")
                } else {
                    let cut = message.hasPrefix("yyyy") && message.hasSuffix("(cut at 4096 bytes of 1048576)")
                    #expect(cut, "\(mode): \(quoted)")
                }
            }
            for name in ["results.json", "junit.xml", "summary.md", "report.html"] {
                let size = (try FileManager.default.attributesOfItem(atPath: reports.appendingPathComponent(name).path)[.size] as? Int) ?? 0
                #expect(size < 1 << 20, "\(mode): \(name) is \(size) bytes for \(results.count) vectors")
            }
        }
    }

    @Test("exec: a reply within the message limit is read whole (its message cut in the report); a longer one is a protocol violation")
    func execMessageFloods() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("harness.py")
        try """
        import json, sys
        m = json.loads(sys.stdin.readline())
        size = int(sys.argv[1])
        print(json.dumps({"type": "result", "seq": m["seq"], "verdict": "accept", "message": "z" * size}))
        """.write(to: script, atomically: true, encoding: .utf8)
        for (size, expected) in [(2 << 20, "cut at 4096 bytes"), (5 << 20, "protocol violation: a reply longer than 4194304 bytes")] {
            let results = directory.appendingPathComponent("results-\(size).json")
            let run = try forgeBlocking(
                arguments: [
                    "run", "--target", "exec:/usr/bin/python3 \(script.path) \(size)", "--results", results.path, "--vectors", Self.vectors, "--run",
                    "valid::appstore-no-purchases", "-q",
                ])
            let result = try #require(try Self.results(results).first, "\(run.text)\(run.stderr)")
            let message = result["message"] as? String ?? ""
            let bounded = message.contains(expected) && message.utf8.count <= 4200
            #expect(bounded, "\(size): \(result["outcome"] ?? "") \(message.utf8.count) bytes: \(message.prefix(200))…\(message.suffix(100))")
        }
    }

    // MARK: - Helpers

    static func load(_ url: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any], "\(url.path) is a JSON object")
    }

    static func results(_ url: URL) throws -> [[String: Any]] {
        try load(url)["results"] as? [[String: Any]] ?? []
    }
}

/// Running things that may hang, with a bound: the test fails instead of hanging.
enum Bounded {
    struct Run {
        let finished: Bool
        let status: Int32
        let output: String
    }

    /// Bytes read to the end of a pipe on a thread of its own.
    final class Drained: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        fileprivate func finish(_ bytes: Data) {
            lock.withLock { data = bytes }
            done.signal()
        }

        /// Everything read, once the pipe's writers are gone (or after 20 s, what there is).
        var value: Data {
            _ = done.wait(timeout: .now() + 20)
            return lock.withLock { data }
        }
    }

    static func drain(_ handle: FileHandle) -> Drained {
        let drained = Drained()
        Thread.detachNewThread { drained.finish(handle.readDataToEndOfFile()) }
        return drained
    }

    /// Waits for `process` to end; false if it is still running after `limit` (then it is killed).
    static func wait(_ process: Process, within limit: Duration) -> Bool {
        let clock = ContinuousClock(), deadline = clock.now.advanced(by: limit)
        while process.isRunning, clock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return false
        }
        return true
    }

    /// Runs the built forge with `arguments`, killing it if it has not ended within `limit`.
    static func forge(_ arguments: [String], within limit: Duration) throws -> Run {
        let process = Process()
        process.executableURL = forgeBinary
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let drained = drain(output.fileHandleForReading)
        let finished = wait(process, within: limit)
        return Run(finished: finished, status: process.terminationStatus, output: String(decoding: drained.value, as: UTF8.self))
    }

    /// Waits (up to 20 s) until a process whose command line contains `marker` runs.
    static func waitForProcess(matching marker: String) throws {
        let clock = ContinuousClock(), deadline = clock.now.advanced(by: .seconds(20))
        while try ForgeCLITests.runBlocking(URL(fileURLWithPath: "/usr/bin/pgrep"), ["-f", marker]).text.isEmpty, clock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
