public import Foundation
import Subprocess
import Synchronization

#if canImport(System)
    import System
#else
    import SystemPackage
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a program a test ran ended, and what it wrote.
public struct RunResult: Sendable {
    /// The exit status; the signal's number when a signal ended it.
    public let status: Int32
    public let stdout: Data
    public let stderr: String
    /// Whether the program ended by itself with an exit status: not by a signal, nor killed at its deadline.
    public let exited: Bool
    public var text: String { String(decoding: stdout, as: UTF8.self) }

    public init(status: Int32, stdout: Data, stderr: String, exited: Bool) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        self.exited = exited
    }
}

/// A program that did not end by its deadline (and was killed), when the test did not expect that.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public let command: String
    public let deadline: Duration
    public var description: String { "\(command) did not end within \(deadline) and was killed" }
}

/// How long a program may run when the test names no deadline: a hang fails the test well inside its time limit.
public let defaultDeadline: Duration = .seconds(90)

/// The most output kept of each stream: a runaway program fails the test instead of filling memory.
let outputLimit = 256 << 20

/// Runs `executable` to its end, asynchronously: no thread waits while it runs (swift-subprocess watches it), so
/// tests never starve the cooperative pool. It starts with an empty signal mask and default dispositions, leads a
/// process group of its own, and gets `stdin` (or nothing: end of file) and the `environment` given (the test's own
/// when nil).
///
/// With `killAfter`, the whole group is killed at that deadline and the result says `exited: false` (a test of
/// something that must not end by itself); without it, a program still running at `deadline` is killed and
/// ``DeadlineExceeded`` thrown.
@discardableResult
public func run(
    _ executable: URL, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil, environment: [String: String]? = nil,
    killAfter: Duration? = nil, deadline: Duration = defaultDeadline
) async throws -> RunResult {
    let deadline = killAfter ?? deadline
    let started = Mutex<pid_t?>(nil)
    let fired = Mutex(false)
    // The watchdog kills the program's whole group at the deadline; it is cancelled once the program has ended.
    let watchdog = Task {
        try await Task.sleep(for: deadline)
        guard let pid = started.withLock({ $0 }) else { return }
        fired.withLock { $0 = true }
        _ = kill(-pid, SIGKILL)
        _ = kill(pid, SIGKILL)
    }
    defer { watchdog.cancel() }
    var options = PlatformOptions()
    options.processGroupID = 0
    let variables = environment.map { Environment.custom(Dictionary(uniqueKeysWithValues: $0.map { (Environment.Key(stringLiteral: $0.key), $0.value) })) } ?? .inherit
    let configuration = Configuration(
        executable: .path(FilePath(executable.path)), arguments: Arguments(arguments), environment: variables, workingDirectory: directory.map { FilePath($0.path) },
        platformOptions: options)
    let note: @Sendable (pid_t) -> Void = { pid in started.withLock { $0 = pid } }
    let outcome: (TerminationStatus, Data, Data)
    if let stdin {
        let result = try await Subprocess.run(configuration, input: .data(stdin), output: .data(limit: outputLimit), error: .data(limit: outputLimit)) {
            note($0.processIdentifier.value)
        }
        outcome = (result.terminationStatus, result.standardOutput, result.standardError)
    } else {
        let result = try await Subprocess.run(configuration, input: .none, output: .data(limit: outputLimit), error: .data(limit: outputLimit)) {
            note($0.processIdentifier.value)
        }
        outcome = (result.terminationStatus, result.standardOutput, result.standardError)
    }
    let killed = fired.withLock { $0 }
    if killed, killAfter == nil {
        throw DeadlineExceeded(command: ([executable.lastPathComponent] + arguments).joined(separator: " "), deadline: deadline)
    }
    let stderr = String(decoding: outcome.2, as: UTF8.self)
    switch outcome.0 {
    case .exited(let code): return RunResult(status: code, stdout: outcome.1, stderr: stderr, exited: !killed)
    case .signaled(let signal): return RunResult(status: signal, stdout: outcome.1, stderr: stderr, exited: false)
    }
}

/// The built `forge` with these arguments (``run(_:_:stdin:in:environment:killAfter:)``).
@discardableResult
public func forge(_ arguments: String..., stdin: Data? = nil, in directory: URL? = nil) async throws -> RunResult {
    try await run(Binaries.forge, arguments, stdin: stdin, in: directory)
}

/// The built `forge` with these arguments.
@discardableResult
public func forge(arguments: [String], stdin: Data? = nil, in directory: URL? = nil, environment: [String: String]? = nil) async throws -> RunResult {
    try await run(Binaries.forge, arguments, stdin: stdin, in: directory, environment: environment)
}

/// `openssl` with these arguments (``Oracle/openssl``).
@discardableResult
public func openssl(_ arguments: [String], stdin: Data? = nil) async throws -> RunResult {
    try await run(try Oracle.openssl.required(), arguments, stdin: stdin)
}

/// Parses a program's standard output as a JSON object.
public func json(_ result: RunResult) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any] else {
        throw NotJSON(output: result.text)
    }
    return object
}

public struct NotJSON: Error, CustomStringConvertible {
    public let output: String
    public var description: String { "stdout is not a JSON object: \(output.prefix(2000))" }
}
