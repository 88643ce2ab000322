import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGKILL to a process (`pid`) or a process group (`-pid`), through the C library on Linux and macOS alike;
/// a free function, because inside the classes below `kill` names their own methods.
private func killProcess(_ pid: pid_t) {
    _ = kill(pid, SIGKILL)
}

/// A harness process under the runner's control, for the `exec:`, `exit:` and `stdio:` transports.
///
/// Blocking I/O runs on threads of its own, never on Swift's cooperative pool nor on Dispatch's global
/// queues (whose few threads also fire `Task.sleep`'s timers: a harness that never reads its stdin or
/// never closes its stdout would otherwise delay every timeout by the second Dispatch takes to notice).
/// stdin is written in order by one writer thread, stdout and stderr are drained by one thread each,
/// and the exit is awaited through the termination handler. Foundation starts the child as the
/// leader of a new process group, so `kill()` ends whatever the harness spawned as well.
final class ChildProcess: Sendable {
    let process: Process
    /// The last bytes the harness wrote to stderr, for the report of a crash or a timeout.
    let stderrTail = CapturedOutput(limit: 2048, keep: .tail)
    private let writer: StdinWriter
    private let exit = ExitSignal()

    /// Starts `command` (looked up in `PATH`); `stdout` receives each chunk the harness writes, then
    /// `nil` at end of file, on a Dispatch thread.
    init(
        _ command: [String], environment: [String: String]? = nil,
        stdout: @escaping @Sendable (Data?) -> Void
    ) throws(HarnessStartError) {
        Self.ignoreBrokenPipes
        guard !command.isEmpty else { throw HarnessStartError(description: "the target names no command") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        if let environment { process.environment = environment }
        let stdinPipe = Pipe(), stdoutPipe = Pipe(), stderrPipe = Pipe()
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        let exit = self.exit
        process.terminationHandler = { process in
            HarnessProcesses.live.remove(process.processIdentifier)
            exit.signal()
        }
        try HarnessProcesses.live.launch(process, command[0])
        self.process = process
        self.writer = StdinWriter(stdinPipe.fileHandleForWriting)
        let tail = stderrTail
        Self.drain(stdoutPipe.fileHandleForReading, into: stdout)
        Self.drain(stderrPipe.fileHandleForReading) { chunk in
            if let chunk { tail.append(chunk) } else { tail.close() }
        }
    }

    /// The pid: the process group of the harness and its children.
    var pid: Int32 { process.processIdentifier }

    var isRunning: Bool { !exit.hasExited }

    /// Queues `data` for the harness's stdin; `failed` runs if the harness no longer reads it.
    func write(_ data: Data, failed: @escaping @Sendable () -> Void = {}) {
        writer.enqueue(.data(data, failed: failed))
    }

    /// Closes stdin once everything queued before has been written (or refused).
    func closeInput() {
        writer.enqueue(.close)
    }

    /// Waits until the process exits or `limit` passes; true if it exited.
    func exited(within limit: Duration) async -> Bool {
        if exit.hasExited { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.exit.wait() }
            group.addTask {
                try? await Task.sleep(for: limit); return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// SIGKILL to the harness's whole process group (and to the harness itself, should it have left it).
    func kill() {
        guard !exit.hasExited else { return }
        killProcess(-pid)
        killProcess(pid)
    }

    /// `stop` asked politely: close stdin, give the harness `grace` to exit, then kill its group.
    func terminate(grace: Duration) async {
        closeInput()
        if await !exited(within: grace) { kill() }
    }

    /// Waits briefly for an exiting harness's last stderr bytes, so that a report can quote them.
    func settle() async {
        _ = await exited(within: .milliseconds(200))
        await stderrTail.closed(upTo: .milliseconds(200))
    }

    /// How the harness ended, for a report: "exited with status 3", "killed by signal 11", or still running.
    var exitDescription: String {
        guard exit.hasExited else { return "it was still running, and was killed" }
        return process.terminationReason == .uncaughtSignal
            ? "killed by signal \(process.terminationStatus)"
            : "exited with status \(process.terminationStatus)"
    }

    /// The last lines of stderr as one line, or "" when the harness wrote nothing there.
    var stderrText: String {
        String(decoding: stderrTail.data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.suffix(5).joined(separator: " | ")
    }

    /// Reads a pipe to its end on a thread of its own.
    private static func drain(_ handle: FileHandle, into sink: @escaping @Sendable (Data?) -> Void) {
        let thread = Thread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                sink(chunk)
            }
            sink(nil)
            try? handle.close()
        }
        thread.name = "receipt-forge harness reader"
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// A harness that exits without reading its stdin must give the runner EPIPE, not SIGPIPE's
    /// default of killing the runner with no report. Set once, for the whole process.
    private static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()
}

/// Writes a harness's stdin in order on a thread of its own, which may block as long as the harness
/// does not read: the thread ends when the pipe is closed, by `close` or by the harness dying (EPIPE).
private final class StdinWriter: Sendable {
    enum Item: Sendable {
        case data(Data, failed: @Sendable () -> Void)
        case close
    }

    private let queue = Mutex<[Item]>([])
    /// Counts the items queued: the writer thread sleeps on it while there is nothing to write.
    private let available = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            var open = true
            while true {
                available.wait()
                guard let item = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                switch item {
                case .data(let data, let failed):
                    if open {
                        do { try handle.write(contentsOf: data) } catch { open = false }
                    }
                    if !open { failed() }
                case .close:
                    try? handle.close()
                    return
                }
            }
        }
        thread.name = "receipt-forge harness writer"
        thread.stackSize = 256 << 10
        thread.start()
    }

    func enqueue(_ item: Item) {
        queue.withLock { $0.append(item) }
        available.signal()
    }
}

/// The harness processes the runner has started and not yet seen exit, so that an interrupted run can
/// end them: each leads its own process group, which a terminal's Ctrl-C does not reach.
public enum HarnessProcesses {
    /// SIGKILL to the process group of every harness still running, and no harness starts after it.
    /// Safe to call from any thread; a harness being started meanwhile is waited for, then killed too.
    public static func killAll() { live.killAll() }

