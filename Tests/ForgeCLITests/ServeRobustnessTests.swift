import Foundation
import ForgeTestSupport
import Testing
import ForgeSupport
import StoreModel

#if canImport(Glibc)
    import Glibc
    private let streamSocket = Int32(SOCK_STREAM.rawValue)
    private let noSignal = Int32(MSG_NOSIGNAL)
#elseif canImport(Darwin)
    import Darwin
    private let streamSocket = SOCK_STREAM
    private let noSignal: Int32 = 0
#endif

/// The C calls, outside the types whose methods share their names.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
private func sendBytes(_ descriptor: Int32, _ base: UnsafeRawPointer, _ count: Int) -> Int { send(descriptor, base, count, noSignal) }

/// The servers (`forge serve`, `forge validate --listen`) against clients that misbehave, over real sockets
/// on 127.0.0.1 with the built binaries: slow and half-sent bodies, broken framing, heavy requests, a full
/// disk under the request log, signals, and clients from another address at the control routes.
@Suite("Server robustness", .timeLimit(.minutes(10)))
struct ServeRobustnessTests {
    /// A JSON object with `count` members: heavy to parse where object lookup is linear per key.
    static func heavyBody(members count: Int) -> [UInt8] {
        var text = "{"
        text.reserveCapacity(count * 14)
        for index in 0..<count { text += (index == 0 ? "" : ",") + "\"k\(index)\":0" }
        return Array((text + "}").utf8)
    }

    static func receiptBody(_ receipt: URL) throws -> [UInt8] {
        let encoded = try Data(contentsOf: receipt).base64EncodedString()
        return Array(#"{"receipt-data":"\#(encoded)"}"#.utf8)
    }

    /// A small valid receipt, made by forge.
    static func makeReceipt(in directory: URL) throws -> URL {
        let receipt = directory.appendingPathComponent("small.der")
        let made = try forgeBlocking("make", "-q", "--product", "lifetime", "--type", "non-consumable", "-o", receipt.path)
        #expect(made.status == 0, "\(made.stderr)")
        return receipt
    }

    // MARK: - 3. The request log

    @Test("--log on a full disk (/dev/full): serving goes on, the drop is said once on stderr and counted in X-Forge-Log-Dropped")
    func logOnFullDisk() throws {
        let server = try ServerProcess(["serve", "--listen", "127.0.0.1:0", "--log", "/dev/full"])
        defer { server.stop() }
        for _ in 0..<5 {
            let answer = try #require(HTTPExchange.send(port: server.port, method: "GET", path: "/verifyReceipt"))
            #expect(answer.status == 200 && answer.text == #"{"status":21000}"#)
        }
        let log = try #require(HTTPExchange.send(port: server.port, method: "GET", path: "/_forge/log"))
        #expect(log.text.split(separator: "\n").count == 5)
        #expect(log.headers["x-forge-log-dropped"] == "5", "\(log.headers)")
        #expect(log.headers["x-forge-log-evicted"] == "0")
        let stderr = server.stop()
        #expect(stderr.components(separatedBy: "cannot write the request log /dev/full").count == 2, "\(stderr)")
    }

    @Test("GET /_forge/log is a ring of --log-capacity entries; X-Forge-Log-Evicted counts the ones pushed out")
    func logRing() throws {
        let server = try ServerProcess(["serve", "--listen", "127.0.0.1:0", "--log-capacity", "3"])
        defer { server.stop() }
        for _ in 0..<5 { _ = HTTPExchange.send(port: server.port, method: "GET", path: "/verifyReceipt") }
        let log = try #require(HTTPExchange.send(port: server.port, method: "GET", path: "/_forge/log"))
        let seqs = log.text.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int }
        #expect(seqs == [3, 4, 5])
        #expect(log.headers["x-forge-log-evicted"] == "2")
    }

    // MARK: - 5. No request holds the event loop

