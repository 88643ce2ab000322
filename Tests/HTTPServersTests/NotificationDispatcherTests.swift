import _ForgeSupport
import Foundation
import StoreServer
import Testing

/// Apple's delivery rules as ``NotificationDispatcher`` keeps them, without sockets: the retry schedule, and the
/// per-webhook queue bound that keeps a webhook that never answers from growing memory or starving the other.
@Suite("Notification dispatcher: Apple's retry schedule and bounded queues", .timeLimit(.minutes(2)))
struct NotificationDispatcherTests {
    static let start = Date(timeIntervalSince1970: 1_736_899_200)
    static let hooks = NotificationDispatcher.Webhooks(
        urls: [.production: try! HTTPURL("http://127.0.0.1:9/p"), .sandbox: try! HTTPURL("http://127.0.0.1:9/s")])

    static func notification(_ index: Int) -> NotificationDispatcher.Notification {
        .init(key: "n\(index)", body: Array("{\"signedPayload\":\"\(index)\"}".utf8), date: start)
    }

    static func failure(at date: Date) -> SendAttempt { SendAttempt(date: date, result: .unsuccessfulHTTPResponseCode, httpStatus: 500, milliseconds: 1) }

    @Test("Production: a failed first attempt is due again 1, 12, 24, 48 and 72 hours after it, then given up; sandbox: once, after an hour")
    func retrySchedule() {
        let dispatcher = NotificationDispatcher(Self.hooks)
        dispatcher.enqueue([Self.notification(0)], environment: .production)
        dispatcher.enqueue([Self.notification(1)], environment: .sandbox)
        var dues: [TimeInterval] = []
        var now = Self.start
        while let (delivery, _) = dispatcher.due(.production, now: now).first {
            dispatcher.record(Self.failure(at: now), of: delivery.key)
            guard let next = dispatcher.due(.production, now: .distantFuture).first?.delivery.due else { break }
            dues.append(next.timeIntervalSince(Self.start) / 3600)
            now = next
        }
        #expect(dues == [1, 12, 24, 48, 72])
        #expect(dispatcher.attempts(of: "n0").count == 6 && dispatcher.pending[.production] == 0)

        dispatcher.record(Self.failure(at: Self.start), of: "n1")
        #expect(dispatcher.due(.sandbox, now: .distantFuture).first?.delivery.due == Self.start.addingTimeInterval(3600))
        dispatcher.record(Self.failure(at: Self.start.addingTimeInterval(3600)), of: "n1")
        #expect(dispatcher.due(.sandbox, now: .distantFuture).isEmpty, "given up after the one retry")
    }

    @Test("A webhook's queue holds maximumPending notifications: more are dropped and counted, the other webhook's queue is untouched, and a delivery makes room")
    func boundedPerWebhook() {
        let dispatcher = NotificationDispatcher(Self.hooks)
        let limit = NotificationDispatcher.maximumPending
        dispatcher.enqueue((0..<limit + 3).map(Self.notification), environment: .production)
        #expect(dispatcher.pending[.production] == limit && dispatcher.dropped == 3)
        dispatcher.enqueue([Self.notification(-1)], environment: .sandbox)
        #expect(dispatcher.pending[.sandbox] == 1 && dispatcher.dropped == 3, "the sandbox webhook has its own queue")
        dispatcher.record(SendAttempt(date: Self.start, result: .success, httpStatus: 200, milliseconds: 1), of: "n0")
        dispatcher.enqueue([Self.notification(limit + 10)], environment: .production)
        #expect(dispatcher.pending[.production] == limit && dispatcher.dropped == 3)
        #expect(dispatcher.due(.production, now: Self.start).count == limit)
    }

    @Test("A notification enqueued twice (the clock passing it again after a restart) is one delivery")
    func enqueuedOnce() {
        let dispatcher = NotificationDispatcher(Self.hooks)
        dispatcher.enqueue([Self.notification(0)], environment: .production)
        dispatcher.record(SendAttempt(date: Self.start, result: .success, httpStatus: 200, milliseconds: 1), of: "n0")
        dispatcher.enqueue([Self.notification(0)], environment: .production)
        #expect(dispatcher.due(.production, now: .distantFuture).isEmpty && dispatcher.attempts(of: "n0").count == 1)
    }

    @Test("What waits is bounded in bytes as well: bodies past maximumPendingBytes are dropped and counted; a delivered or given-up notification keeps its attempts, not its body")
    func boundedInBytes() {
        let dispatcher = NotificationDispatcher(Self.hooks)
        let size = 1 << 20
        let count = NotificationDispatcher.maximumPendingBytes / size
        let big = (0..<count + 2).map { NotificationDispatcher.Notification(key: "b\($0)", body: [UInt8](repeating: 0x61, count: size), date: Self.start) }
        dispatcher.enqueue(big, environment: .production)
        #expect(dispatcher.pending[.production] == count && dispatcher.dropped == 2)
        #expect(dispatcher.pendingBytes[.production] == NotificationDispatcher.maximumPendingBytes)
        dispatcher.record(SendAttempt(date: Self.start, result: .success, httpStatus: 200, milliseconds: 1), of: "b0")
        var now = Self.start
        for _ in 0...NotificationDispatcher.retryOffsets(.production).count {
            dispatcher.record(Self.failure(at: now), of: "b1")
            now = now.addingTimeInterval(100 * 3600)
        }
        #expect(dispatcher.attempts(of: "b0").count == 1 && dispatcher.attempts(of: "b1").count == 6)
        #expect(dispatcher.pending[.production] == count - 2 && dispatcher.bodyBytes == (count - 2) * size, "b0 delivered and b1 given up hold no body")
        dispatcher.enqueue([Self.notification(0)], environment: .production)
        #expect(dispatcher.holds("n0"), "their bytes made room")
    }
}
