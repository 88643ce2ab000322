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
///
/// With a ``ServerStateStore`` (`--state FILE`) every change is written before it takes effect: a change the
/// file cannot take is not made, and a restart on the file resumes here.
public final class ServerState: Sendable {
    public struct Customer: Sendable {
        public fileprivate(set) var scenario: Scenario
        /// The scenario as given (its seed pinned): what a restart's `--scenario` must match.
        public let given: Scenario
        /// When the device's purchases were made (the scenario's `now`): that fixes their ids.
        public let madeAt: Date
    }

    /// A `TEST` notification a client asked for, as Get Test Notification Status answers it.
    public struct TestNotification: Sendable {
        public let token: String
        public let environment: ServerAPIEnvironment
        public let bundleID: String
        public let signedPayload: String
        public let sentAt: Date

        public init(token: String, environment: ServerAPIEnvironment, bundleID: String, signedPayload: String, sentAt: Date) {
            self.token = token
            self.environment = environment
            self.bundleID = bundleID
            self.signedPayload = signedPayload
            self.sentAt = sentAt
        }
    }

    /// A mass extension, as its status endpoint answers it (it completes at once).
    public struct MassExtension: Sendable {
        public let productID: String
        public let completedAt: Date
        public let succeeded: Int
        public let failed: Int

        public init(productID: String, completedAt: Date, succeeded: Int, failed: Int) {
            self.productID = productID
            self.completedAt = completedAt
            self.succeeded = succeeded
            self.failed = failed
        }
    }

    /// A transaction the developer finished (Finish Transaction).
    public struct FinishedTransaction: Sendable, Hashable {
        public let environment: ServerAPIEnvironment
        public let transactionID: String
        public let finishedAt: Date

        public init(environment: ServerAPIEnvironment, transactionID: String, finishedAt: Date) {
            self.environment = environment
            self.transactionID = transactionID
            self.finishedAt = finishedAt
        }
    }

    /// Consumption information the developer sent (Send Consumption Information v1 or v2), as sent.
    public struct ConsumptionReport: Sendable {
        public let environment: ServerAPIEnvironment
        public let transactionID: String
        public let receivedAt: Date
        public let body: JSONValue

        public init(environment: ServerAPIEnvironment, transactionID: String, receivedAt: Date, body: JSONValue) {
            self.environment = environment
            self.transactionID = transactionID
            self.receivedAt = receivedAt
            self.body = body
        }
    }

    /// The records that clients add and ``maximumRecords`` bounds.
    public enum RecordKind: String, Sendable, CaseIterable {
        case testNotifications, massExtensions, extensionAnswers, finished, consumption
    }

    /// The state a change works on. Its parts change only through its methods, each of which notes what it
    /// changed in `journal`: what a store writes is exactly what changed.
    struct Mutable: Sendable {
        fileprivate(set) var customers: [Customer]
        /// `POST /_forge/clock`: how far the clock has been moved from `--now` (or the wall clock).
        fileprivate(set) var offset: TimeInterval = 0
        private(set) var testNotifications: [String: TestNotification] = [:]
        private(set) var massExtensions: [String: MassExtension] = [:]
        /// A renewal-date extension already answered, by request identifier and original transaction id: a retry
        /// gets the same answer and extends nothing. [guess: Apple documents the identifier, not retries]
        private(set) var extensionAnswers: [String: JSONValue] = [:]
        private(set) var finished: [FinishedTransaction] = []
        private(set) var consumption: [ConsumptionReport] = []
        /// How many `TEST` notifications were asked for: the seed of the next token.
        private(set) var testsRequested: UInt64 = 0
        /// Counts the changes: an answer kept for one version is stale in the next (``ResponseCache``).
        fileprivate(set) var version: UInt64 = 0
        /// What changed since the last write, in order.
        fileprivate(set) var journal: [StateChange] = []

        mutating func append(_ event: TimelineEvent, toCustomer index: Int) {
            customers[index].scenario.append(event)
            let customer = customers[index]
            journal.append(.customer(SavedCustomer(position: index, given: customer.given, scenario: customer.scenario, madeAt: customer.madeAt)))
        }