    static let live = LiveGroups()

    final class LiveGroups: Sendable {
        private struct State {
            var pids: Set<Int32> = []
            var closed = false
        }
        /// Held across a launch, so that `killAll` cannot miss a harness in flight.
        private let state = Mutex(State())

        func launch(_ process: Process, _ name: String) throws(HarnessStartError) {
            try state.withLock { state throws(HarnessStartError) in
                guard !state.closed else { throw HarnessStartError(description: "the run was interrupted") }
                do { try process.run() } catch {
                    throw HarnessStartError(description: "cannot start \(name): \(error.localizedDescription)")
                }
                state.pids.insert(process.processIdentifier)
            }
        }

        func remove(_ pid: Int32) { state.withLock { _ = $0.pids.remove(pid) } }

        func killAll() {
            state.withLock { state in
                state.closed = true
                for pid in state.pids {
                    killProcess(-pid)
                    killProcess(pid)
                }
            }
        }
    }
}

/// Why a harness process did not start.
struct HarnessStartError: Error, CustomStringConvertible {
    let description: String
}

/// What a harness wrote to one stream, bounded: a harness printing garbage forever costs the runner
/// `limit` bytes, not its memory.
final class CapturedOutput: Sendable {
    enum Keep { case head, tail }
    private struct State {
        var bytes = Data()
        var dropped = 0
        var isClosed = false
    }
    private let state = Mutex(State())
    let limit: Int
    let keep: Keep

    init(limit: Int, keep: Keep) {
        self.limit = limit
        self.keep = keep
    }

    func append(_ chunk: Data) {
        state.withLock { state in
            switch keep {
            case .head:
                let room = max(0, limit - state.bytes.count)
                state.bytes.append(chunk.prefix(room))
                state.dropped += chunk.count - min(room, chunk.count)
            case .tail:
                state.bytes.append(chunk)
                if state.bytes.count > limit {
                    state.dropped += state.bytes.count - limit
                    state.bytes = Data(state.bytes.suffix(limit))
                }
            }
        }
    }

    /// The stream ended.
    func close() { state.withLock { $0.isClosed = true } }

    /// Waits until the stream ended, or `limit` passed.
    func closed(upTo limit: Duration) async {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while !state.withLock({ $0.isClosed }), clock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
    }

    var data: Data { state.withLock { $0.bytes } }
    /// Bytes beyond the limit that were not kept.
    var droppedCount: Int { state.withLock { $0.dropped } }
}

/// A process exit that any number of tasks can await, each giving up when cancelled.
private final class ExitSignal: Sendable {
    private struct State {
        var done = false
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextID: UInt64 = 0
    }
    private let state = Mutex(State())

    var hasExited: Bool { state.withLock { $0.done } }

    func signal() {
        let resumed = state.withLock { state in
            state.done = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in resumed { waiter.resume(returning: true) }
    }

    /// True once the process exited; false if the waiting task was cancelled first.
    func wait() async -> Bool {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow: Bool? = state.withLock { state in
                    if state.done { return true }
                    if Task.isCancelled { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: false)
        }
    }
}

/// Splits a target's command the way a POSIX shell splits words: blanks separate, single quotes keep
/// everything, double quotes keep everything but `\"` and `\\`, a backslash escapes the next character.
/// No expansion happens (`$HOME`, `*` stay as written): the command is run directly, not by a shell.
public enum CommandWords {
    public static func split(_ text: String) throws(ConformanceError) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            switch (quote, character) {
            case ("'", "'"), ("\"", "\""):
                quote = nil
            case ("'", _):
                word.append(character)
            case ("\"", "\\"):
                guard let next = iterator.next() else { throw ConformanceError(.invalidCommand, "a backslash ends the command: \(text)") }
                if next != "\"" && next != "\\" { word.append("\\") }
                word.append(next)
            case ("\"", _):
                word.append(character)
            case (nil, "'"), (nil, "\""):
                quote = character
                inWord = true
            case (nil, "\\"):
                guard let next = iterator.next() else { throw ConformanceError(.invalidCommand, "a backslash ends the command: \(text)") }
                word.append(next)
                inWord = true
            case (nil, _) where character == " " || character == "\t" || character == "\n":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            default:
                word.append(character)
                inWord = true
            }
        }
        if let quote { throw ConformanceError(.invalidCommand, "unterminated \(quote) in the command: \(text)") }
        if inWord { words.append(word) }
        guard !words.isEmpty else { throw ConformanceError(.invalidCommand, "the target names no command") }
        return words
    }
}
