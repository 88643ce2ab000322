import Foundation
import ForgeTestSupport
import Testing
import ForgeSupport
import StoreModel

/// The repository root, found from this file.
let repositoryRoot = Repository.root

/// `../shared/interop`, the real receipts; tests that need it are disabled when it is absent.
let interopDirectory = Repository.interop
let hasInterop = Oracle.interop.isAvailable

/// How many vectors the committed corpus holds, read from its manifest as any tool would.
let corpusCount: Int = {
    let data = (try? Data(contentsOf: repositoryRoot.appendingPathComponent("Vectors/manifest.json"))) ?? Data()
    return ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["vectors"].flatMap { $0 as? [Any] }?.count ?? 0
}()

/// How many of the committed corpus's vectors are app receipts: what a target declaring no artefacts is judged on.
let corpusReceiptCount: Int = {
    let data = (try? Data(contentsOf: repositoryRoot.appendingPathComponent("Vectors/manifest.json"))) ?? Data()
    let vectors = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["vectors"] as? [[String: Any]] ?? []
    return vectors.filter { ($0["context"] as? [String: Any])?["artifact"] == nil }.count
}()

/// How many vectors of the committed corpus's `xcode::` family need the `xcode` feature.
let corpusXcodeCount: Int = {
    let data = (try? Data(contentsOf: repositoryRoot.appendingPathComponent("Vectors/manifest.json"))) ?? Data()
    let vectors = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["vectors"] as? [[String: Any]] ?? []
    return vectors.filter { ($0["id"] as? String)?.hasPrefix("xcode::") == true && ($0["features"] as? [String])?.contains("xcode") == true }.count
}()

/// How many vectors of the committed corpus need `online`: the reference validator does not go online, so it SKIPs them.
let corpusOnlineCount: Int = {
    let data = (try? Data(contentsOf: repositoryRoot.appendingPathComponent("Vectors/manifest.json"))) ?? Data()
    let vectors = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["vectors"] as? [[String: Any]] ?? []
    return vectors.filter { ($0["features"] as? [String])?.contains("online") == true }.count
}()

/// The outcomes of a validator that agrees with the corpus: PASS, or ACCEPTABLE where the profile leaves the choice open.
let agreeing: Set<String> = ["PASS", "ACCEPTABLE"]

/// Whether a results.json entry agrees with the corpus: an agreeing outcome, or the SKIP of a vector that needs
/// `online` from a harness that does not declare it (the reference validator: it does not go online).
func agrees(_ result: [String: Any]) -> Bool {
    agreeing.contains(result["outcome"] as? String ?? "") || isOfflineSkip(result)
}

/// A SKIP because the harness does not check revocation online.
func isOfflineSkip(_ result: [String: Any]) -> Bool {
    result["outcome"] as? String == "SKIP" && (result["message"] as? String)?.hasSuffix("feature not declared by the harness: online") == true
}

let forgeBinary = Binaries.forge

// MARK: - Blocking helpers, being retired (issue 37): each test moves to ForgeTestSupport's async `run`, `forge`,
// `openssl` and `BackgroundServer`, and these go once nothing calls them.

/// Runs a program to completion, blocking the calling thread (and so a cooperative-pool thread).
@discardableResult
func runBlocking(
    _ executable: URL, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil, environment: [String: String]? = nil,
    killAfter seconds: Double? = nil
) throws -> RunResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = directory }
    let output = Pipe(), error = Pipe(), input = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = input
    try process.run()
    let group = DispatchGroup()
    nonisolated(unsafe) var out = Data(), err = Data()
    group.enter()
    Thread {
        out = output.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }.start()
    group.enter()
    Thread {
        err = error.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }.start()
    let start = Date()
    if let seconds {
        let pid = process.processIdentifier
        Thread {
            Thread.sleep(forTimeInterval: seconds)
            if process.isRunning { kill(pid, SIGKILL) }
        }.start()
    }
    if let stdin { try? input.fileHandleForWriting.write(contentsOf: stdin) }
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
    group.wait()
    let inTime = seconds.map { Date().timeIntervalSince(start) < $0 } ?? true
    return RunResult(
        status: process.terminationStatus, stdout: out, stderr: String(decoding: err, as: UTF8.self),
        exited: inTime && process.terminationReason == .exit)
}

func forgeBlocking(_ arguments: String..., stdin: Data? = nil, in directory: URL? = nil) throws -> RunResult {
    try runBlocking(forgeBinary, arguments, stdin: stdin, in: directory)
}

func forgeBlocking(arguments: [String], stdin: Data? = nil, in directory: URL? = nil) throws -> RunResult {
    try runBlocking(forgeBinary, arguments, stdin: stdin, in: directory)
}

let opensslBinary = URL(fileURLWithPath: "/usr/bin/openssl")

func opensslBlocking(_ arguments: [String]) throws -> RunResult { try runBlocking(opensslBinary, arguments) }

func certificate(_ name: String) -> String { Repository.certificate(name) }

/// A server started for a test (`forge validate --listen`, a Python fake): its port is read from
/// the first stdout line that names one, and `stop()` kills it and waits, so nothing outlives the test.
final class BlockingServer: @unchecked Sendable {
    let process = Process()
    let port: Int

    init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        let handle = output.fileHandleForReading
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first else { break }
            if first == 0x0A { break }
            line.append(first)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let match = text.firstMatch(of: /:(\d+)/), let port = Int(match.1) else {
            process.terminate()
            process.waitUntilExit()
            throw ServerDidNotStart(firstLine: text)
        }
        self.port = port
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// SIGKILL: the test runner may block SIGTERM, and a child inherits that.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    struct ServerDidNotStart: Error { let firstLine: String }
}