    @Test("While a heavy request is computed, the control routes and a small receipt are answered; SIGTERM still stops the server")
    func heavyRequestHoldsNothing() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let small = try Self.receiptBody(try Self.makeReceipt(in: directory))
        let server = try ServerProcess(["serve", "--listen", "127.0.0.1:0"])
        defer { server.stop() }
        let heavy = try Connection(port: server.port)
        defer { heavy.close() }
        try heavy.send(HTTPExchange.request(method: "POST", path: "/verifyReceipt", body: Self.heavyBody(members: 300_000)))
        usleep(500_000)  // the body is read and being parsed
        let log = HTTPExchange.send(port: server.port, method: "GET", path: "/_forge/log", within: 10)
        #expect(log?.status == 200, "GET /_forge/log was not answered while a heavy request ran")
        let answer = HTTPExchange.send(port: server.port, method: "POST", path: "/verifyReceipt", body: small, within: 10)
        #expect(answer?.json?["status"] as? Int == 0, "a small receipt was not answered while a heavy request ran")
        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 30), "SIGTERM did not stop the server during a heavy request")
    }

    @Test(
        "validate --listen: while heavy requests are computed (one per core), GET /hello is answered; SIGTERM still stops the server")
    func heavyHarnessRequestsHoldNothing() throws {
        let server = try ServerProcess(Self.arguments("validate"))
        defer { server.stop() }
        var heavy: [Connection] = []
        defer { heavy.forEach { $0.close() } }
        for _ in 0..<max(2, ProcessInfo.processInfo.activeProcessorCount) {
            let connection = try Connection(port: server.port)
            heavy.append(connection)
            try connection.send(HTTPExchange.request(method: "POST", path: "/verifyReceipt", body: Self.heavyBody(members: 300_000)))
        }
        usleep(500_000)
        let hello = HTTPExchange.send(port: server.port, method: "GET", path: "/hello", within: 10)
        #expect(hello?.status == 200, "GET /hello was not answered while heavy requests ran")
        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 30), "SIGTERM did not stop the server during heavy requests")
    }

    // MARK: - 7. Shutdown that comes

    @Test("SIGTERM with a client that sent half a body: the server exits within the shutdown grace period", arguments: ["serve", "validate"])
    func halfBodyDoesNotHoldShutdown(command: String) throws {
        let server = try ServerProcess(Self.arguments(command))
        defer { server.stop() }
        let client = try Connection(port: server.port)
        defer { client.close() }
        try client.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"receipt-data\":".utf8))
        usleep(300_000)
        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 25), "one half-sent body kept the server alive after SIGTERM")
        #expect(server.status == 0)
    }

    @Test("SIGTERM during a latency fault: the server exits within the shutdown grace period")
    func latencyDoesNotHoldShutdown() throws {
        let server = try ServerProcess(["serve", "--listen", "127.0.0.1:0", "--fault", "latency=600000"])
        defer { server.stop() }
        let client = try Connection(port: server.port)
        defer { client.close() }
        try client.send(HTTPExchange.request(method: "GET", path: "/verifyReceipt"))
        usleep(300_000)
        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 25), "a latency fault kept the server alive after SIGTERM")
    }

    @Test("A second signal exits at once (128 + its number), whatever is in flight", arguments: ["serve", "validate"])
    func secondSignalExits(command: String) throws {
        let server = try ServerProcess(Self.arguments(command))
        defer { server.stop() }
        let client = try Connection(port: server.port)
        defer { client.close() }
        try client.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{".utf8))
        usleep(300_000)
        server.signal(SIGTERM)
        #expect(!server.waitForExit(within: 1), "the first signal waits for the request in flight")
        server.signal(SIGINT)
        #expect(server.waitForExit(within: 10), "a second signal did not stop the server")
        #expect(server.status == 128 + SIGINT)
        #expect(server.stop().contains("exiting at once"))
    }

    @Test(
        "--read-timeout: a body that does not arrive in time is answered 408 with a JSON reason and the connection closed; so is a half-sent header",
        arguments: ["serve", "validate"])
    func readTimeout(command: String) throws {
        let server = try ServerProcess(Self.arguments(command) + ["--read-timeout", "1"])
        defer { server.stop() }
        let slowBody = try Connection(port: server.port)
        defer { slowBody.close() }
        try slowBody.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{".utf8))
        let answer = try #require(slowBody.readToEnd(within: 15).flatMap(HTTPAnswer.init), "the connection was not closed")
        #expect(answer.status == 408)
        #expect(answer.json?["error"] as? String == "bodyTimeout", "\(answer.text)")
        let slowHeaders = try Connection(port: server.port)
        defer { slowHeaders.close() }
        try slowHeaders.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\n".utf8))
        #expect(slowHeaders.readToEnd(within: 15) != nil, "a half-sent header kept its connection open")
        // A client that keeps sending bytes, slower than the deadline, is cut off too.
        let trickle = try Connection(port: server.port)
        defer { trickle.close() }
        try trickle.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n".utf8))
        var closed = false
        for _ in 0..<40 where !closed {
            closed = (try? trickle.send([0x20])) == nil || trickle.readToEnd(within: 0.25) != nil
        }
        #expect(closed, "a trickling body kept its connection open")
    }

    // MARK: - 10. Bounded memory and faults

    @Test("Bodies held at once are bounded: of four unfinished 31 MiB uploads (124 MiB), one is refused in words and its connection closed")
    func bodiesInFlightAreBounded() throws {
        // A read deadline far beyond the test's length: the holders must not be cut off by it on a loaded machine.
        let server = try ServerProcess(["serve", "--listen", "127.0.0.1:0", "--read-timeout", "600"])
        defer { server.stop() }
        var holders: [Connection] = []
        defer { holders.forEach { $0.close() } }
        let chunk = [UInt8](repeating: 0x20, count: 1 << 20)
        // Whichever chunk the server reads past 96 MiB is refused, however far behind the sends its reading is;
        // a refused holder's later sends fail (its connection closes), which is expected.
        for _ in 0..<4 {
            let holder = try Connection(port: server.port)
            holders.append(holder)
            try holder.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: \(32 << 20)\r\n\r\n".utf8))
            for _ in 0..<31 { guard (try? holder.send(chunk)) != nil else { break } }
        }
        var refusal: HTTPAnswer?
        for _ in 0..<120 where refusal == nil {
            for holder in holders where refusal == nil {
                if let answer = holder.readToEnd(within: 0.25).flatMap(HTTPAnswer.init) { refusal = answer }
            }
        }
        let refused = try #require(refusal, "four 31 MiB uploads were all held (124 MiB over a budget of 96 MiB)")
        #expect(refused.json?["forge_error"] as? String == "bodiesInFlight", "\(refused.text)")
        #expect(refused.json?["status"] as? Int == 21005)
        #expect((refused.json?["forge_message"] as? String)?.contains("bytes of request bodies") == true)
        #expect(refused.headers["connection"] == "close")
    }

    @Test("--tls with a clock before 1970 starts (the serving certificate's serial is a checked conversion, not a trap)")
    func tlsBefore1970() throws {
        let server = try ServerProcess(["serve", "--listen", "127.0.0.1:0", "--tls", "--now", "1960-01-01T00:00:00Z"])
        defer { server.stop() }
        #expect(server.port > 0)
    }

    @Test("At most 1,000 faults are in force: the next POST /_forge/faults is refused with 409")
    func faultCap() throws {
        let server = try ServerProcess(["serve", "--listen", "127.0.0.1:0"] + Array(repeating: ["--fault", "sandbox:status=21005"], count: 1_000).flatMap { $0 })
        defer { server.stop() }
        let refused = try #require(HTTPExchange.send(port: server.port, method: "POST", path: "/_forge/faults", headers: HTTPExchange.json, body: Array("status=21009".utf8)))
        #expect(refused.status == 409 && refused.text.contains("at most 1000 faults"), "\(refused.status) \(refused.text)")
        #expect(HTTPExchange.send(port: server.port, method: "DELETE", path: "/_forge/faults")?.status == 200)
        #expect(HTTPExchange.send(port: server.port, method: "POST", path: "/_forge/faults", headers: HTTPExchange.json, body: Array("status=21009".utf8))?.status == 201)
        do {
            try ServerProcess(["serve", "--listen", "127.0.0.1:0"] + Array(repeating: ["--fault", "status=21005"], count: 1_001).flatMap { $0 }).stop()
            Issue.record("1,001 --fault options were accepted")
        } catch let error as BlockingServer.ServerDidNotStart {
            #expect(error.firstLine.contains("at most 1000 --fault"), "\(error.firstLine)")
        }
    }

    // MARK: - 11. Control routes and the address bound

    @Test("--listen 0.0.0.0 prints the address bound and warns; the control routes refuse other hosts (403) unless a token is set")
    func nonLoopbackBind() throws {
        let server = try ServerProcess(["serve", "--listen", "0.0.0.0:0"])
        defer { server.stop() }
        #expect(server.firstLine.contains("http://0.0.0.0:\(server.port)/verifyReceipt"), "\(server.firstLine)")
        #expect(HTTPExchange.send(port: server.port, method: "GET", path: "/_forge/log")?.status == 200, "loopback keeps working without a token")
        if let address = Self.nonLoopbackIPv4() {
            let refused = try #require(HTTPExchange.send(host: address, port: server.port, method: "GET", path: "/_forge/faults"))
            #expect(refused.status == 403 && refused.json?["error"] as? String == "controlForbidden", "\(refused.text)")
            let refusedPost = try #require(HTTPExchange.send(host: address, port: server.port, method: "POST", path: "/_forge/faults", body: Array("latency=600000".utf8)))
            #expect(refusedPost.status == 403)
            let verify = try #require(HTTPExchange.send(host: address, port: server.port, method: "GET", path: "/verifyReceipt"))
            #expect(verify.status == 200, "the verifyReceipt endpoints answer every client")
        }
        #expect(server.stop().contains("warning: listening on 0.0.0.0:"))
    }

    @Test("--control-token: the control routes need Authorization: Bearer TOKEN (401 with a JSON reason otherwise), loopback included")
    func controlToken() throws {
        let server = try ServerProcess(["serve", "--listen", "127.0.0.1:0", "--control-token", "s3cret"])
        defer { server.stop() }
        let missing = try #require(HTTPExchange.send(port: server.port, method: "GET", path: "/_forge/log"))
        #expect(missing.status == 401 && missing.json?["error"] as? String == "controlUnauthorized", "\(missing.text)")
        #expect(missing.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        let wrong = HTTPExchange.send(port: server.port, method: "DELETE", path: "/_forge/faults", headers: ["Authorization": "Bearer nope"])
        #expect(wrong?.status == 401)
        let right = HTTPExchange.send(port: server.port, method: "POST", path: "/_forge/faults", headers: ["Authorization": "Bearer s3cret"], body: Array("status=21009".utf8))
        #expect(right?.status == 201)
        #expect(HTTPExchange.send(port: server.port, method: "GET", path: "/verifyReceipt")?.json?["status"] as? Int == 21009)
    }

    // MARK: - 12. Messages that say what happened

    @Test("Broken chunked framing and an oversized body are named as such, on both servers", arguments: ["serve", "validate"])
    func bodyMessages(command: String) throws {
        let server = try ServerProcess(Self.arguments(command))
        defer { server.stop() }
        let broken = try Connection(port: server.port)
        defer { broken.close() }
        try broken.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n".utf8))
        let chunked = try #require(broken.readToEnd(within: 10).flatMap(HTTPAnswer.init))
        #expect(chunked.json?["forge_message"] as? String == "the request body is not valid chunked encoding (or its HTTP/1.1 framing is broken)", "\(chunked.text)")
        // Refused from its Content-Length, before the body is sent.
        let large = try Connection(port: server.port)
        defer { large.close() }
        try large.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: \(40 << 20)\r\n\r\n".utf8))
        let tooLarge = try #require(large.readToEnd(within: 10).flatMap(HTTPAnswer.init), "an oversized body was waited for")
        #expect(tooLarge.json?["forge_error"] as? String == "bodyTooLarge" && tooLarge.json?["status"] as? Int == 21000, "\(tooLarge.text)")
        if command == "validate" {
            let harness = try Connection(port: server.port)
            defer { harness.close() }
            try harness.send(Array("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: \(40 << 20)\r\n\r\n".utf8))
            let refused = try #require(harness.readToEnd(within: 10).flatMap(HTTPAnswer.init))
            #expect(refused.status == 413 && (refused.json?["message"] as? String)?.contains("over 33554432 bytes") == true, "\(refused.text)")
        }
    }

    // MARK: - Support

    static func arguments(_ command: String) -> [String] {
        command == "serve"
            ? ["serve", "--listen", "127.0.0.1:0"]
            : ["validate", "--listen", "127.0.0.1:0", "--vectors", repositoryRoot.appendingPathComponent("Vectors").path]
    }

    /// This machine's first IPv4 address that is not loopback, if any.
    static func nonLoopbackIPv4() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !text.hasPrefix("127.") { return text }
        }
        return nil
    }
}

