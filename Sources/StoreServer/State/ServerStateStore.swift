#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import StoreModel

/// Where `forge serve --state FILE` keeps the server state between runs. StoreServer decides what is kept and
/// when (``StateChange``); a store decides only how (SQLite, linked by forge-http alone). Nothing is kept by
/// default: without `--state` there is no store and the state lives in memory.
///
/// Every change is written before it is answered or acted on, in one transaction, so a process killed at any
/// instant leaves the file as of the last change it acknowledged: the first is a crash-safe write, not a
/// periodic snapshot.
package protocol ServerStateStore: Sendable {
    /// What an earlier run kept; empty for a new file.
    func load() throws(ServeError) -> SavedState
    /// Applies `changes` in order, all in one transaction or none.
    func write(_ changes: [StateChange]) throws(ServeError)
    /// The file, for messages.
    var path: String { get }
}

/// One change of the server state, as a store writes it.
package enum StateChange: Sendable {
    /// The server clock, and how far `POST /_forge/clock` has moved it: where a restart resumes.
    case clock(now: Date, offset: TimeInterval)
    /// A customer as first given (seed pinned): written once, when the file is made. What the API adds to its
    /// timeline is written event by event (`event`, `appAccountToken`), so a change costs the same however many
    /// came before it.
    case customer(SavedCustomer)
    /// An event the API added to the customer's timeline (at `customer`, its position): an extension.
    case event(customer: Int, TimelineEvent)
    /// The app account token the API set on a purchase (the event's `originalTransactionId`): it replaces the
    /// one set before on the same purchase.
    case appAccountToken(customer: Int, TimelineEvent)
    case testNotification(ServerState.TestNotification)
    /// How many `TEST` notifications were asked for: the seed of the next token.
    case testsRequested(UInt64)
    case massExtension(key: String, ServerState.MassExtension)
    /// A renewal-date extension's answer, kept so a retry of its request identifier gets it again.
    case extensionAnswer(key: String, ExtendRenewalDateResponse)
    case finished(ServerState.FinishedTransaction)
    case consumption(ServerState.ConsumptionReport)
    /// The oldest record of a kind is forgotten: what makes room when ``ServerState/maximumRecords`` are kept.
    case evict(ServerState.RecordKind)
    /// A notification for a webhook, with its attempts so far and when it is next due.
    case delivery(NotificationDispatcher.Delivery)
    /// A delivered (or given up) notification forgotten to make room.
    case forgetDelivery(key: String)
    /// An attempt, and when the notification is due again (nil: delivered or given up).
    case attempt(key: String, SendAttempt, due: Date?)
    /// How far an environment's notifications have been enqueued: a restart looks for new ones after it.
    case watermark(ServerAPIEnvironment, Date)
    /// Notifications not kept because too many were pending, in all.
    case dropped(Int)
}

/// A customer as kept: `given` tells a restart with other `--scenario` files from one with the same; `scenario` is
/// `given` with the events the API added after its own.
package struct SavedCustomer: Sendable {
    package var position: Int
    package var given: Scenario
    package var scenario: Scenario
    package var madeAt: Date

    package init(position: Int, given: Scenario, scenario: Scenario, madeAt: Date) {
        self.position = position
        self.given = given
        self.scenario = scenario
        self.madeAt = madeAt
    }
}

/// What a store holds: everything ``StateChange`` writes, as it stands.
package struct SavedState: Sendable {
    package var clock: (now: Date, offset: TimeInterval)?
    /// By position; the same count as the `--scenario` files that made them.
    package var customers: [SavedCustomer] = []
    package var testNotifications: [ServerState.TestNotification] = []
    package var testsRequested: UInt64 = 0
    /// Each record kind oldest first, as kept: the oldest is the next to make room.
    package var massExtensions: [(key: String, request: ServerState.MassExtension)] = []
    package var extensionAnswers: [(key: String, answer: ExtendRenewalDateResponse)] = []
    package var finished: [ServerState.FinishedTransaction] = []
    package var consumption: [ServerState.ConsumptionReport] = []
    /// In the order they were enqueued.
    package var deliveries: [NotificationDispatcher.Delivery] = []
    package var watermarks: [ServerAPIEnvironment: Date] = [:]
    package var dropped = 0

    package init() {}

    /// Whether nothing was kept: a new file.
    package var isEmpty: Bool { clock == nil && customers.isEmpty && deliveries.isEmpty }
}
