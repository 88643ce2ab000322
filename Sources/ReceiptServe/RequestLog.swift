public import Foundation
public import ReceiptModel
import Synchronization
public import ForgeSupport
import StoreModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every request `forge serve` answered, as JSON Lines, for users' tests to assert on: in memory (the
/// control route `GET /_forge/log`, a ring of the last ``capacity`` entries) and, with `--log FILE`,
/// appended to a file line by line as it happens.
///
/// One line: `{"seq", "time", "endpoint", "method", "path", "httpStatus", "status", "fault", "bytes",
/// "password", "excludeOldTransactions", "receipt", "bundleId", "history"}` — `status` is the JSON status
/// sent (null when the answer was not JSON), `fault` the fault applied (null when none), `receipt` the
/// first 16 hex digits of the receipt's SHA-256, `password` `absent`, `present`, `matches` or `mismatch`
/// (never the secret itself). A Server API line (`/inApps/…`) has `api` "server", `environment`, `method`, `path`,
/// `httpStatus`, `endpoint` (`transactionInfo`, `transactionHistory`, …), `errorCode` (null on success), the
/// `transactionId` of the path and, for lists, `count`.
///
/// Nothing is lost silently: a line the file cannot take (a full disk) is left out whole — never half
/// written — and counted in ``dropped``; the first such failure is said once through `warn`. Entries the
/// ring pushes out are counted in ``evicted``; `seq` numbers every entry, so a gap shows where.
public final class RequestLog: Sendable {
    private struct State {
        /// The ring: `lines[oldest...]` then `lines[..<oldest]` once full.
        var lines: [String] = []
        var oldest = 0
        var next = 1
        var evicted = 0
        var dropped = 0
        var warned = false
    }
    private let state = Mutex(State())
    private let file: LogFile?
    /// Entries kept in memory.
    public let capacity: Int
    private let warn: @Sendable (String) -> Void

    /// - Parameter warn: told once, when the file first refuses a line (stderr in `forge serve`).
    public init(
        file: URL?, capacity: Int = ServerLimits.defaultLogCapacity, warn: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ServeError) {
        self.capacity = max(1, capacity)
        self.warn = warn
        self.file = try file.map { url throws(ServeError) in try LogFile(path: url.path) }
    }

    /// Adds one entry, numbered and timed here.
    public func record(_ entry: JSONObject, at time: Date = Date()) {
        state.withLock { state in
            var line: JSONObject = [("seq", .integer(Int64(state.next))), ("time", .string(ReceiptDate.format(time, style: .fractionalZulu)))]
            line += entry
            state.next += 1
            let text = JSONValue.object(line).serialized(pretty: false)
            if state.lines.count < capacity {
                state.lines.append(text)
            } else {
                state.lines[state.oldest] = text
                state.oldest = (state.oldest + 1) % capacity
                state.evicted += 1
            }
            // Under the lock, so the file's lines are in `seq` order.
            guard let file, let failure = file.append(Array((text + "\n").utf8)) else { return }
            state.dropped += 1
            if !state.warned {
                state.warned = true
                warn(
                    "cannot write the request log \(file.path) (\(failure)): entries are left out of the file whole, and counted (X-Forge-Log-Dropped of GET /_forge/log); said once"
                )
            }
        }
    }

    /// The entries in memory, oldest first, one JSON object per line.
    public var jsonLines: String {
        state.withLock { state in
            (state.lines[state.oldest...] + state.lines[..<state.oldest]).map { $0 + "\n" }.joined()
        }
    }

    /// Entries recorded since the start (`seq` of the last one).
    public var recorded: Int { state.withLock { $0.next - 1 } }
    /// Entries the `--log` file could not take.
    public var dropped: Int { state.withLock { $0.dropped } }
    /// Entries the in-memory ring pushed out to make room.
    public var evicted: Int { state.withLock { $0.evicted } }
    /// The `--log` file's path, if any.
    public var path: String? { file?.path }

    /// Empties the in-memory log (the file keeps everything; the counts stay).
    public func clear() {
        state.withLock {
            $0.lines.removeAll()
            $0.oldest = 0
        }
    }
}

/// The `--log` file, appended to with whole lines: a write the file cannot finish is taken back.
private final class LogFile: Sendable {
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

    /// Appends `bytes` whole, or not at all (a regular file is cut back to its size before); the reason when not.
    func append(_ bytes: [UInt8]) -> String? {
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
        guard failure != 0 else { return nil }
        if written > 0, let sizeBefore { _ = ftruncate(descriptor, sizeBefore) }
        return String(cString: strerror(failure))
    }
}
