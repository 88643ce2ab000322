import Dispatch
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes the `--log` file for ``RequestLog`` on a thread of its own — not an event loop, not the cooperative pool —
/// so that a slow or full disk holds no request: ``enqueue(_:)`` only queues a line, in `seq` order, and the thread
/// appends what is queued, each line whole or not at all. The queue is bounded in bytes (the lines queued and those
/// being written): a line past it, like a line the file refuses, is dropped whole and counted.
final class RequestLogWriter: Sendable {
    private struct Queue {
        var lines: [RequestLog.Line] = []
        /// UTF-8 bytes (newlines included) of `lines` and of the lines the thread is writing.
        var bytes = 0
        /// Lines the thread took and has not yet written or dropped.
        var writing = 0
        /// The highest `seq` given to ``enqueue(_:)``, queued or dropped.
        var latest = 0
        /// Every line numbered up to it is in the file or counted in `dropped`.
        var written = 0
        var dropped = 0
        /// The first loss, until it is said (once, outside the lock).
        var unsaid: String?
        var warned = false
        /// The thread waits for ``wake``.
        var sleeping = false
        /// ``stop()`` or ``finish(within:)`` was called: the thread ends once the queue is empty.
        var stopping = false
        /// The thread ended, or ``finish(within:)`` gave up on it: later lines are dropped.
        var ended = false
        /// ``finish(within:)`` calls waiting for the end.
        var waiting: [CheckedContinuation<Void, Never>] = []

        /// Counts `count` lines dropped; whether they are the first (then `note` is to be said).
        @discardableResult
        mutating func lose(_ count: Int, _ note: @autoclosure () -> String) -> Bool {
            dropped += count
            guard count > 0, !warned else { return false }
            warned = true
            unsaid = note()
            return true
        }

        /// Ends the writer: returns the waiters to resume (outside the lock).
        mutating func end() -> [CheckedContinuation<Void, Never>] {
            ended = true
            written = latest
            defer { waiting = [] }
            return waiting
        }
    }

    private let queue = Mutex(Queue())
    /// Signalled when a line comes for a sleeping thread, or the writer stops.
    private let wake = DispatchSemaphore(value: 0)
    private let file: LogFile
    let maximumBytes: Int
    private let warn: @Sendable (String) -> Void

    /// Bytes given to one `write(2)`: lines are gathered up to it (a longer line alone), so a busy log costs one
    /// system call per batch, not per line.
    static let batchBytes = 64 << 10
    /// How long the thread lets lines gather after a write before it looks again: a steady stream of requests is
    /// written a batch at a time, and a request signals the thread only when it was idle — not once a line.
    static let gatheringMicroseconds: UInt32 = 1_000

    var path: String { file.path }

    init(file: LogFile, maximumBytes: Int, warn: @escaping @Sendable (String) -> Void) {
        self.file = file
        self.maximumBytes = maximumBytes
        self.warn = warn
        // The thread holds the writer until it ends; the log holds it too and stops it in its deinit.
        DetachedThread.start(name: "forge-request-log", stackSize: 256 << 10) { [self] in run() }
    }

    /// How far the file is complete (every line numbered up to `written` is in it or dropped), and the lines dropped.
    var progress: (written: Int, dropped: Int) { queue.withLock { ($0.written, $0.dropped) } }

    /// Queues `line` for the file, or drops it when the queue is full: constant time, no I/O. The caller gives lines
    /// in `seq` order.
    func enqueue(_ line: RequestLog.Line) {
        let size = line.size + 1
        let (wakeUp, lost) = queue.withLock { queue -> (wake: Bool, lost: Bool) in
            queue.latest = line.seq
            if queue.ended {
                queue.written = line.seq
                let first = queue.lose(
                    1, "the request log \(self.path) is closed (the server is stopping): entries after it are counted (X-Forge-Log-Dropped of GET /_forge/log); said once")
                return (false, first)
            }
            guard queue.bytes + size <= maximumBytes else {
                let waiting = queue.bytes
                let first = queue.lose(
                    1,
                    "the request log \(self.path) is written too slowly (\(waiting) bytes wait for the disk): entries are left out of the file whole, and counted (X-Forge-Log-Dropped of GET /_forge/log); said once"
                )
                return (false, first)
            }
            queue.lines.append(line)
            queue.bytes += size
            guard queue.sleeping else { return (false, false) }
            queue.sleeping = false
            return (true, false)
        }
        if wakeUp { wake.signal() }
        // Said off this thread (an event loop), and now: the writer is stuck behind the disk.
        if lost { DispatchQueue.global().async { self.say() } }
    }

    /// Ends the thread once it has written what is queued; returns at once.
    func stop() {
        let wakeUp = queue.withLock { queue -> Bool in
            queue.stopping = true
            defer { queue.sleeping = false }
            return queue.sleeping
        }
        if wakeUp { wake.signal() }
    }

