public import Foundation
import ReceiptModel
import Synchronization
public import ForgeSupport
import StoreModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every request `forge serve` answered, as JSON Lines, for users' tests to assert on: in memory (the
/// control route `GET /_forge/log`, a ring of the last ``capacity`` entries, at most ``maximumBytes`` in all) and,
/// with `--log FILE`, appended to a file line by line as it happens.
///
/// One line: `{"seq", "time", "endpoint", "method", "path", "httpStatus", "status", "fault", "bytes",
/// "password", "excludeOldTransactions", "receipt", "bundleId", "history"}` — `status` is the JSON status
/// sent (null when the answer was not JSON), `fault` the fault applied (null when none), `receipt` the
/// first 16 hex digits of the receipt's SHA-256, `password` `absent`, `present`, `matches` or `mismatch`
/// (never the secret itself). A Server API line (`/inApps/…`) has `api` "server", `environment`, `method`, `path`,
/// `httpStatus`, `endpoint` (`transactionInfo`, `transactionHistory`, …), `errorCode` (null on success), the
/// `transactionId` of the path and, for lists, `count`.
///
/// An entry copies what clients sent (a path, an id, a body's fields), so every entry is cut here, whoever built
/// it (``bounded(_:)``): a string at ``maximumStringBytes`` with a note of its length, an array or object at
/// ``maximumMembers``, nesting at ``maximumDepth``, the line at ``maximumLineBytes``. A line is then at most
/// that long, and the ring at most ``maximumBytes`` whatever `--log-capacity` says.
///
/// Nothing is lost silently: a line the file cannot take (a full disk) is left out whole — never half
/// written — and counted in ``dropped``; the first such failure is said once through `warn`. Entries the
/// ring pushes out are counted in ``evicted``; `seq` numbers every entry, so a gap shows where.
public final class RequestLog: Sendable {
    private struct State {
        /// The ring, oldest first from `head`; the slots before `head` are spent and dropped in bulk.
        var lines: [String] = []
        var head = 0
        /// UTF-8 bytes of `lines[head...]`.
        var bytes = 0
        var next = 1
        var evicted = 0
        var dropped = 0
        var warned = false

        var count: Int { lines.count - head }

        mutating func evictOldest() {
            bytes -= lines[head].utf8.count
            lines[head] = ""
            head += 1
            evicted += 1
            if head >= 1024, head * 2 >= lines.count {
                lines.removeFirst(head)
                head = 0
            }
        }
    }
    private let state = Mutex(State())
    private let file: LogFile?
    /// Entries kept in memory.
    public let capacity: Int
    /// UTF-8 bytes of the entries kept in memory, at most; the oldest go first to stay under it.
    public let maximumBytes: Int
    private let warn: @Sendable (String) -> Void

    /// The longest string an entry keeps (a path, an id, a member of a body); longer ones are cut with a note.
    public static let maximumStringBytes = 1024
    /// Elements of an array, members of an object, an entry keeps; the rest are counted in a note.
    public static let maximumMembers = 64
    /// How deep an entry's values nest before the rest is a note.
    public static let maximumDepth = 4
    /// The longest line: past it, an entry keeps its short members and says how long it was.
    public static let maximumLineBytes = 16 << 10
    /// What the ring holds at most by default: ≈ 50,000 typical lines, ≈ 7,000 of the longest paths.
    public static let defaultMaximumBytes = 16 << 20

    /// - Parameter warn: told once, when the file first refuses a line (stderr in `forge serve`).
    public init(
        file: URL?, capacity: Int = ServerLimits.defaultLogCapacity, maximumBytes: Int = RequestLog.defaultMaximumBytes,
        warn: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ServeError) {
        self.capacity = max(1, capacity)
        self.maximumBytes = max(Self.maximumLineBytes, maximumBytes)
        self.warn = warn
        self.file = try file.map { url throws(ServeError) in try LogFile(path: url.path) }
    }

