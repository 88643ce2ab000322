import Foundation
import ForgeTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Harnesses that misbehave on purpose, run by the built `forge` through real processes. For each: the
/// misbehaviour is reported as what it is, every other vector is still judged (the run goes on), all
/// four report files list every selected vector, and no process of the harness outlives the run (`pgrep` looks).
@Suite("Hostile harnesses", .timeLimit(.minutes(2)), .requires(.pgrep))
struct HostileHarnessTests {
    static let vectors = Repository.vectors.path
    /// 20 valid vectors (4 canaries among them) and the 21 chain vectors.
    static let selection = ["--run", "valid::*", "--run", "chain::*", "--profile", "apple-compatible"]
    static let selectedCount = 41
    /// The vector a harness misbehaves on, after the canaries passed.
    static let trigger = "chain::foreign-root"

    /// A stdio harness in Python that accepts everything, except that it misbehaves as `mode` says on the
    /// trigger vector. What it spawns carries the test directory in its command line, for `pgrep`.
    static let stdioHarness = """
        import json, os, signal, subprocess, sys, threading, time
        mode, trigger, marker = sys.argv[1], sys.argv[2], sys.argv[3]
        lock = threading.Lock()
        def send(text):
            with lock:
                sys.stdout.write(text + "\\n")
                sys.stdout.flush()
        def accept(m): send(json.dumps({"type": "result", "seq": m["seq"], "verdict": "accept"}))
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] == "hello":
                send(json.dumps({"type": "hello", "protocol": 1, "implementation": "hostile " + mode, "features": ["device-hash", "xcode", "sha1", "robustness", "large"],
                                 "errorGranularity": "none", "clockInjection": True, "maxConcurrency": 2}))
                continue
            if m["type"] == "stop":
                break
            if m["id"] == trigger:
                sys.stderr.write("hostile harness: " + mode + " on " + m["id"] + "\\n")
                sys.stderr.flush()
                if mode == "crash":
                    os.kill(os.getpid(), signal.SIGSEGV)
                if mode == "hang":
                    subprocess.Popen(["/bin/sh", "-c", "sleep 600 # " + marker])
                    time.sleep(600)
                if mode == "garbage":
                    send("Traceback (most recent call last): this is not JSON")
                    continue
                if mode == "close-stdout":
                    os.close(1)
                    time.sleep(600)
                if mode == "overlong":
                    send("x" * (5 << 20))
                    time.sleep(600)
                if mode == "duplicate-reply":
                    accept(m)
            if mode == "out-of-order":
                # Even seqs are answered late, so with two requests in flight replies cross.
                threading.Timer(0.3 if m["seq"] % 2 == 0 else 0.0, accept, [m]).start()
                continue
            accept(m)
        """

    enum Mode: String, CaseIterable, CustomStringConvertible {
        case crash, hang, garbage, closeStdout = "close-stdout", overlong, duplicateReply = "duplicate-reply"
        case acceptEverything = "accept-everything", outOfOrder = "out-of-order"

        var description: String { rawValue }

        /// What the trigger vector must be reported as, and the message it must carry.
        var triggerOutcome: (String, String) {
            switch self {
            case .crash: ("CRASH", "killed by signal 11")
            case .hang: ("TIMEOUT", "no reply within")
            case .garbage: ("ERROR", "protocol violation")
            case .closeStdout: ("CRASH", "closed its output")
            case .overlong: ("ERROR", "longer than")
            case .acceptEverything, .outOfOrder, .duplicateReply: ("FALSE_ACCEPT", "")
            }
        }

        var exitCode: Int32 { triggerOutcome.0 == "FALSE_ACCEPT" ? 1 : 2 }
    }

    @Test(
        "stdio: each misbehaviour is reported as such, the rest is judged, the reports are complete, nothing is left running", .requires(.python),
        arguments: Mode.allCases)
    func stdio(_ mode: Mode) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("hostile.py")
        try Self.stdioHarness.write(to: script, atomically: true, encoding: .utf8)
        let target = "stdio:\(try Oracle.python.required().path) \(script.path) \(mode.rawValue) \(Self.trigger) \(directory.path)"
        // Two in flight where the runner can tell the culprit: replies crossing, and a hang (whose
        // innocent neighbour must be sent again to the restarted harness, not failed with it).
        let parallel = [.outOfOrder, .hang].contains(mode) ? "2" : "1"
        let reports = try await Self.runReading(target, in: directory, extra: ["--parallel", parallel, "--timeout", "3"])
        #expect(reports.status == mode.exitCode, "\(reports.stdout)")

