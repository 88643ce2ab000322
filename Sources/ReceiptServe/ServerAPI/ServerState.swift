public import Foundation
public import ForgeSupport
public import StoreModel
import Synchronization

/// What the server side knows and what has changed since it started: the customers (one `--scenario` each),
/// the server clock, and what the developer did through the API. One instance serves every request, so a
/// mutation is visible to the next answer.
///
/// A mutation of a customer's store is a timeline event appended to its scenario (an extension is `extend`, a
/// token `app-account-token`), stamped with the server clock: every artefact rendered later shows it, and the
/// same scenario with that timeline, given to `forge jws make --spec`, renders the same bytes. Each scenario's
/// seed is pinned when it is loaded, so a growing timeline never moves the ids already handed out.
public final class ServerState: Sendable {
    public struct Customer: Sendable {
        public internal(set) var scenario: Scenario
        /// When the device's purchases were made (the scenario's `now`): that fixes their ids.
        public let madeAt: Date
    }

    /// A `TEST` notification a client asked for, as Get Test Notification Status answers it.
    struct TestNotification: Sendable {
        let token: String
        let environment: ServerAPIEnvironment
        let bundleID: String
        let signedPayload: String
        let sentAt: Date
    }

    /// A mass extension, as its status endpoint answers it (it completes at once).
    struct MassExtension: Sendable {
        let productID: String
        let completedAt: Date
        let succeeded: Int
        let failed: Int
    }

    struct Mutable: Sendable {
        var customers: [Customer]
        /// `POST /_forge/clock`: how far the clock has been moved from `--now` (or the wall clock).
        var offset: TimeInterval = 0
        var testNotifications: [String: TestNotification] = [:]
        var massExtensions: [String: MassExtension] = [:]
        /// A renewal-date extension already answered, by request identifier and original transaction id: a retry
        /// gets the same answer and extends nothing. [guess: Apple documents the identifier, not retries]
        var extensions: [String: JSONValue] = [:]
        /// How many `TEST` notifications were asked for: the seed of the next token.
        var tests: UInt64 = 0
        /// Counts the changes: an answer kept for one version is stale in the next (``ResponseCache``).
        var version: UInt64 = 0
    }

    /// `--now`; nil, the wall clock.
    let configuredNow: Date?
    /// `--time-rate`: server seconds per wall second, from `--now` (or the start) on; nil, a clock that only
    /// `POST /_forge/clock` moves (with `--now`) or the wall clock.
    let timeRate: Double?
    /// When the server started, on the wall clock: where a time rate counts from.
    let startedWall: Date
    /// The server clock when the server started: notifications of what happens after it are delivered.
    public let startedAt: Date
    let mutable: Mutex<Mutable>

    /// Bounds what clients can make the server hold: test notifications and mass extensions kept (the oldest
    /// go first), extension answers remembered for retries.
    static let maximumRecords = 10_000

    public init(customers: [Customer] = [], now: Date? = nil, timeRate: Double? = nil) {
        configuredNow = now
        self.timeRate = timeRate
        let wall = Date()
        startedWall = wall
        startedAt = now ?? wall
        mutable = Mutex(Mutable(customers: customers))
    }

    /// The time rates `--time-rate` takes: up to a year a second.
    public static let timeRates: ClosedRange<Double> = 0.001...31_622_400

    /// Each scenario with its seed pinned (that of `forge make` at its `now`), checked to need a `now`.
    public convenience init(scenarios: [Scenario], now: Date? = nil, timeRate: Double? = nil) throws(ForgeError) {
        var customers: [Customer] = []
        for (index, var scenario) in scenarios.enumerated() {
            guard let text = scenario.now, let madeAt = ReceiptDate.parse(text) else {
                throw ForgeError(.invalidScenario, "scenario \(index + 1) needs 'now': when its purchases were made (that fixes their ids)")
            }
            scenario.seed = scenario.seed ?? Store.derivedSeed(scenario, now: madeAt)
            customers.append(Customer(scenario: scenario, madeAt: madeAt))
        }
        self.init(customers: customers, now: now, timeRate: timeRate)
    }

    public var customers: [Customer] { mutable.withLock { $0.customers } }

    /// The server clock: a request's `X-Forge-Now`, else `--now` (or the wall clock) moved by `POST /_forge/clock`.
    public func now(request: Date? = nil) -> Date {
        if let request { return request }
        return clock(offset: mutable.withLock { $0.offset })
    }

    private func clock(offset: TimeInterval) -> Date {
        guard let timeRate else { return (configuredNow ?? Date()).addingTimeInterval(offset) }
        let run = Date().timeIntervalSince(startedWall) * timeRate
        return (configuredNow ?? startedWall).addingTimeInterval(run + offset)
    }

    /// `POST /_forge/clock`: moves the clock to `date`; only forward, as a timeline only grows.
    public func setClock(to date: Date) throws(ServeError) {
        guard ReceiptDate.writable.contains(date) else { throw ServeError(.invalidClock, "\(ReceiptDate.format(date)) is \(ReceiptDate.outsideWritable)") }
        try mutable.withLock { (state) throws(ServeError) in
            let current = clock(offset: state.offset)
            guard date >= current else {
                throw ServeError(.invalidClock, "the clock only moves forward: it is \(ReceiptDate.format(current)), not before")
            }
            state.offset += date.timeIntervalSince(current)
        }
    }

    /// Runs `change` on the state under the lock: a check and the mutation it allows happen as one.
    func change<T>(_ change: (inout Mutable) throws(ServerAPIError) -> T) throws(ServerAPIError) -> T {
        try mutable.withLock { (state) throws(ServerAPIError) -> T in
            state.version &+= 1
            return try change(&state)
        }
    }

    /// The number of changes so far.
    var version: UInt64 { mutable.withLock { $0.version } }
}