    /// Adds one entry, numbered and timed here, cut to the bounds above.
    public func record(_ entry: JSONObject, at time: Date = Date()) {
        let members = Self.bounded(entry)
        state.withLock { state in
            var line: JSONObject = [("seq", .integer(Int64(state.next))), ("time", .string(ReceiptDate.format(time, style: .fractionalZulu)))]
            line += members
            state.next += 1
            let text = Self.line(line)
            let size = text.utf8.count
            while state.count > 0, state.count >= capacity || state.bytes + size > maximumBytes { state.evictOldest() }
            state.lines.append(text)
            state.bytes += size
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

    /// `entry` cut to the bounds: each string, each array and object, the nesting.
    static func bounded(_ entry: JSONObject) -> JSONObject {
        bounded(members: entry, depth: 0)
    }

    private static func bounded(members: JSONObject, depth: Int) -> JSONObject {
        var kept = JSONObject(members.members.prefix(maximumMembers).map { ($0.key.cut(atUTF8: maximumStringBytes), bounded($0.value, depth: depth + 1)) })
        if members.count > maximumMembers { kept.append(("…", .string("\(members.count - maximumMembers) more members"))) }
        return kept
    }

    private static func bounded(_ value: JSONValue, depth: Int) -> JSONValue {
        switch value {
        case .null, .bool, .integer, .number: return value
        case .string(let text): return .string(text.cut(atUTF8: maximumStringBytes))
        case .array(let elements):
            guard depth < maximumDepth else { return .string("… (an array of \(elements.count))") }
            var kept = elements.prefix(maximumMembers).map { bounded($0, depth: depth + 1) }
            if elements.count > maximumMembers { kept.append(.string("… (\(elements.count - maximumMembers) more)")) }
            return .array(kept)
        case .object(let members):
            guard depth < maximumDepth else { return .string("… (an object of \(members.count) members)") }
            return .object(bounded(members: members, depth: depth))
        }
    }

    /// `line` as text: whole when it fits ``maximumLineBytes``, else its members of at most 256 bytes and a note.
    private static func line(_ line: JSONObject) -> String {
        let text = JSONValue.object(line).serialized(pretty: false)
        guard text.utf8.count > maximumLineBytes else { return text }
        var short: JSONObject = []
        for member in line where member.key.utf8.count + member.value.serialized(pretty: false).utf8.count <= 256 { short.append((member.key, member.value)) }
        short.append(("cut", .string("the entry was \(text.utf8.count) bytes; its members over 256 bytes are left out")))
        let shortened = JSONValue.object(short).serialized(pretty: false)
        // At most 64 members of 256 bytes, well inside the bound; checked all the same.
        return shortened.utf8.count <= maximumLineBytes ? shortened : JSONValue.object(JSONObject(line.members.prefix(2).map { ($0.key, $0.value) })).serialized(pretty: false)
    }

    /// The entries in memory, oldest first, one JSON object per line.
    public var jsonLines: String {
        state.withLock { state in state.lines[state.head...].map { $0 + "\n" }.joined() }
    }

    /// Entries recorded since the start (`seq` of the last one).
    public var recorded: Int { state.withLock { $0.next - 1 } }
    /// Entries the `--log` file could not take.
    public var dropped: Int { state.withLock { $0.dropped } }
    /// Entries the in-memory ring pushed out to make room.
    public var evicted: Int { state.withLock { $0.evicted } }
    /// Entries in memory now, and their UTF-8 bytes.
    public var held: (entries: Int, bytes: Int) { state.withLock { ($0.count, $0.bytes) } }
    /// The `--log` file's path, if any.
    public var path: String? { file?.path }

    /// Empties the in-memory log (the file keeps everything; the counts stay).
    public func clear() {
        state.withLock {
            $0.lines.removeAll()
            $0.head = 0
            $0.bytes = 0
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
