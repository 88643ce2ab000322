import ServiceLifecycle
import StoreServer

/// Runs the Retention Messaging performance tests `forge serve` was asked for (Initiate Performance Test), as a
/// service of the server's application: each run's signed realtime requests (made on the answer pool) go to the
/// realtime URL through the ``WebhookClient`` — so every request has its deadline, its answer is read only so far and
/// judged status by status, as a notification's is — at most `maxConcurrentRequests` at a time, and the outcome is
/// recorded for Get Performance Test Results. Several accounts' tests run side by side; sending is I/O only (the client
/// runs on NIO's loops), and recording the outcome is an in-memory change. A graceful shutdown ends the runs under way.
struct PerformanceTestRunner: Service {
    let serverAPI: ServerAPIService

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for await run in serverAPI.performanceTests.runs {
                    group.addTask {
                        let answers = await WebhookClient.deliver(run.requests, concurrency: run.configuration.maxConcurrentRequests)
                        guard !Task.isCancelled else { return }
                        serverAPI.finishPerformanceTest(run, answers: answers)
                    }
                }
            }
        }
    }
}
