#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import _ForgeSupport
import Synchronization

/// Which notifications are due at a webhook, and what became of each: Apple's delivery rules, independent of
/// any socket. A notification is first sent when the server clock passes its instant, in timeline order; a failed
/// attempt is retried at Apple's offsets after the first attempt (production: 1, 12, 24, 48 and 72 hours;
/// sandbox: once, after an hour), and after the last it is given up. Every attempt is kept for Get Notification
/// History and Get Test Notification Status.
///
/// Each environment has one webhook and its own queue, bounded by ``maximumPending`` notifications and
/// ``maximumPendingBytes`` of their bodies: past either, new notifications for that webhook are dropped, counted and
/// said on stderr, and the other environment's queue is untouched. A notification delivered or given up keeps its
/// attempts, not its body (the history renders its payload from the store), so what is kept is bounded in bytes too.
/// With a ``ServerStateStore`` a notification is written when it is enqueued and each attempt before the next
/// begins, so a restart neither repeats an acknowledged delivery nor loses a pending retry.
package final class NotificationDispatcher: Sendable {
    /// Where each environment's notifications go, how long one attempt may take, and the roots an https://
    /// webhook may chain to besides the system's.
    package struct Webhooks: Sendable {
        package var urls: [ServerAPIEnvironment: HTTPURL]
        package var timeoutSeconds: Int
        package var trustedRootsPEM: String?

        package init(urls: [ServerAPIEnvironment: HTTPURL], timeoutSeconds: Int = WebhookRequest.defaultTimeoutSeconds, trustedRootsPEM: String? = nil) {
            self.urls = urls
            self.timeoutSeconds = timeoutSeconds
            self.trustedRootsPEM = trustedRootsPEM
        }
    }

    /// Apple's retries, after the first attempt ("Responding to App Store Server Notifications"). [guess: when the
    /// sandbox's one retry comes]
    package static func retryOffsets(_ environment: ServerAPIEnvironment) -> [TimeInterval] {
        (environment == .sandbox ? [1] : [1, 12, 24, 48, 72]).map { Double($0) * 3600 }
    }

    /// One notification on its way: its place in the history, the exact body, and its attempts.
    package struct Delivery: Sendable {
        package let key: String
        package let environment: ServerAPIEnvironment
        /// What each attempt sends; empty once it is delivered or given up.
        package internal(set) var body: [UInt8]
        /// Its place in the order notifications were enqueued.
        package let position: Int64
        package internal(set) var attempts: [SendAttempt]
        /// When the next attempt is due on the server clock; nil once delivered or given up.
        package internal(set) var due: Date?

        package init(key: String, environment: ServerAPIEnvironment, body: [UInt8], position: Int64, attempts: [SendAttempt] = [], due: Date?) {
            self.key = key
            self.environment = environment
            self.body = body
            self.position = position
            self.attempts = attempts
            self.due = due
        }
    }

    /// A notification to enqueue: its key in the history, Apple's body, and when it is first due.
    package struct Notification: Sendable {
        package let key: String
        package let body: [UInt8]
        package let date: Date

        package init(key: String, body: [UInt8], date: Date) {
            self.key = key
            self.body = body
            self.date = date
        }
    }

    /// Notifications kept, delivered or not: past it the oldest finished ones go first.
    package static let maximumKept = 100_000
    /// Notifications waiting for one webhook (their first attempt or a retry): past it, new ones for it are dropped.
    package static let maximumPending = 10_000
    /// The bodies of the notifications waiting for one webhook, in bytes (a renewal's is about 19 KB): past it, new
    /// ones for it are dropped, as past ``maximumPending``.
    package static let maximumPendingBytes = 64 << 20

    package let webhooks: Webhooks
    private let store: (any ServerStateStore)?
    /// Whether a change is written to a `--state` file (and so may wait on the disk): the delivery loop then makes it
    /// off the event loop.
    package var writesToFile: Bool { store != nil }
    private struct State {
        var deliveries: [String: Delivery] = [:]
        /// The keys in the order the notifications were enqueued.
        var order: [String] = []
        var pending: [ServerAPIEnvironment: Int] = [:]
        /// The bytes of the bodies ``pending`` counts.
        var pendingBytes: [ServerAPIEnvironment: Int] = [:]
        var nextPosition: Int64 = 0
        var watermarks: [ServerAPIEnvironment: Date] = [:]
        /// Notifications not kept because ``maximumPending`` (or ``maximumPendingBytes``) were waiting already.
        var dropped = 0
        /// No delivery of the environment is due before this (none is pending when absent): until then
        /// ``due(_:now:)`` answers at once, without looking through the deliveries kept.
        var earliestDue: [ServerAPIEnvironment: Date] = [:]
        /// Counts the notifications enqueued and the attempts recorded.
        var version: UInt64 = 0

        mutating func due(_ date: Date?, in environment: ServerAPIEnvironment) {
            guard let date else { return }
            earliestDue[environment] = min(earliestDue[environment] ?? date, date)
        }
    }
    private let state: Mutex<State>

    /// Starts with what `saved` holds (written by `store`), or empty.
    package init(_ webhooks: Webhooks, saved: SavedState = SavedState(), store: (any ServerStateStore)? = nil) {
        self.webhooks = webhooks
        self.store = store
        var state = State()
        for var delivery in saved.deliveries.sorted(by: { $0.position < $1.position }) {
            if delivery.due == nil { delivery.body = [] }
            state.deliveries[delivery.key] = delivery
            state.order.append(delivery.key)
            if delivery.due != nil {
                state.pending[delivery.environment, default: 0] += 1
                state.pendingBytes[delivery.environment, default: 0] += delivery.body.count
            }
            state.due(delivery.due, in: delivery.environment)
        }
        state.nextPosition = (saved.deliveries.map(\.position).max() ?? -1) + 1
        state.watermarks = saved.watermarks
        state.dropped = saved.dropped
        self.state = Mutex(state)
    }

    /// Whether `environment` has a webhook.
    package func delivers(_ environment: ServerAPIEnvironment) -> Bool { webhooks.urls[environment] != nil }

    /// How far `environment`'s notifications have been enqueued, if they have.
    package func watermark(_ environment: ServerAPIEnvironment) -> Date? { state.withLock { $0.watermarks[environment] } }

    /// Adds `notifications` for `environment`'s webhook, each first due at its date, and moves the environment's
    /// watermark to `through` if given, in one write. A notification known already is not added again (one is
    /// sent once, then only retried); nothing is added for an environment without a webhook. False when the
    /// store could not take it: nothing changed.
    @discardableResult
    package func enqueue(_ notifications: [Notification], environment: ServerAPIEnvironment, through watermark: Date? = nil) -> Bool {
        guard delivers(environment) else { return true }
        let outcome = state.withLock { state -> (written: Bool, dropped: Int) in
            var next = state
            var changes: [StateChange] = []
            let droppedBefore = next.dropped
            for notification in notifications where next.deliveries[notification.key] == nil {
                guard next.pending[environment, default: 0] < Self.maximumPending,
                    next.pendingBytes[environment, default: 0] + notification.body.count <= Self.maximumPendingBytes
                else {
                    next.dropped += 1
                    continue
                }
                if next.deliveries.count >= Self.maximumKept {
                    // The oldest finished one makes room; with every one still pending, the new one is dropped.
                    guard let index = next.order.firstIndex(where: { next.deliveries[$0]?.due == nil }) else {
                        next.dropped += 1
                        continue
                    }
                    let oldest = next.order.remove(at: index)
                    next.deliveries[oldest] = nil
                    changes.append(.forgetDelivery(key: oldest))
                }
                let delivery = Delivery(
                    key: notification.key, environment: environment, body: notification.body, position: next.nextPosition, due: notification.date)
                next.nextPosition += 1
                next.deliveries[delivery.key] = delivery
                next.order.append(delivery.key)
                next.pending[environment, default: 0] += 1
                next.pendingBytes[environment, default: 0] += delivery.body.count
                next.due(delivery.due, in: environment)
                changes.append(.delivery(delivery))
            }
            if next.dropped != droppedBefore { changes.append(.dropped(next.dropped)) }
            if let watermark {
                next.watermarks[environment] = watermark
                // Written with what it enqueued; a restart that looks again finds the rest known.
                if !changes.isEmpty { changes.append(.watermark(environment, watermark)) }
            }
            if let store, !changes.isEmpty {
                do throws(ServeError) { try store.write(changes) } catch {
                    Self.warn("notifications for \(environment.rawValue) not enqueued, retried on the next tick: \(error.message)")
                    return (false, 0)
                }
            }
            let dropped = next.dropped - droppedBefore
            if !changes.isEmpty { next.version &+= 1 }
            state = next
            return (true, dropped > 0 ? next.dropped : 0)
        }
        if outcome.dropped > 0 {
            Self.warn(
                "\(outcome.dropped) notification(s) not delivered in all: \(Self.maximumPending) notifications or \(Self.maximumPendingBytes >> 20) MiB of them are pending for the \(environment.rawValue) webhook already (one that never succeeds?)"
            )
        }
        return outcome.written
    }

    /// Whether `environment`'s webhook can take a notification of `bytes` now (fewer than ``maximumPending`` wait,
    /// and their bodies leave room for it under ``maximumPendingBytes``).
    package func hasRoom(_ environment: ServerAPIEnvironment, bytes: Int = 0) -> Bool {
        delivers(environment)
            && state.withLock {
                $0.pending[environment, default: 0] < Self.maximumPending && $0.pendingBytes[environment, default: 0] + bytes <= Self.maximumPendingBytes
            }
    }

    /// Whether `key` is kept (enqueued, and not dropped).
    package func holds(_ key: String) -> Bool { state.withLock { $0.deliveries[key] != nil } }

    /// The deliveries of `environment` due by `now`, in the order they were first due, each with its request.
    /// Before the earliest instant one is due, nothing is looked through.
    package func due(_ environment: ServerAPIEnvironment, now: Date) -> [(delivery: Delivery, request: WebhookRequest)] {
        guard let url = webhooks.urls[environment] else { return [] }
        let due = state.withLock { state -> [Delivery] in
            guard let earliest = state.earliestDue[environment], earliest <= now else { return [] }
            let pending = state.order.compactMap { state.deliveries[$0] }.filter { $0.environment == environment && $0.due != nil }
            // Those returned count until their attempts are recorded; record(_:of:) lowers it again for a retry.
            state.earliestDue[environment] = pending.compactMap(\.due).min()
            return pending.filter { $0.due.map { $0 <= now } ?? false }
        }
        return due.map {
            ($0, WebhookRequest(url: url, body: $0.body, timeoutSeconds: webhooks.timeoutSeconds, trustedRootsPEM: webhooks.trustedRootsPEM))
        }
    }

    /// Records `attempt` of `key`: done when it succeeded or was the last retry, else due again at the next
    /// offset. Written before it takes effect; a store that cannot take it is said on stderr and the attempt is
    /// kept in memory (it was made).
    package func record(_ attempt: SendAttempt, of key: String) {
        state.withLock { state in
            guard var delivery = state.deliveries[key] else { return }
            delivery.attempts.append(attempt)
            let offsets = Self.retryOffsets(delivery.environment)
            if attempt.result == .success || delivery.attempts.count > offsets.count {
                delivery.due = nil
                state.pending[delivery.environment, default: 1] -= 1
                state.pendingBytes[delivery.environment, default: 0] -= delivery.body.count
                delivery.body = []
            } else if let first = delivery.attempts.first?.date {
                delivery.due = first.addingTimeInterval(offsets[delivery.attempts.count - 1])
                state.due(delivery.due, in: delivery.environment)
            }
            do throws(ServeError) { try store?.write([.attempt(key: key, attempt, due: delivery.due)]) } catch {
                Self.warn("an attempt of \(key) is not in the state file (a restart may repeat it): \(error.message)")
            }
            state.deliveries[key] = delivery
            state.version &+= 1
        }
    }

    /// Counts what changes an answer about deliveries (enqueued notifications, recorded attempts): the Server API's
    /// cache keeps a history answer for one count only.
    package var version: UInt64 { state.withLock { $0.version } }

    /// Notifications not delivered because too many were pending.
    package var dropped: Int { state.withLock { $0.dropped } }

    /// How many notifications wait for their first attempt or a retry, by environment.
    package var pending: [ServerAPIEnvironment: Int] { state.withLock { $0.pending } }

    /// The bytes of the bodies waiting, by environment.
    package var pendingBytes: [ServerAPIEnvironment: Int] { state.withLock { $0.pendingBytes } }

    /// The bytes of every body kept, delivered or not: only those waiting hold theirs.
    package var bodyBytes: Int { state.withLock { $0.deliveries.values.reduce(0) { $0 + $1.body.count } } }

    /// The attempts made for `key`, as Apple's history lists them.
    package func attempts(of key: String) -> [SendAttempt] { state.withLock { $0.deliveries[key]?.attempts ?? [] } }

    private static func warn(_ message: String) { StandardStream.error.write("forge: warning: \(message)\n") }
}