        /// The number of the next `TEST` notification, counted.
        mutating func nextTest() -> UInt64 {
            testsRequested += 1
            journal.append(.testsRequested(testsRequested))
            return testsRequested
        }

        mutating func remember(_ test: TestNotification) {
            makeRoom(.testNotifications, count: testNotifications.count)
            testNotifications[test.token] = test
            journal.append(.testNotification(test))
        }

        mutating func remember(_ massExtension: MassExtension, key: String) {
            makeRoom(.massExtensions, count: massExtensions.count)
            massExtensions[key] = massExtension
            journal.append(.massExtension(key: key, massExtension))
        }

        mutating func remember(extensionAnswer answer: JSONValue, key: String) {
            makeRoom(.extensionAnswers, count: extensionAnswers.count)
            extensionAnswers[key] = answer
            journal.append(.extensionAnswer(key: key, answer))
        }

        mutating func remember(_ transaction: FinishedTransaction) {
            makeRoom(.finished, count: finished.count)
            finished.append(transaction)
            journal.append(.finished(transaction))
        }

        mutating func remember(_ report: ConsumptionReport) {
            makeRoom(.consumption, count: consumption.count)
            consumption.append(report)
            journal.append(.consumption(report))
        }

        /// At ``maximumRecords`` of a kind, every record of it goes: bounded, and simple to reason about.
        private mutating func makeRoom(_ kind: RecordKind, count: Int) {
            guard count >= ServerState.maximumRecords else { return }
            switch kind {
            case .testNotifications: testNotifications.removeAll()
            case .massExtensions: massExtensions.removeAll()
            case .extensionAnswers: extensionAnswers.removeAll()
            case .finished: finished.removeAll()
            case .consumption: consumption.removeAll()
            }
            journal.append(.forget(kind))
        }

        /// What `saved` holds, applied to the customers given now.
        fileprivate mutating func restore(_ saved: SavedState) {
            for customer in saved.customers where customers.indices.contains(customer.position) {
                customers[customer.position].scenario = customer.scenario
            }
            offset = saved.clock?.offset ?? 0
            for test in saved.testNotifications { testNotifications[test.token] = test }
            massExtensions = saved.massExtensions
            extensionAnswers = saved.extensionAnswers
            finished = saved.finished
            consumption = saved.consumption
            testsRequested = saved.testsRequested
        }
    }

    /// `--now`, or where a restart resumes; nil, the wall clock.
    let configuredNow: Date?
    /// `--time-rate`: server seconds per wall second, from `--now` (or the start) on; nil, a clock that only
    /// `POST /_forge/clock` moves (with `--now`) or the wall clock.
    let timeRate: Double?
    /// When the server started, on the wall clock: where a time rate counts from.
    let startedWall: Date
    /// The server clock when the server started: notifications of what happens after it are delivered.
    public let startedAt: Date
    let mutable: Mutex<Mutable>
    /// `--state FILE`; nil keeps the state in memory only.
    public let store: (any ServerStateStore)?

    /// Bounds what clients can make the server hold: test notifications, mass extensions, extension answers
    /// remembered for retries, finished transactions and consumption reports (past it, those of the kind go).
    public static let maximumRecords = 10_000

    public init(customers: [Customer] = [], now: Date? = nil, timeRate: Double? = nil) {
        configuredNow = now
        self.timeRate = timeRate
        let wall = Date()
        startedWall = wall
        startedAt = now ?? wall
        mutable = Mutex(Mutable(customers: customers))
        store = nil
    }

    /// Resumes `saved` (kept by `store`) with `customers` as given now. The clock resumes where it was kept,
    /// or at `now` if that is later: a clock only moves forward.
    init(customers: [Customer], now: Date?, timeRate: Double?, saved: SavedState, store: any ServerStateStore) {
        let wall = Date()
        var state = Mutable(customers: customers)
        state.restore(saved)
        if let kept = saved.clock?.now {
            if now == nil, timeRate == nil {
                // The wall clock, moved as far as it was: no earlier than where it stopped.
                configuredNow = nil
                state.offset = max(state.offset, kept.timeIntervalSince(wall))
            } else {
                // A pinned or running clock starts again where it stopped (or at a later --now).
                configuredNow = max(now ?? kept, kept)
                state.offset = 0
            }
        } else {
            configuredNow = now
        }
        self.timeRate = timeRate
        startedWall = wall
        startedAt = configuredNow.map { $0.addingTimeInterval(state.offset) } ?? wall.addingTimeInterval(state.offset)
        mutable = Mutex(state)
        self.store = store
    }

