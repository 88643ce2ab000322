import Foundation
public import ReceiptServe

/// `forge serve --notify URL`: delivers the notifications of the served stores to the user's webhooks as the
/// server clock passes them (from the clock at start-up on, or where `--state`'s file left off), in timeline
/// order, retried on Apple's schedule (``NotificationDispatcher``). One loop per environment with a webhook,
/// so a slow webhook of one environment never delays the other's.
public enum NotificationDelivery {
    /// How often, in wall time, a loop looks at the server clock for what is due.
    public static let tick: Duration = .milliseconds(50)

    /// Runs until cancelled; nothing without webhooks.
    public static func run(_ service: ServerAPIService) async {
        guard let dispatcher = service.configuration.deliveries else { return }
        let client: WebhookClient
        do {
            client = try WebhookClient(timeoutSeconds: dispatcher.webhooks.timeoutSeconds, trustedRootsPEM: dispatcher.webhooks.trustedRootsPEM)
        } catch {
            FileHandle.standardError.write(Data("forge: warning: no notification is delivered: the --notify-ca certificates are not PEM (\(error))\n".utf8))
            return
        }
        await withTaskGroup(of: Void.self) { group in
            for environment in dispatcher.webhooks.urls.keys {
                group.addTask { await loop(environment, service: service, dispatcher: dispatcher, client: client) }
            }
        }
        await client.shutdown()
    }

    private static func loop(_ environment: ServerAPIEnvironment, service: ServerAPIService, dispatcher: NotificationDispatcher, client: WebhookClient) async {
        var watermark = dispatcher.watermark(environment) ?? service.state.startedAt
        while !Task.isCancelled {
            let now = service.state.now()
            if now > watermark, dispatcher.enqueue(service.notifications(environment, after: watermark, through: now), environment: environment, through: now) {
                watermark = now
            }
            for (delivery, request) in dispatcher.due(environment, now: now) {
                guard !Task.isCancelled else { return }
                let answer = await client.deliver(request, at: service.state.now())
                dispatcher.record(answer.attempt, of: delivery.key)
            }
            try? await Task.sleep(for: tick)
        }
    }
}

/// `forge serve --state FILE`: writes the server clock about once a second, so a restart resumes near where
/// the clock was even when nothing changed (every change writes it too).
public enum StateCheckpoint {
    public static let interval: Duration = .seconds(1)

    /// Runs until cancelled, then writes once more; nothing without a state file.
    public static func run(_ state: ServerState) async {
        guard state.store != nil else { return }
        var warned = false
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            do { try state.checkpoint() } catch {
                if !warned { FileHandle.standardError.write(Data("forge: warning: the clock is not in the state file: \(error.message)\n".utf8)) }
                warned = true
            }
        }
        try? state.checkpoint()
    }
}
