import Foundation
import HTTPTypes
import NIOCore
import StoreForge
import StoreServer
import HTTPServers
import _ForgeSupport
import ForgeTestSupport
import StoreModel
import Testing

/// `forge serve` from its command line's value: `ForgeServers.buildServeApplication(configuration)` builds every part
/// (the state file in SQLite, both APIs on one state, the log file) and the one router, as forge-http runs it.
@Suite("The composition root", .timeLimit(.minutes(1)))
struct ServeConfigurationTests {
    static func configuration(in folder: URL) throws -> ServeConfiguration {
        var configuration = ServeConfiguration(listener: ServerListener(host: "127.0.0.1", port: 0), receiptPKI: try .bundled())
        configuration.scenarios = [try StateFixtures.sandboxCustomer()]
        configuration.now = ReceiptDate.parse(StateFixtures.clock)
        configuration.access = .open
        configuration.statePath = folder.appendingPathComponent("state.sqlite").path
        configuration.logPath = folder.appendingPathComponent("requests.jsonl").path
        configuration.controlToken = "t0ken"
        return configuration
    }

    /// The ServeError building `configuration` throws; nil (and an issue) when it builds.
    static func failure(_ configuration: ServeConfiguration) -> ServeError? {
        #expect(throws: ServeError.self) { try ForgeServers.buildServeApplication(configuration) }
    }

    @Test("A configuration becomes the whole server: the Server API and verifyReceipt on one state, the control routes, the state file written")
    func builtFromConfiguration() async throws {
        try await withTemporaryDirectory { folder in
            let app = try ForgeServers.buildServeApplication(try Self.configuration(in: folder))
            let latest = try ExampleIDs().latest
            try await app.test(.router) { client in
                #expect(try await client.execute(uri: "/sandbox/inApps/v1/transactions/\(latest)", method: .get).status == .ok)
                #expect(try await client.execute(uri: "/verifyReceipt", method: .get).status == .ok)
                let headers: HTTPFields = [.authorization: "Bearer t0ken", .contentType: "application/json"]
                let moved = try await client.execute(uri: "/_forge/clock", method: .post, headers: headers, body: ByteBuffer(string: #"{"advance":"P1D"}"#))
                #expect(moved.status == .ok && String(buffer: moved.body).contains("2025-01-02T00:00:00Z"), "\(moved.status) \(String(buffer: moved.body))")
            }
            let state = try Data(contentsOf: folder.appendingPathComponent("state.sqlite"))
            #expect(state.starts(with: Data("SQLite format 3".utf8)), "the --state file is SQLite")
        }
    }

    @Test("A part that cannot be built is a ServeError whose code says whose: a scenario without now, a state file in a missing folder, a log that cannot open")
    func partsThatCannotBeBuilt() async throws {
        try await withTemporaryDirectory { folder in
            var undated = try Self.configuration(in: folder)
            undated.scenarios[0].now = nil
            #expect(Self.failure(undated)?.code == .invalidScenario)

            var nowhere = try Self.configuration(in: folder)
            nowhere.statePath = folder.appendingPathComponent("missing/state.sqlite").path
            #expect(Self.failure(nowhere)?.code == .stateFailed)

            var unlogged = try Self.configuration(in: folder)
            unlogged.logPath = folder.appendingPathComponent("missing/requests.jsonl").path
            #expect(Self.failure(unlogged)?.code == .logFailed)
        }
    }
}