/// A server started for one test, with its stderr kept: the port from the first stdout line, signals
/// on demand, and `stop()` (SIGKILL if still running) returning what it said on stderr.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    let firstLine: String
    private let errors = Pipe()
    private var stderrText: String?

    init(_ arguments: [String], executable: URL = forgeBinary) throws {
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var line = Data()
        let handle = output.fileHandleForReading
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first, first != 0x0A else { break }
            line.append(first)
        }
        firstLine = String(decoding: line, as: UTF8.self)
        guard let match = firstLine.firstMatch(of: /:(\d+)\//) ?? firstLine.firstMatch(of: /:(\d+)/), let port = Int(match.1) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw BlockingServer.ServerDidNotStart(firstLine: firstLine + String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        }
        self.port = port
        // The rest of stdout is drained so the server never blocks on it.
        DispatchQueue.global().async { _ = handle.readDataToEndOfFile() }
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Whether the process ended within `seconds`.
    func waitForExit(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        return !process.isRunning
    }

    var status: Int32 { process.isRunning ? -1 : process.terminationStatus }

    /// Ends the server (SIGKILL when still running) and returns its stderr.
    @discardableResult
    func stop() -> String {
        if let stderrText { return stderrText }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        stderrText = text
        return text
    }
}

/// A raw TCP connection, for clients that misbehave on purpose.
final class Connection: @unchecked Sendable {
    private let descriptor: Int32

