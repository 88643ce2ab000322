#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport
import NIOPosix
package import StoreServer
import ServiceLifecycle

/// `forge serve --notify URL`: delivers the notifications of the served stores to the user's webhooks as the
/// server clock passes them (from the clock at start-up on, or where `--state`'s file left off), in timeline
/// order, retried on Apple's schedule (``NotificationDispatcher``). One loop per environment with a webhook,
/// so a slow webhook of one environment never delays the other's.
///
/// Listing and signing are CPU work, and here Swift concurrency runs on NIO's event loops: both run on a
/// ``NotificationWorker`` instead (by default one thread of its own), a slice of ``sliceSize`` notifications
/// at a time, the next slice signed while the last is delivered, so the loops keep answering requests and the
/// first notification of a large batch goes out at once. What the loops write to the `--state` file (an attempt, the
/// notifications newly due) is written on NIO's blocking-I/O pool (``StateWriter``). With nothing due, a tick compares
/// two dates.
package enum NotificationDelivery {
    /// How often, in wall time, a loop looks at the server clock for what is due.
    package static let tick: Duration = .milliseconds(50)
    /// Notifications signed in one piece of work.
    package static let sliceSize = 64

    /// Runs until cancelled or, as a service, until a graceful shutdown, which lets the attempt in flight end; nothing
    /// without webhooks. `worker` lists and signs: by default a thread of its own.
    package static func run(_ service: ServerAPIService, worker: (any NotificationWorker)? = nil) async {
        guard let dispatcher = service.configuration.deliveries else { return }
        let client: WebhookClient
        do {
            client = try WebhookClient(timeoutSeconds: dispatcher.webhooks.timeoutSeconds, trustedRootsPEM: dispatcher.webhooks.trustedRootsPEM)
        } catch {
            StandardStream.error.write("forge: warning: no notification is delivered: the \(ServeOption.notifyCA) certificates are not PEM (\(error))\n")
            return
        }
        let own = worker == nil ? ThreadWorker() : nil
        let worker = worker ?? own
        if let worker {
            await withTaskGroup(of: Void.self) { group in
                for environment in dispatcher.webhooks.urls.keys {
                    group.addTask { await loop(environment, service: service, dispatcher: dispatcher, client: client, worker: worker) }
                }
            }
        }
        await own?.shutdown()
    }

    private static func loop(
        _ environment: ServerAPIEnvironment, service: ServerAPIService, dispatcher: NotificationDispatcher, client: WebhookClient, worker: any NotificationWorker
    ) async {
        let schedule = NotificationSchedule(service, environment: environment, watermark: dispatcher.watermark(environment) ?? service.state.startedAt)
        var batch: NotificationBatch?
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let now = service.state.now()
            if batch == nil, !schedule.isQuiet(at: now) { batch = await worker.run { schedule.batch(now: now) } }
            // The next slice is signed while the due ones are delivered.
            let current = batch
            async let signing = sign(current, on: worker)
            for (delivery, request) in dispatcher.due(environment, now: now) {
                guard !Task.isCancelled, !Task.isShuttingDownGracefully else { break }
                let answer = await client.deliver(request, at: service.state.now())
                await StateWriter.run(if: dispatcher.writesToFile) { dispatcher.record(answer.attempt, of: delivery.key) }
            }
            if let signed = await signing {
                // A store that cannot take the slice keeps the batch where it was: signed again on the next round.
                let accepted = await StateWriter.run(if: dispatcher.writesToFile) {
                    dispatcher.enqueue(signed.notifications, environment: environment, through: signed.watermark)
                }
                if accepted {
                    batch = signed.rest.isEmpty ? nil : signed.rest
                } else {
                    try? await Task.sleep(for: tick)
                }
            } else {
                try? await Task.sleep(for: tick)
            }
        }
    }

    /// The next slice of `batch`, signed on `worker`.
    private static func sign(_ batch: NotificationBatch?, on worker: any NotificationWorker) async -> Signed? {
        guard let batch else { return nil }
        return await worker.run {
            var rest = batch
            let (notifications, watermark) = rest.signNext(sliceSize)
            return Signed(notifications: notifications, watermark: watermark, rest: rest)
        }
    }

    private struct Signed: Sendable {
        let notifications: [NotificationDispatcher.Notification]
        let watermark: Date?
        let rest: NotificationBatch
    }
}

/// Where notification delivery does its CPU work (listing the stores' notifications, signing them): never on
/// an event loop. Tests gate it to see the server answer while a batch is being signed.
package protocol NotificationWorker: Sendable {
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T
}

/// One thread of delivery's own (a NIO thread pool of one): signing takes at most a core, beside the answer
/// pool's workers and the event loops.
final class ThreadWorker: NotificationWorker {
    private let pool = NIOThreadPool(numberOfThreads: 1)

    init() { pool.start() }

    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        // Only a pool already shut down (or a cancelled task) refuses: then the work runs where it is asked for.
        do { return try await pool.runIfActive(work) } catch { return work() }
    }

    func shutdown() async { try? await pool.shutdownGracefully() }
}

/// Notification delivery as a service of the server's application (``ForgeServers``): started with the server, in
/// process as on a socket; at a graceful shutdown the attempt in flight ends before it stops. Without webhooks it has
/// nothing to do until the server stops (a service that returned would stop the others).
struct NotificationDeliveryService: Service {
    let serverAPI: ServerAPIService
    let worker: (any NotificationWorker)?

    func run() async throws {
        await NotificationDelivery.run(serverAPI, worker: worker)
        try? await gracefulShutdown()
    }
}

/// The state file's clock checkpoint as a service of the server's application: its last write comes after the
/// server has stopped answering, at a graceful shutdown as at a cancellation.
struct StateCheckpointService: Service {
    let state: ServerState

    func run() async throws {
        await cancelWhenGracefulShutdown { await StateCheckpoint.run(state) }
        try? await gracefulShutdown()
    }
}

/// `forge serve --state FILE`: writes the server clock about once a second, so a restart resumes near where
/// the clock was even when nothing changed (every change writes it too).
package enum StateCheckpoint {
    package static let interval: Duration = .seconds(1)

    /// Runs until cancelled, then writes once more; nothing without a state file.
    package static func run(_ state: ServerState) async {
        guard state.store != nil else { return }
        var warned = false
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { break }
            if case .failure(let error) = await StateWriter.run({ Result { () throws(ServeError) in try state.checkpoint() } }) {
                if !warned { StandardStream.error.write("forge: warning: the clock is not in the state file: \(error.message)\n") }
                warned = true
            }
        }
        _ = await StateWriter.run { try? state.checkpoint() }
    }
}

/// Where the background services write the `--state` file (a delivery's attempt, newly due notifications, the clock):
/// NIO's blocking-I/O thread pool, never the event loop the service's task runs on (in forge-http Swift concurrency
/// runs on NIO's loops, and an SQLite write can wait on the disk).
enum StateWriter {
    /// `write` on the pool when it `touchesFile`; else at once, where it is asked for (an in-memory change is a few
    /// dictionary updates: a hop to the pool and back would cost more than the change, 10,000 times in a large batch).
    static func run<T: Sendable>(if touchesFile: Bool, _ write: @escaping @Sendable () -> T) async -> T {
        touchesFile ? await run(write) : write()
    }

    static func run<T: Sendable>(_ write: @escaping @Sendable () -> T) async -> T {
        // In a task of its own, so a cancelled service (a shutdown) still writes there; only a pool already shut down
        // refuses, and then the write is made where it is asked for.
        let written = Task { try await NIOThreadPool.singleton.runIfActive(write) }
        do { return try await written.value } catch { return write() }
    }
}
