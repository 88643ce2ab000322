import Dispatch
import Foundation
import _ForgeSupport
import StoreForge
import StoreServer
import StoreModel
import Synchronization
import Testing

/// A state store that keeps every batch it is told in memory, for tests that look at what a change writes; it
/// can be made to refuse every write, as a full disk does.
final class RecordingStore: ServerStateStore {
    let path = "recording-store"
    private let batches = Mutex<[[StateChange]]>([])
    private let refusing = Mutex(false)
    /// While set, a write waits here (on its own thread, never a test's) until ``release()``: a slow disk.
    private let gate = Mutex<DispatchSemaphore?>(nil)
    private let waiting = Mutex(0)
    private let threads = Mutex<[String]>([])

    func load() throws(ServeError) -> SavedState { SavedState() }

    func write(_ changes: [StateChange]) throws(ServeError) {
        if let gate = gate.withLock({ $0 }) {
            waiting.withLock { $0 += 1 }
            gate.wait()
            waiting.withLock { $0 -= 1 }
        }
        if refusing.withLock({ $0 }) { throw ServeError(.stateFailed, "\(path): the disk is full") }
        let thread = Self.threadName()
        batches.withLock { batches in
            batches.append(changes)
            threads.withLock { $0.append(thread) }
        }
    }

    /// The name of the thread each batch of ``written`` was written on (NIO's singleton thread pool names its threads `SGLTN-TP-#N`).
    var writers: [String] { batches.withLock { _ in threads.withLock { $0 } } }

    private static func threadName() -> String {
        #if os(Linux)
            // Glibc's module does not export pthread_getname_np; the kernel names the calling thread here.
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .newlines)
        #else
            return Thread.current.name ?? ""
        #endif
    }

    /// From now on writes wait until ``release()``.
    func hold() { gate.withLock { $0 = DispatchSemaphore(value: 0) } }

    /// Lets every waiting write (and every later one) go on.
    func release() {
        let held = gate.withLock { gate in
            let held = gate
            gate = nil
            return held
        }
        for _ in 0..<64 { held?.signal() }
    }

    /// Writes waiting at the gate now.
    var writesWaiting: Int { waiting.withLock { $0 } }

    /// Every batch written, in order.
    var written: [[StateChange]] { batches.withLock { $0 } }

    /// From now on every write fails (true) or succeeds (false).
    func refuse(_ flag: Bool) { refusing.withLock { $0 = flag } }
}

/// The scenarios and services the state tests share.
enum StateFixtures {
    /// The sandbox customer of `examples/server-api/`: a monthly subscription since 2023-01-15, active at 2025-01-01.
    static func sandboxCustomer() throws -> Scenario { try Scenario.decode(json: Data(ServerAPIRouteTests.sandboxScenario.utf8)) }

    static let clock = ServerAPIRouteTests.clock

    /// The ids of `scenario` at `clock`, by product, in purchase order.
    static func ids(_ scenario: Scenario, at clock: String = clock) throws -> [String: [String]] {
        let at = try #require(ReceiptDate.parse(clock))
        let store = try Forge.bundled().rendering(scenario, madeAt: at, now: at).store
        return Dictionary(grouping: store.transactions.sorted { $0.purchaseDate < $1.purchaseDate }, by: \.productID).mapValues { $0.map(\.transactionID) }
    }

    /// A service of `scenarios` open to every client (`--no-auth`), its clock pinned at `clock`.
    static func service(
        _ scenarios: [Scenario], clock: String = clock, store: (any ServerStateStore)? = nil, saved: SavedState = SavedState(),
        rateLimits: ServerAPIRateLimits? = nil
    ) throws -> ServerAPIService {
        let now = try #require(ReceiptDate.parse(clock))
        let state = try ServerState(scenarios: scenarios, now: now, store: store, saved: saved)
        return try ServerAPIService(state: state, forge: try Forge.bundled(), configuration: .init(now: now, access: .open, rateLimits: rateLimits))
    }

    /// `service`'s answer to one request of the sandbox: the endpoint and its path parameters, as the router hands them over.
    static func call(
        _ service: ServerAPIService, _ endpoint: ServerAPIService.Endpoint, _ parameters: String..., query: String = "", body: String = "", now: String? = nil,
        authorization: String? = nil, environment: ServerAPIEnvironment = .sandbox
    ) -> ServerAPIResponse {
        service.respond(
            ServerAPIRequest(
                environment: environment, endpoint: endpoint, parameters: parameters, query: query, body: Array(body.utf8), now: now.flatMap(ReceiptDate.parse),
                authorization: authorization))
    }

    /// The JSON of an answer's body.
    static func json(_ response: ServerAPIResponse) -> JSONValue? { try? JSONValue(parsing: response.body) }

    /// The payload of a compact JWS.
    static func payload(_ compact: JSONValue?) -> JSONValue? {
        guard let parts = compact?.stringValue?.split(separator: "."), parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return nil }
        return try? JSONValue(parsing: bytes)
    }
}

/// A clock a test moves by hand: what `ServerAPIRateLimits` counts its seconds on in process.
final class ManualClock: Sendable {
    private let date: Mutex<Date>

    init(_ text: String) { date = Mutex(ReceiptDate.parse(text) ?? Date(timeIntervalSince1970: 0)) }

    var now: Date { date.withLock { $0 } }

    func advance(seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }

    /// Rate limits counting on this clock.
    var limits: ServerAPIRateLimits { ServerAPIRateLimits(clock: { self.now }) }
}

/// Runs `body` on a thread of its own (it may block, as a write to a slow disk does) and hands back its result
/// without blocking the caller's thread.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}
