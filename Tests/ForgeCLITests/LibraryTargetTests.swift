import Foundation
import ForgeTestSupport
import ReceiptConformance
import ReceiptConformanceHTTP
import Testing
import _ForgeSupport
import StoreModel

/// `ConformanceRunner.check(target:)`: a user's Swift test running an out-of-process validator the way
/// `forge run --target` does, over each transport, against the built `forge` as the harness.
@Suite("ConformanceRunner.check(target:) over processes and HTTP", .timeLimit(.minutes(2)))
struct LibraryTargetTests {
    static let vectors = Repository.vectors.path

    @Test("stdio: the reference harness in a child process is conformant, and the run names its target")
    func stdio() async throws {
        let target = "stdio:\(Binaries.forge.path) validate --harness --vectors \(Self.vectors)"
        let results = try await ConformanceRunner.check(target: target, vectors: Self.vectors, profile: "apple-compatible")
        #expect(results.exitCode == 0, "\(results.failureSummary)")
        #expect(results.results.count == corpusCount)
        #expect(results.target == target)
    }

    @Test("http: needs the provider from ReceiptConformanceHTTP, which users link only when they want it")
    func http() async throws {
        let server = try await BackgroundServer.start(["validate", "--listen", "127.0.0.1:0", "--vectors", Self.vectors, "--threads", "2"])
        defer { server.kill() }
        await #expect(throws: ConformanceError.self) { try await ConformanceRunner.check(target: server.url, vectors: Self.vectors) }
        let results = try await ConformanceRunner.check(target: server.url, providers: [HTTPTargets()], vectors: Self.vectors, profile: "apple-compatible")
        #expect(results.exitCode == 0, "\(results.failureSummary)")
        #expect(results.results.count == corpusCount)
    }

    @Test("a malformed target is a ConformanceError naming the forms, before any process starts")
    func malformed() async {
        await #expect(throws: ConformanceError.self) { try await ConformanceRunner.check(target: "ftp://example", vectors: Self.vectors) }
    }
}