    /// Stops the writer and waits until the thread has written what is queued, for `limit` at most: after it, the
    /// lines not yet written are counted as dropped (a write still blocked may yet finish) and later lines dropped.
    func finish(within limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let ended = self.queue.withLock { queue -> Bool in
                        guard !queue.ended else { return true }
                        queue.waiting.append(continuation)
                        return false
                    }
                    if ended { continuation.resume() }
                }
            }
            group.addTask {
                // Cut short once the thread has ended (then this gives up on nothing), or when the caller is cancelled.
                try? await Task.sleep(for: limit)
                self.abandon(after: limit)
            }
            stop()
            _ = await group.next()
            group.cancelAll()
        }
        say()
    }

    /// The deadline of ``finish(within:)`` passed: what is not written is dropped, and its waiters resumed.
    private func abandon(after limit: Duration) {
        let waiting = queue.withLock { queue -> [CheckedContinuation<Void, Never>] in
            guard !queue.ended else { return [] }
            let unwritten = queue.lines.count + queue.writing
            queue.lose(
                unwritten,
                "the request log \(self.path) was not written within \(limit): \(unwritten) entries are left out, and counted (X-Forge-Log-Dropped of GET /_forge/log); said once")
            queue.lines = []
            queue.bytes = 0
            queue.writing = 0
            return queue.end()
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Says the first loss, once, outside the lock.
    private func say() {
        if let note = queue.withLock({ queue in queue.unsaid.take() }) { warn(note) }
    }

    private enum Step {
        case write([RequestLog.Line], upTo: Int)
        case sleep
        case end([CheckedContinuation<Void, Never>])
    }

    private func run() {
        while true {
            let step = queue.withLock { queue -> Step in
                if queue.ended { return .end(queue.end()) }
                if !queue.lines.isEmpty {
                    var lines: [RequestLog.Line] = []
                    swap(&lines, &queue.lines)
                    queue.writing = lines.count
                    return .write(lines, upTo: queue.latest)
                }
                // Nothing queued: every line given so far is written or dropped.
                queue.written = queue.latest
                if queue.stopping { return .end(queue.end()) }
                queue.sleeping = true
                return .sleep
            }
            switch step {
            case .sleep: wake.wait()
            case .end(let waiting):
                for continuation in waiting { continuation.resume() }
                say()
                return
            case .write(let lines, let upTo):
                write(lines, upTo: upTo)
                usleep(Self.gatheringMicroseconds)
            }
            say()
        }
    }

    /// Appends `lines` in batches of ``batchBytes``; after each, the lines written and dropped are counted.
    /// `upTo` is the `seq` up to which the file is complete once the last is written.
    private func write(_ lines: [RequestLog.Line], upTo: Int) {
        var start = 0
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.batchBytes)
        while start < lines.count {
            var end = start
            bytes.removeAll(keepingCapacity: true)
            // Where each line of the batch ends in `bytes`.
            var ends: [Int] = []
            while end < lines.count, ends.isEmpty || bytes.count + lines[end].size + 1 <= Self.batchBytes {
                lines[end].appendLine(to: &bytes)
                ends.append(bytes.count)
                end += 1
            }
            var lost = 0
            var failure: String?
            if case .failed(let reason, let kept) = file.append(bytes) {
                failure = reason
                // The lines the file kept whole stay (a device cannot be cut back); one it kept half of is lost; the
                // others are tried one by one, so a disk with room for some takes them.
                var offset = ends.prefix { $0 <= kept }.count
                let keptOfNext = kept - (offset == 0 ? 0 : ends[offset - 1])
                if keptOfNext > 0, offset < ends.count {
                    lost += 1
                    offset += 1
                }
                for index in (start + offset)..<end {
                    var line: [UInt8] = []
                    lines[index].appendLine(to: &line)
                    if case .failed = file.append(line) { lost += 1 }
                }
            }
            let completeTo = end == lines.count ? upTo : lines[end - 1].seq
            let taken = bytes.count
            let done = queue.withLock { queue -> Bool in
                // Given up on by `finish`: these lines are counted already.
                guard !queue.ended else { return true }
                queue.bytes -= taken
                queue.writing -= end - start
                queue.written = completeTo
                if let failure {
                    queue.lose(
                        lost,
                        "cannot write the request log \(self.path) (\(failure)): entries are left out of the file whole, and counted (X-Forge-Log-Dropped of GET /_forge/log); said once"
                    )
                }
                return false
            }
            if done { return }
            start = end
        }
    }
}

/// The `--log` file, appended to with whole lines: a write the file cannot finish is taken back.
final class LogFile: Sendable {
    enum Outcome {
        case written
        /// Why not, and the bytes that stayed in the file all the same (0 for a regular file, cut back).
        case failed(String, kept: Int)
    }

    let path: String
    private let descriptor: Int32

    init(path: String) throws(ServeError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw ServeError(.logFailed, "cannot open the request log \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// Appends `bytes` whole, or not at all (a regular file is cut back to its size before).
    func append(_ bytes: [UInt8]) -> Outcome {
        var status = stat()
        let sizeBefore = fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG ? status.st_size : nil
        var written = 0
        var failure: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            while written < buffer.count {
                let count = write(descriptor, base + written, buffer.count - written)
                if count > 0 {
                    written += count
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    failure = count == 0 ? ENOSPC : errno
                    return
                }
            }
        }
        guard failure != 0 else { return .written }
        if written > 0, let sizeBefore, ftruncate(descriptor, sizeBefore) == 0 { written = 0 }
        return .failed(String(cString: strerror(failure)), kept: written)
    }
}
