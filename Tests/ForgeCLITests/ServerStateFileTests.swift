import Foundation
import ForgeTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 23, item 5: `forge serve --state FILE` keeps the server state in SQLite, so a server killed with SIGKILL
/// in the middle of deliveries and started again on the same file repeats no acknowledged delivery, loses no
/// pending retry, and answers from the same history. The webhook is `examples/receivers/notification_receiver.py`
/// (Apple's `SignedDataVerifier` on every payload); the file is read back with the `sqlite3` command when present.
@Suite(
    "forge serve --state: the server state survives SIGKILL and a restart", .timeLimit(.minutes(10)),
    .enabled(if: FileManager.default.isExecutableFile(atPath: ServerAPITests.python.path), "Apple's Python library is absent: .ci/run installs .oracles/asl")
)
struct ServerStateFileTests {
    static func arguments(_ setup: NotificationDeliveryTests.Setup, hook: String, state: URL) -> [String] {
        [
            "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-14T23:59:00Z", "--scenario", setup.scenario.path, "--notify", hook + "/apple",
            "--state", state.path,
        ]
    }

    static func send(_ method: String, _ url: String, _ body: String) async throws -> Int {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        // JSON, as a control POST must say without a control token.
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    @Test(
        "Killed while a webhook holds an attempt, restarted on the same file: the clock resumes, the acknowledged renewal is not sent again, the held one is, the failed one is retried on schedule, the app account token and the finished transaction are kept"
    )
    func survivesSIGKILL() async throws {
        let setup = try NotificationDeliveryTests.Setup()
        defer { setup.close() }
        let record = setup.productionRecord
        let state = setup.directory.appendingPathComponent("state.db")
        // January's renewal is acknowledged, February's fails, March's is held open when the server is killed.
        let hook = try NotifyTests.receiver("200,500,hang,200,200", record: record, bundle: "com.example.prod", environment: "production", app: setup.app)
        defer { hook.stop() }
        let made = try forgeBlocking("jws", "make", "transaction", "-q", "--spec", setup.scenario.path)
        let original = try #require(ServerAPITests.payload(made.text.trimmingCharacters(in: .whitespacesAndNewlines))["originalTransactionId"] as? String)
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

        let first = try BlockingServer(forgeBinary, Self.arguments(setup, hook: hook.url, state: state))
        #expect(try await Self.send("PUT", first.url + "/inApps/v1/transactions/\(original)/appAccountToken", #"{"appAccountToken":"\#(token)"}"#) == 200)
        #expect(try await Self.send("POST", first.url + "/inApps/v1/transactions/\(original)/finish", "") == 200)
        #expect(try await Self.send("POST", first.url + "/_forge/clock", #"{"now":"2025-03-15T00:30:00Z"}"#) == 200)
        await NotificationDeliveryTests.waitFor(30) { NotifyTests.records(record).count >= 3 }
        #expect(NotifyTests.records(record).map { $0["step"] as? String } == ["200", "500", "hang"])
        first.stop()  // SIGKILL, March's attempt unanswered

        let second = try BlockingServer(forgeBinary, Self.arguments(setup, hook: hook.url, state: state))
        defer { second.stop() }
        let clock = try #require(await ServerAPITests.get(second.url + "/_forge/clock"))
        #expect(ServerAPITests.object(clock.body)["now"] as? String == "2025-03-15T00:30:00Z", "the clock resumes where it was, not at --now")
        await NotificationDeliveryTests.waitFor(30) { NotifyTests.records(record).count >= 4 }
        // February's retry is due an hour after its first attempt: not yet.
        try await Task.sleep(for: .milliseconds(500))
        #expect(NotifyTests.records(record).count == 4)
        #expect(try await Self.send("POST", second.url + "/_forge/clock", #"{"advance":5400}"#) == 200)
        await NotificationDeliveryTests.waitFor(30) { NotifyTests.records(record).count >= 5 }
        try await Task.sleep(for: .milliseconds(500))

        let records = NotifyTests.records(record)
        #expect(records.allSatisfy { $0["verified"] as? Bool == true && $0["notificationType"] as? String == "DID_RENEW" }, "\(records)")
        let bodies = records.compactMap { $0["sha256"] as? String }
        #expect(bodies.count == 5 && Set(bodies).count == 3, "\(bodies)")
        if bodies.count == 5 {
            #expect(bodies[3] == bodies[2], "the held notification is sent again: it was never acknowledged")
            #expect(bodies[4] == bodies[1], "the failed one is retried after the restart")
            #expect(bodies.filter { $0 == bodies[0] }.count == 1, "the acknowledged one is not repeated")
        }

        let start = ReceiptDateMillis.january14, end = start + 90 * 24 * NotificationDeliveryTests.hour
        let history = try await NotificationDeliveryTests.post(second.url + "/inApps/v1/notifications/history", #"{"startDate":\#(start),"endDate":\#(end)}"#)
        let items = history["notificationHistory"] as? [[String: Any]] ?? []
        let results = items.map { ($0["sendAttempts"] as? [[String: Any]] ?? []).compactMap { $0["sendAttemptResult"] as? String } }
        #expect(results == [["SUCCESS"], ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"], ["SUCCESS"]], "\(history)")
        let february = (items.count == 3 ? items[1]["sendAttempts"] as? [[String: Any]] : nil)?.compactMap { $0["attemptDate"] as? Int64 } ?? []
        #expect(february.count == 2 && february[1] - february[0] >= NotificationDeliveryTests.hour, "\(february)")

        let info = try #require(await ServerAPITests.get(second.url + "/inApps/v1/transactions/\(original)"))
        let jws = ServerAPITests.object(info.body)["signedTransactionInfo"] as? String ?? ""
        #expect(ServerAPITests.payload(jws)["appAccountToken"] as? String == token, "the token set before the kill")

        // The file as any SQLite reader sees it, once the server that holds it exclusively is gone.
        second.stop()
        if let sqlite = Self.sqlite3 {
            let rows = try runBlocking(sqlite, [state.path, "SELECT transaction_id FROM finished_transaction; SELECT COUNT(*) FROM send_attempt;"])
            #expect(rows.text.split(separator: "\n") == [Substring(original), "4"], "\(rows.text)")
        }
    }

    @Test(
        "A state file is never taken over: a second server on it is refused while the first runs (exit 73), other --scenario files are refused (exit 65), a file that is not a state file is refused (exit 73); each leaves the file as it was"
    )
    func refusals() async throws {
        let setup = try NotificationDeliveryTests.Setup()
        defer { setup.close() }
        let state = setup.directory.appendingPathComponent("state.db")
        let first = try BlockingServer(forgeBinary, Self.arguments(setup, hook: "http://127.0.0.1:9", state: state))
        let busy = try forgeBlocking(arguments: Self.arguments(setup, hook: "http://127.0.0.1:9", state: state))
        #expect(busy.status == 73 && busy.stderr.contains("in use by another process"), "\(busy.stderr)")
        first.stop()

        let before = try Self.dump(state)
        var other = Self.arguments(setup, hook: "http://127.0.0.1:9", state: state)
        other[other.firstIndex(of: setup.scenario.path) ?? 0] = ServerAPITests.examples.appendingPathComponent("sandbox-customer.json").path
        let mismatch = try forgeBlocking(arguments: other)
        #expect(mismatch.status == 65 && mismatch.stderr.contains("holds the state of other scenarios"), "\(mismatch.stderr)")
        #expect(try Self.dump(state) == before, "the state is as it was (SQLite may fold its WAL into the file)")

        var foreign = Self.arguments(setup, hook: "http://127.0.0.1:9", state: setup.scenario)
        foreign[0] = "serve"
        let scenarioBytes = try Data(contentsOf: setup.scenario)
        let refused = try forgeBlocking(arguments: foreign)
        #expect(refused.status == 73 && refused.stderr.contains("not a state file"), "\(refused.stderr)")
        #expect(try Data(contentsOf: setup.scenario) == scenarioBytes)
    }

    /// The file's contents as SQL (`sqlite3 FILE .dump`); without `sqlite3` (.ci/run installs it), its size only.
    static func dump(_ file: URL) throws -> Data {
        guard let sqlite3 else { return Data("\(try Data(contentsOf: file).isEmpty)".utf8) }
        return try runBlocking(sqlite3, [file.path, ".dump"]).stdout
    }

    /// The `sqlite3` command, if installed (Debian's sqlite3; .ci/run installs it).
    static let sqlite3: URL? = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3"].map(URL.init(fileURLWithPath:)).first {
        FileManager.default.isExecutableFile(atPath: $0.path)
    }
}
