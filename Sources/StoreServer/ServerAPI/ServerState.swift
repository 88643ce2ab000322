#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import _ForgeSupport
package import StoreModel
import Synchronization

/// What the server side knows and what has changed since it started: the customers (one `--scenario` each),
/// the server clock, and what the developer did through the API. One instance serves every request, so a
/// mutation is visible to the next answer.
///
/// A mutation of a customer's store is a timeline event added to its scenario (an extension is `extend`, a
/// token `app-account-token`, which replaces the token set before on the same purchase), stamped with the
/// request's clock, never behind the server's: every artefact rendered later shows it, and the same scenario with
/// that timeline, given to `forge jws make --spec`, renders the same bytes. The API's events follow the
/// scenario's own in the order of their dates. Each scenario's seed is pinned when it is loaded, so a growing
/// timeline never moves the ids already handed out.
///
/// With a ``ServerStateStore`` (`--state FILE`) every change is written before it takes effect, as what changed
/// (an event, a record), not the whole state: a change the file cannot take is not made, and a restart on the
/// file resumes here.
package final class ServerState: Sendable {
    package struct Customer: Sendable {
        package fileprivate(set) var scenario: Scenario
        /// The scenario as given (its seed pinned): what a restart's `--scenario` must match.
        package let given: Scenario
        /// When the device's purchases were made (the scenario's `now`): that fixes their ids.
        package let madeAt: Date
    }

    /// A `TEST` notification a client asked for, as Get Test Notification Status answers it.
    package struct TestNotification: Sendable {
        package let token: String
        package let environment: ServerAPIEnvironment
        package let bundleID: String
        package let signedPayload: String
        package let sentAt: Date

        package init(token: String, environment: ServerAPIEnvironment, bundleID: String, signedPayload: String, sentAt: Date) {
            self.token = token
            self.environment = environment
            self.bundleID = bundleID
            self.signedPayload = signedPayload
            self.sentAt = sentAt
        }
    }

    /// A mass extension, as its status endpoint answers it (it completes at once).
    package struct MassExtension: Sendable {
        package let productID: String
        package let completedAt: Date
        package let succeeded: Int
        package let failed: Int

        package init(productID: String, completedAt: Date, succeeded: Int, failed: Int) {
            self.productID = productID
            self.completedAt = completedAt
            self.succeeded = succeeded
            self.failed = failed
        }
    }

    /// A transaction the developer finished (Finish Transaction).
    package struct FinishedTransaction: Sendable, Hashable {
        package let environment: ServerAPIEnvironment
        package let transactionID: String
        package let finishedAt: Date

        package init(environment: ServerAPIEnvironment, transactionID: String, finishedAt: Date) {
            self.environment = environment
            self.transactionID = transactionID
            self.finishedAt = finishedAt
        }
    }

    /// Consumption information the developer sent (Send Consumption Information v1 or v2), as sent.
    package struct ConsumptionReport: Sendable {
        package let environment: ServerAPIEnvironment
        package let transactionID: String
        package let receivedAt: Date
        package let body: JSONValue

        package init(environment: ServerAPIEnvironment, transactionID: String, receivedAt: Date, body: JSONValue) {
            self.environment = environment
            self.transactionID = transactionID
            self.receivedAt = receivedAt
            self.body = body
        }
    }

    /// The records that clients add and ``maximumRecords`` bounds.
    package enum RecordKind: String, Sendable, CaseIterable {
        case testNotifications, massExtensions, extensionAnswers, finished, consumption
    }

    /// The state a change works on. Its parts change only through its methods, each of which notes what it
    /// changed in `journal`: what a store writes is exactly what changed.
    struct Mutable: Sendable {
        fileprivate(set) var customers: [Customer]
        /// `POST /_forge/clock`: how far the clock has been moved from `--now` (or the wall clock).
        fileprivate(set) var offset: TimeInterval = 0
        private var tests = BoundedRecords<String, TestNotification>(maximum: ServerState.maximumRecords)
        private var masses = BoundedRecords<String, MassExtension>(maximum: ServerState.maximumRecords)
        /// A renewal-date extension already answered, by ``ServerAPIService/extensionKey``: a retry gets the same
        /// answer and extends nothing. [guess: Apple documents the identifier, not retries]
        private var answers = BoundedRecords<String, ExtendRenewalDateResponse>(maximum: ServerState.maximumRecords)
        private var finishedRecords = BoundedRecords<Int, FinishedTransaction>(maximum: ServerState.maximumRecords)
        private var consumptionRecords = BoundedRecords<Int, ConsumptionReport>(maximum: ServerState.maximumRecords)
        /// Numbers finished transactions and consumption reports, which have no key of their own.
        private var nextRecord = 0
        /// How many `TEST` notifications were asked for: the seed of the next token.
        private(set) var testsRequested: UInt64 = 0
        /// The Retention Messaging API's configuration; in memory only (no ``StateChange`` writes it).
        var retention = RetentionMessagingState()
        /// Counts the changes: an answer kept for one version is stale in the next (``ResponseCache``).
        fileprivate(set) var version: UInt64 = 0
        /// What changed since the last write, in order.
        fileprivate(set) var journal: [StateChange] = []
        /// Changes the store refused (a full disk), since the start.
        fileprivate(set) var refusedWrites = 0

        var testNotifications: [String: TestNotification] { tests.byKey }
        var massExtensions: [String: MassExtension] { masses.byKey }
        var extensionAnswers: [String: ExtendRenewalDateResponse] { answers.byKey }
        var finished: [FinishedTransaction] { finishedRecords.inOrder }
        var consumption: [ConsumptionReport] { consumptionRecords.inOrder }

        init(customers: [Customer]) { self.customers = customers }

        /// `event` in the customer's timeline, among the events the API added in the order of their dates (after
        /// those of the same instant), so the timeline applies them as they happened whatever order they came in.
        mutating func append(_ event: TimelineEvent, toCustomer index: Int) {
            customers[index].insert(event)
            journal.append(.event(customer: index, event))
        }

        /// Sets the purchase's app account token: `event` replaces the token the API set before for the same
        /// original transaction, so a purchase holds one however often it is set (Apple keeps the latest).
        mutating func setAppAccountToken(_ event: TimelineEvent, toCustomer index: Int) {
            customers[index].removeAddedEvents { $0.event == .appAccountToken && $0.originalTransactionID == event.originalTransactionID }
            customers[index].insert(event)
            journal.append(.appAccountToken(customer: index, event))
        }

        /// The number of the next `TEST` notification, counted.
        mutating func nextTest() -> UInt64 {
            testsRequested += 1
            journal.append(.testsRequested(testsRequested))
            return testsRequested
        }

        mutating func remember(_ test: TestNotification) {
            let evicted = tests.insert(test, at: test.token)
            journal.append(.testNotification(test))
            if evicted { journal.append(.evict(.testNotifications)) }
        }

        mutating func remember(_ massExtension: MassExtension, key: String) {
            let evicted = masses.insert(massExtension, at: key)
            journal.append(.massExtension(key: key, massExtension))
            if evicted { journal.append(.evict(.massExtensions)) }
        }

        mutating func remember(extensionAnswer answer: ExtendRenewalDateResponse, key: String) {
            let evicted = answers.insert(answer, at: key)
            journal.append(.extensionAnswer(key: key, answer))
            if evicted { journal.append(.evict(.extensionAnswers)) }
        }

        mutating func remember(_ transaction: FinishedTransaction) {
            nextRecord += 1
            let evicted = finishedRecords.insert(transaction, at: nextRecord)
            journal.append(.finished(transaction))
            if evicted { journal.append(.evict(.finished)) }
        }

        mutating func remember(_ report: ConsumptionReport) {
            nextRecord += 1
            let evicted = consumptionRecords.insert(report, at: nextRecord)
            journal.append(.consumption(report))
            if evicted { journal.append(.evict(.consumption)) }
        }

        /// What `saved` holds, applied to the customers given now, each record kind in the order it was kept.
        fileprivate mutating func restore(_ saved: SavedState) {
            for customer in saved.customers where customers.indices.contains(customer.position) {
                customers[customer.position].restore(customer.scenario)
            }
            offset = saved.clock?.offset ?? 0
            for test in saved.testNotifications { tests.insert(test, at: test.token) }
            for (key, request) in saved.massExtensions { masses.insert(request, at: key) }
            for (key, answer) in saved.extensionAnswers { answers.insert(answer, at: key) }
            for transaction in saved.finished {
                nextRecord += 1
                finishedRecords.insert(transaction, at: nextRecord)
            }
            for report in saved.consumption {
                nextRecord += 1
                consumptionRecords.insert(report, at: nextRecord)
            }
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
    package let startedAt: Date
    /// Held only to read the state or to swap a changed one in, never across I/O: a request that reads the clock
    /// never waits behind a write to `store`.
    let mutable: Mutex<Mutable>
    /// Held by whoever changes the state, across its write to `store`: changes are made one at a time, each
    /// written before it is swapped in (write-ahead), while readers go on reading the state as it was.
    private let changing = Mutex(())
    /// `--state FILE`; nil keeps the state in memory only.
    package let store: (any ServerStateStore)?
    /// Told what the operator must know once (a store that refuses changes, the clock at its end): stderr in `forge serve`.
    let warn: @Sendable (String) -> Void
    /// Whether the clock has been found at ``lastInstant`` (and that was said).
    private let saturated = Atomic<Bool>(false)

    /// Bounds what clients can make the server hold of each kind: test notifications, mass extensions, extension
    /// answers remembered for retries, finished transactions and consumption reports. Past it the oldest of the
    /// kind makes room for the newest.
    package static let maximumRecords = 10_000

    /// The last instant the server clock reaches: the last second receipts and JWS carry (``ReceiptDate/writable``).
    /// The clock stops there, whatever `--time-rate` or `POST /_forge/clock` ask, and says so once.
    package static let lastInstant = ReceiptDate.writable.upperBound.addingTimeInterval(-1)

    /// Writes `forge: warning: …` on stderr.
    package static let standardWarning: @Sendable (String) -> Void = { StandardStream.error.write("forge: warning: \($0)\n") }

    package init(customers: [Customer] = [], now: Date? = nil, timeRate: Double? = nil, warn: @escaping @Sendable (String) -> Void = ServerState.standardWarning) {
        configuredNow = now
        self.timeRate = timeRate
        let wall = Date()
        startedWall = wall
        startedAt = now ?? wall
        mutable = Mutex(Mutable(customers: customers))
        store = nil
        self.warn = warn
    }

    /// Resumes `saved` (kept by `store`) with `customers` as given now. The clock resumes where it was kept,
    /// or at `now` if that is later: a clock only moves forward.
    init(
        customers: [Customer], now: Date?, timeRate: Double?, saved: SavedState, store: any ServerStateStore, warn: @escaping @Sendable (String) -> Void
    ) {
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
        self.warn = warn
    }

    /// The time rates `--time-rate` takes: up to a year a second.
    package static let timeRates: ClosedRange<Double> = 0.001...31_622_400

    /// Each scenario with its seed pinned (that of `forge make` at its `now`), checked to need a `now`. With a
    /// `store`, what it kept (`saved`, its ``ServerStateStore/load()``) is resumed: its customers must be these
    /// scenarios (else the file is another server's, and nothing in it is touched), and a new file starts with them.
    package convenience init(
        scenarios: [Scenario], now: Date? = nil, timeRate: Double? = nil, store: (any ServerStateStore)? = nil, saved: SavedState = SavedState(),
        warn: @escaping @Sendable (String) -> Void = ServerState.standardWarning
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
            self.init(customers: customers, now: now, timeRate: timeRate, warn: warn)
            return
        }
        if saved.isEmpty {
            let first = customers.enumerated().map { StateChange.customer(SavedCustomer(position: $0, given: $1.given, scenario: $1.scenario, madeAt: $1.madeAt)) }
            do { try store.write(first) } catch { throw ForgeError(.conflictingOptions, error.message) }
        } else if let mismatch = Self.mismatch(saved.customers, customers) {
            throw ForgeError(
                .conflictingOptions,
                "\(store.path) holds the state of other scenarios (\(mismatch)): start with the same \(ServeOption.scenario) files as when it was made, or another \(ServeOption.state) file; it is left as it is"
            )
        }
        self.init(customers: customers, now: now, timeRate: timeRate, saved: saved, store: store, warn: warn)
    }

    /// Why `saved` is not the state of `customers`, or nil when it is.
    private static func mismatch(_ saved: [SavedCustomer], _ customers: [Customer]) -> String? {
        guard saved.count == customers.count else { return "it has \(saved.count) customer(s), \(ServeOption.scenario) gives \(customers.count)" }
        for (kept, customer) in zip(saved.sorted { $0.position < $1.position }, customers) where kept.given != customer.given {
            return "scenario \(kept.position + 1) differs"
        }
        return nil
    }

    package var customers: [Customer] { mutable.withLock { $0.customers } }

    /// The customers and the state's version, read together: a view rendered from them is stale once the version moves.
    func snapshot() -> (customers: [Customer], version: UInt64) { mutable.withLock { ($0.customers, $0.version) } }

    /// The server clock: a request's `X-Forge-Now`, else `--now` (or the wall clock) moved by `POST /_forge/clock`;
    /// never past ``lastInstant``.
    package func now(request: Date? = nil) -> Date {
        if let request { return min(request, Self.lastInstant) }
        let date = clock(offset: mutable.withLock { $0.offset })
        if date >= Self.lastInstant, !saturated.exchange(true, ordering: .relaxed) {
            warn(
                "the server clock reached \(ReceiptDate.format(Self.lastInstant)), the last second receipts and JWS carry: it stays there, and every answer is rendered at that instant"
            )
        }
        return date
    }

    private func clock(offset: TimeInterval) -> Date {
        let date: Date
        if let timeRate {
            let run = Date().timeIntervalSince(startedWall) * timeRate
            date = (configuredNow ?? startedWall).addingTimeInterval(run + offset)
        } else {
            date = (configuredNow ?? Date()).addingTimeInterval(offset)
        }
        return min(date, Self.lastInstant)
    }

    /// `POST /_forge/clock`: moves the clock to `date`; only forward, as a timeline only grows. A date past
    /// ``lastInstant`` stops it there.
    package func setClock(to date: Date) throws(ServeError) {
        guard date >= ReceiptDate.writable.lowerBound else { throw ServeError(.invalidClock, "\(ReceiptDate.format(date)) is \(ReceiptDate.outsideWritable)") }
        let date = min(date, Self.lastInstant)
        try changing.withLock { _ throws(ServeError) in
            let before = mutable.withLock { $0.offset }
            let current = clock(offset: before)
            guard date >= current else {
                throw ServeError(.invalidClock, "the clock only moves forward: it is \(ReceiptDate.format(current)), not before")
            }
            let offset = before + date.timeIntervalSince(current)
            try store?.write([.clock(now: date, offset: offset)])
            mutable.withLock { state in
                state.offset = offset
                state.version &+= 1
            }
        }
        _ = now()  // says so once when the clock has reached its end
    }

    /// Writes the clock as it is now, so a restart resumes close to it (the clock moves without changes).
    package func checkpoint() throws(ServeError) {
        guard let store else { return }
        try changing.withLock { _ throws(ServeError) in
            let offset = mutable.withLock { $0.offset }
            try store.write([.clock(now: clock(offset: offset), offset: offset)])
        }
    }

    /// Runs `change` on a copy of the state, one change at a time: a check and the mutation it allows happen as one.
    /// With a store, what changed is written first, outside the state's lock; a write that fails leaves the state as
    /// it was (5000000). The first refusal is said (through `warn`); the rest are counted in ``refusedWrites``, not
    /// said, so a full disk under a busy client costs one line.
    func change<T>(_ change: (inout Mutable) throws(ServerAPIError) -> T) throws(ServerAPIError) -> T {
        let outcome = try changing.withLock { _ throws(ServerAPIError) -> Result<T, Refusal> in
            // No other change can come between this copy and the swap below: they wait on `changing`.
            var next = mutable.withLock { $0 }
            let result = try change(&next)
            if let store, !next.journal.isEmpty {
                do throws(ServeError) { try store.write(next.journal + [.clock(now: clock(offset: next.offset), offset: next.offset)]) } catch {
                    let refused = mutable.withLock { state in
                        state.refusedWrites += 1
                        return state.refusedWrites
                    }
                    return .failure(Refusal(message: error.message, first: refused == 1))
                }
            }
            next.journal.removeAll()
            next.version &+= 1
            mutable.withLock { $0 = next }
            return .success(result)
        }
        switch outcome {
        case .success(let result): return result
        case .failure(let refusal):
            // Said outside the lock, once.
            if refusal.first, let store {
                warn("\(store.path) refused a change (\(refusal.message)): it is answered 5000000 and not made; later refusals are counted, not said")
            }
            throw .generalInternal
        }
    }

    /// A change the store refused, and whether it is the first.
    private struct Refusal: Error {
        let message: String
        let first: Bool
    }

    /// Changes the store refused since the start (a full disk): said once, then counted here.
    package var refusedWrites: Int { mutable.withLock { $0.refusedWrites } }

    /// The number of changes so far.
    var version: UInt64 { mutable.withLock { $0.version } }
}

extension ServerState.Customer {
    /// How many events of the timeline came with the scenario; those after them are the API's.
    var givenEvents: Int { given.timeline?.count ?? 0 }

    /// `event` among the API's events after every one dated at or before it. The timeline is moved out while it
    /// changes, so it is not copied once more for the change.
    fileprivate mutating func insert(_ event: TimelineEvent) {
        var timeline = scenario.timeline ?? []
        scenario.timeline = nil
        var index = timeline.endIndex
        if let date = event.at.flatMap(ReceiptDate.parse) {
            while index > givenEvents, let previous = timeline[index - 1].at.flatMap(ReceiptDate.parse), previous > date { index -= 1 }
        }
        timeline.insert(event, at: index)
        scenario.timeline = timeline
    }

    /// Takes out the API's events that `matches`; the scenario's own stay.
    fileprivate mutating func removeAddedEvents(where matches: (TimelineEvent) -> Bool) {
        guard var timeline = scenario.timeline, timeline.count > givenEvents else { return }
        scenario.timeline = nil
        let kept = timeline[givenEvents...].filter { !matches($0) }
        timeline.removeSubrange(givenEvents...)
        timeline += kept
        scenario.timeline = timeline.isEmpty && given.timeline == nil ? nil : timeline
    }

    /// The scenario a store kept: the API's events put in the order of their dates (a file of an earlier forge
    /// kept them in the order they came).
    fileprivate mutating func restore(_ saved: Scenario) {
        scenario = saved
        let added = Array((saved.timeline ?? []).dropFirst(givenEvents))
        guard !added.isEmpty else { return }
        scenario.timeline = Array((saved.timeline ?? []).prefix(givenEvents))
        for event in added { insert(event) }
    }
}
