import Foundation
import _ForgeSupport
import ForgeTestSupport
import StoreServer
@testable import StoreServerSQLite
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What `--state FILE` adopts: nothing, an empty file, or a file forge made (marked in its SQLite header). Anything
/// else — a user's own database, a device, a FIFO, a folder, a link to nothing — is refused before SQLite opens it:
/// byte for byte as it was, and nothing left beside it.
@Suite("The state file adopts only what is forge's", .timeLimit(.minutes(2)))
struct StateFileAdoptionTests {
    /// A folder of the test's own, removed at the end.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("forge-adoption-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
        /// The names in the folder, sorted.
        var names: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() }
    }

    /// The refusal `SQLiteStateStore(path:)` throws, or nil when it opened the file.
    static func refusal(_ path: String) -> ServeError? {
        do {
            _ = try SQLiteStateStore(path: path)
            return nil
        } catch {
            return error
        }
    }

    /// A user's database of one table with a row, in `journal` mode, closed (SQLite removes its `-wal` and `-shm`).
    static func userDatabase(_ path: String, wal: Bool) throws {
        let db = try SQLiteConnection(path: path)
        if wal { try db.execute("PRAGMA journal_mode = WAL") }
        try db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL); INSERT INTO notes (text) VALUES ('mine')")
    }

    @Test("A user's own SQLite database (one table; rollback journal or WAL) is refused, byte for byte as it was, with no -journal, -wal or -shm beside it")
    func userDatabaseRefused() throws {
        for wal in [false, true] {
            let folder = try Folder()
            let path = folder.path("user.db")
            try Self.userDatabase(path, wal: wal)
            #expect(folder.names == ["user.db"])
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let refused = try #require(Self.refusal(path), "wal: \(wal): the database was adopted")
            #expect(refused.code == .stateFailed && refused.message.contains("not a forge state file"), "\(refused.message)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "wal: \(wal): the file changed")
            #expect(folder.names == ["user.db"], "wal: \(wal): left beside it: \(folder.names)")
        }
    }

    @Test("A file that is not SQLite, a folder and a symbolic link to nothing are refused; nothing is created")
    func notSQLiteRefused() throws {
        let folder = try Folder()
        try Data("name,value\n".utf8).write(to: folder.url.appendingPathComponent("notes.csv"))
        try FileManager.default.createDirectory(atPath: folder.path("folder"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: folder.path("dangling"), withDestinationPath: folder.path("target.db"))
        let names = folder.names
        for (name, words) in [("notes.csv", "not an SQLite database"), ("folder", "is a folder"), ("dangling", "symbolic link to nothing")] {
            let refused = try #require(Self.refusal(folder.path(name)), "\(name) was adopted")
            #expect(refused.message.contains(words), "\(name): \(refused.message)")
        }
        #expect(folder.names == names, "nothing was created: \(folder.names)")
        #expect(try Data(contentsOf: folder.url.appendingPathComponent("notes.csv")) == Data("name,value\n".utf8))
    }

    @Test("A FIFO is refused before anything opens it: no wait for a writer, nothing created beside it")
    func fifoRefused() throws {
        let folder = try Folder()
        let path = folder.path("state.fifo")
        try #require(mkfifo(path, 0o600) == 0)
        let refused = try #require(Self.refusal(path), "the FIFO was adopted")
        #expect(refused.message.contains("is a FIFO"), "\(refused.message)")
        #expect(folder.names == ["state.fifo"], "\(folder.names)")
    }

    @Test(
        "A character device made by the test (the null device's numbers) is refused before SQLite opens it: no NAME-journal beside it",
        .requires(.root)
    )
    func deviceRefused() throws {
        let folder = try Folder()
        let path = folder.path("state.dev")
        // Major 1, minor 3: /dev/null's, in the encoding both the old and the new dev_t layouts read alike.
        try #require(mknod(path, S_IFCHR | 0o600, dev_t(1 << 8 | 3)) == 0)
        let refused = try #require(Self.refusal(path), "the device was adopted")
        #expect(refused.message.contains("is a character device"), "\(refused.message)")
        #expect(folder.names == ["state.dev"], "left beside it: \(folder.names)")
    }

    @Test("An empty file is adopted and marked as forge's; a file forge made is resumed with its state, through a symbolic link too")
    func ownFilesAdopted() throws {
        let folder = try Folder()
        let path = folder.path("state.db")
        try #require(FileManager.default.createFile(atPath: path, contents: Data()))
        let date = Date(timeIntervalSince1970: 1_736_899_200)
        do {
            let store = try SQLiteStateStore(path: path)
            try store.write([.clock(now: date, offset: 60)])
        }
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(100)
        #expect(header.starts(with: Data("SQLite format 3\u{0}".utf8)) && Array(header.dropFirst(68).prefix(4)) == Array("frge".utf8), "forge's mark")
        #expect(try SQLiteStateStore(path: path).load().clock?.offset == 60, "resumed")
        try FileManager.default.createSymbolicLink(atPath: folder.path("link.db"), withDestinationPath: path)
        #expect(try SQLiteStateStore(path: folder.path("link.db")).load().clock?.now == date, "resumed through the link")
        #expect(!folder.names.contains { $0.hasSuffix("-journal") }, "\(folder.names)")
    }
}
