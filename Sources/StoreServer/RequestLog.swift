#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
import ReceiptModel
import Synchronization
package import _ForgeSupport
import StoreModel

/// Every request `forge serve` answered, as JSON Lines, for users' tests to assert on: in memory (the
/// control route `GET /_forge/log`, a ring of the last ``capacity`` entries, at most ``maximumBytes`` in all) and,
/// with `--log FILE`, appended to a file line by line, in `seq` order, by a writer thread of its own
/// (``RequestLogWriter``): `record` runs on whatever thread answered the request — in `forge-http` an event loop —
/// so it only numbers the line and queues it, and a slow or full disk holds no request.
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
/// Nothing is lost silently: a line the file cannot take (a full disk), or the writer's queue cannot (the disk
/// ``maximumQueuedBytes`` behind), is left out whole — never half written — and counted in ``dropped``; the first
/// such loss is said once through `warn`. ``written`` says how far the file is complete, ``finish(within:)``
/// completes it as the server stops. Entries the ring pushes out are counted in ``evicted``; `seq` numbers every
/// entry, so a gap shows where.
package final class RequestLog: Sendable {
    /// One line: its `seq` and the rest of its JSON object, rendered when read, so that `record` does no more
    /// than number and keep it under the lock.
    struct Line: Sendable {
        let seq: Int
        /// The object after `{"seq":N,`: `"time":…}` (a slice of the object's text, not a copy).
        let rest: Substring
        /// UTF-8 bytes of the line, its newline left out.
        let size: Int

        init(seq: Int, rest: Substring) {
            self.seq = seq
            self.rest = rest
            var digits = 1
            var remaining = seq
            while remaining >= 10 {
                remaining /= 10
                digits += 1
            }
            // `{"seq":` and `,` around the digits.
            size = 8 + digits + rest.utf8.count
        }

        /// Appends the line (`{"seq":N,` and ``rest``) and a newline to `bytes`.
        func appendLine(to bytes: inout [UInt8]) {
            bytes += "{\"seq\":\(seq),".utf8
            bytes += rest.utf8
            bytes.append(0x0A)
        }

        /// The most bytes before ``rest``: `{"seq":`, 19 digits and `,`.
        static let maximumHeadBytes = 27
    }

    private struct State {
        /// The ring, oldest first from `head`; the slots before `head` are spent and dropped in bulk.
        var lines: [Line] = []
        var head = 0
        /// UTF-8 bytes of `lines[head...]`.
        var bytes = 0
        var next = 1
        var evicted = 0

        var count: Int { lines.count - head }

        mutating func evictOldest() {
            bytes -= lines[head].size
            lines[head] = Line(seq: 0, rest: "")
            head += 1
            evicted += 1
            if head >= 1024, head * 2 >= lines.count {
                lines.removeFirst(head)
                head = 0
            }
        }
    }
    private let state = Mutex(State())
    private let writer: RequestLogWriter?
    /// Entries kept in memory.
    package let capacity: Int
    /// UTF-8 bytes of the entries kept in memory, at most; the oldest go first to stay under it.
    package let maximumBytes: Int

    /// The longest string an entry keeps (a path, an id, a member of a body); longer ones are cut with a note.
    package static let maximumStringBytes = 1024
    /// Elements of an array, members of an object, an entry keeps; the rest are counted in a note.
    package static let maximumMembers = 64
    /// How deep an entry's values nest before the rest is a note.
    package static let maximumDepth = 4
    /// The longest line: past it, an entry keeps its short members and says how long it was.
    package static let maximumLineBytes = 16 << 10
    /// What the ring holds at most by default: ≈ 50,000 typical lines, ≈ 7,000 of the longest paths.
    package static let defaultMaximumBytes = 16 << 20
    /// Lines waiting for the `--log` file at most by default, in UTF-8 bytes: ≈ 13,000 typical lines, seconds of
    /// requests at full speed; past it the disk is behind and a line is dropped rather than held.
    package static let defaultMaximumQueuedBytes = 4 << 20
    /// How long ``finish(within:)`` waits for the file by default.
    package static let defaultFinishDeadline: Duration = .seconds(10)

    /// - Parameters:
    ///   - maximumQueuedBytes: the writer's queue, at most (at least one line of ``maximumLineBytes``).
    ///   - warn: told once, when the file first loses a line (stderr in `forge serve`); called off the requests' threads.
    package init(
        file: URL?, capacity: Int = ServerLimits.defaultLogCapacity, maximumBytes: Int = RequestLog.defaultMaximumBytes,
        maximumQueuedBytes: Int = RequestLog.defaultMaximumQueuedBytes, warn: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ServeError) {
        self.capacity = max(1, capacity)
        self.maximumBytes = max(Self.maximumLineBytes, maximumBytes)
        writer = try file.map { url throws(ServeError) in
            RequestLogWriter(file: try LogFile(path: url.path), maximumBytes: max(Self.maximumLineBytes + 1, maximumQueuedBytes), warn: warn)
        }
    }

    /// Ends the writer's thread once it has written what is queued (``finish(within:)`` waits for that).
    deinit { writer?.stop() }

    /// Adds one entry, numbered and timed here, cut to the bounds above. Renders it before taking the lock; under
    /// it, only numbers it, keeps it and queues it for the file.
    package func record(_ entry: JSONObject, at time: Date = Date()) {
        var members: JSONObject = [("time", .string(ReceiptDate.format(time, style: .fractionalZulu)))]
        members += Self.bounded(entry)
        let rest = Self.rest(of: members)
        state.withLock { state in
            let line = Line(seq: state.next, rest: rest)
            state.next += 1
            while state.count > 0, state.count >= capacity || state.bytes + line.size > maximumBytes { state.evictOldest() }
            state.lines.append(line)
            state.bytes += line.size
            // Under the lock, so the file's lines are in `seq` order.
            writer?.enqueue(line)
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

    /// `members` as the rest of a line after its `seq` (the object's text without its `{`): whole when the line fits
    /// ``maximumLineBytes``, else the members of at most 256 bytes and a note.
    private static func rest(of members: JSONObject) -> Substring {
        let limit = maximumLineBytes - Line.maximumHeadBytes
        var text = JSONValue.object(members).serialized(pretty: false)
        if text.utf8.count > limit {
            var short: JSONObject = []
            for member in members where member.key.utf8.count + member.value.serialized(pretty: false).utf8.count <= 256 { short.append((member.key, member.value)) }
            short.append(("cut", .string("the entry was \(text.utf8.count) bytes; its members over 256 bytes are left out")))
            let shortened = JSONValue.object(short).serialized(pretty: false)
            // At most 64 members of 256 bytes, well inside the bound; checked all the same.
            text = shortened.utf8.count <= limit ? shortened : JSONValue.object(JSONObject(members.members.prefix(1).map { ($0.key, $0.value) })).serialized(pretty: false)
        }
        return text.dropFirst()
    }

    /// The entries in memory, oldest first, one JSON object per line.
    package var jsonLines: String {
        // Only the lines are copied under the lock (a copy of its own: a slice would make the next `record` copy the
        // ring); the text is made after.
        let lines = state.withLock { state in Array(state.lines[state.head...]) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.size + 1 })
        for line in lines { line.appendLine(to: &bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Entries recorded since the start (`seq` of the last one).
    package var recorded: Int { state.withLock { $0.next - 1 } }
    /// Entries the `--log` file could not take (refused by the file, or past the writer's queue).
    package var dropped: Int { writer?.progress.dropped ?? 0 }
    /// With `--log`, how far the file is complete: every line numbered up to it (`seq`) is in the file, or counted in
    /// ``dropped``. A test reads the file once it reaches the `seq` it waits for. Nil without a file.
    package var written: Int? { writer?.progress.written }
    /// Entries the in-memory ring pushed out to make room.
    package var evicted: Int { state.withLock { $0.evicted } }
    /// Entries in memory now, and their UTF-8 bytes.
    package var held: (entries: Int, bytes: Int) { state.withLock { ($0.count, $0.bytes) } }
    /// The `--log` file's path, if any.
    package var path: String? { writer?.path }

    /// Empties the in-memory log (the file keeps everything; the counts stay).
    package func clear() {
        state.withLock {
            $0.lines.removeAll()
            $0.head = 0
            $0.bytes = 0
        }
    }

    /// Waits, up to `limit`, until the writer has written every line recorded so far, then ends its thread: the file
    /// is complete and ``dropped`` final (a line not written by then counts as dropped). For the end of the server,
    /// after its last request; a line recorded after it is counted in ``dropped``.
    package func finish(within limit: Duration = RequestLog.defaultFinishDeadline) async {
        await writer?.finish(within: limit)
    }
}
