#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
import _ForgeSupport
import StoreForge
import StoreModel
import AppStoreVocabulary
import Synchronization

/// Request a Test Notification, Get Test Notification Status and Get Notification History.
///
/// The history is derived from the store model, not kept: every purchase (SUBSCRIBED/INITIAL_BUY, or
/// ONE_TIME_CHARGE), renewal (DID_RENEW, /BILLING_RECOVERY), refund (REFUND) and timeline event that Apple
/// announces (an extension's RENEWAL_EXTENDED among them) up to the server clock, plus the TEST notifications
/// asked for. Each is signed as of its own instant; `sendAttempts` are those of `--notify`'s deliveries.
extension ServerAPIService {
    /// How far back the history reaches (Get Notification History: "180 days in the production environment, and
    /// the past 30 days in the sandbox").
    static func notificationWindow(_ environment: ServerAPIEnvironment) -> TimeInterval { Double(environment == .sandbox ? 30 : 180) * 86_400 }

    /// How long a pagination token is good for, on the server clock. [guess: Apple documents that tokens
    /// expire (4000017), not when]
    static let paginationTokenLifetime: TimeInterval = 24 * 3600

    /// One notification the store has sent, before it is rendered.
    struct NotificationRecord: Sendable {
        let date: Date
        let type: NotificationType
        let subtype: NotificationSubtype?
        /// What it is about; nil for TEST and for what is about the app (RESCIND_CONSENT).
        let transaction: Transaction?
        /// The customer it belongs to; nil for TEST.
        let customer: Int?
        /// TEST's payload, signed when it was asked for.
        let signedPayload: String?
        /// What tells it from another of its type at its instant: the transaction id, TEST's token, or "app".
        let identifier: String
        /// A CONSUMPTION_REQUEST's reason (``Announcement/consumptionRequestReason``).
        var consumptionRequestReason: ConsumptionRequestReason? = nil
        /// Its place in the history, and the seed of its `notificationUUID`.
        /// Sorts as the history does: the instant first (zero-padded, so text order is time order).
        var key: String { "\(String(ReceiptDate.milliseconds(date) ?? 0).leftPadded(16)):\(type.rawValue):\(subtype?.rawValue ?? ""):\(identifier)" }
    }

    /// A notification's `notificationUUID`: drawn from its place in the history, so it is the same in every answer.
    static func notificationUUID(_ key: String) -> String {
        var random = SeededGenerator(seed: StableHash.fnv1a(Data(("notification:" + key).utf8)))
        return random.uuid().description.lowercased()
    }

    // MARK: - Test notifications

    /// `POST /inApps/v1/notifications/test`: a TEST notification of the app (the token's, else the first
    /// customer's in the environment), signed now and sent to the environment's webhook at once;
    /// `testNotificationToken` names it. 4040007 when the environment has no webhook (`--notify`,
    /// `--notify-sandbox`; local testing has none), as Apple answers an app without a notification URL. 5000001
    /// (Apple's retryable error) while the webhook's queue is full (``NotificationDispatcher/maximumPending`` or its bytes): a
    /// token is given only for a TEST that will be sent, so its status always comes to list an attempt.
    func requestTestNotification(scope: Scope, now: Date) throws(ServerAPIError) -> SendTestNotificationResponse {
        guard let view = views(scope: scope, now: now).first else { throw .appNotFound }
        guard let deliveries = configuration.deliveries, deliveries.delivers(scope.environment) else { throw .serverNotificationURLNotFound }
        guard deliveries.hasRoom(scope.environment) else { throw .generalInternalRetryable }
        let count = try state.change { $0.nextTest() }
        var random = SeededGenerator(seed: StableHash.fnv1a(Data("test:\(scope.environment.rawValue):\(count)".utf8)))
        let token = random.uuid().description.lowercased()
        let payload = try signed { () throws(ForgeError) in try view.rendering.signedNotification(.test, subtype: nil, about: nil, uuid: token) }
        let test = ServerState.TestNotification(
            token: token, environment: scope.environment, bundleID: view.rendering.store.bundleID, signedPayload: payload, sentAt: now)
        try state.change { $0.remember(test) }
        let notification = NotificationDispatcher.Notification(key: Self.record(of: test).key, body: WebhookRequest.body(signedPayload: test.signedPayload), date: now)
        guard deliveries.enqueue([notification], environment: scope.environment) else { throw .generalInternal }
        // Another request filled the queue in the meantime.
        guard deliveries.holds(notification.key) else { throw .generalInternalRetryable }
        return SendTestNotificationResponse(testNotificationToken: token)
    }