    /// The time rates `--time-rate` takes: up to a year a second.
    public static let timeRates: ClosedRange<Double> = 0.001...31_622_400

    /// Each scenario with its seed pinned (that of `forge make` at its `now`), checked to need a `now`. With a
    /// `store`, what it kept (`saved`, its ``ServerStateStore/load()``) is resumed: its customers must be these
    /// scenarios (else the file is another server's, and nothing in it is touched), and a new file starts with them.
    public convenience init(
        scenarios: [Scenario], now: Date? = nil, timeRate: Double? = nil, store: (any ServerStateStore)? = nil, saved: SavedState = SavedState()
    ) throws(ForgeError) {
        var customers: [Customer] = []
        for (index, var scenario) in scenarios.enumerated() {
            guard let text = scenario.now, let madeAt = ReceiptDate.parse(text) else {
                throw ForgeError(.invalidScenario, "scenario \(index + 1) needs 'now': when its purchases were made (that fixes their ids)")
            }
            scenario.seed = scenario.seed ?? Store.derivedSeed(scenario, now: madeAt)
            customers.append(Customer(scenario: scenario, given: scenario, madeAt: madeAt))
        }
        guard let store else {
            self.init(customers: customers, now: now, timeRate: timeRate)
            return
        }
        if saved.isEmpty {
            let first = customers.enumerated().map { StateChange.customer(SavedCustomer(position: $0, given: $1.given, scenario: $1.scenario, madeAt: $1.madeAt)) }
            do { try store.write(first) } catch { throw ForgeError(.conflictingOptions, error.message) }
        } else if let mismatch = Self.mismatch(saved.customers, customers) {
            throw ForgeError(
                .conflictingOptions,
                "\(store.path) holds the state of other scenarios (\(mismatch)): start with the same --scenario files as when it was made, or another --state file; it is left as it is"
            )
        }
        self.init(customers: customers, now: now, timeRate: timeRate, saved: saved, store: store)
    }

    /// Why `saved` is not the state of `customers`, or nil when it is.
    private static func mismatch(_ saved: [SavedCustomer], _ customers: [Customer]) -> String? {
        guard saved.count == customers.count else { return "it has \(saved.count) customer(s), --scenario gives \(customers.count)" }
        for (kept, customer) in zip(saved.sorted { $0.position < $1.position }, customers) where kept.given != customer.given {
            return "scenario \(kept.position + 1) differs"
        }
        return nil
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
            let offset = state.offset + date.timeIntervalSince(current)
            try store?.write([.clock(now: date, offset: offset)])
            state.offset = offset
            state.version &+= 1
        }
    }

    /// Writes the clock as it is now, so a restart resumes close to it (the clock moves without changes).
    public func checkpoint() throws(ServeError) {
        guard let store else { return }
        try mutable.withLock { (state) throws(ServeError) in try store.write([.clock(now: clock(offset: state.offset), offset: state.offset)]) }
    }

    /// Runs `change` on the state under the lock: a check and the mutation it allows happen as one. With a
    /// store, what changed is written first; a write that fails leaves the state as it was (5000000).
    func change<T>(_ change: (inout Mutable) throws(ServerAPIError) -> T) throws(ServerAPIError) -> T {
        try mutable.withLock { (state) throws(ServerAPIError) -> T in
            var next = state
            let result = try change(&next)
            if let store, !next.journal.isEmpty {
                do throws(ServeError) { try store.write(next.journal + [.clock(now: clock(offset: next.offset), offset: next.offset)]) } catch {
                    FileHandle.standardError.write(Data("forge: error: a change was refused: \(error.message)\n".utf8))
                    throw .generalInternal
                }
            }
            next.journal.removeAll()
            next.version &+= 1
            state = next
            return result
        }
    }

    /// The number of changes so far.
    var version: UInt64 { mutable.withLock { $0.version } }
}
