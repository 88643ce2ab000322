import Foundation
import ForgeTestSupport
import Testing

/// `forge serve --state` on a file that is not forge's: the command's contract (exit 73, one line naming the file), and
/// the file as it was with nothing beside it. Every case in process: `StateFileAdoptionTests`.
@Suite("forge serve --state refuses a user's own database", .timeLimit(.minutes(2)))
struct StateFileRefusalCLITests {
    @Test(
        "A user's SQLite database with one table: exit 73, the reason on stderr, the file byte for byte as it was, no -journal, -wal or -shm",
        .requires(.sqlite3))
    func userDatabase() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("notes.db")
        let made = try await run(
            try Oracle.sqlite3.required(), [database.path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine');"])
        try #require(made.status == 0, "\(made.stderr)")
        let before = try Data(contentsOf: database)
        // Killed after 20 s should it start serving after all (a file adopted).
        let refused = try await run(Binaries.forge, ["serve", "--listen", "127.0.0.1:0", "--state", database.path], killAfter: .seconds(20))
        #expect(refused.exited && refused.status == 73, "\(refused.status) \(refused.stderr)")
        #expect(refused.stderr.contains(database.path) && refused.stderr.contains("not a forge state file"), "\(refused.stderr)")
        #expect(try Data(contentsOf: database) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.db"])
    }
}