    /// `GET /inApps/v1/notifications/test/{testNotificationToken}`: 4000020 not a token, 4040008 unknown (or
    /// another app's, or the other environment's).
    func testNotificationStatus(_ token: String, scope: Scope) throws(ServerAPIError) -> CheckTestNotificationResponse {
        guard UUID(uuidString: token) != nil else { throw .invalidTestNotificationToken }
        guard let test = state.mutable.withLock({ $0.testNotifications[token.lowercased()] }), test.environment == scope.environment,
            scope.app.map({ $0 == test.bundleID }) ?? true
        else { throw .testNotificationNotFound }
        return CheckTestNotificationResponse(signedPayload: test.signedPayload, sendAttempts: sendAttempts(of: Self.record(of: test).key))
    }

    // MARK: - Get Notification History

    /// The request body's filters, checked in Apple's order.
    struct HistoryRequest {
        let start: Date
        let end: Date
        let type: NotificationType?
        let subtype: NotificationSubtype?
        let transactionID: String?
        let onlyFailures: Bool
        /// What a pagination token is bound to: the same filters.
        let fingerprint: UInt64

        init(_ body: JSONValue, environment: ServerAPIEnvironment, now: Date) throws(ServerAPIError) {
            func date(_ name: String, _ error: ServerAPIError) throws(ServerAPIError) -> Date {
                guard let milliseconds = body[name]?.integerValue, milliseconds >= 0, let date = ReceiptDate.instant(milliseconds: Double(milliseconds))
                else { throw error }
                return date
            }
            start = try date("startDate", .invalidStartDate)
            end = try date("endDate", .invalidEndDate)
            guard start < end else { throw .startDateAfterEndDate }
            guard start >= now.addingTimeInterval(-ServerAPIService.notificationWindow(environment)) else { throw .startDateTooFarInPast }
            let typeName = body["notificationType"]?.stringValue
            let subtypeName = body["notificationSubtype"]?.stringValue
            transactionID = body["transactionId"]?.stringValue
            if transactionID != nil, typeName != nil { throw .multipleFiltersSupplied }
            if let typeName {
                guard let type = NotificationType(rawValue: typeName) else { throw .invalidNotificationType }
                let subtype = try subtypeName.map { (name) throws(ServerAPIError) -> NotificationSubtype in
                    guard let subtype = NotificationSubtype(rawValue: name) else { throw .invalidNotificationType }
                    return subtype
                }
                guard type.refusal(of: subtype) == nil else { throw .invalidNotificationType }
                self.type = type
                self.subtype = subtype
            } else {
                guard subtypeName == nil else { throw .invalidNotificationType }
                type = nil
                subtype = nil
            }
            if let transactionID, !ServerAPIIdentifier.isWellFormed(transactionID) { throw .invalidTransactionID }
            onlyFailures = body["onlyFailures"] == .bool(true)
            fingerprint = StableHash.fnv1a(Data(body.serialized(pretty: false).utf8))
        }
    }

    /// `POST /inApps/v1/notifications/history?paginationToken=`: ≤ ``pageSize`` records a page, oldest first.
    func notificationHistory(body: [UInt8], query: ServerAPIQuery, scope: Scope, now: Date) throws(ServerAPIError) -> NotificationHistoryResponse {
        let request = try HistoryRequest(try object(body), environment: scope.environment, now: now)
        var after: String?
        if let token = query.value("paginationToken") {
            guard let page = PaginationToken(token: token), page.fingerprint == request.fingerprint, page.issued <= now else { throw .invalidPaginationToken }
            guard now.timeIntervalSince(page.issued) <= Self.paginationTokenLifetime else { throw .paginationTokenExpired }
            after = page.after
        }
        var views = views(scope: scope, now: now)
        if let id = request.transactionID {
            views = [try view(of: id, anyID: true, scope: scope, now: now)]
        }
        var records: [NotificationRecord] = []
        // Filtered by a transaction, the history lists what is about its purchase, not about the app (RESCIND_CONSENT).
        for view in views { records += notifications(of: view).filter { request.transactionID == nil || $0.transaction != nil } }
        if request.transactionID == nil {
            let tests = state.mutable.withLock { $0.testNotifications.values.filter { $0.environment == scope.environment } }
            for test in tests where scope.app.map({ $0 == test.bundleID }) ?? true { records.append(Self.record(of: test)) }
        }
        records = records.filter { record in
            record.date >= request.start && record.date < request.end
                && (!request.onlyFailures || sendAttempts(of: record.key).contains { $0.sendAttemptResult != .success })
                && request.type.map { $0 == record.type && (request.subtype == nil || request.subtype == record.subtype) } ?? true
        }
        let keyed = records.map { ($0.key, $0) }.sorted { $0.0 < $1.0 }
        let remaining = keyed.filter { record in after.map { record.0 > $0 } ?? true }
        let page = remaining.prefix(Self.pageSize)
        var items: [NotificationHistoryResponseItem] = []
        let customers = state.customers
        for (key, record) in page {
            let payload = try signed { () throws(ForgeError) in try signedPayload(of: record, customers: customers) }
            items.append(NotificationHistoryResponseItem(signedPayload: payload, sendAttempts: sendAttempts(of: key)))
        }
        let hasMore = remaining.count > page.count
        let next = hasMore ? page.last.map { PaginationToken(fingerprint: request.fingerprint, after: $0.0, issued: now).token } : nil
        return NotificationHistoryResponse(paginationToken: next, hasMore: hasMore, notificationHistory: items)
    }