    init(host: String = "127.0.0.1", port: Int) throws {
        descriptor = socket(AF_INET, streamSocket, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            closeDescriptor(descriptor)
            throw ConnectionFailed()
        }
    }

    struct ConnectionFailed: Error {}

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        try bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            while sent < buffer.count {
                let count = sendBytes(descriptor, base + sent, buffer.count - sent)
                guard count > 0 else { throw ConnectionFailed() }
                sent += count
            }
        }
    }

    /// What the peer sent until it closed the connection, or nil when it is still open after `seconds`.
    func readToEnd(within seconds: Double) -> [UInt8]? {
        let deadline = Date().addingTimeInterval(seconds)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(left, 1) * 1_000)) > 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { return received }
            received += buffer.prefix(count)
        }
    }

    func close() { closeDescriptor(descriptor) }
}

/// One request over a fresh connection (`Connection: close`), and the answer read to the connection's end.
enum HTTPExchange {
    /// What a control POST must say without a control token.
    static let json = ["Content-Type": "application/json"]

    static func request(method: String, path: String, headers: [String: String] = [:], body: [UInt8] = []) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    static func send(
        host: String = "127.0.0.1", port: Int, method: String, path: String, headers: [String: String] = [:], body: [UInt8] = [],
        within seconds: Double = 20
    ) -> HTTPAnswer? {
        guard let connection = try? Connection(host: host, port: port) else { return nil }
        defer { connection.close() }
        // A server may answer (and close) before the whole body is sent: the answer still counts.
        try? connection.send(request(method: method, path: path, headers: headers, body: body))
        return connection.readToEnd(within: seconds).flatMap(HTTPAnswer.init)
    }
}

/// A parsed HTTP/1.1 response (identity or chunked body).
struct HTTPAnswer {
    let status: Int
    /// Lower-case names.
    let headers: [String: String]
    let body: [UInt8]

    init?(_ bytes: [UInt8]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        guard let statusLine = lines.first, let code = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        status = code
        self.headers = headers
        let rest = Array(bytes[(end + 4)...])
        body = headers["transfer-encoding"] == "chunked" ? Self.dechunk(rest) : rest
    }

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }

    private static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard let lineEnd = bytes[index...].indices.first(where: { bytes[$0] == 13 }),
                let size = Int(String(decoding: bytes[index..<lineEnd], as: UTF8.self), radix: 16), size > 0
            else { break }
            let start = lineEnd + 2
            guard start + size <= bytes.count else { break }
            out += bytes[start..<(start + size)]
            index = start + size + 2
        }
        return out
    }
}
