#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Dispatch
import Synchronization
import _ForgeSupport
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
/// It is started by `ProcessSpawn`: with no signal blocked and every signal at its default action (whatever
/// the runner's thread blocks or ignores), as the leader of a new process group, so that `kill()` ends what
/// the harness spawned as well. A descendant that leaves the group (`setsid`, `setpgid`) is out of reach
/// and may outlive the run: the runner cannot tell it from any other process of the user's.
///
/// Blocking I/O runs on threads of its own, never on Swift's cooperative pool nor on Dispatch's global
/// queues (whose few threads also fire `Task.sleep`'s timers: a harness that never reads its stdin or
/// never closes its stdout would otherwise delay every timeout by the second Dispatch takes to notice).
/// stdin is written in order by one writer thread, stdout and stderr are drained by one thread each,
/// and one more waits for the exit.
final class ChildProcess: Sendable {
    /// The pid: the process group of the harness and its children.
    let pid: pid_t
    /// The last bytes the harness wrote to stderr, for the report of a crash or a timeout.
    let stderrTail = CapturedOutput(limit: HarnessLimits.stderrTailBytes, keep: .tail)
    private let writer: StdinWriter
    private let exit = ExitSignal()
    /// How the harness ended; set, under this lock, just before it is reaped. While it is nil the pid is
    /// the harness's (a zombie keeps it), so `kill()` holding the lock can never reach a recycled pid.
    private let ending = Mutex<Termination?>(nil)

    /// Starts `command` (looked up in `PATH`); `stdout` receives each chunk the harness writes, then
    /// `nil` at end of file, on a thread of its own.
    init(
        _ command: [String], environment: [String: String]? = nil,
        stdout: @escaping @Sendable (Data?) -> Void
    ) throws(HarnessStartError) {
        Self.signalDispositions
        guard let name = command.first else { throw HarnessStartError(description: "the target names no command") }
        let started = try HarnessProcesses.live.launch { () throws(HarnessStartError) -> ProcessSpawn.Started in
            try ProcessSpawn.start(["/usr/bin/env"] + command, environment: environment ?? ProcessInfo.processInfo.environment, name: name)
        }
        self.pid = started.pid
        self.writer = StdinWriter(started.stdin)
        awaitExit()
        let tail = stderrTail
        Self.drain(started.stdout, into: stdout)
        Self.drain(started.stderr) { chunk in
            if let chunk { tail.append(chunk) } else { tail.close() }
        }
    }

    var isRunning: Bool { !exit.hasExited }

    /// How the harness ended, or nil while it runs.
    var termination: Termination? { ending.withLock { $0 } }

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
        ending.withLock { ending in
            guard ending == nil else { return }
            killProcess(-pid)
            killProcess(pid)
        }
    }

    /// `stop` asked politely: close stdin, give the harness `grace` to exit, then kill its group.
    func terminate(grace: Duration) async {
        closeInput()
        if await !exited(within: grace) { kill() }
    }

    /// Waits briefly for an exiting harness's last stderr bytes, so that a report can quote them.
    func settle() async {
        _ = await exited(within: HarnessLimits.settleGrace)
        await stderrTail.closed(upTo: HarnessLimits.settleGrace)
    }

    /// How the harness ended, for a report: "exited with status 3", "killed by signal 11", or still running.
    var exitDescription: String {
        switch termination {
        case nil: "it was still running, and was killed"
        case .exited(let status): "exited with status \(status)"
        case .signalled(let signal): "killed by signal \(signal)"
        case .unknown: "it ended, how is unknown"
        }
    }

    /// The last lines of stderr as one line, or "" when the harness wrote nothing there.
    var stderrText: String {
        String(decoding: stderrTail.data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }.suffix(5).joined(separator: " | ")
    }

    /// Waits for the harness's exit on a thread of its own: first without reaping it, to take it off the
    /// live list and record how it ended while its pid still cannot be reused, then reaping it.
    private func awaitExit() {
        DetachedThread.start(name: "receipt-forge harness waiter", stackSize: 64 << 10) { [self] in
            var info = siginfo_t()
            while waitid(P_PID, id_t(bitPattern: pid), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
            HarnessProcesses.live.remove(pid)
            ending.withLock { ending in
                var status: Int32 = 0
                var reaped: pid_t
                repeat { reaped = waitpid(pid, &status, 0) } while reaped == -1 && errno == EINTR
                ending = reaped == pid ? Termination(waitStatus: status) : .unknown
            }
            exit.signal()
        }
    }

    /// Reads a pipe to its end on a thread of its own.
    private static func drain(_ handle: OwnedDescriptor, into sink: @escaping @Sendable (Data?) -> Void) {
        DetachedThread.start(name: "receipt-forge harness reader", stackSize: 256 << 10) {
            while let chunk = handle.readAvailable(), !chunk.isEmpty {
                sink(Data(chunk))
            }
            sink(nil)
            handle.close()
        }
    }

    /// The runner's own signal dispositions that harnesses depend on, set once for the whole process. A
    /// harness that exits without reading its stdin must give the runner EPIPE, not SIGPIPE's default of
    /// killing the runner with no report. And SIGCHLD must not be ignored (a parent may have left it so):
    /// the kernel would then reap harnesses itself, and their exit statuses would be lost. Harnesses start
    /// with every signal at its default, whatever is set here.
    private static let signalDispositions: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
        _ = signal(SIGCHLD, SIG_DFL)
    }()
}

/// How a harness process ended.
enum Termination: Sendable, Equatable {
    case exited(Int32)
    case signalled(Int32)
    /// Its status was lost: something else in this process reaped it.
    case unknown

    /// From a `waitpid` status (the macros of <sys/wait.h> do not reach Swift).
    init(waitStatus: Int32) {
        let signal = waitStatus & 0x7F
        self = signal == 0 ? .exited((waitStatus >> 8) & 0xFF) : .signalled(signal)
    }
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

    init(_ handle: OwnedDescriptor) {
        DetachedThread.start(name: "receipt-forge harness writer", stackSize: 256 << 10) { [self] in
            var open = true
            while true {
                available.wait()
                guard let item = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                switch item {
                case .data(let data, let failed):
                    if open {
                        open = handle.write(data)
                    }
                    if !open { failed() }
                case .close:
                    handle.close()
                    return
                }
            }
        }
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
            var pids: Set<pid_t> = []
            var closed = false
        }
        /// Held across a start, so that `killAll` cannot miss a harness in flight; every harness starts
        /// under it, so no two starts can hand each other's pipes to their children either.
        private let state = Mutex(State())

        func launch(_ start: () throws(HarnessStartError) -> ProcessSpawn.Started) throws(HarnessStartError) -> ProcessSpawn.Started {
            try state.withLock { state throws(HarnessStartError) in
                guard !state.closed else { throw HarnessStartError(description: "the run was interrupted") }
                let started = try start()
                state.pids.insert(started.pid)
                return started
            }
        }

        /// A harness exited and is about to be reaped: `killAll` must no longer signal its pid.
        func remove(_ pid: pid_t) { state.withLock { _ = $0.pids.remove(pid) } }

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