    /// The attempts to deliver the notification `key` names, as Apple's history lists them.
    func sendAttempts(of key: String) -> [SendAttemptItem] { configuration.deliveries?.attempts(of: key).map(\.item) ?? [] }

    /// A TEST notification as the history holds it.
    static func record(of test: ServerState.TestNotification) -> NotificationRecord {
        NotificationRecord(date: test.sentAt, type: .test, subtype: nil, transaction: nil, customer: nil, signedPayload: test.signedPayload, identifier: test.token)
    }

    /// `record`'s signed payload: TEST's as it was signed, any other rendered from its customer's store at its instant.
    func signedPayload(of record: NotificationRecord, customers: [ServerState.Customer]) throws(ForgeError) -> String {
        if let signedPayload = record.signedPayload { return signedPayload }
        guard let forge, let index = record.customer, customers.indices.contains(index) else { throw ForgeError(.invalidScenario, "no customer") }
        let customer = customers[index]
        let rendering = try forge.rendering(customer.scenario, madeAt: customer.madeAt, now: record.date)
        let t = record.transaction.flatMap { t in rendering.store.transactions.first { $0.transactionID == t.transactionID } } ?? record.transaction
        return try rendering.signedNotification(
            record.type, subtype: record.subtype, about: t, uuid: Self.notificationUUID(record.key), consumptionRequestReason: record.consumptionRequestReason)
    }

    /// The notifications `environment`'s stores send after `after` and by `through`, in timeline order, listed with
    /// each store rendered once (at `through`); and the earliest instant after `through` at which a store can send
    /// another (nil: none before the state changes).
    func listNotifications(_ environment: ServerAPIEnvironment, after: Date, through: Date) -> (batch: NotificationBatch, next: Date?) {
        var records: [NotificationRecord] = []
        var stores: [Int: StoreRendering] = [:]
        var next: Date?
        func consider(_ date: Date?) {
            guard let date, date > through, next.map({ date < $0 }) ?? true else { return }
            next = date
        }
        for view in views(scope: Scope(environment: environment, app: nil), now: through) {
            records += notifications(of: view).filter { $0.date > after }
            stores[view.customer] = view.rendering
            // Every instant a notification can come from: a period that starts (a purchase, a renewal, where a
            // timeline renewal adds the next one: the current one's end), a refund, a timeline event.
            let store = view.rendering.store
            for t in store.transactions {
                consider(t.purchaseDate)
                consider(t.expiresDate)
                consider(t.cancellationDate)
            }
            for event in store.scenario.timeline ?? [] { consider(event.at.flatMap(ReceiptDate.parse)) }
        }
        records.sort { $0.key < $1.key }
        return (NotificationBatch(through: through, records: records[...], stores: stores), next)
    }

    /// What Apple has announced about `view`'s store up to its instant (``Store/announcements``), as the history
    /// holds it.
    func notifications(of view: View) -> [NotificationRecord] {
        view.rendering.store.announcements.map { announced in
            NotificationRecord(
                date: announced.date, type: announced.type, subtype: announced.subtype, transaction: announced.transaction, customer: view.customer,
                signedPayload: nil, identifier: announced.transaction?.transactionID ?? "app", consumptionRequestReason: announced.consumptionRequestReason)
        }
    }
}

