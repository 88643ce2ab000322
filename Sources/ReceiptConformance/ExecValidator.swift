#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptCorpus
import _ForgeSupport
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `exec:` transports: one process per vector, so a crash or hang costs one vector, not the run.
///
/// - `.protocol`: the `validate` message (JSON) on stdin, one reply (JSON) on stdout.
/// - `.exitCode`: the receipt bytes on stdin and the context in environment variables (`RF_ID`,
///   `RF_NOW`, `RF_TRUST_ANCHOR` — a DER file path —, `RF_BUNDLE_ID`, `RF_APP_VERSION`, `RF_DEVICE_ID`,
///   `RF_ENVIRONMENT`, `RF_ARTIFACT` — receipt or jws-* —, `RF_APP_APPLE_ID`, `RF_OCSP_RESPONDER` — an `online` vector's responder); exit 0 accepts, 1 rejects (an optional first stdout line is the error class),
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

    public init(
        command: [String], mode: Mode, timeout: Duration = .seconds(5), features: [String], granularity: HarnessHello.Granularity,
        anchorFiles: [String: String], checker: ProtocolViolationCheck? = nil
    ) {
        self.checker = checker
        self.command = command
        self.mode = mode
        self.timeout = timeout
        self.features = features
        self.granularity = granularity
        self.anchorFiles = anchorFiles
    }

    public func hello() async -> HarnessHello {
        HarnessHello(
            implementation: command.joined(separator: " "), features: features, errorGranularity: granularity,
            maxConcurrency: ProcessInfo.processInfo.activeProcessorCount)
    }

    public func validate(_ request: ValidateRequest) async -> HarnessReply {
        let input: Data
        var environment = ProcessInfo.processInfo.environment
        switch mode {
        case .protocol:
            let json = request.jsonLine
            input = json + Data("\n".utf8)
        case .exitCode:
            input = Data(base64Encoded: request.input.data) ?? Data()
            for (key, value) in Self.exitCodeEnvironment(id: request.id, context: request.context, anchorFiles: anchorFiles) {
                environment[key] = value
            }
        }
        let outcome = await Self.runProcess(command, input: input, environment: environment, timeout: timeout)
        switch outcome {
        case .failedToStart(let reason):
            return .errored(seq: request.seq, message: "cannot start \(command.first ?? ""): \(reason)")
        case .timedOut(let stderr):
            return .failed(seq: request.seq, failure: .timeout, message: "no answer within \(timeout); the process group was killed\(stderr.isEmpty ? "" : "; stderr: \(stderr)")")
        case .signalled(let signal, let stderr):
            return .failed(seq: request.seq, failure: .crash, message: "killed by signal \(signal)\(stderr.isEmpty ? "" : "; stderr: \(stderr)")")
        case .lost(let stderr):
            return .errored(seq: request.seq, message: "the harness ended, but its exit status was lost\(stderr.isEmpty ? "" : "; stderr: \(stderr)")")
        case .exited(let status, let stdout, let overflowed, let stderr):
            switch mode {
            case .protocol:
                let first = stdout.split(separator: UInt8(ascii: "\n"), maxSplits: 1).first ?? stdout[stdout.endIndex...]
                // The reply is the first line: one that ran past the bytes kept is a flood, not a reply.
                if overflowed, first.endIndex == stdout.endIndex {
                    return .errored(seq: request.seq, message: HarnessLimits.overlong("a reply"))
                }
                let line = Data(first)
                if let violation = checker?.check(line) { return .errored(seq: request.seq, message: violation) }
                guard let reply = try? HarnessReply(json: line) else {
                    return .errored(
                        seq: request.seq,
                        message:
                            "not a protocol reply (exit \(status)): \(String(decoding: stdout.prefix(HarnessLimits.quotedPrefix), as: UTF8.self))\(stderr.isEmpty ? "" : "; stderr: \(stderr)")"
                    )
                }
                return reply
            case .exitCode:
                let firstLine = String(decoding: stdout.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self).trimmingWhitespace()
                switch status {
                case 0: return .result(seq: request.seq, verdict: .accept, errorClass: nil, message: nil, decoded: nil)
                case 1: return .result(seq: request.seq, verdict: .reject, errorClass: firstLine.isEmpty ? nil : firstLine, message: stderr.isEmpty ? nil : stderr, decoded: nil)
                default: return .errored(seq: request.seq, message: "exit status \(status)\(stderr.isEmpty ? "" : "; stderr: \(stderr)")")
                }
            }
        }
    }

    /// The `RF_*` variables of the exit-code mode, in this order, every one set (empty when the context has no value):
    /// what the harness sees, and what a reproduce command writes.
    static func exitCodeEnvironment(id: String, context: Context, anchorFiles: [String: String]) -> [(String, String)] {
        [
            ("RF_ID", id), ("RF_NOW", context.now), ("RF_TRUST_ANCHOR", anchorFiles[context.trustAnchor] ?? ""),
            ("RF_BUNDLE_ID", context.bundleId ?? ""), ("RF_APP_VERSION", context.appVersion ?? ""), ("RF_DEVICE_ID", context.deviceId ?? ""),
            ("RF_ENVIRONMENT", context.wireEnvironment ?? ""), ("RF_ARTIFACT", context.artifactKind.rawValue),
            ("RF_APP_APPLE_ID", context.appAppleId.map(String.init) ?? ""), ("RF_OCSP_RESPONDER", context.ocsp?.responder ?? ""),
        ]
    }

    enum ProcessOutcome {
        /// `overflowed`: stdout went on past the `HarnessLimits.maximumMessageBytes` kept.
        case exited(status: Int32, stdout: Data, overflowed: Bool, stderr: String)
        case signalled(Int32, stderr: String)
        case lost(stderr: String)
        case timedOut(stderr: String)
        case failedToStart(String)
    }

    /// Runs a command to completion or until `timeout`, then kills its whole process group. The first
    /// `HarnessLimits.maximumMessageBytes` of stdout are kept (a reply is one line), and the tail of stderr
    /// for the report.
    static func runProcess(_ command: [String], input: Data, environment: [String: String], timeout: Duration) async -> ProcessOutcome {
        let stdout = CapturedOutput(limit: HarnessLimits.maximumMessageBytes, keep: .head)
        let child: ChildProcess
        do {
            child = try ChildProcess(command, environment: environment) { chunk in
                if let chunk { stdout.append(chunk) } else { stdout.close() }
            }
        } catch {
            return .failedToStart(error.description)
        }
        child.write(input)
        child.closeInput()
        guard await child.exited(within: timeout) else {
            child.kill()
            await child.settle()
            return .timedOut(stderr: child.stderrText)
        }
        // A grandchild that left the process group may hold the pipes open: wait for their end, briefly.
        await stdout.closed(upTo: HarnessLimits.pipeDrainGrace)
        await child.settle()
        switch child.termination {
        case .signalled(let signal): return .signalled(signal, stderr: child.stderrText)
        case .exited(let status): return .exited(status: status, stdout: stdout.data, overflowed: stdout.droppedCount > 0, stderr: child.stderrText)
        case .unknown, nil: return .lost(stderr: child.stderrText)
        }
    }
}
