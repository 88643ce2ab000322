import Foundation
import _ForgeSupport
import StoreServer
@testable import StoreServerSQLite
import StoreModel
import Testing
import ForgeTestSupport

/// Set App Account Token, many times over: the latest token replaces the one before on the same purchase, and
/// a change writes what changed, not the whole scenario.
@Suite("App account tokens: replaced, not piled up; written as one event", .timeLimit(.minutes(2)))
struct AppAccountTokenStateTests {
    static func token(_ number: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", number) }

    static func put(_ service: ServerAPIService, _ original: String, _ number: Int) -> ServerAPIResponse {
        StateFixtures.call(service, .setAppAccountToken, "\(original)", body: #"{"appAccountToken":"\#(token(number))"}"#)
    }

    /// The token events of the timeline, by the purchase they name.
    static func tokens(_ scenario: Scenario) -> [String: [String]] {
        var tokens: [String: [String]] = [:]
        for event in scenario.timeline ?? [] where event.event == .appAccountToken {
            tokens[event.originalTransactionID ?? "", default: []].append(event.token ?? "")
        }
        return tokens
    }

    @Test("After 300 tokens on two purchases the timeline holds one token event per purchase, the latest; the JWS carries it")
    func latestReplaces() throws {
        let scenario = try StateFixtures.sandboxCustomer()
        let ids = try StateFixtures.ids(scenario)
        let subscription = try #require(ids["pro.monthly"]?.first)
        let lifetime = try #require(ids["lifetime"]?.first)
        let service = try StateFixtures.service([scenario])
        for number in 1...150 {
            #expect(Self.put(service, subscription, number).status == 200)
            #expect(Self.put(service, lifetime, 1000 + number).status == 200)
        }
        let timeline = try #require(service.state.customers.first?.scenario)
        #expect(Self.tokens(timeline) == [subscription: [Self.token(150)], lifetime: [Self.token(1150)]])
        #expect((timeline.timeline ?? []).count == (scenario.timeline ?? []).count + 2, "the scenario's own events, then one token per purchase")
        let info = StateFixtures.call(service, .transactionInfo, "\(lifetime)")
        #expect(StateFixtures.payload(StateFixtures.json(info)?["signedTransactionInfo"])?["appAccountToken"]?.stringValue == Self.token(1150))
    }

    /// What one batch written costs, in bytes of its description: grows with a whole scenario, not with one event.
    static func size(_ batch: [StateChange]) -> Int { batch.reduce(0) { $0 + String(describing: $1).utf8.count } }

    @Test("A token written to the store is one event: the bytes of the 500th change are those of the 5th")
    func writesWhatChanged() throws {
        let scenario = try StateFixtures.sandboxCustomer()
        let subscription = try #require(try StateFixtures.ids(scenario)["pro.monthly"]?.first)
        let store = RecordingStore()
        let service = try StateFixtures.service([scenario], store: store)
        let start = store.written.count
        for number in 1...500 { #expect(Self.put(service, subscription, number).status == 200) }
        let batches = Array(store.written.dropFirst(start))
        try #require(batches.count == 500)
        let wholeScenarios = batches.joined().filter { if case .customer = $0 { true } else { false } }
        #expect(wholeScenarios.isEmpty, "no change writes a whole customer")
        // The clock written with each change is the same text at a pinned clock; a token's own text the same length.
        #expect(Self.size(batches[499]) == Self.size(batches[4]), "the 5th wrote \(Self.size(batches[4])) bytes, the 500th \(Self.size(batches[499]))")
    }

    /// A state file in a fresh folder of the test's own; removing the folder removes SQLite's -wal and -shm too.
    static func temporaryFile() throws -> URL { try temporaryDirectory().appendingPathComponent("state.db") }
    static func remove(_ file: URL) { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }

    @Test("A restart on the --state file keeps the last token, one per purchase, in the timeline and the JWS")
    func restartKeepsTheLast() throws {
        let file = try Self.temporaryFile()
        defer { Self.remove(file) }
        let scenario = try StateFixtures.sandboxCustomer()
        let subscription = try #require(try StateFixtures.ids(scenario)["pro.monthly"]?.first)
        do {
            let store = try SQLiteStateStore(path: file.path)
            let service = try StateFixtures.service([scenario], store: store, saved: try store.load())
            for number in 1...40 { #expect(Self.put(service, subscription, number).status == 200) }
        }
        let store = try SQLiteStateStore(path: file.path)
        let service = try StateFixtures.service([scenario], store: store, saved: try store.load())
        let held = try #require(service.state.customers.first?.scenario)
        #expect(Self.tokens(held) == [subscription: [Self.token(40)]])
        let info = StateFixtures.call(service, .transactionInfo, "\(subscription)")
        #expect(StateFixtures.payload(StateFixtures.json(info)?["signedTransactionInfo"])?["appAccountToken"]?.stringValue == Self.token(40))
    }

    @Test("A state file of format 1 (the whole scenario in its customer row) still loads: its events are kept, and a new token replaces its tokens")
    func formatOneLoads() throws {
        let file = try Self.temporaryFile()
        defer { Self.remove(file) }
        var given = try StateFixtures.sandboxCustomer()
        let madeAt = try #require(ReceiptDate.parse(StateFixtures.clock))
        given.seed = Store.derivedSeed(given, now: madeAt)
        let subscription = try #require(try StateFixtures.ids(given)["pro.monthly"]?.first)
        var grown = given
        grown.timeline =
            (given.timeline ?? []) + [
                TimelineEvent(.appAccountToken, at: "2025-01-01T00:00:00Z", productID: "pro.monthly", token: Self.token(1), originalTransactionID: subscription),
                TimelineEvent(.extend, at: "2025-01-01T00:00:00Z", productID: "pro.monthly", days: 3),
                TimelineEvent(.appAccountToken, at: "2025-01-01T00:00:00Z", productID: "pro.monthly", token: Self.token(2), originalTransactionID: subscription),
            ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            let db = try SQLiteConnection(path: file.path)
            // The layout of format 1, as forge wrote it before events had a table of their own (GRDB's migration table).
            try db.execute(
                """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('v1');
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
            try db.execute(
                "INSERT INTO customer (position, made_at, given, scenario) VALUES (0, ?, ?, ?)",
                [
                    .real(madeAt.timeIntervalSince1970), .text(String(decoding: try encoder.encode(given), as: UTF8.self)),
                    .text(String(decoding: try encoder.encode(grown), as: UTF8.self)),
                ])
        }
        do {
            let store = try SQLiteStateStore(path: file.path)
            let service = try StateFixtures.service([given], store: store, saved: try store.load())
            let held = try #require(service.state.customers.first?.scenario)
            #expect(held.timeline == grown.timeline, "format 1's events, as they were")
            #expect(Self.put(service, subscription, 3).status == 200)
        }
        let store = try SQLiteStateStore(path: file.path)
        let service = try StateFixtures.service([given], store: store, saved: try store.load())
        let held = try #require(service.state.customers.first?.scenario)
        #expect(Self.tokens(held) == [subscription: [Self.token(3)]], "the new token replaced both of format 1's")
        #expect((held.timeline ?? []).filter { $0.event == .extend }.count == 1)
    }
}
