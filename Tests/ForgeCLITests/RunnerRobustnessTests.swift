import Foundation
import ForgeTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The runner against harnesses and endpoints that stall, drip, flood or get interrupted, through the built
/// `forge` (and `forge-http`, which it starts for http:// targets), real processes and real sockets on
/// 127.0.0.1. Each test bounds the run it starts: a run that used to hang fails the test instead of hanging it. A test
/// that interrupts a run sends its signal at a moment the run shows (a harness has started, spawned or ended), never
/// after a delay.
@Suite("Runner robustness", .timeLimit(.minutes(2)))
struct RunnerRobustnessTests {
    static let vectors = Repository.vectors.path
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
    static func startHTTPHarness(_ mode: String, in directory: URL) async throws -> BackgroundServer {
        let script = directory.appendingPathComponent("harness.py")
        try httpHarness.write(to: script, atomically: true, encoding: .utf8)
        return try await BackgroundServer.start([script.path, mode], executable: try Oracle.python.required())
    }

    // MARK: - HTTP targets that stall

    @Test(
        "http: a body that stalls or drips after the headers is TIMEOUT within --timeout; the run ends", .requires(.python),
        arguments: ["stall-body", "drip-body"])
    func httpBodyStalls(_ mode: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await Self.startHTTPHarness(mode, in: directory)
        defer { server.kill() }
        let results = directory.appendingPathComponent("results.json")
        // Within 40 s, or DeadlineExceeded: against a harness whose body stalls or drips, the run must still end.
        let ran = try await run(
            Binaries.forge, ["run", "--target", server.url, "--timeout", "2", "--parallel", "4", "--results", results.path] + Self.selection,
            deadline: .seconds(40))
        #expect(ran.status == 2, "\(ran.text)\(ran.stderr)")
        let canaries = try Self.results(results).filter { ($0["id"] as? String)?.hasPrefix("valid::") == true && $0["outcome"] as? String != "SKIP" }
        #expect(!canaries.isEmpty)
        for canary in canaries {
            #expect(canary["outcome"] as? String == "TIMEOUT", "\(canary)")
            #expect((canary["message"] as? String ?? "").contains("headers and body"), "the message says what the time limit covers: \(canary)")
        }
    }

