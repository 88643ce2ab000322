import _ForgeSupport
import ForgeTestSupport
import Foundation
import Hummingbird
import StoreServer
import HTTPServers
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--log FILE` is written by a thread of its own: `record` (on an event loop in `forge-http`) only queues the line,
/// so a stalled disk holds no request. A FIFO the test reads when it chooses is the stalled disk: once its 64 KiB
/// buffer is full, the next `write(2)` blocks until the test reads.
@Suite("The request log's file is written off the requests' threads", .timeLimit(.minutes(2)))
struct RequestLogWriterTests {
    /// An entry of about 1 KiB.
    static let entry: JSONObject = [("endpoint", .string("production")), ("path", .string("/verifyReceipt")), ("pad", .string(String(repeating: "x", count: 900)))]
    static let token = "t0ken"

    /// The lines of `bytes`, each parsed: a line cut short fails to parse.
    static func entries(_ bytes: [UInt8]) -> [JSONValue?] {
        bytes.split(separator: 0x0A).map { try? JSONValue(parsing: Array($0)) }
    }

    static func seqs(_ bytes: [UInt8]) -> [Int?] {
        entries(bytes).map { $0?["seq"]?.integerValue.map { Int($0) } }
    }

    /// 1,000 `record` calls on a thread of their own (a `record` that waited for the file would hold it, not the pool).
    static func recordOnThread(_ log: RequestLog, count: Int = 1_000) -> Finished {
        Finished { for _ in 0..<count { log.record(entry) } }
    }

    @Test(
        "record does not wait for a stalled file, nor does GET /_forge/log (X-Forge-Log-Written says how far the file is); once the file moves, every line is in it, whole and in seq order"
    )
    func stalledFileHoldsNoRequest() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = try StalledFile(in: folder)
        let log = try RequestLog(file: fifo.url, capacity: 10_000)
        let recording = Self.recordOnThread(log)
        let returned = (try? await eventually("1,000 record calls returned while the file takes 64 of them", within: .seconds(20)) { recording.done }) != nil
        // Without the writer, the thread is stuck in write(2): the file is read to free it.
        if !returned { _ = try await fifo.read(within: .seconds(60)) { _ in recording.done } }
        try #require(returned, "record waited for the file")
        #expect(log.recorded == 1_000)
        let written = try #require(log.written)
        #expect(written < 1_000, "the file took \(written) lines: it is stalled, and every call returned all the same")

        let application = try ForgeServers.buildServeApplication(
            ServerListener(host: "127.0.0.1", port: 0), service: VerifyReceiptService(configuration: .init(trustedRoots: [])), faults: try FaultPlan(), log: log,
            controlToken: Self.token)
        let read = try await application.test(.router) { client in
            let answer = try await client.execute(uri: "/_forge/log", method: .get, headers: [.authorization: "Bearer " + Self.token])
            #expect(answer.status == .ok && String(buffer: answer.body).split(separator: "\n").count == 1_000)
            let header = try #require(HTTPFields.Element.Name("X-Forge-Log-Written"))
            let said = try #require(answer.headers[header].flatMap { Int($0) }, "\(answer.headers)")
            #expect(said < 1_000, "the file is still stalled: \(said)")
            // Read while the server runs: its end finishes the log (RequestLogService), and a line still queued past
            // finish's deadline would count as dropped.
            return try await fifo.read(within: .seconds(60)) { $0.count { $0 == 0x0A } == 1_000 }
        }
        await log.finish()
        #expect(Self.seqs(read) == Array(1...1_000), "every line, whole, in seq order")
        #expect(log.written == 1_000 && log.dropped == 0)
    }

    @Test("finish() leaves every line in the file, in seq order whichever thread recorded it; a line recorded after it is counted as dropped")
    func finishCompletesTheFile() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("requests.jsonl")
        // A queue that holds every line and a deadline no loaded machine reaches: this test is about finish's drain,
        // not about a writer that falls behind (fullQueueCountsDrops is).
        let log = try RequestLog(file: file, capacity: 10, maximumQueuedBytes: 64 << 20)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { for _ in 0..<2_500 { log.record(Self.entry) } } }
        }
        await log.finish(within: .seconds(300))
        #expect(log.written == 10_000 && log.dropped == 0)
        let bytes = Array(try Data(contentsOf: file))
        let seqs = Self.seqs(bytes)
        #expect(seqs == Array(1...10_000), "\(seqs.count) lines, the first out of place at \(seqs.enumerated().first { $0.element != $0.offset + 1 }?.offset ?? -1)")
        log.record(Self.entry)
        #expect(log.dropped == 1 && log.written == 10_001, "the file is closed")
        #expect(Array(try Data(contentsOf: file)) == bytes)
        #expect(try RequestLog(file: nil).written == nil, "no file, nothing to say")
    }

    @Test("A full queue (the file far behind) drops lines whole, counts them in dropped and says so once; the lines kept stay in seq order")
    func fullQueueCountsDrops() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = try StalledFile(in: folder)
        let warnings = Mutex<[String]>([])
        let log = try RequestLog(file: fifo.url, capacity: 10, maximumQueuedBytes: 32 << 10) { note in warnings.withLock { $0.append(note) } }
        let recording = Self.recordOnThread(log)
        let returned = (try? await eventually("1,000 record calls returned", within: .seconds(20)) { recording.done }) != nil
        if !returned { _ = try await fifo.read(within: .seconds(60)) { _ in recording.done } }
        try #require(returned, "record waited for the file")
        // 1 MiB of lines, 64 KiB in the FIFO and 32 KiB queued: most are dropped.
        #expect(log.dropped > 500, "\(log.dropped)")
        try await eventually("the loss said", within: .seconds(20)) { warnings.withLock { $0.count } == 1 }
        #expect(warnings.withLock { $0 }.first?.contains("written too slowly") == true, "\(warnings.withLock { $0 })")

        let read = try await fifo.read(within: .seconds(60)) { _ in log.written == 1_000 }
        await log.finish()
        let seqs = Self.seqs(read)
        #expect(seqs.allSatisfy { $0 != nil }, "each line whole")
        #expect(seqs.compactMap { $0 } == seqs.compactMap { $0 }.sorted() && Set(seqs).count == seqs.count, "in seq order")
        #expect(seqs.count + log.dropped == 1_000, "every line in the file or counted: \(seqs.count) + \(log.dropped)")
        #expect(log.written == 1_000 && warnings.withLock { $0.count } == 1)
    }

    @Test("A log that goes away ends its writer: the thread writes what is queued and closes the file (its reader sees the end)")
    func deinitEndsTheWriter() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = try StalledFile(in: folder)
        do {
            let log = try RequestLog(file: fifo.url)
            for _ in 0..<3 { log.record(Self.entry) }
        }
        // The end of the file comes only once the writer thread, which holds the file, has ended.
        let read = try await fifo.read(within: .seconds(30)) { _ in false }
        #expect(Self.seqs(read) == [1, 2, 3])
    }
}

/// Work on a thread of its own, and whether it has returned.
final class Finished: Sendable {
    private let finished = Mutex(false)

    init(_ work: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            work()
            finished.withLock { $0 = true }
        }
        thread.start()
    }

    var done: Bool { finished.withLock { $0 } }
}

/// read(2), named apart from ``StalledFile/read(within:until:)``.
private func readDescriptor(_ descriptor: Int32, _ base: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(descriptor, base, count) }

/// A FIFO in the test's folder, read only when the test reads it: a writer fills its buffer, then its next `write(2)`
/// blocks until the test reads, as on a stalled disk.
final class StalledFile: Sendable {
    let url: URL
    private let reader: Int32

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    init(in folder: URL) throws {
        url = folder.appendingPathComponent("requests.fifo")
        guard mkfifo(url.path, 0o600) == 0 else { throw Failed(description: "mkfifo: \(String(cString: strerror(errno)))") }
        // Non-blocking: the writer's open finds a reader at once, and a read never holds a thread.
        reader = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard reader >= 0 else { throw Failed(description: "open: \(String(cString: strerror(errno)))") }
    }

    deinit { close(reader) }

    /// Reads what the FIFO holds, every 10 ms, until a read to its end follows a look at which `done` held of what
    /// this call read, or its writer closed it; throws at `within`.
    func read(within limit: Duration, until done: ([UInt8]) -> Bool) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        try await eventually("the FIFO read", within: limit, every: .milliseconds(10)) {
            // Looked at before the read: whatever the writer wrote before it held is read below.
            let held = done(bytes)
            while true {
                let count = buffer.withUnsafeMutableBytes { readDescriptor(reader, $0.baseAddress, $0.count) }
                guard count > 0 else { return count == 0 || held }
                bytes += buffer[..<count]
            }
        }
        return bytes
    }
}
