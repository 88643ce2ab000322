public import Foundation
import ForgeSupport
import Synchronization

/// Which notifications are due at a webhook, and what became of each: Apple's delivery rules, independent of
/// any socket. A notification is first sent when the server clock passes its instant, in timeline order; a failed
/// attempt is retried at Apple's offsets after the first attempt (production: 1, 12, 24, 48 and 72 hours;
/// sandbox: once, after an hour), and after the last it is given up. Every attempt is kept for Get Notification
/// History and Get Test Notification Status.
public final class NotificationDispatcher: Sendable {
    /// Where each environment's notifications go, how long one attempt may take, and the roots an https://
    /// webhook may chain to besides the system's.
    public struct Webhooks: Sendable {
        public var urls: [ServerAPIEnvironment: URL]
        public var timeoutSeconds: Int
        public var trustedRootsPEM: String?

        public init(urls: [ServerAPIEnvironment: URL], timeoutSeconds: Int = WebhookRequest.defaultTimeoutSeconds, trustedRootsPEM: String? = nil) {
            self.urls = urls
            self.timeoutSeconds = timeoutSeconds
            self.trustedRootsPEM = trustedRootsPEM
        }
    }

    /// Apple's retries, after the first attempt ("Responding to App Store Server Notifications"). [guess: when the
    /// sandbox's one retry comes]
    public static func retryOffsets(_ environment: ServerAPIEnvironment) -> [TimeInterval] {
        (environment == .sandbox ? [1] : [1, 12, 24, 48, 72]).map { Double($0) * 3600 }
    }

    /// One notification on its way: its place in the history, where it goes, the exact body, and its attempts.
    public struct Delivery: Sendable {
        public let key: String
        public let environment: ServerAPIEnvironment
        public let request: WebhookRequest
        public internal(set) var attempts: [SendAttempt] = []
        /// When the next attempt is due on the server clock; nil once delivered or given up.
        public internal(set) var due: Date?
    }

    /// Notifications kept, delivered or not: past it the oldest finished ones go first.
    public static let maximumKept = 100_000

    public let webhooks: Webhooks
    private struct State {
        var deliveries: [String: Delivery] = [:]
        /// The order the notifications were enqueued in.
        var order: [String] = []
        /// Notifications not kept because ``maximumKept`` were pending already.
        var dropped = 0
    }
    private let state = Mutex(State())

    public init(_ webhooks: Webhooks) { self.webhooks = webhooks }

    /// Adds a notification for `environment`'s webhook, first due at `at`; nothing when that environment has no
    /// webhook or the notification is known already (a notification is sent once, then only retried).
    public func enqueue(key: String, environment: ServerAPIEnvironment, body: [UInt8], at: Date) {
        guard let url = webhooks.urls[environment] else { return }
        let request = WebhookRequest(url: url, body: body, timeoutSeconds: webhooks.timeoutSeconds, trustedRootsPEM: webhooks.trustedRootsPEM)
        let dropped = state.withLock { state -> Int? in
            guard state.deliveries[key] == nil else { return nil }
            if state.deliveries.count >= Self.maximumKept {
                // The oldest finished one makes room; with every one still pending, the new one is dropped and counted.
                guard let oldest = state.order.first(where: { state.deliveries[$0]?.due == nil }) else {
                    state.dropped += 1
                    return state.dropped
                }
                state.deliveries[oldest] = nil
                state.order.removeAll { $0 == oldest }
            }
            state.deliveries[key] = Delivery(key: key, environment: environment, request: request, due: at)
            state.order.append(key)
            return nil
        }
        if let dropped, dropped == 1 || dropped % 1000 == 0 {
            FileHandle.standardError.write(
                Data("forge: warning: \(dropped) notification(s) not delivered: \(Self.maximumKept) are pending already (a webhook that never succeeds?)\n".utf8))
        }
    }

    /// Whether `environment` has a webhook.
    public func delivers(_ environment: ServerAPIEnvironment) -> Bool { webhooks.urls[environment] != nil }

    /// The deliveries of `environment` due by `now`, in the order they were first due.
    public func due(_ environment: ServerAPIEnvironment, now: Date) -> [Delivery] {
        state.withLock { state in
            state.order.compactMap { state.deliveries[$0] }.filter { $0.environment == environment && ($0.due.map { $0 <= now } ?? false) }
        }
    }

    /// Records `attempt` of `key`: done when it succeeded or was the last retry, else due again at the next offset.
    public func record(_ attempt: SendAttempt, of key: String) {
        state.withLock { state in
            guard var delivery = state.deliveries[key] else { return }
            delivery.attempts.append(attempt)
            let offsets = Self.retryOffsets(delivery.environment)
            if attempt.result == .success || delivery.attempts.count > offsets.count {
                delivery.due = nil
            } else if let first = delivery.attempts.first?.date {
                delivery.due = first.addingTimeInterval(offsets[delivery.attempts.count - 1])
            }
            state.deliveries[key] = delivery
        }
    }

    /// Notifications not delivered because too many were pending.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// The attempts made for `key`, as Apple's history lists them.
    public func attempts(of key: String) -> [SendAttempt] { state.withLock { $0.deliveries[key]?.attempts ?? [] } }
}
