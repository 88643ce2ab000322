import Foundation
import ForgeTestSupport
import Testing

/// Issue 23, item 5: `forge serve --state FILE` keeps the server state in SQLite, so a server killed with SIGKILL
/// in the middle of deliveries and started again on the same file repeats no acknowledged delivery, loses no
/// pending retry, and answers from the same history. The webhook is `examples/receivers/notification_receiver.py`
/// (Apple's `SignedDataVerifier` on every payload); the file is read back with the `sqlite3` command.
@Suite("forge serve --state: the server state survives SIGKILL and a restart", .timeLimit(.minutes(2)))
struct ServerStateFileTests {
    static func arguments(_ setup: NotificationDeliveryTests.Setup, hook: String, state: URL) -> [String] {
        [
            "serve", "--listen", "127.0.0.1:0", "--no-auth", "--now", "2025-01-14T23:59:00Z", "--scenario", setup.scenario.path, "--notify", hook + "/apple",
            "--state", state.path,
        ]
    }

    /// A JSON request's HTTP status (JSON, as a control POST must say without a control token).
    static func send(_ method: String, _ url: String, _ body: String) async throws -> Int {
        try await request(url, method: method, headers: ["Content-Type": "application/json"], body: Data(body.utf8)).status
    }

    /// The SHA-256 of each body the webhook received, in order.
    static func bodies(_ record: URL) -> [String] { NotificationDeliveryTests.records(record).compactMap { $0["sha256"] as? String } }

    @Test(
        "Killed while a webhook holds an attempt, restarted on the same file: the clock resumes, the acknowledged renewal is not sent again, the held one is, the failed one is retried on schedule, the app account token and the finished transaction are kept",
        .requires(.appleLibrary, .sqlite3)
    )
    func survivesSIGKILL() async throws {
        let setup = try await NotificationDeliveryTests.Setup.make()
        defer { setup.close() }
        let record = setup.productionRecord
        let state = setup.directory.appendingPathComponent("state.db")
        // January's renewal is acknowledged, February's fails, March's is held open when the server is killed; after the
        // restart March's is sent again, then February's retry, then a TEST asked for last.
        let hook = try await NotificationDeliveryTests.receiver(
            "200,500,hang,200,200,200", record: record, bundle: "com.example.prod", environment: "production", app: setup.app)
        defer { hook.kill() }
        let made = try await forge("jws", "make", "transaction", "-q", "--spec", setup.scenario.path)
        let original = try #require(NotificationDeliveryTests.payload(made.text.trimmingCharacters(in: .whitespacesAndNewlines))["originalTransactionId"] as? String)
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

        let first = try await BackgroundServer.start(Self.arguments(setup, hook: hook.url, state: state))
        defer { first.kill() }
        #expect(try await Self.send("PUT", first.url + "/inApps/v1/transactions/\(original)/appAccountToken", #"{"appAccountToken":"\#(token)"}"#) == 200)
        #expect(try await Self.send("POST", first.url + "/inApps/v1/transactions/\(original)/finish", "") == 200)
        #expect(try await Self.send("POST", first.url + "/_forge/clock", #"{"now":"2025-03-15T00:30:00Z"}"#) == 200)
        try await eventually("three renewals reach the webhook") { NotificationDeliveryTests.records(record).count >= 3 }
        #expect(NotificationDeliveryTests.records(record).map { $0["step"] as? String } == ["200", "500", "hang"])
        // February's failure is in the state file once the server has recorded it (before the next attempt begins, so
        // before March's, which the webhook holds).
        await first.stop()  // SIGKILL, March's attempt unanswered

        let second = try await BackgroundServer.start(Self.arguments(setup, hook: hook.url, state: state))
        defer { second.kill() }
        let clock = try await request(second.url + "/_forge/clock")
        #expect(try clock.json()["now"] as? String == "2025-03-15T00:30:00Z", "the clock resumes where it was, not at --now")
        try await eventually("the held renewal is sent again") { NotificationDeliveryTests.records(record).count >= 4 }
        // One pass of the delivery loop sends every delivery due, in the order they were enqueued (February's before
        // March's): that March's came alone shows February's retry, due an hour after its first attempt, is not due yet.
        var bodies = Self.bodies(record)
        #expect(bodies.count == 4 && bodies[3] == bodies[2], "the held notification is sent again first, alone: \(bodies)")
        #expect(try await Self.send("POST", second.url + "/_forge/clock", #"{"advance":5400}"#) == 200)
        try await eventually("February's retry is sent") { NotificationDeliveryTests.records(record).count >= 5 }
        // A TEST, asked for now and due at once: it comes after anything else due, so once it is in, nothing else was.
        #expect(try await Self.send("POST", second.url + "/inApps/v1/notifications/test", "") == 200)
        try await eventually("the TEST is delivered") { NotificationDeliveryTests.records(record).count >= 6 }

        let records = NotificationDeliveryTests.records(record)
        #expect(records.allSatisfy { $0["verified"] as? Bool == true }, "\(records)")
        #expect(records.map { $0["notificationType"] as? String } == Array(repeating: "DID_RENEW", count: 5) + ["TEST"], "\(records)")
        bodies = Self.bodies(record)
        #expect(bodies.count == 6 && Set(bodies.prefix(5)).count == 3, "\(bodies)")
        if bodies.count == 6 {
            #expect(bodies[3] == bodies[2], "the held notification is sent again: it was never acknowledged")
            #expect(bodies[4] == bodies[1], "the failed one is retried after the restart")
            #expect(bodies.filter { $0 == bodies[0] }.count == 1, "the acknowledged one is not repeated")
        }

        // An attempt is recorded once the webhook has answered: asked until the TEST's is in.
        var items: [[String: Any]] = []
        try await eventually("every attempt is in the history") {
            items = try await NotificationDeliveryTests.history(second.url + "/inApps", days: 90)
            let results = NotificationDeliveryTests.results(items)
            return results.count == 4 && results.allSatisfy { $0.last == "SUCCESS" }
        }
        #expect(Self.renewalResults(items) == [["SUCCESS"], ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"], ["SUCCESS"]], "\(items)")
        let february = (Self.renewals(items).dropFirst().first?["sendAttempts"] as? [[String: Any]])?.compactMap { $0["attemptDate"] as? Int64 } ?? []
        // Failed at 00:30 on the first server's clock, retried at 02:00 on the second's: an hour and a half later.
        #expect(february.count == 2 && february[1] - february[0] == 90 * 60_000, "\(february)")

        let info = try await request(second.url + "/inApps/v1/transactions/\(original)")
        let jws = try info.json()["signedTransactionInfo"] as? String ?? ""
        #expect(NotificationDeliveryTests.payload(jws)["appAccountToken"] as? String == token, "the token set before the kill")

        // The file as any SQLite reader sees it, once the server that holds it exclusively is gone.
        await second.stop()
        let rows = try await run(try Oracle.sqlite3.required(), [state.path, "SELECT transaction_id FROM finished_transaction; SELECT COUNT(*) FROM send_attempt;"])
        #expect(rows.text.split(separator: "\n") == [Substring(original), "5"], "\(rows.text)")
    }

