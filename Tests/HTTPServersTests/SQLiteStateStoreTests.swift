import Foundation
import _ForgeSupport
import StoreServer
@testable import StoreServerSQLite
import StoreModel
import Testing
import ForgeTestSupport

/// `forge serve --state FILE`'s store: every kind of change written and read back as it was, the eviction of a
/// kind, and a damaged file refused with its table named instead of trapping.
@Suite("The state file: SQLite through its C API", .timeLimit(.minutes(2)))
struct SQLiteStateStoreTests {
    /// A state file in a fresh folder of the test's own (SQLite writes its -wal and -shm beside it).
    static func temporaryFile() throws -> URL { try temporaryDirectory().appendingPathComponent("state.db") }

    /// Removes the state file's folder, and with it everything SQLite wrote beside the file.
    static func remove(_ file: URL) { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }

    static let date = Date(timeIntervalSince1970: 1_736_899_200.125)

    /// An extension's answer, as kept for a retry of its request identifier.
    static func extended(_ id: String) -> ExtendRenewalDateResponse {
        ExtendRenewalDateResponse(originalTransactionId: id, webOrderLineItemId: "2000000009", success: true, effectiveDate: 1_737_763_200_000)
    }

    @Test("Each change is read back as written: clock, customer, records, deliveries with their attempts and due dates, watermarks, drops")
    func roundTrip() throws {
        let file = try Self.temporaryFile()
        defer { Self.remove(file) }
        var scenario = Scenario()
        scenario.bundleID = "com.example.app"
        scenario.now = "2025-01-01T00:00:00Z"
        var grown = scenario
        grown.timeline = [TimelineEvent(.extend, at: "2025-01-02T00:00:00Z", productID: "pro.monthly", days: 5)]
        let attempt = SendAttempt(date: Self.date, result: .unsuccessfulHTTPResponseCode, httpStatus: 500, milliseconds: 12, detail: "HTTP 500")
        let delivery = NotificationDispatcher.Delivery(key: "k1", environment: .production, body: Array(#"{"signedPayload":"a.b.c"}"#.utf8), position: 0, due: Self.date)
        do {
            let store = try SQLiteStateStore(path: file.path)
            try store.write([
                .customer(SavedCustomer(position: 0, given: scenario, scenario: grown, madeAt: Self.date)),
                .testNotification(.init(token: "t", environment: .sandbox, bundleID: "com.example.app", signedPayload: "x.y.z", sentAt: Self.date)),
                .testsRequested(3),
                .massExtension(key: "m", .init(productID: "pro.monthly", completedAt: Self.date, succeeded: 2, failed: 1)),
                .extensionAnswer(key: "e", Self.extended("2000000001")),
                .finished(.init(environment: .production, transactionID: "2000000001", finishedAt: Self.date)),
                .consumption(.init(environment: .sandbox, transactionID: "2000000002", receivedAt: Self.date, body: .object([("customerConsented", .bool(true))]))),
                .delivery(delivery), .delivery(.init(key: "k2", environment: .sandbox, body: [1, 2], position: 1, due: Self.date)),
                .delivery(.init(key: "k3", environment: .sandbox, body: [3, 4], position: 2, due: Self.date)),
                .attempt(key: "k1", attempt, due: Self.date.addingTimeInterval(3600)),
                .attempt(key: "k1", SendAttempt(date: Self.date.addingTimeInterval(3600), result: .success, httpStatus: 200, milliseconds: 3), due: nil),
                .watermark(.production, Self.date), .dropped(7), .clock(now: Self.date, offset: 42.5),
            ])
            try store.write([.forgetDelivery(key: "k2")])
        }
        let saved = try SQLiteStateStore(path: file.path).load()
        #expect(saved.clock?.now == Self.date && saved.clock?.offset == 42.5)
        #expect(saved.customers.count == 1 && saved.customers.first?.given == scenario && saved.customers.first?.scenario == grown)
        #expect(saved.testNotifications.map(\.token) == ["t"] && saved.testNotifications.first?.environment == .sandbox)
        #expect(saved.testsRequested == 3)
        #expect(saved.massExtensions.map(\.key) == ["m"] && saved.massExtensions.first?.request.succeeded == 2 && saved.massExtensions.first?.request.failed == 1)
        #expect(saved.extensionAnswers.map(\.key) == ["e"] && saved.extensionAnswers.first?.answer == Self.extended("2000000001"))
        #expect(saved.finished.map(\.transactionID) == ["2000000001"])
        #expect(saved.consumption.first?.body == .object([("customerConsented", .bool(true))]))
        #expect(saved.deliveries.map(\.key) == ["k1", "k3"], "k2 was forgotten")
        let kept = try #require(saved.deliveries.first)
        #expect(kept.body.isEmpty && kept.due == nil, "delivered: it is never sent again, so its body is not kept")
        #expect(saved.deliveries.last?.body == [3, 4] && saved.deliveries.last?.due == Self.date, "pending: its body is kept for the attempt")
        #expect(kept.attempts.map(\.result) == [.unsuccessfulHTTPResponseCode, .success] && kept.attempts.first?.httpStatus == 500)
        #expect(kept.attempts.first?.detail == "HTTP 500" && kept.attempts.first?.date == Self.date)
        #expect(saved.watermarks == [.production: Self.date] && saved.dropped == 7)
    }

    @Test("Evicting a kind takes out its oldest record only, and every kind is read back oldest first")
    func evict() throws {
        let file = try Self.temporaryFile()
        defer { Self.remove(file) }
        let store = try SQLiteStateStore(path: file.path)
        try store.write([
            .finished(.init(environment: .production, transactionID: "1", finishedAt: Self.date)),
            .finished(.init(environment: .production, transactionID: "2", finishedAt: Self.date)),
            .extensionAnswer(key: "z", Self.extended("1")), .extensionAnswer(key: "a", Self.extended("2")),
        ])
        try store.write([.evict(.finished), .finished(.init(environment: .production, transactionID: "3", finishedAt: Self.date))])
        let saved = try store.load()
        #expect(saved.finished.map(\.transactionID) == ["2", "3"])
        #expect(saved.extensionAnswers.map(\.key) == ["z", "a"], "in the order they were kept, not by key")
    }

    @Test("A damaged file is an error that names the table, never a trap; the file is left as it is")
    func damaged() throws {
        let file = try Self.temporaryFile()
        defer { Self.remove(file) }
        do {
            let store = try SQLiteStateStore(path: file.path)
            try store.write([.finished(.init(environment: .production, transactionID: "1", finishedAt: Self.date))])
        }
        try SQLiteConnection(path: file.path).execute("UPDATE finished_transaction SET finished_at = 'yesterday', environment = 'moon'")
        #expect {
            _ = try SQLiteStateStore(path: file.path).load()
        } throws: { error in
            (error as? ServeError)?.code == .stateFailed && (error as? ServeError)?.message.contains("finished_transaction") == true
        }
    }

    @Test("An extension's answer is kept as it was answered, members in Apple's order, and read back as the answer; one that lacks a member names its table")
    func extensionAnswer() throws {
        let file = try Self.temporaryFile()
        defer { Self.remove(file) }
        try SQLiteStateStore(path: file.path).write([.extensionAnswer(key: "e", Self.extended("2000000001"))])
        let kept = try SQLiteConnection(path: file.path).rows("SELECT answer FROM extension_answer").first?.first?.string
        #expect(kept == #"{"originalTransactionId":"2000000001","webOrderLineItemId":"2000000009","success":true,"effectiveDate":1737763200000}"#)
        #expect(try SQLiteStateStore(path: file.path).load().extensionAnswers.first?.answer == Self.extended("2000000001"))
        try SQLiteConnection(path: file.path).execute(#"UPDATE extension_answer SET answer = '{"success":true}'"#)
        #expect {
            _ = try SQLiteStateStore(path: file.path).load()
        } throws: { error in
            (error as? ServeError)?.code == .stateFailed && (error as? ServeError)?.message.contains("extension_answer") == true
        }
    }
}
