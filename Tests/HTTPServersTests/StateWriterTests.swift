import Foundation
import StoreForge
import StoreServer
import HTTPServers
import _ForgeSupport
import ForgeTestSupport
import Testing

/// The services beside the router write the `--state` file off the event loops (in forge-http Swift concurrency runs on
/// NIO's loops, and an SQLite write can wait on the disk): on NIO's blocking-I/O pool, whose threads are `SGLTN-TP-#N`.
@Suite("Background state writes")
struct StateWriterTests {
    @Test("The clock checkpoint, run by the application as a service, is written on NIO's thread pool, its last write at the shutdown too", .timeLimit(.minutes(1)))
    func checkpointOnThreadPool() async throws {
        let store = RecordingStore()
        let now = try #require(ReceiptDate.parse(StateFixtures.clock))
        let state = try ServerState(scenarios: [try StateFixtures.sandboxCustomer()], now: now, store: store)
        let serverAPI = try ServerAPIService(state: state, forge: try .bundled(), configuration: .init(now: now, access: .open))
        let made = store.written.count  // the customers, written when the state was made
        let app = try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), serverAPI: serverAPI,
            faults: try FaultPlan(), log: try RequestLog(file: nil))
        try await app.test(.router) { _ in
            try await eventually("the checkpoint's first write", within: .seconds(20)) { store.written.count > made }
        }
        let checkpoints = Array(store.writers.dropFirst(made))
        #expect(checkpoints.count >= 2 && checkpoints.allSatisfy { $0.contains("TP-#") }, "written on \(checkpoints)")
    }
}
