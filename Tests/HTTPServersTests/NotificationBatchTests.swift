import Foundation
import _ForgeSupport
import Hummingbird
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import StoreModel
import Synchronization
import Testing
import ForgeTestSupport

/// Issue 36, item 5: `--notify` rendered a customer's whole store for every notification (10 ms each for a store of
/// 10,000 periods), signed the whole batch before delivering any, on an event loop, and re-rendered every store
/// each 50 ms tick with nothing due. Now a batch lists each store once and signs each notification as of its
/// instant from it, a slice at a time on a worker of its own, and nothing is rendered before anything can be due.
/// Item 16: a TEST asked for while its webhook's queue is full is refused (5000001), not answered with a token
/// that never shows an attempt.
@Suite(
    "Notification delivery: one rendering per store a batch, signed off the event loops, nothing rendered while nothing is due", .timeLimit(.minutes(2)))
struct NotificationBatchTests {
    static let examples = Repository.file("examples")
    static let start = "2025-01-01T00:00:00Z"

    /// A daily subscription whose 150 periods run ahead of the clock, a price increase, an extension, auto-renew
    /// turned off and a refund: each notification's renewal info is the state at its own instant.
    static let daily = #"""
        {"bundleId": "com.example.daily", "now": "2025-01-01T00:00:00Z",
         "purchases": [{"productId": "pro.daily", "purchaseDate": "2025-01-01T00:00:00Z", "period": "P1D", "renewals": 150}],
         "timeline": [{"event": "price-increase", "at": "2025-01-10T06:00:00Z", "consent": "pending"},
                      {"event": "extend", "days": 2, "at": "2025-01-20T12:00:00Z"},
                      {"event": "cancel", "at": "2025-02-01T00:00:00Z"},
                      {"event": "refund", "at": "2025-02-05T12:00:00Z"}]}
        """#

    static func scenarios() throws -> [Scenario] {
        var texts = [daily]
        for path in ["serve-history.json", "server-api/sandbox-customer.json", "server-api/production-customer.json"] {
            texts.append(try String(contentsOf: examples.appendingPathComponent(path), encoding: .utf8))
        }
        return try texts.map { try Scenario.decode(json: Data($0.utf8)) }
    }

    static func date(_ text: String) throws -> Date { try #require(ReceiptDate.parse(text)) }

    static func service(deliveries: NotificationDispatcher? = nil) throws -> ServerAPIService {
        let webhooks = try deliveries ?? NotificationDispatcher(.init(urls: [.production: try HTTPURL("http://127.0.0.1:9/p"), .sandbox: try HTTPURL("http://127.0.0.1:9/s")]))
        return try ServerAPIService(
            scenarios: try scenarios(), forge: try Forge.bundled(), configuration: .init(now: try date(start), access: .open, deliveries: webhooks))
    }

    /// Every notification of `batch`, signed a slice of `size` at a time.
    static func signAll(_ batch: NotificationBatch?, size: Int = 7) -> [NotificationDispatcher.Notification] {
        guard var batch else { return [] }
        var signed: [NotificationDispatcher.Notification] = []
        while !batch.isEmpty { signed += batch.signNext(size).notifications }
        return signed
    }

    /// Get Notification History's bodies from `after` (exclusive) to `through` (inclusive), every page: each rendered
    /// from its customer's store made anew at the notification's instant.
    static func history(_ service: ServerAPIService, _ environment: ServerAPIEnvironment, after: Date, through: Date) throws -> [[UInt8]] {
        let range = #"{"startDate":\#((ReceiptDate.milliseconds(after) ?? 0) + 1),"endDate":\#((ReceiptDate.milliseconds(through) ?? 0) + 1)}"#
        var bodies: [[UInt8]] = []
        var query = ""
        for _ in 0..<100 {
            let answer = service.respond(
                ServerAPIRequest(environment: environment, endpoint: .notificationHistory, query: query, body: Array(range.utf8), now: through))
            try #require(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            let page = try JSONValue(parsing: answer.body)
            for item in page["notificationHistory"]?.arrayValue ?? [] {
                bodies.append(WebhookRequest.body(signedPayload: try #require(item["signedPayload"]?.stringValue)))
            }
            guard let token = page["paginationToken"]?.stringValue else { break }
            query = "paginationToken=\(token)"
        }
        return bodies
    }

    @Test(
        "A batch renders each store once and signs each notification as of its instant: Get Notification History's bodies, byte for byte, complete, in timeline order",
        arguments: [(ServerAPIEnvironment.production, start, "2025-05-01T00:00:00Z"), (.sandbox, "2025-01-25T00:00:00Z", "2025-02-22T00:00:00Z")])
    func batchIsTheHistory(environment: ServerAPIEnvironment, after: String, through: String) throws {
        let service = try Self.service()
        let schedule = NotificationSchedule(service, environment: environment, watermark: try Self.date(after))
        let signed = Self.signAll(schedule.batch(now: try Self.date(through)))
        #expect(schedule.storesRendered == service.state.customers.count, "one rendering per store for the whole batch")
        let history = try Self.history(service, environment, after: try Self.date(after), through: try Self.date(through))
        #expect(signed.count == history.count && signed.count >= (environment == .production ? 120 : 2), "\(signed.count) \(history.count)")
        #expect(signed.map(\.body) == history, "the same bytes as the history, in its order")
        #expect(signed.map(\.date) == signed.map(\.date).sorted(), "timeline order")
    }

    @Test(
        "Issue 40: a consent-revoked event is delivered as RESCIND_CONSENT about the app (appData with the store's signed AppTransaction), the history's bytes"
    )
    func consentRevokedDelivered() throws {
        let scenario = try Scenario.decode(
            json: Data(
                #"""
                {"bundleId": "com.example.consent", "now": "2025-01-01T00:00:00Z",
                 "purchases": [{"productId": "pro.monthly", "purchaseDate": "2025-01-01T00:00:00Z", "period": "P1M", "renewals": 2}],
                 "timeline": [{"event": "consent-revoked", "at": "2025-01-20T00:00:00Z"}]}
                """#.utf8))
        let webhooks = NotificationDispatcher(.init(urls: [.production: try HTTPURL("http://127.0.0.1:9/p")]))
        let service = try ServerAPIService(
            scenarios: [scenario], forge: try Forge.bundled(), configuration: .init(now: try Self.date(Self.start), access: .open, deliveries: webhooks))
        let schedule = NotificationSchedule(service, environment: .production, watermark: try Self.date(Self.start))
        let through = try Self.date("2025-02-01T00:00:00Z")
        let signed = Self.signAll(schedule.batch(now: through))
        #expect(signed.map(\.body) == (try Self.history(service, .production, after: try Self.date(Self.start), through: through)))
        let payloads = try signed.map { notification in
            let body = try JSONValue(parsing: notification.body)
            let compact = try #require(body["signedPayload"]?.stringValue)
            let part = try #require(compact.split(separator: ".").dropFirst().first.flatMap { Base64URL.decode($0) })
            return try JSONValue(parsing: part)
        }
        let rescinded = payloads.filter { $0["notificationType"] == .string("RESCIND_CONSENT") }
        try #require(rescinded.count == 1, "\(payloads.map { $0["notificationType"] ?? .null })")
        let appData = try #require(rescinded[0]["appData"])
        #expect(rescinded[0]["data"] == nil && appData["bundleId"] == .string("com.example.consent") && appData["environment"] == .string("Production"))
        #expect(appData["signedAppTransactionInfo"]?.stringValue?.split(separator: ".").count == 3)
    }

    @Test("A store looked at again (StoreRendering.at) is the store rendered anew at that instant, at every instant of its timeline")
    func reissuedStoreIsTheSame() throws {
        let forge = try Forge.bundled()
        for scenario in try Self.scenarios() {
            let made = try #require(scenario.now.flatMap(ReceiptDate.parse))
            let base = try forge.rendering(scenario, madeAt: made, now: made)
            var instants = stride(from: 0.0, through: 400 * 86_400, by: 86_400 * 3.5).map { made.addingTimeInterval($0) }
            instants += base.store.transactions.flatMap { [$0.purchaseDate, $0.expiresDate, $0.cancellationDate].compactMap(\.self) }
            instants += (scenario.timeline ?? []).compactMap { $0.at.flatMap(ReceiptDate.parse) }
            for instant in instants {
                let anew: StoreRendering, again: StoreRendering
                do { anew = try forge.rendering(scenario, madeAt: made, now: instant) } catch {
                    #expect(throws: error) { try base.at(instant) }
                    continue
                }
                again = try base.at(instant)
                #expect(again.store.now == anew.store.now && again.store.transactions == anew.store.transactions && again.store.history == anew.store.history)
                #expect(again.store.undocumented1710 == anew.store.undocumented1710 && again.store.appItemID == anew.store.appItemID)
                let latest = try #require(anew.store.transactions.max { $0.purchaseDate < $1.purchaseDate })
                let notification = { (rendering: StoreRendering) in try rendering.signedNotification(.didRenew, subtype: nil, about: latest, uuid: "n") }
                #expect(try notification(again) == notification(anew), "\(ReceiptDate.format(instant))")
            }
        }
    }

    @Test("Nothing is rendered while nothing can be due; each notification is listed at the first look at or after its instant; a change of state looks again once")
    func nothingDueRendersNothing() throws {
        let service = try Self.service()
        let schedule = NotificationSchedule(service, environment: .production, watermark: try Self.date(Self.start))
        let customers = service.state.customers.count
        var listings: [(now: Date, dates: [Date])] = []
        var now = try Self.date(Self.start)
        var previous = now
        var quietSteps = 0
        // Six-hour steps over eight months: past every notification of the production stores.
        for _ in 0..<(8 * 30 * 4) {
            now.addTimeInterval(6 * 3600)
            let rendered = schedule.storesRendered
            let batch = schedule.batch(now: now)
            let signed = Self.signAll(batch)
            if schedule.storesRendered == rendered { quietSteps += 1 }
            #expect(signed.allSatisfy { $0.date > previous && $0.date <= now }, "listed at the first look at or after its instant")
            if !signed.isEmpty { listings.append((now, signed.map(\.date))) }
            previous = now
        }
        let looks = schedule.storesRendered / customers
        #expect(listings.count >= 100 && looks <= listings.count + 6, "a store is rendered when something can be due: \(looks) looks, \(listings.count) with notifications")
        #expect(quietSteps >= 8 * 30 * 4 - looks)
        // Months after the last notification, nothing can come: nothing is rendered.
        let idle = schedule.storesRendered
        for _ in 0..<1000 {
            now.addTimeInterval(3600)
            #expect(schedule.batch(now: now) == nil)
        }
        #expect(schedule.storesRendered == idle, "nothing due costs nothing")
        // A change of state (the clock moved by POST /_forge/clock) may bring something: one look, then quiet again.
        try service.state.setClock(to: now)
        _ = schedule.batch(now: now.addingTimeInterval(1))
        _ = schedule.batch(now: now.addingTimeInterval(2))
        #expect(schedule.storesRendered == idle + customers)
    }

    @Test("Request a Test Notification while its webhook's queue is full is refused with 5000001 (retryable) and no token; once there is room, it is queued")
    func testNotificationWithFullQueue() throws {
        let dispatcher = NotificationDispatcher(.init(urls: [.sandbox: try HTTPURL("http://127.0.0.1:9/s")]))
        let service = try Self.service(deliveries: dispatcher)
        let limit = NotificationDispatcher.maximumPending
        dispatcher.enqueue((0..<limit).map { .init(key: "n\($0)", body: [], date: .distantPast) }, environment: .sandbox)
        let test = ServerAPIRequest(environment: .sandbox, endpoint: .requestTestNotification)
        let refused = service.respond(test)
        #expect(refused.status == 500 && String(decoding: refused.body, as: UTF8.self) == #"{"errorCode":5000001,"errorMessage":"An unknown error occurred. Please try again."}"#)
        #expect(dispatcher.pending[.sandbox] == limit && dispatcher.dropped == 0, "nothing dropped: the TEST was never accepted")
        dispatcher.record(SendAttempt(date: .distantPast, result: .success, httpStatus: 200, milliseconds: 1), of: "n0")
        let accepted = service.respond(test)
        let token = try #require(try JSONValue(parsing: accepted.body)["testNotificationToken"]?.stringValue, "\(accepted.status)")
        #expect(dispatcher.pending[.sandbox] == limit, "the TEST took the free place")
        let status = service.respond(ServerAPIRequest(environment: .sandbox, endpoint: .testNotificationStatus, parameters: [token]))
        #expect(status.status == 200)
    }

    // MARK: - The delivery loop, in process

    /// A webhook on a socket that keeps what it receives, in order.
    final class Sink: Sendable {
        let received = Mutex<[(method: String, path: String, body: [UInt8])]>([])
        var count: Int { received.withLock { $0.count } }
        /// Holds the answer to `POST /held` until opened.
        let hold = Gate(permits: 0)

        func application() -> some ApplicationProtocol {
            let router = Router()
            let sink = self
            router.on("/{path}", method: .post) { request, context -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let path = context.parameters.get("path") ?? ""
                sink.received.withLock { $0.append(("POST", path, Array(buffer: body))) }
                switch path {
                case "to-bad-port": return Response(status: .temporaryRedirect, headers: [.location: "http://127.0.0.1:70000/x"])
                case "loop": return Response(status: .found, headers: [.location: "/loop"])
                case "hop": return Response(status: .temporaryRedirect, headers: [.location: "/ok"])
                case "see-other": return Response(status: .seeOther, headers: [.location: "/ok"])
                case let chain where chain.hasPrefix("chain"): return Response(status: .temporaryRedirect, headers: [.location: "/\(chain)x"])
                case "held":
                    await sink.hold.enter()
                    return Response(status: .ok)
                default: return Response(status: .ok)
                }
            }
            router.get("/{path}") { _, context -> Response in
                sink.received.withLock { $0.append(("GET", context.parameters.get("path") ?? "", [])) }
                return Response(status: .ok)
            }
            return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        }
    }

    /// Lets `permits` pieces of work through, then holds the rest until opened.
    actor Gate {
        private var permits: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []
        init(permits: Int) { self.permits = permits }
        var held: Int { waiting.count }

        func enter() async {
            if permits > 0 {
                permits -= 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func open() {
            permits = .max
            for waiter in waiting { waiter.resume() }
            waiting = []
        }
    }

    struct GatedWorker: NotificationWorker {
        let gate: Gate
        func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
            await gate.enter()
            return await Task.detached { work() }.value
        }
    }

    /// An attempt's time limit no test reaches: a delivery's outcome depends on what the webhook answered, never on
    /// how fast a loaded machine got there (the suite's time limit bounds the test).
    static let patientTimeout = WebhookRequest.timeoutRange.upperBound

    @Test(
        "While a batch is being signed the server answers: the first slice is delivered, the worker is held, GET /_forge/clock answers 200; released, the whole batch arrives in order, the history's bytes"
    )
    func answersWhileSigning() async throws {
        let sink = Sink()
        try await sink.application().test(.live) { hook in
            let port = try #require(hook.port)
            let dispatcher = NotificationDispatcher(.init(urls: [.production: try HTTPURL("http://127.0.0.1:\(port)/apple")], timeoutSeconds: Self.patientTimeout))
            let service = try Self.service(deliveries: dispatcher)
            let through = try Self.date("2025-06-15T00:00:00Z")
            try service.state.setClock(to: through)
            let expected = Self.signAll(NotificationSchedule(service, environment: .production, watermark: try Self.date(Self.start)).batch(now: through))
            try #require(expected.count > 2 * NotificationDelivery.sliceSize)
            // The application's own delivery, its work on a gated worker: the listing and the first slice; the second is held.
            let gate = Gate(permits: 2)
            let application = try ForgeServers.buildServeApplication(
                ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), serverAPI: service,
                faults: try FaultPlan(), log: try RequestLog(file: nil, capacity: 100), deliveryWorker: GatedWorker(gate: gate))
            try await application.test(.live) { client in
                // Whatever happens, the gate opens before the server stops: its delivery service is waiting at it.
                do {
                    try await eventually("the first slice went out while the next is signed", within: .seconds(90)) {
                        await gate.held == 1 && sink.count == NotificationDelivery.sliceSize
                    }
                    // The gate stays shut until the answer has come: whenever it comes, it came while the batch was being signed.
                    let port = try #require(client.port)
                    let clock = try await LiveClient(port: port, timeout: .seconds(90)).execute(uri: "/_forge/clock", method: .get)
                    #expect(clock.status == .ok, "answered while the batch is being signed")
                    #expect(await gate.held == 1 && sink.count == NotificationDelivery.sliceSize, "still held")
                } catch {
                    await gate.open()
                    throw error
                }
                await gate.open()
                try await eventually("the whole batch arrived", within: .seconds(90)) { sink.count >= expected.count }
                #expect(sink.received.withLock { $0.map(\.body) } == expected.map(\.body), "all of it, in order, the same bytes")
            }
        }
    }

    @Test(
        "Delivery is a service of the application: built by buildServeApplication and run in process, it sends a TEST notification by itself; a graceful shutdown lets the attempt in flight end, so the webhook's 200 is recorded and nothing is left to send"
    )
    func deliveryIsAServiceOfTheApplication() async throws {
        let sink = Sink()
        try await sink.application().test(.live) { hook in
            let port = try #require(hook.port)
            // A limit the test's own bounds: were the held answer never released, the attempt would end at it.
            let dispatcher = NotificationDispatcher(.init(urls: [.production: try HTTPURL("http://127.0.0.1:\(port)/held")], timeoutSeconds: 60))
            let service = try Self.service(deliveries: dispatcher)
            let application = try ForgeServers.buildServeApplication(
                ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), serverAPI: service,
                faults: try FaultPlan(), log: try RequestLog(file: nil, capacity: 100))
            let release = Mutex<Task<Void, any Error>?>(nil)
            try await application.test(.live) { client in
                let requested = try await client.execute(uri: "/inApps/v1/notifications/test", method: .post)
                #expect(requested.status == .ok)
                try await eventually("the TEST notification reached the webhook, which holds its answer", within: .seconds(60)) { await sink.hold.held == 1 }
                let served = try #require(client.port)
                // Released once the server has begun to stop (its own signal: it no longer accepts connections), so the
                // attempt is in flight when the shutdown starts.
                let releasing = Task {
                    try await eventually("the server stopped accepting", within: .seconds(60)) {
                        do {
                            _ = try await request("http://127.0.0.1:\(served)/_forge/clock", within: .seconds(5))
                            return false
                        } catch { return true }
                    }
                    await sink.hold.open()
                }
                release.withLock { $0 = releasing }
            }
            try await release.withLock { $0 }?.value
            #expect(sink.received.withLock { $0.filter { $0.path == "held" }.count } == 1, "sent once")
            #expect((dispatcher.pending[.production] ?? 0) == 0, "delivered: the attempt in flight ended with the webhook's 200, nothing is due again")
        }
    }

    @Test(
        "The webhook client follows redirects itself, each Location checked: port 70000 is OTHER, a circle CIRCULAR_REDIRECT, a sixth redirect OTHER; 307 keeps the POST, 303 becomes a GET"
    )
    func redirects() async throws {
        let sink = Sink()
        try await sink.application().test(.live) { hook in
            let port = try #require(hook.port)
            let client = try WebhookClient(timeoutSeconds: Self.patientTimeout, trustedRootsPEM: nil)
            func attempt(_ path: String) async throws -> SendAttempt {
                await client.deliver(WebhookRequest(url: try HTTPURL("http://127.0.0.1:\(port)/\(path)"), body: Array(#"{"signedPayload":"x"}"#.utf8))).attempt
            }
            let bad = try await attempt("to-bad-port")
            #expect(bad.result == .other && bad.httpStatus == 307 && bad.detail?.contains("not 70000") == true, "\(bad)")
            #expect(try await attempt("loop").result == .circularRedirect)
            let chain = try await attempt("chain")
            #expect(chain.result == .other && chain.detail?.contains("more than \(WebhookRequest.maximumRedirects) redirects") == true, "\(chain)")
            sink.received.withLock { $0 = [] }
            #expect(try await attempt("hop").result == .success)
            #expect(try await attempt("see-other").result == .success)
            let seen = sink.received.withLock { $0.map { "\($0.method) \($0.path) \($0.body.count)" } }
            #expect(seen == ["POST hop 21", "POST ok 21", "POST see-other 21", "GET ok 0"], "\(seen)")
        }
    }
}
