package import StoreServer
import StoreServerSQLite
package import ReceiptValidationServer
import ServiceLifecycle

/// The package's HTTP servers, on Hummingbird: `forge serve` (Apple's verifyReceipt endpoints, the App Store Server
/// API, OCSP, faults, the request log, the control routes) and `forge validate --listen` (the harness protocol).
///
/// Each is put together here and nowhere else, in the shape of Hummingbird's template: `build…Application` returns a
/// ``ForgeApplication`` whose router holds every route (one controller per group, each with `addRoutes(to:)`) and whose
/// services run beside it. `forge-http` serves it on a socket (``ForgeApplication/serve()``); tests drive the same
/// application in process (`app.test(.router)`) or on loopback (`.live`).
///
/// Both are bounded the same way (``ServerLimits``): answers are computed on an ``AnswerPool`` off the event loops,
/// request bodies are capped one by one and all together, every read has a deadline (``ReadDeadlineHandler``), and
/// SIGINT or SIGTERM stops accepting and gives the requests in flight the shutdown grace period; then — or at a second
/// signal — the process exits.
package enum ForgeServers {
    /// `forge serve` from its command line's value: every part built (``ServeConfiguration/components(openState:)``,
    /// the state file in SQLite), then the application around them. `announce` gets the address bound (useful with
    /// port 0) once the server accepts.
    package static func buildServeApplication(
        _ configuration: ServeConfiguration, announce: @escaping @Sendable (ServerAddress) async -> Void = { _ in }
    ) throws -> ForgeApplication {
        let parts = try configuration.components { (path) throws(ServeError) in try SQLiteStateStore(path: path) }
        return try buildServeApplication(
            parts.listener, service: parts.service, serverAPI: parts.serverAPI, faults: parts.faults, log: parts.log, controlToken: parts.controlToken,
            ocsp: parts.ocsp, warn: configuration.warn, announce: announce)
    }

    /// `forge serve` from parts already built (tests bring their own state, worker or log): the routes of both APIs,
    /// OCSP and the control routes in one router, and the services that run with them.
    ///
    /// Without `controlToken` the control routes answer loopback clients that are not a web page (``ControlAccess``);
    /// with it, whoever sends it as `Authorization: Bearer TOKEN`. Notification delivery (to `serverAPI`'s webhooks,
    /// its CPU work on `deliveryWorker`, by default a thread of its own), the state file's clock checkpoint and the
    /// request log's end and the Retention Messaging performance tests (``PerformanceTestRunner``) are services of the application: they run with it, in process as on a socket, and a graceful
    /// shutdown lets the delivery attempt in flight end, writes the clock last and says what the log file could not take.
    package static func buildServeApplication(
        _ listener: ServerListener, service: VerifyReceiptService, serverAPI: ServerAPIService = ServerAPIService(), faults: FaultPlan, log: RequestLog,
        controlToken: String? = nil, ocsp: OCSPService? = nil, deliveryWorker: (any NotificationWorker)? = nil,
        warn: @escaping @Sendable (String) -> Void = { _ in }, announce: @escaping @Sendable (ServerAddress) async -> Void = { _ in }
    ) throws -> ForgeApplication {
        let background: [any Service] = [
            NotificationDeliveryService(serverAPI: serverAPI, worker: deliveryWorker), StateCheckpointService(state: serverAPI.state),
            RequestLogService(log: log, warn: warn), PerformanceTestRunner(serverAPI: serverAPI),
        ]
        return try ForgeApplication(listener, services: background, announce: announce) { router, runtime in
            if let ocsp { OCSPController(service: ocsp, log: log, runtime: runtime).addRoutes(to: router) }
            VerifyReceiptController(service: service, faults: faults, log: log, runtime: runtime).addRoutes(to: router)
            ServerAPIController(service: serverAPI, faults: faults, log: log, runtime: runtime).addRoutes(to: router)
            let access = ControlAccess(token: controlToken, listenHost: listener.host)
            ControlController(faults: faults, log: log, runtime: runtime, access: access, serverAPI: serverAPI, ocsp: ocsp).addRoutes(to: router)
        }
    }

    /// `forge validate --listen`: the routes of ``HarnessRoutes``, which also words the 404 and 405 of the paths and
    /// methods it does not take.
    package static func buildHarnessApplication(
        _ listener: ServerListener, routes: HarnessRoutes, announce: @escaping @Sendable (ServerAddress) async -> Void = { _ in }
    ) throws -> ForgeApplication {
        try ForgeApplication(listener, announce: announce) { router, runtime in
            HarnessController(routes: routes, runtime: runtime).addRoutes(to: router)
        }
    }
}

/// The request log's end, after the server's (Hummingbird stops an application's services after its server): the
/// `--log` file's writer drains what is queued (with a deadline), then what the file could not take is said once.
private struct RequestLogService: Service {
    let log: RequestLog
    let warn: @Sendable (String) -> Void

    func run() async throws {
        try? await gracefulShutdown()
        await log.finish()
        if log.dropped > 0, let path = log.path {
            warn("\(log.dropped) of \(log.recorded) request log entries could not be written to \(path)")
        }
    }
}
