import Foundation
import ReceiptCorpus
#if canImport(Glibc)
import Glibc
#endif

/// The `exec:` transports: one process per vector, so a crash or hang costs one vector, not the run.
///
/// - `.protocol`: the `validate` message (JSON) on stdin, one reply (JSON) on stdout.
/// - `.exitCode`: the receipt bytes on stdin and the context in environment variables (`RF_ID`,
///   `RF_NOW`, `RF_TRUST_ANCHOR` — a DER file path —, `RF_BUNDLE_ID`, `RF_APP_VERSION`, `RF_DEVICE_ID`,
///   `RF_ENVIRONMENT`); exit 0 accepts, 1 rejects (an optional first stdout line is the error class),
///   anything else is an error. A shell script can wrap any validator in a few lines this way.
public struct ExecValidator: ReceiptValidator {
    public enum Mode: Sendable { case `protocol`, exitCode }

    public let command: [String]
    public let mode: Mode
    public let timeout: Duration
    public let features: [String]
    public let granularity: HarnessHello.Granularity
    /// Trust anchor id → absolute path of its DER file, for `RF_TRUST_ANCHOR`.
    public let anchorFiles: [String: String]
    public let checker: ProtocolViolationCheck?

    public init(command: [String], mode: Mode, timeout: Duration = .seconds(5), features: [String], granularity: HarnessHello.Granularity,
                anchorFiles: [String: String], checker: ProtocolViolationCheck? = nil) {
        self.checker = checker
        self.command = command
        self.mode = mode
        self.timeout = timeout
        self.features = features
        self.granularity = granularity
        self.anchorFiles = anchorFiles
    }

    public func hello() async -> HarnessHello {
        HarnessHello(implementation: command.joined(separator: " "), features: features, errorGranularity: granularity,
                     maxConcurrency: ProcessInfo.processInfo.activeProcessorCount)
    }

    public func validate(_ request: ValidateRequest) async -> HarnessReply {
        let input: Data
        var environment = ProcessInfo.processInfo.environment
        switch mode {
        case .protocol:
            guard let json = try? JSONEncoder().encode(request) else { return .errored(seq: request.seq, message: "cannot encode the request") }
            input = json + Data("\n".utf8)
        case .exitCode:
            input = Data(base64Encoded: request.input.data) ?? Data()
            let context = request.context
            environment["RF_ID"] = request.id
            environment["RF_NOW"] = context.now
            environment["RF_TRUST_ANCHOR"] = anchorFiles[context.trustAnchor] ?? ""
            for (key, value) in [("RF_BUNDLE_ID", context.bundleId), ("RF_APP_VERSION", context.appVersion),
                                 ("RF_DEVICE_ID", context.deviceId), ("RF_ENVIRONMENT", context.environment)] {
                environment[key] = value ?? ""
            }
        }
        let outcome = await Self.runProcess(command, input: input, environment: environment, timeout: timeout)
        switch outcome {
        case .failedToStart(let reason):
            return .errored(seq: request.seq, message: "cannot start \(command.first ?? ""): \(reason)")
        case .timedOut:
            return .failed(seq: request.seq, failure: .timeout, message: "no answer within \(timeout); the process was killed")
        case .signalled(let signal, let stderr):
            return .failed(seq: request.seq, failure: .crash, message: "killed by signal \(signal)\(stderr.isEmpty ? "" : "; stderr: \(stderr)")")
        case .exited(let status, let stdout, let stderr):
            switch mode {
            case .protocol:
                let line = stdout.split(separator: UInt8(ascii: "\n")).first.map { Data($0) } ?? Data()
                if let violation = checker?.check(line) { return .errored(seq: request.seq, message: violation) }
                guard let reply = try? JSONDecoder().decode(HarnessReply.self, from: line) else {
                    return .errored(seq: request.seq, message: "not a protocol reply (exit \(status)): \(String(decoding: stdout.prefix(200), as: UTF8.self))\(stderr.isEmpty ? "" : "; stderr: \(stderr)")")
                }
                return reply
            case .exitCode:
                let firstLine = String(decoding: stdout.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self).trimmingCharacters(in: .whitespaces)
                switch status {
                case 0: return .result(seq: request.seq, verdict: .accept, errorClass: nil, message: nil, decoded: nil)
                case 1: return .result(seq: request.seq, verdict: .reject, errorClass: firstLine.isEmpty ? nil : firstLine, message: stderr.isEmpty ? nil : stderr, decoded: nil)
                default: return .errored(seq: request.seq, message: "exit status \(status)\(stderr.isEmpty ? "" : ": \(stderr)")")
                }
            }
        }
    }

    enum ProcessOutcome {
        case exited(status: Int32, stdout: Data, stderr: String)
        case signalled(Int32, stderr: String)
        case timedOut
        case failedToStart(String)
    }

    /// Runs a command to completion or until `timeout`, then kills its whole process group; stdout is capped at 1 MiB.
    ///
    /// Foundation starts the child as a process-group leader, so killing the group on timeout also kills
    /// what it spawned. Pipes are read on Dispatch threads: blocking reads on Swift's cooperative pool
    /// would starve the timeout loop.
    static func runProcess(_ command: [String], input: Data, environment: [String: String], timeout: Duration) async -> ProcessOutcome {
        guard !command.isEmpty else { return .failedToStart("empty command") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.environment = environment
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        do { try process.run() } catch { return .failedToStart(error.localizedDescription) }
        let captured = Captured()
        let readers = DispatchGroup()
        DispatchQueue.global().async(group: readers) { captured.set(out: stdout.fileHandleForReading.readDataToEndOfFile()) }
        DispatchQueue.global().async(group: readers) { captured.set(err: stderr.fileHandleForReading.readDataToEndOfFile()) }
        try? stdin.fileHandleForWriting.write(contentsOf: input)
        try? stdin.fileHandleForWriting.close()
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while process.isRunning, clock.now < deadline { try? await Task.sleep(for: .milliseconds(2)) }
        let timedOut = process.isRunning
        if timedOut {
            kill(-process.processIdentifier, SIGKILL)
            kill(process.processIdentifier, SIGKILL)
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in readers.notify(queue: .global()) { done.resume() } }
        process.waitUntilExit()
        if timedOut { return .timedOut }
        let (out, err) = captured.values
        let errText = String(decoding: err.suffix(500), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if process.terminationReason == .uncaughtSignal { return .signalled(process.terminationStatus, stderr: errText) }
        return .exited(status: process.terminationStatus, stdout: out.prefix(1 << 20), stderr: errText)
    }

    /// What the reader threads collected.
    private final class Captured: @unchecked Sendable {
        // Each field is written by one reader thread and read after both finished (DispatchGroup), under the lock.
        private let lock = NSLock()
        private var out = Data(), err = Data()
        func set(out data: Data) { lock.withLock { out = data } }
        func set(err data: Data) { lock.withLock { err = data } }
        var values: (Data, Data) { lock.withLock { (out, err) } }
    }
}