    @Test("http: a hello that stalls after its headers fails the handshake within --timeout (exit 2)", .requires(.python))
    func httpHelloStalls() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await Self.startHTTPHarness("stall-hello", in: directory)
        defer { server.kill() }
        let results = directory.appendingPathComponent("results.json")
        // Within 40 s, or DeadlineExceeded: against a hello that stalls, the run must still end.
        let ran = try await run(
            Binaries.forge, ["run", "--target", server.url, "--timeout", "2", "--results", results.path] + Self.selection, deadline: .seconds(40))
        #expect(ran.status == 2, "\(ran.text)\(ran.stderr)")
        let diagnosis = try #require(try Self.load(results)["canaryDiagnosis"] as? String)
        #expect(diagnosis.contains("/hello") && diagnosis.contains("within"), "\(diagnosis)")
    }

    @Test("--help says that for http(s) targets --timeout covers the whole exchange")
    func timeoutHelp() async throws {
        let help = try await forge("run", "--help").text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("connect, request, headers and body"), "\(help)")
    }

    @Test("--timeout beyond a day, or not a number, is a usage error (exit 64), not a crash", arguments: ["1e30", "inf", "nan", "0"])
    func timeoutRange(_ value: String) async throws {
        let ran = try await forge(arguments: ["run", "--target", "exit:/bin/true", "--timeout", value] + Self.selection)
        #expect(ran.status == 64, "\(ran.text)\(ran.stderr)")
    }

    // MARK: - Harnesses start with a clean signal state

    @Test("exit: and stdio: harnesses start with no signal blocked and none ignored", .requires(.python))
    func harnessSignalState() async throws {
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
        for target in ["exit:\(exitScript.path)", "stdio:\(try Oracle.python.required().path) \(stdioScript.path) \(report.path)"] {
            let ran = try await forge(arguments: ["run", "--target", target, "--vectors", Self.vectors, "--run", "valid::appstore-no-purchases", "-q"])
            #expect(ran.status == 0, "\(target): \(ran.text)\(ran.stderr)")
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

    /// Whether a harness running `script` is alive (`/bin/sh SCRIPT`: forge's own command line names it after `exit:`).
    static func harnessRuns(_ script: URL) async throws -> Bool {
        try await !run(try Oracle.pgrep.required(), ["-f", "sh \(script.path)"]).text.isEmpty
    }

    /// Starts forge on `script` (parallel `parallel`, every report into `directory`), sends SIGTERM once `ready`
    /// returns (a moment the run shows; SIGTERM is not sent to a run that already ended), and reads what the run left.
    ///
    /// With `slowStderr`, forge's stderr is a pipe the test has filled: a CI log slow to take the interrupt's message,
    /// during which the run may go on. It is drained only once no harness of `script` is left (killed by the interrupt,
    /// or done) and `grace` more has passed: time the test gives the run on purpose, to report what it must not (the
    /// harnesses it killed as CRASH, any report at all).
    static func interrupt(
        _ script: URL, reports directory: URL, parallel: Int, slowStderr: Bool, grace: Duration = .zero, ready: (Launched) async throws -> Void
    ) async throws -> Interrupted {
        let arguments =
            ["run", "--target", "exit:\(script.path)", "--timeout", "60", "--parallel", "\(parallel)", "-q"] + selection + reportArguments(directory)
        let said = directory.appendingPathComponent("stderr.txt")
        try Data().write(to: said)
        let saidHandle = try FileHandle(forWritingTo: said)
        defer { try? saidHandle.close() }
        // Killed only if the test fails before they end: a program that has ended is not signalled.
        var launched: [Launched] = []
        defer { for program in launched { program.signal(SIGKILL) } }
        let forge: Launched
        var drain: Launched?
        if slowStderr {
            let errors = Pipe()
            // Neither end leaks into programs other tests start meanwhile (the child gets a copy, without the flag).
            for end in [errors.fileHandleForReading, errors.fileHandleForWriting] { _ = fcntl(end.fileDescriptor, F_SETFD, FD_CLOEXEC) }
            let writer = errors.fileHandleForWriting.fileDescriptor
            _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK)
            let filler = [UInt8](repeating: 0x2E, count: 4096)
            while write(writer, filler, filler.count) > 0 {}
            while write(writer, filler, 1) > 0 {}
            _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) & ~O_NONBLOCK)
            forge = try Launched(Binaries.forge, arguments, stderr: errors.fileHandleForWriting)
            launched.append(forge)
            try errors.fileHandleForWriting.close()
            try await ready(forge)
            forge.signal(SIGTERM)
            try await eventually("no harness of \(script.lastPathComponent) is left", within: .seconds(30)) { try await !harnessRuns(script) }
            try await Task.sleep(for: grace)
            let cat = try Launched(URL(fileURLWithPath: "/bin/cat"), [], stdin: errors.fileHandleForReading, stdout: saidHandle)
            launched.append(cat)
            drain = cat
            try errors.fileHandleForReading.close()
        } else {
            forge = try Launched(Binaries.forge, arguments, stderr: saidHandle)
            launched.append(forge)
            try await ready(forge)
            forge.signal(SIGTERM)
        }
        let ended = try await forge.end(within: .seconds(30))
        _ = try await drain?.end(within: .seconds(30))
        let stderr = String(decoding: try Data(contentsOf: said).drop { $0 == 0x2E }, as: UTF8.self)
        let results = directory.appendingPathComponent("results.json")
        let crashes = (try? Self.results(results))?.filter { $0["outcome"] as? String == "CRASH" }.count ?? 0
        return Interrupted(
            status: ended.status, killedBySignal: ended.bySignal, stderr: stderr, reports: writtenReports(directory),
            crashes: crashes)
    }

    @Test(
        "SIGTERM while the interrupt's message waits on a full stderr: the killed harnesses are not reported as CRASH, no report is written",
        .requires(.pgrep))
    func interruptWithSlowStderr() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Each vector is held until its harness is killed (the harness's child carries the directory, for pgrep).
        let script = directory.appendingPathComponent("hang.sh")
        try "#!/bin/sh\ncat > /dev/null\nsh -c \"sleep 600 # \(directory.path)\" & wait\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let ran = try await Self.interrupt(script, reports: directory, parallel: 4, slowStderr: true, grace: .milliseconds(500)) { _ in
            try await HostileHarnessTests.waitForProcess(matching: "sleep 600 # \(directory.path)")
        }
        #expect(!ran.killedBySignal && ran.status == 128 + SIGTERM, "exit \(ran.status), \(ran.crashes) CRASH reported: \(ran.stderr)")
        #expect(ran.stderr.contains("no reports written"), "\(ran.stderr)")
        #expect(ran.reports.isEmpty, "an interrupted run wrote \(ran.reports), with \(ran.crashes) CRASH")
        try await HostileHarnessTests.expectNothingRunning(directory)
    }

    /// When, in a run of the 20 valid vectors, a test sends SIGTERM: a moment the run itself shows through what its
    /// harnesses write (that they started, that they ended), never a delay.
    enum Moment: CustomStringConvertible {
        /// As soon as forge is started: before its handler exists, or about then.
        case atStart
        /// Once this many harnesses have started.
        case started(Int)
        /// Once this many harnesses have ended.
        case ended(Int)

        /// From the start of the run to after its last harness, when the reports are being written.
        static let all: [Moment] = [
            .atStart, .started(1), .started(2), .started(4), .started(8), .started(9), .started(12), .started(17), .started(20), .ended(1), .ended(4),
            .ended(8), .ended(12), .ended(16), .ended(19), .ended(20),
        ]

        var description: String {
            switch self {
            case .atStart: "at start"
            case .started(let count): "once \(count) harnesses started"
            case .ended(let count): "once \(count) harnesses ended"
            }
        }
    }

    @Test(
        "SIGTERM at 16 moments of a run: either it says it was interrupted and wrote no report, or it finished and reported no CRASH",
        .requires(.pgrep), arguments: [false, true])
    func interruptAtAnyMoment(slowStderr: Bool) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var interrupted = 0
        for (attempt, moment) in Moment.all.enumerated() {
            let reports = directory.appendingPathComponent("run\(attempt)")
            try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
            // Each harness says when it starts and when it ends, and takes a while in between: the run lasts a few waves.
            let started = reports.appendingPathComponent("started"), ended = reports.appendingPathComponent("ended")
            let script = reports.appendingPathComponent("slow.sh")
            try "#!/bin/sh\necho >> '\(started.path)'\ncat > /dev/null\nsleep 0.3\necho >> '\(ended.path)'\nexit 0\n".write(to: script, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
            func count(_ file: URL) -> Int { ((try? Data(contentsOf: file)) ?? Data()).count(where: { $0 == 0x0A }) }
            let ran = try await Self.interrupt(script, reports: reports, parallel: 8, slowStderr: slowStderr, grace: .milliseconds(200)) { forge in
                switch moment {
                case .atStart: return
                case .started(let wanted): try await eventually("\(moment) (or forge ended)", within: .seconds(60)) { count(started) >= wanted || forge.hasEnded }
                case .ended(let wanted): try await eventually("\(moment) (or forge ended)", within: .seconds(60)) { count(ended) >= wanted || forge.hasEnded }
                }
            }
            if ran.wasInterrupted {
                interrupted += 1
                #expect(ran.reports.isEmpty, "\(moment): interrupted (exit \(ran.status)) yet wrote \(ran.reports), with \(ran.crashes) CRASH")
            } else {
                #expect(!ran.stderr.contains("interrupted"), "\(moment): says it was interrupted but exited \(ran.status)")
                #expect(ran.reports.count == Self.reportNames.count, "\(moment): finished (exit \(ran.status)) but wrote only \(ran.reports)")
                #expect(ran.crashes == 0, "\(moment): exited \(ran.status) reporting \(ran.crashes) harnesses it killed itself as CRASH")
            }
        }
        #expect(interrupted > 0, "every run finished before its signal")
    }

    // MARK: - Harness messages are bounded

    @Test(
        "http: a response body over the message limit is ERROR while reading it; a 1 MiB message is cut in every report", .requires(.python),
        arguments: ["big-body", "big-message"])
    func httpMessageFloods(_ mode: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await Self.startHTTPHarness(mode, in: directory)
        defer { server.kill() }
        let reports = directory.appendingPathComponent("reports")
        try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: true)
        _ = try await run(
            Binaries.forge,
            ["run", "--target", server.url, "--timeout", "10", "--parallel", "2", "--max-errors", "100"] + Self.selection
                + Self.reportArguments(reports).dropLast(2), deadline: .seconds(100))
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

    @Test("exec: a reply within the message limit is read whole (its message cut in the report); a longer one is a protocol violation", .requires(.python))
    func execMessageFloods() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("harness.py")
        try """
        import json, sys
        m = json.loads(sys.stdin.readline())
        size = int(sys.argv[1])
        print(json.dumps({"type": "result", "seq": m["seq"], "verdict": "accept", "message": "z" * size}))
        """.write(to: script, atomically: true, encoding: .utf8)
        let python = try Oracle.python.required().path
        for (size, expected) in [(2 << 20, "cut at 4096 bytes"), (5 << 20, "protocol violation: a reply longer than 4194304 bytes")] {
            let results = directory.appendingPathComponent("results-\(size).json")
            let ran = try await forge(
                arguments: [
                    "run", "--target", "exec:\(python) \(script.path) \(size)", "--results", results.path, "--vectors", Self.vectors, "--run",
                    "valid::appstore-no-purchases", "-q",
                ])
            let result = try #require(try Self.results(results).first, "\(ran.text)\(ran.stderr)")
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

/// A program a test starts, signals mid-way and then waits for: what ForgeTestSupport's `run` (which returns at the
/// end) and `BackgroundServer` (ready once it names a port) do not cover — a `forge run` interrupted at a moment its
/// harnesses show, its stderr a file or a pipe the test holds full. Its end arrives through `terminationHandler`, so
/// no thread waits for it; the parent's copies of the handles given are the caller's to close.
final class Launched: Sendable {
    struct Ending: Sendable {
        let status: Int32
        let bySignal: Bool
    }

    let pid: pid_t
    let name: String
    /// Kept while the program runs.
    private let process: Process
    private let ending: Recorded

    private final class Recorded: Sendable {
        let value = Mutex<Ending?>(nil)
    }

    init(_ executable: URL, _ arguments: [String], stdin: FileHandle? = nil, stdout: FileHandle? = nil, stderr: FileHandle? = nil) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = stdin ?? FileHandle.nullDevice
        process.standardOutput = stdout ?? FileHandle.nullDevice
        process.standardError = stderr ?? FileHandle.nullDevice
        let ending = Recorded()
        process.terminationHandler = { ended in
            let reason = ended.terminationReason, status = ended.terminationStatus
            ending.value.withLock { $0 = Ending(status: status, bySignal: reason == .uncaughtSignal) }
        }
        try process.run()
        self.process = process
        self.ending = ending
        self.pid = process.processIdentifier
        self.name = executable.lastPathComponent
    }

    var hasEnded: Bool { ending.value.withLock { $0 != nil } }

    /// Sends `number`, unless the program has already ended.
    func signal(_ number: Int32) {
        if !hasEnded { kill(pid, number) }
    }

    /// How it ended, once it has; killed (and the wait failed) if it has not by `limit`.
    func end(within limit: Duration) async throws -> Ending {
        do {
            try await eventually("\(name) ends", within: limit) { hasEnded }
        } catch {
            kill(pid, SIGKILL)
            throw error
        }
        return try #require(ending.value.withLock { $0 })
    }
}
