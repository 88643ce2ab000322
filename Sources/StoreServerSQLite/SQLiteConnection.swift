import CSQLite

/// One connection to an SQLite file through SQLite's C API: the dozen statements the state file needs, each
/// prepared, bound, stepped and finalized in one call, every result code checked. Not thread-safe by itself:
/// ``SQLiteStateStore`` serializes every use behind its lock (the connection is opened `SQLITE_OPEN_NOMUTEX`).
final class SQLiteConnection {
    private let handle: OpaquePointer

    /// Opens (creating if missing) the file at `path`, with extended result codes on.
    init(path: String) throws(SQLiteError) {
        var opened: OpaquePointer?
        let status = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let opened else {
            // Even a failed open may allocate a handle, which only close frees.
            let error = SQLiteError(code: status, message: opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status)))
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit { sqlite3_close_v2(handle) }

    private static let empty: StaticString = ""

    /// Runs one or more statements that take no arguments and return nothing wanted.
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard status == SQLITE_OK else { throw SQLiteError(code: status, message: message.map { String(cString: $0) } ?? error(status).message) }
    }

    /// Runs one statement with its arguments bound in order.
    func execute(_ sql: String, _ arguments: [SQLiteValue]) throws(SQLiteError) {
        _ = try rows(sql, arguments)
    }

    /// Runs one statement and returns every row it produced, each column as stored.
    func rows(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        var prepared: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
        guard status == SQLITE_OK, let statement = prepared else { throw error(status) }
        defer { sqlite3_finalize(statement) }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let bound: Int32 =
                switch argument {
                case .null: sqlite3_bind_null(statement, position)
                case .integer(let value): sqlite3_bind_int64(statement, position, value)
                case .real(let value): sqlite3_bind_double(statement, position, value)
                case .text(var value):
                    // By length, not up to a NUL: text holding U+0000 is stored whole.
                    // Empty text still needs an address: SQLite binds a null one as NULL.
                    value.withUTF8 { utf8 in
                        let start = UnsafeRawPointer(utf8.baseAddress ?? Self.empty.utf8Start).assumingMemoryBound(to: CChar.self)
                        return sqlite3_bind_text64(statement, position, start, UInt64(utf8.count), csqlite_transient(), UInt8(SQLITE_UTF8))
                    }
                case .blob(let bytes):
                    bytes.withUnsafeBytes { raw in
                        // A zero-length blob has no base address: bound as x'', never as NULL.
                        raw.baseAddress.map { sqlite3_bind_blob64(statement, position, $0, UInt64(raw.count), csqlite_transient()) }
                            ?? sqlite3_bind_zeroblob(statement, position, 0)
                    }
                }
            guard bound == SQLITE_OK else { throw error(bound) }
        }
        var result: [[SQLiteValue]] = []
        while true {
            let stepped = sqlite3_step(statement)
            if stepped == SQLITE_DONE { return result }
            guard stepped == SQLITE_ROW else { throw error(stepped) }
            let count = sqlite3_column_count(statement)
            var row: [SQLiteValue] = []
            row.reserveCapacity(Int(count))
            for column in 0..<count { row.append(value(statement, column)) }
            result.append(row)
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE … COMMIT`, rolled back if it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func value(_ statement: OpaquePointer, _ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let text = sqlite3_column_text(statement, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let bytes = sqlite3_column_blob(statement, column), count > 0 else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    private func error(_ status: Int32) -> SQLiteError {
        SQLiteError(code: status, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// A failed SQLite call: its (extended) result code and SQLite's words.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_NOTADB`, …) of an extended one.
    var primary: Int32 { code & 0xff }
    var description: String { "SQLite error \(code): \(message)" }
}

/// A value as SQLite stores it.
enum SQLiteValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    init(_ value: Int) { self = .integer(Int64(value)) }
    init(_ value: Int64) { self = .integer(value) }
    init(_ value: Double) { self = .real(value) }
    init(_ value: String) { self = .text(value) }
    init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    init(_ value: Double?) { self = value.map { .real($0) } ?? .null }
    init(_ value: String?) { self = value.map { .text($0) } ?? .null }

    var isNull: Bool { self == .null }

    /// As SQLite's own conversions would, where no precision is lost: an integer, or a real that is one.
    var int64: Int64? {
        switch self {
        case .integer(let value): value
        case .real(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// A real, or an integer as one.
    var double: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .real(let value): value
        default: nil
        }
    }

    var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// A blob, or text's bytes.
    var bytes: [UInt8]? {
        switch self {
        case .blob(let value): value
        case .text(let value): Array(value.utf8)
        default: nil
        }
    }

    /// How a refusal names the value's kind.
    var kind: String {
        switch self {
        case .null: "NULL"
        case .integer: "an integer"
        case .real: "a real"
        case .text: "text"
        case .blob: "a blob"
        }
    }
}