        let trigger = try #require(reports.results.first { $0["id"] as? String == Self.trigger })
        #expect(trigger["outcome"] as? String == mode.triggerOutcome.0, "\(trigger)")
        let message = trigger["message"] as? String ?? ""
        #expect(mode.triggerOutcome.1.isEmpty || message.contains(mode.triggerOutcome.1), "\(trigger)")
        if mode == .duplicateReply {
            #expect(reports.stdout.contains("protocol violation by") && reports.stdout.contains("not waiting"), "a stray reply is reported, on no vector")
        }
        if [.crash, .hang, .closeStdout].contains(mode) {
            #expect(message.contains("hostile harness: \(mode.rawValue)"), "stderr's tail is in the report: \(trigger)")
        }
        // The run went on: every other vector got a verdict from the (restarted) harness.
        let judged = reports.results.filter { ["PASS", "ACCEPTABLE", "FALSE_ACCEPT"].contains($0["outcome"] as? String) && $0["id"] as? String != Self.trigger }
        #expect(judged.count == Self.selectedCount - 1, "\(reports.results.filter { !["PASS", "ACCEPTABLE", "FALSE_ACCEPT"].contains($0["outcome"] as? String) })")
        reports.expectComplete()
        try await Self.expectNothingRunning(directory)
    }

    /// Exit-code harnesses (one process per vector) that misbehave on the trigger vector; `RF_ID` names it.
    enum ExecMode: String, CaseIterable, CustomStringConvertible {
        case crash, hang, floodsStdout = "floods-stdout", neverReadsInput = "never-reads-input", exitsWithoutReading = "exits-without-reading"

        var description: String { rawValue }

        /// The trigger: the largest vector for the stdin cases (200 kB, more than a pipe holds).
        var trigger: String { [.neverReadsInput, .exitsWithoutReading].contains(self) ? "resource::deep-nesting" : HostileHarnessTests.trigger }

        /// The shell lines run for the trigger vector (`$MARKER` is the test directory).
        var script: String {
            switch self {
            case .crash: "echo 'hostile harness: crash' >&2; kill -SEGV $$"
            case .hang: "cat > /dev/null; sh -c \"sleep 600 # $MARKER\" & wait"
            case .floodsStdout: "cat > /dev/null; yes 'flood'"
            case .neverReadsInput: "sleep 600"
            case .exitsWithoutReading: "exit 0"
            }
        }

        var triggerOutcome: String {
            switch self {
            case .crash: "CRASH"
            case .hang, .floodsStdout, .neverReadsInput: "TIMEOUT"
            case .exitsWithoutReading: "FALSE_ACCEPT"
            }
        }
    }

    @Test(
        "exit: a harness that crashes, hangs, floods stdout or ignores its input costs one vector, not the run",
        arguments: ExecMode.allCases)
    func exec(_ mode: ExecMode) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("hostile.sh")
        try """
        #!/bin/sh
        MARKER='\(directory.path)'
        if [ "$RF_ID" = '\(mode.trigger)' ]; then
          \(mode.script)
        fi
        cat > /dev/null
        exit 0
        """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let selection = Self.selection + (mode.trigger == Self.trigger ? [] : ["--run", mode.trigger])
        let reports = try await Self.runReading("exit:\(script.path)", in: directory, extra: ["--timeout", "3"], selection: selection)
        let count = Self.selectedCount + (mode.trigger == Self.trigger ? 0 : 1)
        #expect(reports.status == (mode.triggerOutcome == "FALSE_ACCEPT" ? 1 : 2), "\(reports.stdout)")
        let trigger = try #require(reports.results.first { $0["id"] as? String == mode.trigger })
        #expect(trigger["outcome"] as? String == mode.triggerOutcome, "\(trigger)")
        let judged = reports.results.filter { ["PASS", "ACCEPTABLE", "FALSE_ACCEPT"].contains($0["outcome"] as? String) && $0["id"] as? String != mode.trigger }
        #expect(judged.count == count - 1)
        #expect(reports.results.count == count)
        reports.expectComplete(count: count)
        try await Self.expectNothingRunning(directory)
    }

    @Test(
        "Interrupted (Ctrl-C, or CI's SIGTERM) while harnesses hang: they are killed with their children, exit 128 + signal",
        arguments: [SIGINT, SIGTERM])
    func interrupted(_ signal: Int32) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("hang.sh")
        try "#!/bin/sh\ncat > /dev/null\nsh -c \"sleep 600 # \(directory.path)\" & wait\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let errors = directory.appendingPathComponent("stderr.txt")
        try Data().write(to: errors)
        let handle = try FileHandle(forWritingTo: errors)
        defer { try? handle.close() }
        let forge = try Launched(
            Binaries.forge, ["run", "--target", "exit:\(script.path)", "--vectors", Self.vectors, "--run", "valid::*", "--timeout", "60", "-q"],
            stderr: handle)
        defer { forge.signal(SIGKILL) }  // only if the test failed while it ran
        // The run has started its harnesses, and they what they spawn: now it is interrupted.
        try await Self.waitForProcess(matching: "sleep 600 # \(directory.path)")
        forge.signal(signal)
        let ended = try await forge.end(within: .seconds(30))
        #expect(!ended.bySignal && ended.status == 128 + signal)
        #expect(try String(contentsOf: errors, encoding: .utf8).contains("harness processes stopped"))
        try await Self.expectNothingRunning(directory)
    }

    /// The four report files of one run, read back.
    struct Reports {
        let status: Int32
        let stdout: String
        let results: [[String: Any]]
        let junit: String
        let markdown: String
        let html: String

        /// Every selected vector is in every report: nothing vanishes, whatever the harness did.
        func expectComplete(count: Int = HostileHarnessTests.selectedCount) {
            #expect(results.count == count)
            let ids = results.compactMap { $0["id"] as? String }
            #expect(Set(ids).count == count)
            #expect(junit.components(separatedBy: "<testcase ").count - 1 == count)
            for id in ids {
                #expect(junit.contains("name=\"\(id)\""), "JUnit names \(id)")
                #expect(html.contains(id), "the HTML report names \(id)")
            }
            #expect(junit.hasSuffix("</testsuites>\n") || junit.hasSuffix("</testsuites>"))
            #expect(markdown.contains("| Total | \(count) |"), "\(markdown.prefix(600))")
            #expect(html.contains("</html>"))
        }
    }

    /// Runs `target` with every report written into `directory`, and reads them back.
    static func runReading(_ target: String, in directory: URL, extra: [String], selection: [String] = selection) async throws -> Reports {
        let file = { (name: String) in directory.appendingPathComponent(name) }
        let outcome = try await forge(
            arguments: [
                "run", "--target", target, "--vectors", vectors, "--results", file("results.json").path,
                "--junit", file("junit.xml").path, "--markdown", file("summary.md").path, "--html", file("report.html").path,
            ]
                + selection + extra)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file("results.json"))) as? [String: Any])
        return Reports(
            status: outcome.status, stdout: outcome.text + outcome.stderr, results: parsed["results"] as? [[String: Any]] ?? [],
            junit: try String(contentsOf: file("junit.xml"), encoding: .utf8),
            markdown: try String(contentsOf: file("summary.md"), encoding: .utf8),
            html: try String(contentsOf: file("report.html"), encoding: .utf8))
    }

    /// No process whose command line names the test directory survives the run: harnesses and what they spawned. A
    /// process killed with its group is gone within moments; a survivor is still there at the deadline.
    static func expectNothingRunning(_ directory: URL) async throws {
        var leftovers = ""
        do {
            try await eventually("no process of \(directory.lastPathComponent) outlives the run", within: .seconds(10)) {
                leftovers = try await run(try Oracle.pgrep.required(), ["-af", directory.path]).text
                return leftovers.isEmpty
            }
        } catch is ConditionNotMet {
            Issue.record("still running: \(leftovers)")
        }
    }

    /// Waits until a process whose command line contains `marker` runs: a harness has started, and spawned.
    static func waitForProcess(matching marker: String) async throws {
        try await eventually("a process '\(marker)' runs", within: .seconds(30)) { try await !run(try Oracle.pgrep.required(), ["-f", marker]).text.isEmpty }
    }
}

extension Oracle {
    /// Finds the processes a run left behind, by their command line.
    static let pgrep = tool("pgrep", installedBy: "apt-get install procps")
    /// Ends a test's own leftover processes, by their command line.
    static let pkill = tool("pkill", installedBy: "apt-get install procps")
}
