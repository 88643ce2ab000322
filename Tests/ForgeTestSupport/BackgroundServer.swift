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

/// A server a test runs as a process (`forge serve`, `forge validate --listen`, a Python fake): started by
/// ``start(_:executable:environment:within:)``, ready once its first stdout line names its port (its own
/// signal, never a fixed delay), its stderr kept, and stopped with the test: ``stop()`` kills its process group and
/// waits for it to end; ``kill()`` (for a `defer`) only sends the signal. Nothing of it blocks a thread.
public final class BackgroundServer: Sendable {
    /// The port its first stdout line names.
    public let port: Int
    /// That first line (`forge serve: listening on http://127.0.0.1:PORT/…`).
    public let firstLine: String
    public var url: String { "http://127.0.0.1:\(port)" }

    private let pid: pid_t
    /// Ends with the process: its termination status, nil if it could not be watched.
    private let ended: Task<TerminationStatus?, Never>
    /// The same, readable without waiting.
    private let outcome: Outcome
    private let errors: Collected

    /// The most of its stderr kept.
    static let stderrLimit = 4 << 20

    private init(port: Int, firstLine: String, pid: pid_t, ended: Task<TerminationStatus?, Never>, outcome: Outcome, errors: Collected) {
        self.outcome = outcome
        self.port = port
        self.firstLine = firstLine
        self.pid = pid
        self.ended = ended
        self.errors = errors
    }

    public struct DidNotStart: Error, CustomStringConvertible {
        public let firstLine: String
        public let stderr: String
        public var description: String { "the server did not say where it listens: first line '\(firstLine)', stderr: \(stderr.suffix(4000))" }
    }

    /// Starts `executable` (forge by default) with `arguments` (in `directory`, else the test's own), and returns once its first stdout line names a port
    /// (`:PORT/` or `:PORT`); a server that ends first, or says nothing within `within`, is killed and
    /// ``DidNotStart`` thrown with what it said.
    public static func start(
        _ arguments: [String], executable: URL = Binaries.forge, environment: [String: String]? = nil, in directory: URL? = nil, within: Duration = .seconds(60)
    ) async throws -> BackgroundServer {
        var options = PlatformOptions()
        options.processGroupID = 0
        let variables = environment.map { Environment.custom(Dictionary(uniqueKeysWithValues: $0.map { (Environment.Key(stringLiteral: $0.key), $0.value) })) } ?? .inherit
        let configuration = Configuration(
            executable: .path(FilePath(executable.path)), arguments: Arguments(arguments), environment: variables, workingDirectory: directory.map { FilePath($0.path) },
            platformOptions: options)
        let errors = Collected(limit: stderrLimit)
        let outcome = Outcome()
        let (lines, announce) = AsyncStream.makeStream(of: Announcement.self)
        let ended = Task<TerminationStatus?, Never> {
            do {
                let result = try await Subprocess.run(configuration, input: .none, output: .sequence, error: .sequence) { execution in
                    let pid = execution.processIdentifier.value
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            do {
                                for try await buffer in execution.standardError {
                                    buffer.withUnsafeBytes { errors.append($0) }
                                }
                            } catch {}
                        }
                        group.addTask {
                            // The first line is the readiness signal; the rest is drained so the server never blocks on it.
                            var line = Data()
                            var said = false
                            do {
                                for try await buffer in execution.standardOutput where !said {
                                    buffer.withUnsafeBytes { line.append(contentsOf: $0) }
                                    if let end = line.firstIndex(of: 0x0A) {
                                        announce.yield(Announcement(pid: pid, line: String(decoding: line[..<end], as: UTF8.self)))
                                        said = true
                                    } else if line.count > 65_536 {
                                        break
                                    }
                                }
                            } catch {}
                            if !said { announce.yield(Announcement(pid: pid, line: nil)) }
                        }
                    }
                }
                outcome.end(result.terminationStatus)
                return result.terminationStatus
            } catch {
                announce.yield(Announcement(pid: 0, line: nil))
                outcome.end(nil)
                return nil
            }
        }
        // The first line, or nothing by the deadline.
        let first: Announcement? = await withTaskGroup(of: Announcement?.self) { group in
            group.addTask {
                var iterator = lines.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(for: within)
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        let said = first?.line ?? ""
        let match = said.firstMatch(of: /:(\d+)\//) ?? said.firstMatch(of: /:(\d+)/)
        guard let first, first.pid > 0, let match, let port = Int(match.1) else {
            if let pid = first?.pid, pid > 0 {
                signalProcess(-pid, SIGKILL)
                signalProcess(pid, SIGKILL)
            } else {
                ended.cancel()
            }
            _ = await ended.value
            throw DidNotStart(firstLine: said, stderr: errors.text)
        }
        return BackgroundServer(port: port, firstLine: said, pid: first.pid, ended: ended, outcome: outcome, errors: errors)
    }

    /// Sends `number` to the server (not its group: the test is the signal's sender, as a user's shell would be).
    public func signal(_ number: Int32) { signalProcess(pid, number) }

    /// Kills the server's whole group now and returns at once: for a `defer`, which cannot wait.
    public func kill() {
        signalProcess(-pid, SIGKILL)
        signalProcess(pid, SIGKILL)
    }

    /// Whether the server ended by `within` (after a signal, say), without killing it.
    public func waitForExit(within: Duration) async -> Bool {
        let deadline = ContinuousClock.now + within
        while !outcome.hasEnded {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// The exit status once it ended by itself (the signal's number when a signal ended it), nil while it runs.
    public func status() -> Int32? {
        switch outcome.status {
        case .exited(let code)?: return code
        case .signaled(let signal)?: return signal
        case nil: return nil
        }
    }

    /// Whether it ended by itself with an exit status (not a signal), once it has ended.
    public func exitedNormally() -> Bool {
        if case .exited? = outcome.status { return true }
        return false
    }

    /// What it has written on stderr so far.
    public var stderr: String { errors.text }

    /// Ends the server (SIGKILL to its group, if it is still running), waits until it has, and returns its stderr.
    @discardableResult
    public func stop() async -> String {
        kill()
        _ = await ended.value
        return stderr
    }
}

/// What a server said on its first stdout line, and its process id.
private struct Announcement: Sendable {
    let pid: pid_t
    let line: String?
}

/// How a process ended, once it has.
final class Outcome: Sendable {
    private let ended = Mutex<(done: Bool, status: TerminationStatus?)>((false, nil))

    func end(_ status: TerminationStatus?) { ended.withLock { $0 = (true, status) } }
    var hasEnded: Bool { ended.withLock { $0.done } }
    var status: TerminationStatus? { ended.withLock { $0.status } }
}

/// Bytes a stream delivered, kept up to a limit.
final class Collected: Sendable {
    private let bytes = Mutex(Data())
    let limit: Int

    init(limit: Int) { self.limit = limit }

    func append(_ more: UnsafeRawBufferPointer) {
        bytes.withLock { kept in
            if kept.count < limit { kept.append(contentsOf: more.prefix(limit - kept.count)) }
        }
    }

    var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }
}

/// kill(2), named apart from ``BackgroundServer/kill()``.
private func signalProcess(_ pid: pid_t, _ number: Int32) { _ = kill(pid, number) }
