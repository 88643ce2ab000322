import Foundation
public import ReceiptServe

/// `forge serve --notify URL`: delivers the notifications of the served stores to the user's webhooks as the
/// server clock passes them (from the clock at start-up on), in timeline order, retried on Apple's schedule
/// (``NotificationDispatcher``). One loop per environment with a webhook, so a slow webhook of one environment
/// never delays the other's.
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
        var watermark = service.state.startedAt
        while !Task.isCancelled {
            let now = service.state.now()
            if now > watermark {
                for notification in service.notifications(environment, after: watermark, through: now) {
                    dispatcher.enqueue(key: notification.key, environment: environment, body: notification.body, at: notification.date)
                }
                watermark = now
            }
            for delivery in dispatcher.due(environment, now: now) {
                guard !Task.isCancelled else { return }
                let answer = await client.deliver(delivery.request, at: service.state.now())
                dispatcher.record(answer.attempt, of: delivery.key)
            }
            try? await Task.sleep(for: tick)
        }
    }
}