/// Notifications listed for a webhook and not yet signed (``NotificationSchedule``), signed a slice at a time so
/// that the work is bounded and delivery can begin before the whole batch is signed. Each is rendered as of its
/// own instant from its store rendered once for the batch (``StoreRendering/at(_:)``): the same bytes as Get
/// Notification History signs, which renders the store anew for each.
package struct NotificationBatch: Sendable {
    /// The server clock the notifications were listed at: each is due by then.
    package let through: Date
    private var records: ArraySlice<ServerAPIService.NotificationRecord>
    /// Each customer's store at `through`, by its place in the server state.
    private let stores: [Int: StoreRendering]

    init(through: Date, records: ArraySlice<ServerAPIService.NotificationRecord>, stores: [Int: StoreRendering]) {
        self.through = through
        self.records = records
        self.stores = stores
    }

    package var isEmpty: Bool { records.isEmpty }
    package var count: Int { records.count }

    /// The next (at most) `count` notifications, signed, in timeline order, and how far the watermark may move once
    /// they are enqueued: past the last instant all of whose notifications are among them (`through` after the
    /// last slice), or nil. A notification that cannot be rendered is left out, as the history leaves it out.
    package mutating func signNext(_ count: Int) -> (notifications: [NotificationDispatcher.Notification], watermark: Date?) {
        let slice = records.prefix(max(1, count))
        records = records.dropFirst(slice.count)
        var signed: [NotificationDispatcher.Notification] = []
        var looked: (customer: Int, date: Date, rendering: StoreRendering)?
        for record in slice {
            guard let customer = record.customer, let store = stores[customer] else {
                if let payload = record.signedPayload { signed.append(.init(key: record.key, body: WebhookRequest.body(signedPayload: payload), date: record.date)) }
                continue
            }
            do throws(ForgeError) {
                // Records of one customer at one instant share its rendering.
                let rendering: StoreRendering
                if let looked, looked.customer == customer, looked.date == record.date {
                    rendering = looked.rendering
                } else {
                    rendering = try store.at(record.date)
                    looked = (customer, record.date, rendering)
                }
                let t = record.transaction.flatMap { t in rendering.store.transactions.first { $0.transactionID == t.transactionID } } ?? record.transaction
                let payload = try rendering.signedNotification(
                    record.type, subtype: record.subtype, about: t, uuid: ServerAPIService.notificationUUID(record.key),
                    consumptionRequestReason: record.consumptionRequestReason)
                signed.append(.init(key: record.key, body: WebhookRequest.body(signedPayload: payload), date: record.date))
            } catch {
                continue
            }
        }
        let watermark: Date?
        if let next = records.first {
            // The rest of the last instant is still to come: only the instants before it are done.
            watermark = slice.last { $0.date < next.date }?.date
        } else {
            watermark = through
        }
        return (signed, watermark)
    }
}

/// What `--notify` delivers next for one environment, as the server clock passes it. Listing renders each store
/// once; between listings it keeps the earliest instant at which any store can send something new (the next
/// date in any of them: a period's start or end, a refund, a timeline event), and until the clock reaches it, or
/// the state changes, it renders nothing: with nothing due, a webhook costs nothing.
package final class NotificationSchedule: Sendable {
    package let environment: ServerAPIEnvironment
    private let service: ServerAPIService
    private struct State {
        /// Notifications up to here are listed.
        var watermark: Date
        /// Nothing new until `until` (never, when nil), as long as the state is at `version`.
        var quiet: (version: UInt64, until: Date?)?
        var storesRendered = 0
    }
    private let state: Mutex<State>

    /// The notifications after `watermark` are still to be listed.
    package init(_ service: ServerAPIService, environment: ServerAPIEnvironment, watermark: Date) {
        self.service = service
        self.environment = environment
        state = Mutex(State(watermark: watermark))
    }

    /// Stores rendered to list notifications so far (each customer once a listing).
    package var storesRendered: Int { state.withLock { $0.storesRendered } }

    /// Whether nothing can be new by `now`: two dates and a counter compared, nothing rendered.
    package func isQuiet(at now: Date) -> Bool {
        let version = service.state.version
        return state.withLock { state in
            guard now > state.watermark else { return true }
            guard let quiet = state.quiet, quiet.version == version else { return false }
            return quiet.until.map { now < $0 } ?? true
        }
    }

    /// The notifications after the watermark and by `now`, listed, not signed; nil, and nothing rendered, when
    /// nothing can be new by `now` (``isQuiet(at:)``). The watermark moves to `now`.
    package func batch(now: Date) -> NotificationBatch? {
        // Read first: a change while the stores are listed makes the next look list again.
        let version = service.state.version
        guard !isQuiet(at: now) else { return nil }
        let after = state.withLock { $0.watermark }
        let (batch, next) = service.listNotifications(environment, after: after, through: now)
        let rendered = service.state.customers.count
        state.withLock {
            $0.watermark = now
            $0.quiet = (version, next)
            $0.storesRendered += rendered
        }
        return batch.isEmpty ? nil : batch
    }
}