    /// The history's renewals (not the TEST), in its order.
    static func renewals(_ items: [[String: Any]]) -> [[String: Any]] {
        items.filter { NotificationDeliveryTests.payload($0["signedPayload"] as? String ?? "")["notificationType"] as? String == "DID_RENEW" }
    }

    static func renewalResults(_ items: [[String: Any]]) -> [[String]] { NotificationDeliveryTests.results(renewals(items)) }

    @Test(
        "A state file is never taken over: a second server on it is refused while the first runs (exit 73), other --scenario files are refused (exit 65), a file that is not a state file is refused (exit 73); each leaves the file as it was",
        .requires(.sqlite3)
    )
    func refusals() async throws {
        let setup = try await NotificationDeliveryTests.Setup.make()
        defer { setup.close() }
        let state = setup.directory.appendingPathComponent("state.db")
        let first = try await BackgroundServer.start(Self.arguments(setup, hook: "http://127.0.0.1:9", state: state))
        defer { first.kill() }
        // Killed at the deadline should it start serving after all.
        let busy = try await run(Binaries.forge, Self.arguments(setup, hook: "http://127.0.0.1:9", state: state), killAfter: .seconds(30))
        #expect(busy.exited && busy.status == 73 && busy.stderr.contains("in use by another process"), "\(busy.stderr)")
        await first.stop()

        let before = try await Self.dump(state)
        var other = Self.arguments(setup, hook: "http://127.0.0.1:9", state: state)
        other[other.firstIndex(of: setup.scenario.path) ?? 0] = NotificationDeliveryTests.sandboxCustomer.path
        let mismatch = try await run(Binaries.forge, other, killAfter: .seconds(30))
        #expect(mismatch.exited && mismatch.status == 65 && mismatch.stderr.contains("holds the state of other scenarios"), "\(mismatch.stderr)")
        #expect(try await Self.dump(state) == before, "the state is as it was (SQLite may fold its WAL into the file)")

        let foreign = Self.arguments(setup, hook: "http://127.0.0.1:9", state: setup.scenario)
        let scenarioBytes = try Data(contentsOf: setup.scenario)
        let refused = try await run(Binaries.forge, foreign, killAfter: .seconds(30))
        #expect(refused.exited && refused.status == 73 && refused.stderr.contains("not a state file"), "\(refused.stderr)")
        #expect(try Data(contentsOf: setup.scenario) == scenarioBytes)
    }

    /// The file's contents as SQL (`sqlite3 FILE .dump`).
    static func dump(_ file: URL) async throws -> Data {
        try await run(try Oracle.sqlite3.required(), [file.path, ".dump"]).stdout
    }
}
