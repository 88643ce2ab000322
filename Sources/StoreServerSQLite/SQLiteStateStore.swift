import CSQLite
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport
package import StoreServer
import StoreModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `forge serve --state FILE`: the server state in SQLite, through SQLite's C API (``SQLiteConnection``).
///
/// - One table per kind of record, readable with `sqlite3 FILE` (dates are UNIX seconds, `REAL`).
/// - WAL with `synchronous=NORMAL`: a committed change survives the process being killed (SIGKILL included);
///   only a power loss may take the last ones.
/// - `locking_mode=EXCLUSIVE`: one server owns the file while it runs; a second is refused at start, and the
///   lock dies with the process.
/// - Adopts only what is its own (``Existing``): nothing, an empty file, or an SQLite file marked as forge's in its
///   header. Anything else is refused before SQLite opens it, so it is left byte for byte as it was, with nothing
///   beside it (no `-journal`, `-wal` or `-shm`).
/// - Everything read from the file is checked: a damaged or foreign file is an error with its path, never a trap.
package final class SQLiteStateStore: ServerStateStore {
    package let path: String
    /// One connection, one user at a time.
    private let connection: Mutex<SQLiteConnection>

    /// The layout this build writes; a file of a later one is refused, one of format 1 brought up to it when opened
    /// (``splitTimelines(_:)``).
    static let format: Int64 = 2
    /// forge's mark in the SQLite header (`PRAGMA application_id`, bytes 68–71 big-endian): "frge". Written
    /// before anything else, while the file is still in rollback mode, so the main file carries it from the first
    /// commit on, whatever its WAL holds.
    static let applicationID: Int32 = 0x6672_6765

    /// Opens `path`, creating it if missing.
    package init(path: String) throws(ServeError) {
        self.path = path
        let existing = try Self.existing(at: path)
        do {
            let db = try SQLiteConnection(path: path)
            try Self.setUp(db, marking: existing != .forge)
            try Self.migrate(db)
            let format = try db.rows("SELECT value FROM meta WHERE name = 'format'").first?.first
            guard let format, format.int64 == Self.format else {
                let said = format.map { $0.int64.map(String.init) ?? $0.kind } ?? "unknown"
                throw ServeError(.stateFailed, "\(path) is a state file of another forge (format \(said), this one writes \(Self.format))")
            }
            connection = Mutex(db)
        } catch let error as ServeError {
            throw error
        } catch {
            throw ServeError(.stateFailed, Self.describe(error, path: path))
        }
    }

    /// What `--state` names, as far as forge may use it.
    enum Existing: Equatable {
        /// Nothing: forge creates its file there.
        case nothing
        /// An empty regular file (`touch state.db`, `mktemp`): adopted.
        case empty
        /// An SQLite file with forge's mark: resumed.
        case forge
        /// A state file of a forge from before the mark (format 1): resumed, marked and brought up to this format.
        case forgeUnmarked
    }

    /// Looks at `path` without SQLite, and refuses — leaving it as it is — anything forge may not adopt: a device, FIFO,
    /// socket or folder (SQLite would open it, and leave `NAME-journal` beside a device), a symbolic link to nothing,
    /// a file that is not SQLite, and an SQLite database without forge's mark (a user's own: forge adds no table to it).
    /// A symbolic link to a regular file is followed: the state lives in its target.
    static func existing(at path: String) throws(ServeError) -> Existing {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let failure = errno
            guard failure == ENOENT else { throw ServeError(.stateFailed, "cannot open \(path): \(String(cString: strerror(failure)))") }
            if lstat(path, &status) == 0 { throw ServeError(.stateFailed, "\(path) is a symbolic link to nothing; name the state file itself") }
            return .nothing
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ServeError(.stateFailed, "\(path) is \(kind(of: status.st_mode)), not a state file; it is left as it is")
        }
        if status.st_size == 0 { return .empty }
        // O_NONBLOCK: had the file become a FIFO since, the open does not wait for a writer (fstat then refuses it).
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { throw ServeError(.stateFailed, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var header = [UInt8](repeating: 0, count: 100)
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG else {
            throw ServeError(.stateFailed, "\(path) is \(kind(of: opened.st_mode)), not a state file; it is left as it is")
        }
        let count = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        // The header SQLite writes first: "SQLite format 3\0", then at offset 68 the application id.
        guard count == header.count, header.starts(with: Array("SQLite format 3\u{0}".utf8)) else {
            throw ServeError(.stateFailed, "\(path) is not a state file (not an SQLite database); it is left as it is")
        }
        let mark = header[68..<72].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if mark == 0, Self.holdsFormatOneSchema(descriptor) { return .forgeUnmarked }
        guard mark == UInt32(bitPattern: applicationID) else {
            throw ServeError(
                .stateFailed,
                "\(path) is an SQLite database that is not a forge state file (no forge mark in its header); it is left as it is: name a new file or an empty one")
        }
        return .forge
    }

    /// The tables forge's format 1 made first, as SQLite keeps their `CREATE` text in the schema's pages near the
    /// start of the file: how a state file of a forge from before the mark is told from a user's database.
    static let formatOneSignature = [
        "CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value)", "CREATE TABLE customer (position INTEGER PRIMARY KEY NOT NULL, made_at REAL NOT NULL",
    ]

    /// Whether the file's first 256 KiB hold every statement of ``formatOneSignature``.
    private static func holdsFormatOneSchema(_ descriptor: Int32) -> Bool {
        var start = [UInt8](repeating: 0, count: 256 * 1024)
        let count = start.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        let bytes = start.prefix(count)
        return formatOneSignature.allSatisfy { statement in
            let wanted = Array(statement.utf8)
            guard let first = wanted.first, bytes.count >= wanted.count else { return false }
            var index = bytes.startIndex
            while let found = bytes[index...].firstIndex(of: first), found + wanted.count <= bytes.endIndex {
                if bytes[found..<found + wanted.count].elementsEqual(wanted) { return true }
                index = found + 1
            }
            return false
        }
    }

    /// A file type in words, for a refusal.
    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a folder"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    /// Before anything is read: foreign keys (a send attempt belongs to its delivery), the mark while the file is still
    /// in rollback mode, the exclusive lock, then WAL with `synchronous=NORMAL`. Reading the schema is where SQLite
    /// finds a file that is no database (`SQLITE_NOTADB`); the first write takes the exclusive lock, so a second
    /// server is refused here, at start, not at its first change.
    private static func setUp(_ db: SQLiteConnection, marking: Bool) throws(SQLiteError) {
        try db.execute("PRAGMA foreign_keys = ON")
        if marking { try db.execute("PRAGMA application_id = \(applicationID)") }
        try db.execute("PRAGMA locking_mode = EXCLUSIVE")
        try db.execute("PRAGMA synchronous = NORMAL")
        _ = try db.rows("SELECT * FROM sqlite_master LIMIT 1")
        guard try db.rows("PRAGMA journal_mode = WAL").first?.first?.string == "wal" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "SQLite could not turn write-ahead logging on")
        }
        try db.execute("PRAGMA synchronous = NORMAL")
        try db.execute("BEGIN IMMEDIATE; CREATE TABLE forge_lock (id INTEGER PRIMARY KEY); DROP TABLE forge_lock; COMMIT")
    }

    /// The layouts in order, each applied once in its own transaction. Applied ones are listed in `grdb_migrations`,
    /// the table (and the names) GRDB's migrator kept when forge used it, so files of those forges resume as they were.
    private static var migrations: [(identifier: String, migrate: (SQLiteConnection) throws -> Void)] { [("v1", createTables), ("v2", splitTimelines)] }

    private static func migrate(_ db: SQLiteConnection) throws {
        try db.execute("CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        let applied = Set(try db.rows("SELECT identifier FROM grdb_migrations").compactMap { $0.first?.string })
        for migration in migrations where !applied.contains(migration.identifier) {
            try db.transaction {
                try migration.migrate(db)
                try db.execute("INSERT INTO grdb_migrations (identifier) VALUES (?)", [.text(migration.identifier)])
            }
        }
    }

    /// Format 1's tables.
    private static func createTables(_ db: SQLiteConnection) throws {
        try db.execute(
            """
            CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value);
            INSERT INTO meta (name, value) VALUES ('format', 1);
            CREATE TABLE customer (position INTEGER PRIMARY KEY NOT NULL, made_at REAL NOT NULL, given TEXT NOT NULL, scenario TEXT NOT NULL);
            CREATE TABLE test_notification (
                token TEXT PRIMARY KEY NOT NULL, environment TEXT NOT NULL, bundle_id TEXT NOT NULL, sent_at REAL NOT NULL, signed_payload TEXT NOT NULL);
            CREATE TABLE mass_extension (
                key TEXT PRIMARY KEY NOT NULL, product_id TEXT NOT NULL, completed_at REAL NOT NULL, succeeded INTEGER NOT NULL, failed INTEGER NOT NULL);
            CREATE TABLE extension_answer (key TEXT PRIMARY KEY NOT NULL, answer TEXT NOT NULL);
            CREATE TABLE finished_transaction (
                id INTEGER PRIMARY KEY, environment TEXT NOT NULL, transaction_id TEXT NOT NULL, finished_at REAL NOT NULL);
            CREATE TABLE consumption (
                id INTEGER PRIMARY KEY, environment TEXT NOT NULL, transaction_id TEXT NOT NULL, received_at REAL NOT NULL, body TEXT NOT NULL);
            CREATE TABLE delivery (
                key TEXT PRIMARY KEY NOT NULL, position INTEGER NOT NULL UNIQUE, environment TEXT NOT NULL, body BLOB NOT NULL, due REAL);
            CREATE TABLE send_attempt (
                delivery_key TEXT NOT NULL REFERENCES delivery(key) ON DELETE CASCADE, number INTEGER NOT NULL, attempt_date REAL NOT NULL,
                result TEXT NOT NULL, http_status INTEGER, latency_ms INTEGER NOT NULL, detail TEXT, PRIMARY KEY (delivery_key, number));
            """)
    }

    /// Format 2: the events the API adds to a customer's timeline are rows of `customer_event` (`purchase`, the
    /// original transaction id of an app account token, which the next token for it replaces), and
    /// `customer.scenario` is the scenario as given. Format 1 rewrote the whole scenario at every change; its
    /// files are split so on opening, in the migration's transaction.
    private static func splitTimelines(_ db: SQLiteConnection) throws {
        try db.execute(
            """
            CREATE TABLE customer_event (
                id INTEGER PRIMARY KEY, position INTEGER NOT NULL, purchase TEXT, event TEXT NOT NULL);
            CREATE INDEX customer_event_purchase ON customer_event (position, purchase);
            """)
        for row in try db.rows("SELECT position, given, scenario FROM customer") {
            let fields = Fields(row, table: "customer")
            let position = try fields.integer(0)
            let given = try fields.scenario(1)
            var scenario = try fields.scenario(2)
            let kept = given.timeline ?? []
            let timeline = scenario.timeline ?? []
            guard timeline.count > kept.count, Array(timeline.prefix(kept.count)) == kept else { continue }
            for event in timeline.dropFirst(kept.count) {
                try db.execute(
                    "INSERT INTO customer_event (position, purchase, event) VALUES (?, ?, ?)",
                    [.integer(position), SQLiteValue(event.event == .appAccountToken ? event.originalTransactionID ?? "" : nil), .text(try json(event))])
            }
            scenario.timeline = given.timeline
            try db.execute("UPDATE customer SET scenario = ? WHERE position = ?", [.text(try json(scenario)), .integer(position)])
        }
        try db.execute("UPDATE meta SET value = 2 WHERE name = 'format'")
    }

    // MARK: - Writing

    package func write(_ changes: [StateChange]) throws(ServeError) {
        guard !changes.isEmpty else { return }
        do {
            try connection.withLock { db in
                try db.transaction {
                    for change in changes { try Self.apply(change, db) }
                }
            }
        } catch {
            throw ServeError(.stateFailed, Self.describe(error, path: path))
        }
    }

    private static func apply(_ change: StateChange, _ db: SQLiteConnection) throws {
        switch change {
        case .clock(let now, let offset):
            try meta(db, "clock_now", .real(now.timeIntervalSince1970))
            try meta(db, "clock_offset", .real(offset))
        case .customer(let customer):
            try db.execute(
                "INSERT OR REPLACE INTO customer (position, made_at, given, scenario) VALUES (?, ?, ?, ?)",
                [SQLiteValue(customer.position), .real(customer.madeAt.timeIntervalSince1970), .text(try json(customer.given)), .text(try json(customer.scenario))])
        case .event(let position, let event):
            try db.execute("INSERT INTO customer_event (position, event) VALUES (?, ?)", [SQLiteValue(position), .text(try json(event))])
        case .appAccountToken(let position, let event):
            let purchase = event.originalTransactionID ?? ""
            try db.execute("DELETE FROM customer_event WHERE position = ? AND purchase = ?", [SQLiteValue(position), .text(purchase)])
            try db.execute("INSERT INTO customer_event (position, purchase, event) VALUES (?, ?, ?)", [SQLiteValue(position), .text(purchase), .text(try json(event))])
        case .testNotification(let test):
            try db.execute(
                "INSERT OR REPLACE INTO test_notification (token, environment, bundle_id, sent_at, signed_payload) VALUES (?, ?, ?, ?, ?)",
                [.text(test.token), .text(test.environment.rawValue), .text(test.bundleID), .real(test.sentAt.timeIntervalSince1970), .text(test.signedPayload)])
        case .testsRequested(let count):
            try meta(db, "tests_requested", .integer(Int64(truncatingIfNeeded: count)))
        case .massExtension(let key, let request):
            try db.execute(
                "INSERT OR REPLACE INTO mass_extension (key, product_id, completed_at, succeeded, failed) VALUES (?, ?, ?, ?, ?)",
                [.text(key), .text(request.productID), .real(request.completedAt.timeIntervalSince1970), SQLiteValue(request.succeeded), SQLiteValue(request.failed)])
        case .extensionAnswer(let key, let answer):
            // In the order it is answered in, as the answer's bytes read.
            try db.execute(
                "INSERT OR REPLACE INTO extension_answer (key, answer) VALUES (?, ?)", [.text(key), .text(try JSONValue(encoding: answer).serialized(pretty: false))])
        case .finished(let finished):
            try db.execute(
                "INSERT INTO finished_transaction (environment, transaction_id, finished_at) VALUES (?, ?, ?)",
                [.text(finished.environment.rawValue), .text(finished.transactionID), .real(finished.finishedAt.timeIntervalSince1970)])
        case .consumption(let report):
            try db.execute(
                "INSERT INTO consumption (environment, transaction_id, received_at, body) VALUES (?, ?, ?, ?)",
                [.text(report.environment.rawValue), .text(report.transactionID), .real(report.receivedAt.timeIntervalSince1970), .text(report.body.serialized(pretty: false))])
        case .evict(let kind):
            let table = table(of: kind)
            try db.execute("DELETE FROM \(table) WHERE rowid = (SELECT MIN(rowid) FROM \(table))", [])
        case .delivery(let delivery):
            try db.execute(
                "INSERT OR REPLACE INTO delivery (key, position, environment, body, due) VALUES (?, ?, ?, ?, ?)",
                [.text(delivery.key), .integer(delivery.position), .text(delivery.environment.rawValue), .blob(delivery.body), SQLiteValue(delivery.due?.timeIntervalSince1970)])
        case .forgetDelivery(let key):
            try db.execute("DELETE FROM send_attempt WHERE delivery_key = ?", [.text(key)])
            try db.execute("DELETE FROM delivery WHERE key = ?", [.text(key)])
        case .attempt(let key, let attempt, let due):
            try db.execute(
                """
                INSERT INTO send_attempt (delivery_key, number, attempt_date, result, http_status, latency_ms, detail)
                VALUES (?, (SELECT COUNT(*) FROM send_attempt WHERE delivery_key = ?) + 1, ?, ?, ?, ?, ?)
                """,
                [
                    .text(key), .text(key), .real(attempt.date.timeIntervalSince1970), .text(attempt.result.rawValue), SQLiteValue(attempt.httpStatus),
                    .integer(attempt.milliseconds), SQLiteValue(attempt.detail),
                ])
            // Delivered or given up, it is never sent again: its body goes (the history renders the payload anew).
            let due = SQLiteValue(due?.timeIntervalSince1970)
            try db.execute("UPDATE delivery SET due = ?, body = CASE WHEN ? IS NULL THEN x'' ELSE body END WHERE key = ?", [due, due, .text(key)])
        case .watermark(let environment, let date):
            try meta(db, "watermark_" + environment.rawValue, .real(date.timeIntervalSince1970))
        case .dropped(let count):
            try meta(db, "dropped", SQLiteValue(count))
        }
    }

    private static func meta(_ db: SQLiteConnection, _ name: String, _ value: SQLiteValue) throws {
        try db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", [.text(name), value])
    }

    private static func table(of kind: ServerState.RecordKind) -> String {
        switch kind {
        case .testNotifications: "test_notification"
        case .massExtensions: "mass_extension"
        case .extensionAnswers: "extension_answer"
        case .finished: "finished_transaction"
        case .consumption: "consumption"
        }
    }

    /// A scenario or an event as kept: sorted keys, so the same value is the same text.
    private static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    // MARK: - Reading

    package func load() throws(ServeError) -> SavedState {
        do {
            return try connection.withLock { db throws -> SavedState in try db.transaction { try Self.read(db) } }
        } catch let error as ServeError {
            throw ServeError(.stateFailed, "\(path): \(error.message)")
        } catch {
            throw ServeError(.stateFailed, Self.describe(error, path: path))
        }
    }

    private static func read(_ db: SQLiteConnection) throws -> SavedState {
        var saved = SavedState()
        var meta: [String: SQLiteValue] = [:]
        for row in try db.rows("SELECT name, value FROM meta") {
            if let name = row.first?.string, row.count == 2 { meta[name] = row[1] }
        }
        func metaValue<T>(_ name: String, _ read: (SQLiteValue) -> T?) throws -> T? {
            guard let value = meta[name], !value.isNull else { return nil }
            guard let typed = read(value) else { throw ServeError(.stateFailed, "meta '\(name)' is not a \(T.self)") }
            return typed
        }
        if let now = try metaValue("clock_now", \.double) {
            saved.clock = (Date(timeIntervalSince1970: now), try metaValue("clock_offset", \.double) ?? 0)
        }
        saved.testsRequested = UInt64(clamping: try metaValue("tests_requested", \.int64) ?? 0)
        saved.dropped = Int(clamping: try metaValue("dropped", \.int64) ?? 0)
        for environment in ServerAPIEnvironment.allCases {
            if let date = try metaValue("watermark_" + environment.rawValue, \.double) { saved.watermarks[environment] = Date(timeIntervalSince1970: date) }
        }
        var events: [Int64: [TimelineEvent]] = [:]
        for row in try db.rows("SELECT position, event FROM customer_event ORDER BY id") {
            let fields = Fields(row, table: "customer_event")
            events[try fields.integer(0), default: []].append(try fields.event(1))
        }
        for row in try db.rows("SELECT position, made_at, given, scenario FROM customer ORDER BY position") {
            let fields = Fields(row, table: "customer")
            let position = try fields.integer(0)
            var scenario = try fields.scenario(3)
            if let added = events[position] { scenario.timeline = (scenario.timeline ?? []) + added }
            saved.customers.append(
                SavedCustomer(position: Int(clamping: position), given: try fields.scenario(2), scenario: scenario, madeAt: try fields.date(1)))
        }
        for row in try db.rows("SELECT token, environment, bundle_id, sent_at, signed_payload FROM test_notification ORDER BY rowid") {
            let fields = Fields(row, table: "test_notification")
            saved.testNotifications.append(
                ServerState.TestNotification(
                    token: try fields.text(0), environment: try fields.environment(1), bundleID: try fields.text(2), signedPayload: try fields.text(4),
                    sentAt: try fields.date(3)))
        }
        for row in try db.rows("SELECT key, product_id, completed_at, succeeded, failed FROM mass_extension ORDER BY rowid") {
            let fields = Fields(row, table: "mass_extension")
            let request = ServerState.MassExtension(
                productID: try fields.text(1), completedAt: try fields.date(2), succeeded: Int(clamping: try fields.integer(3)),
                failed: Int(clamping: try fields.integer(4)))
            saved.massExtensions.append((try fields.text(0), request))
        }
        for row in try db.rows("SELECT key, answer FROM extension_answer ORDER BY rowid") {
            let fields = Fields(row, table: "extension_answer")
            saved.extensionAnswers.append((try fields.text(0), try fields.decoded(ExtendRenewalDateResponse.self, 1)))
        }
        for row in try db.rows("SELECT environment, transaction_id, finished_at FROM finished_transaction ORDER BY id") {
            let fields = Fields(row, table: "finished_transaction")
            saved.finished.append(
                ServerState.FinishedTransaction(environment: try fields.environment(0), transactionID: try fields.text(1), finishedAt: try fields.date(2)))
        }
        for row in try db.rows("SELECT environment, transaction_id, received_at, body FROM consumption ORDER BY id") {
            let fields = Fields(row, table: "consumption")
            saved.consumption.append(
                ServerState.ConsumptionReport(
                    environment: try fields.environment(0), transactionID: try fields.text(1), receivedAt: try fields.date(2), body: try fields.json(3)))
        }
        var attempts: [String: [SendAttempt]] = [:]
        let attemptRows = try db.rows("SELECT delivery_key, attempt_date, result, http_status, latency_ms, detail FROM send_attempt ORDER BY delivery_key, number")
        for row in attemptRows {
            let fields = Fields(row, table: "send_attempt")
            let result = try fields.text(2)
            guard let sendResult = SendAttemptResult(rawValue: result) else { throw ServeError(.stateFailed, "send_attempt: '\(result)' is not a send attempt result") }
            attempts[try fields.text(0), default: []].append(
                SendAttempt(
                    date: try fields.date(1), result: sendResult, httpStatus: try fields.optional(3, \.int64).map { Int(clamping: $0) },
                    milliseconds: try fields.integer(4), detail: try fields.optional(5, \.string)))
        }
        for row in try db.rows("SELECT key, position, environment, CASE WHEN due IS NULL THEN x'' ELSE body END, due FROM delivery ORDER BY position") {
            let fields = Fields(row, table: "delivery")
            let key = try fields.text(0)
            saved.deliveries.append(
                NotificationDispatcher.Delivery(
                    key: key, environment: try fields.environment(2), body: try fields.bytes(3), position: try fields.integer(1), attempts: attempts[key] ?? [],
                    due: try fields.optional(4, \.double).map { Date(timeIntervalSince1970: $0) }))
        }
        return saved
    }

    /// One row's columns, each checked for its type: a damaged file is an error naming the table, not a trap.
    private struct Fields {
        let row: [SQLiteValue]
        let table: String

        init(_ row: [SQLiteValue], table: String) {
            self.row = row
            self.table = table
        }

        /// Column `index` read by `read`; nil when NULL, an error when of another type.
        func optional<T>(_ index: Int, _ read: (SQLiteValue) -> T?) throws -> T? {
            guard row.indices.contains(index) else { throw ServeError(.stateFailed, "\(table): no column \(index + 1)") }
            let value = row[index]
            if value.isNull { return nil }
            guard let typed = read(value) else { throw ServeError(.stateFailed, "\(table): column \(index + 1) is not a \(T.self)") }
            return typed
        }

        func value<T>(_ index: Int, _ read: (SQLiteValue) -> T?) throws -> T {
            guard let value = try optional(index, read) else { throw ServeError(.stateFailed, "\(table): column \(index + 1) is empty") }
            return value
        }

        func integer(_ index: Int) throws -> Int64 { try value(index, \.int64) }
        func text(_ index: Int) throws -> String { try value(index, \.string) }
        func bytes(_ index: Int) throws -> [UInt8] { try value(index, \.bytes) }

        func date(_ index: Int) throws -> Date {
            let seconds = try value(index, \.double)
            guard seconds.isFinite else { throw ServeError(.stateFailed, "\(table): column \(index + 1) is not a date") }
            return Date(timeIntervalSince1970: seconds)
        }

        func environment(_ index: Int) throws -> ServerAPIEnvironment {
            let name = try text(index)
            guard let environment = ServerAPIEnvironment(rawValue: name) else { throw ServeError(.stateFailed, "\(table): '\(name)' is not an environment") }
            return environment
        }

        func json(_ index: Int) throws -> JSONValue {
            let text = try text(index)
            guard let value = try? JSONValue(parsing: Array(text.utf8)) else { throw ServeError(.stateFailed, "\(table): column \(index + 1) is not JSON") }
            return value
        }

        /// A JSON text decoded as `type`: every member it requires there, of its type.
        func decoded<T: Decodable>(_ type: T.Type, _ index: Int) throws -> T {
            do { return try JSONDecoder().decode(type, from: Data(try text(index).utf8)) } catch let error as ServeError { throw error } catch {
                throw ServeError(.stateFailed, "\(table): column \(index + 1) is not a \(T.self)")
            }
        }

        func scenario(_ index: Int) throws -> Scenario { try scenario(json: try text(index)) }

        /// One timeline event, read as a scenario's timeline reads it: every key checked.
        func event(_ index: Int) throws -> TimelineEvent {
            let text = try text(index)
            guard let events = try scenario(json: "{\"timeline\":[" + text + "]}").timeline, events.count == 1, let event = events.first else {
                throw ServeError(.stateFailed, "\(table): column \(index + 1) is not one timeline event")
            }
            return event
        }

        private func scenario(json text: String) throws -> Scenario {
            do { return try Scenario.decode(json: Data(text.utf8)) } catch { throw ServeError(.stateFailed, "\(table): \(error.message)") }
        }
    }

    /// What went wrong, in words that name the file: another server holding it, a file that is not a database.
    private static func describe(_ error: any Error, path: String) -> String {
        guard let error = error as? SQLiteError else { return "\(path): \(error)" }
        switch error.primary {
        case SQLITE_BUSY, SQLITE_LOCKED: return "\(path) is in use by another process (another forge serve with \(ServeOption.state) \(path)?)"
        case SQLITE_NOTADB: return "\(path) is not a state file (not an SQLite database); it is left as it is"
        case SQLITE_CANTOPEN: return "cannot open \(path): \(error.message)"
        case SQLITE_FULL: return "\(path): the disk is full"
        default: return "\(path): \(error.message)"
        }
    }
}
