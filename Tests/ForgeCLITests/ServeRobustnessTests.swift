import Foundation
import ForgeTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The servers (`forge serve`, `forge validate --listen`) against clients that misbehave, over real sockets
/// on 127.0.0.1 with the built binaries: slow and half-sent bodies, broken framing, heavy requests, a full
/// disk under the request log, signals, and clients from another address at the control routes.
///
/// Nothing here waits for a fixed delay: a test acts once the server itself says the state it tests is reached —
/// `GET /_forge/log` (on `forge validate --listen`, `GET /hello`) answers `X-Forge-Requests-In-Flight` (requests begun
/// and not yet answered) and `X-Forge-Body-Bytes-Held` (bodies read and not yet answered).
@Suite("Server robustness", .timeLimit(.minutes(2)))
struct ServeRobustnessTests {
    /// A JSON object with `count` members: heavy to parse where object lookup is linear per key.
    static func heavyBody(members count: Int) -> [UInt8] {
        var text = "{"
        text.reserveCapacity(count * 14)
        for index in 0..<count { text += (index == 0 ? "" : ",") + "\"k\(index)\":0" }
        return Array((text + "}").utf8)
    }

    /// Members of the heavy body (about 12 MiB): seconds of work for a debug build, where a small receipt takes
    /// milliseconds.
    static let heavyMembers = 1_000_000

    static func receiptBody(_ receipt: URL) throws -> [UInt8] {
        let encoded = try Data(contentsOf: receipt).base64EncodedString()
        return Array(#"{"receipt-data":"\#(encoded)"}"#.utf8)
    }

    /// A small valid receipt, made by forge.
    static func makeReceipt(in directory: URL) async throws -> URL {
        let receipt = directory.appendingPathComponent("small.der")
        let made = try await forge("make", "-q", "--product", "lifetime", "--type", "non-consumable", "-o", receipt.path)
        #expect(made.status == 0, "\(made.stderr)")
        return receipt
    }

    // MARK: - 3. The request log

    @Test("--log on a full disk (/dev/full): serving goes on, the drop is said once on stderr and counted in X-Forge-Log-Dropped")
    func logOnFullDisk() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--log", "/dev/full"])
        defer { server.kill() }
        for _ in 0..<5 {
            let answer = try #require(await RawHTTP.send(port: server.port, method: "GET", path: "/verifyReceipt"))
            #expect(answer.status == 200 && answer.text == #"{"status":21000}"#)
        }
        // The file is written by a thread of its own: its own signal says when it has dealt with every line.
        let log = try await logFileWritten(server.url)
        #expect(log.text.split(separator: "\n").count == 5)
        #expect(log.header("X-Forge-Log-Dropped") == "5" && log.header("X-Forge-Log-Written") == "5", "\(log.headers)")
        #expect(log.header("X-Forge-Log-Evicted") == "0")
        let stderr = await server.stop()
        #expect(stderr.components(separatedBy: "cannot write the request log /dev/full").count == 2, "\(stderr)")
    }

    @Test("GET /_forge/log is a ring of --log-capacity entries; X-Forge-Log-Evicted counts the ones pushed out")
    func logRing() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--log-capacity", "3"])
        defer { server.kill() }
        for _ in 0..<5 { _ = await RawHTTP.send(port: server.port, method: "GET", path: "/verifyReceipt") }
        let log = try #require(await RawHTTP.send(port: server.port, method: "GET", path: "/_forge/log"))
        let seqs = log.text.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int }
        #expect(seqs == [3, 4, 5])
        #expect(log.headers["x-forge-log-evicted"] == "2")
    }

    @Test(
        "GET /_forge/log and the harness's GET /hello say what is being answered: a request begun (its body not sent) is in flight, holding no bytes",
        arguments: ["serve", "validate"])
    func loadHeaders(command: String) async throws {
        let server = try await BackgroundServer.start(Self.arguments(command))
        defer { server.kill() }
        let idle = try #require(await Self.load(server, command))
        #expect(idle.inFlight == 0 && idle.bodyBytes == 0, "\(idle)")
        let client = try await RawConnection(port: server.port)
        defer { client.close() }
        try await client.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n".utf8))
        let busy = try await Self.waitForLoad(server, command, "the request has begun") { $0.inFlight == 1 }
        #expect(busy.bodyBytes == 0, "a body that has not come holds nothing: \(busy)")
    }

    // MARK: - 5. No request holds the event loop

    @Test("While a heavy request is computed, the control routes and a small receipt are answered; SIGTERM still stops the server")
    func heavyRequestHoldsNothing() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let small = try Self.receiptBody(try await Self.makeReceipt(in: directory))
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0"])
        defer { server.kill() }
        let heavy = try await RawConnection(port: server.port)
        defer { heavy.close() }
        let body = Self.heavyBody(members: Self.heavyMembers)
        try await heavy.send(RawHTTP.request(method: "POST", path: "/verifyReceipt", body: body))
        // Answered while the heavy body is held (read, not yet answered): the control route did not wait for it.
        let during = try await Self.waitForLoad(server, "serve", "the heavy body has been read") { $0.bodyBytes >= body.count }
        #expect(during.inFlight >= 1, "\(during)")
        let answer = await RawHTTP.send(port: server.port, method: "POST", path: "/verifyReceipt", body: small, within: .seconds(30))
        #expect(answer?.json?["status"] as? Int == 0, "a small receipt was not answered while a heavy request ran")
        // The heavy request is still being computed once the small one is answered: the small one did not wait for it.
        let after = try #require(await Self.load(server, "serve"))
        try #require(after.bodyBytes >= body.count, "the heavy request was answered before the small one: make it heavier for this machine (\(after))")
        server.signal(SIGTERM)
        #expect(await server.waitForExit(within: .seconds(30)), "SIGTERM did not stop the server during a heavy request")
    }

    @Test("validate --listen: while heavy requests are computed (one per core), GET /hello is answered; SIGTERM still stops the server")
    func heavyHarnessRequestsHoldNothing() async throws {
        let server = try await BackgroundServer.start(Self.arguments("validate"))
        defer { server.kill() }
        var heavy: [RawConnection] = []
        defer { heavy.forEach { $0.close() } }
        let body = Self.heavyBody(members: Self.heavyMembers / 4)
        let count = max(2, ProcessInfo.processInfo.activeProcessorCount)
        for _ in 0..<count {
            let connection = try await RawConnection(port: server.port)
            heavy.append(connection)
            try await connection.send(RawHTTP.request(method: "POST", path: "/verifyReceipt", body: body))
        }
        // This GET /hello is answered while every heavy body is held: read, being computed, not yet answered.
        let during = try await Self.waitForLoad(server, "validate", "every heavy body has been read") { $0.bodyBytes >= count * body.count }
        #expect(during.inFlight >= count, "\(during)")
        server.signal(SIGTERM)
        #expect(await server.waitForExit(within: .seconds(30)), "SIGTERM did not stop the server during heavy requests")
    }

    // MARK: - 7. Shutdown that comes

    @Test("SIGTERM with a client that sent half a body: the server exits at the end of the shutdown grace period, naming the request cut off", arguments: ["serve", "validate"])
    func halfBodyDoesNotHoldShutdown(command: String) async throws {
        let server = try await BackgroundServer.start(Self.arguments(command) + ["--shutdown-grace", "2"])
        defer { server.kill() }
        let client = try await RawConnection(port: server.port)
        defer { client.close() }
        try await client.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"receipt-data\":".utf8))
        _ = try await Self.waitForLoad(server, command, "the half-sent request has begun") { $0.inFlight >= 1 }
        server.signal(SIGTERM)
        #expect(await server.waitForExit(within: .seconds(25)), "one half-sent body kept the server alive after SIGTERM")
        #expect(server.exitedNormally() && server.status() == 0)
        #expect(server.stderr.contains("stopped after the 2 s shutdown grace period (--shutdown-grace) with 1 request unanswered"), "\(server.stderr)")
    }

    @Test("SIGTERM during a latency fault: the server exits at the end of the shutdown grace period")
    func latencyDoesNotHoldShutdown() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--fault", "latency=600000", "--shutdown-grace", "2"])
        defer { server.kill() }
        let client = try await RawConnection(port: server.port)
        defer { client.close() }
        try await client.send(RawHTTP.request(method: "GET", path: "/verifyReceipt"))
        _ = try await Self.waitForLoad(server, "serve", "the delayed request has begun") { $0.inFlight >= 1 }
        server.signal(SIGTERM)
        #expect(await server.waitForExit(within: .seconds(25)), "a latency fault kept the server alive after SIGTERM")
        #expect(server.status() == 0 && server.stderr.contains("with 1 request unanswered"), "\(server.stderr)")
    }

    @Test("A second signal exits at once (128 + its number), whatever is in flight", arguments: ["serve", "validate"])
    func secondSignalExits(command: String) async throws {
        // A grace period and a read deadline far beyond the test: only the second signal can end it.
        let server = try await BackgroundServer.start(Self.arguments(command) + ["--shutdown-grace", "3600", "--read-timeout", "3600"])
        defer { server.kill() }
        let client = try await RawConnection(port: server.port)
        defer { client.close() }
        try await client.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{".utf8))
        _ = try await Self.waitForLoad(server, command, "the request has begun") { $0.inFlight >= 1 }
        server.signal(SIGTERM)
        // The first signal's own sign: the server stops accepting, and waits for the request in flight.
        try await eventually("the server stops accepting after SIGTERM", within: .seconds(30)) {
            guard let probe = try? await RawConnection(port: server.port, within: .seconds(5)) else { return true }
            probe.close()
            return false
        }
        #expect(server.status() == nil, "the first signal waits for the request in flight")
        server.signal(SIGINT)
        #expect(await server.waitForExit(within: .seconds(10)), "a second signal did not stop the server")
        #expect(server.status() == 128 + SIGINT)
        #expect(server.stderr.contains("exiting at once"), "\(server.stderr)")
    }

    @Test(
        "--read-timeout: a body that does not arrive in time is answered 408 with a JSON reason and the connection closed; so is a half-sent header",
        arguments: ["serve", "validate"])
    func readTimeout(command: String) async throws {
        let server = try await BackgroundServer.start(Self.arguments(command) + ["--read-timeout", "1"])
        defer { server.kill() }
        let slowBody = try await RawConnection(port: server.port)
        defer { slowBody.close() }
        try await slowBody.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{".utf8))
        let answer = try #require(await slowBody.readToEnd(within: .seconds(15)).flatMap(RawAnswer.init), "the connection was not closed")
        #expect(answer.status == 408)
        #expect(answer.json?["error"] as? String == "bodyTimeout", "\(answer.text)")
        let slowHeaders = try await RawConnection(port: server.port)
        defer { slowHeaders.close() }
        try await slowHeaders.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\n".utf8))
        #expect(await slowHeaders.readToEnd(within: .seconds(15)) != nil, "a half-sent header kept its connection open")
        // A client that keeps sending bytes, a quarter of a second apart, slower than the deadline, is cut off too.
        let trickle = try await RawConnection(port: server.port)
        defer { trickle.close() }
        try await trickle.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n".utf8))
        // Cut off a second after it began, however late that is noticed here: the deadline only bounds a hang.
        try await eventually("a trickling body is cut off", within: .seconds(60), every: .zero) {
            guard (try? await trickle.send([0x20], within: .seconds(1))) != nil else { return true }
            return await trickle.readToEnd(within: .milliseconds(250)) != nil
        }
    }

    // MARK: - 10. Bounded memory and faults

    @Test("Bodies held at once are bounded: of four unfinished 31 MiB uploads (124 MiB), one is refused in words and its connection closed")
    func bodiesInFlightAreBounded() async throws {
        // A read deadline far beyond the test's length: the holders must not be cut off by it on a loaded machine.
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--read-timeout", "600"])
        defer { server.kill() }
        var holders: [RawConnection] = []
        defer { holders.forEach { $0.close() } }
        let chunk = [UInt8](repeating: 0x20, count: 1 << 20)
        // Whichever chunk the server reads past 96 MiB is refused, however far behind the sends its reading is;
        // a refused holder's later sends fail (its connection closes), which is expected.
        for _ in 0..<4 {
            let holder = try await RawConnection(port: server.port)
            holders.append(holder)
            try await holder.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: \(32 << 20)\r\n\r\n".utf8))
            for _ in 0..<31 { guard (try? await holder.send(chunk)) != nil else { break } }
        }
        var refusal: RawAnswer?
        try await eventually("one upload is refused", within: .seconds(60), every: .milliseconds(1)) {
            for holder in holders where refusal == nil {
                if let answer = await holder.readToEnd(within: .milliseconds(50)).flatMap(RawAnswer.init) { refusal = answer }
            }
            return refusal != nil
        }
        let refused = try #require(refusal, "four 31 MiB uploads were all held (124 MiB over a budget of 96 MiB)")
        #expect(refused.json?["forge_error"] as? String == "bodiesInFlight", "\(refused.text)")
        #expect(refused.json?["status"] as? Int == 21005)
        #expect((refused.json?["forge_message"] as? String)?.contains("bytes of request bodies") == true)
        #expect(refused.headers["connection"] == "close")
    }

    @Test("--tls with a clock before 1970 starts (the serving certificate's serial is a checked conversion, not a trap)")
    func tlsBefore1970() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--tls", "--now", "1960-01-01T00:00:00Z"])
        defer { server.kill() }
        #expect(server.port > 0)
    }

    @Test("At most 1,000 faults are in force: 1,000 --fault flags start, the next POST /_forge/faults is refused with 409; 1,001 flags exit 64")
    func faultCap() async throws {
        let server = try await BackgroundServer.start(
            ["serve", "--listen", "127.0.0.1:0"] + Array(repeating: ["--fault", "sandbox:status=21005"], count: 1_000).flatMap { $0 })
        defer { server.kill() }
        let refused = try #require(await RawHTTP.send(port: server.port, method: "POST", path: "/_forge/faults", headers: RawHTTP.json, body: Array("status=21009".utf8)))
        #expect(refused.status == 409 && refused.text.contains("at most 1000 faults"), "\(refused.status) \(refused.text)")
        #expect(await RawHTTP.send(port: server.port, method: "DELETE", path: "/_forge/faults")?.status == 200)
        #expect(await RawHTTP.send(port: server.port, method: "POST", path: "/_forge/faults", headers: RawHTTP.json, body: Array("status=21009".utf8))?.status == 201)
        // Killed at the deadline should it start serving after all.
        let tooMany = try await run(
            Binaries.forge, ["serve", "--listen", "127.0.0.1:0"] + Array(repeating: ["--fault", "status=21005"], count: 1_001).flatMap { $0 }, killAfter: .seconds(30))
        #expect(tooMany.exited && tooMany.status == 64 && tooMany.stderr.contains("at most 1000 --fault"), "\(tooMany.status) \(tooMany.stderr)")
    }

    // MARK: - 11. Control routes and the address bound

    @Test("--listen 0.0.0.0 prints the address bound and warns on stderr; loopback clients keep the control routes without a token")
    func nonLoopbackBind() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "0.0.0.0:0"])
        defer { server.kill() }
        #expect(server.firstLine.contains("http://0.0.0.0:\(server.port)/verifyReceipt"), "\(server.firstLine)")
        #expect(await RawHTTP.send(port: server.port, method: "GET", path: "/_forge/log")?.status == 200, "loopback keeps working without a token")
        #expect(await server.stop().contains("warning: listening on 0.0.0.0:"))
    }

    @Test(
        "--listen 0.0.0.0: the control routes refuse a client of another address (403) unless a token is set; verifyReceipt answers it",
        .enabled(if: ServeRobustnessTests.nonLoopbackIPv4() != nil, "this machine has no IPv4 address besides loopback to be that client from"))
    func nonLoopbackClientRefused() async throws {
        let address = try #require(Self.nonLoopbackIPv4())
        let server = try await BackgroundServer.start(["serve", "--listen", "0.0.0.0:0"])
        defer { server.kill() }
        let refused = try #require(await RawHTTP.send(host: address, port: server.port, method: "GET", path: "/_forge/faults"))
        #expect(refused.status == 403 && refused.json?["error"] as? String == "controlForbidden", "\(refused.text)")
        let refusedPost = try #require(await RawHTTP.send(host: address, port: server.port, method: "POST", path: "/_forge/faults", body: Array("latency=600000".utf8)))
        #expect(refusedPost.status == 403)
        let verify = try #require(await RawHTTP.send(host: address, port: server.port, method: "GET", path: "/verifyReceipt"))
        #expect(verify.status == 200, "the verifyReceipt endpoints answer every client")
    }

    @Test("--control-token: the control routes need Authorization: Bearer TOKEN (401 with a JSON reason otherwise), loopback included")
    func controlToken() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0", "--control-token", "s3cret"])
        defer { server.kill() }
        let missing = try #require(await RawHTTP.send(port: server.port, method: "GET", path: "/_forge/log"))
        #expect(missing.status == 401 && missing.json?["error"] as? String == "controlUnauthorized", "\(missing.text)")
        #expect(missing.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        let wrong = await RawHTTP.send(port: server.port, method: "DELETE", path: "/_forge/faults", headers: ["Authorization": "Bearer nope"])
        #expect(wrong?.status == 401)
        let right = await RawHTTP.send(port: server.port, method: "POST", path: "/_forge/faults", headers: ["Authorization": "Bearer s3cret"], body: Array("status=21009".utf8))
        #expect(right?.status == 201)
        #expect(await RawHTTP.send(port: server.port, method: "GET", path: "/verifyReceipt")?.json?["status"] as? Int == 21009)
    }

    // MARK: - 12. Messages that say what happened

    @Test("Broken chunked framing and an oversized body are named as such, on both servers", arguments: ["serve", "validate"])
    func bodyMessages(command: String) async throws {
        let server = try await BackgroundServer.start(Self.arguments(command))
        defer { server.kill() }
        let broken = try await RawConnection(port: server.port)
        defer { broken.close() }
        try await broken.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n".utf8))
        let chunked = try #require(await broken.readToEnd(within: .seconds(10)).flatMap(RawAnswer.init))
        #expect(chunked.json?["forge_message"] as? String == "the request body is not valid chunked encoding (or its HTTP/1.1 framing is broken)", "\(chunked.text)")
        // Refused from its Content-Length, before the body is sent.
        let large = try await RawConnection(port: server.port)
        defer { large.close() }
        try await large.send(Array("POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: \(40 << 20)\r\n\r\n".utf8))
        let tooLarge = try #require(await large.readToEnd(within: .seconds(10)).flatMap(RawAnswer.init), "an oversized body was waited for")
        #expect(tooLarge.json?["forge_error"] as? String == "bodyTooLarge" && tooLarge.json?["status"] as? Int == 21000, "\(tooLarge.text)")
        if command == "validate" {
            let harness = try await RawConnection(port: server.port)
            defer { harness.close() }
            try await harness.send(Array("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: \(40 << 20)\r\n\r\n".utf8))
            let refused = try #require(await harness.readToEnd(within: .seconds(10)).flatMap(RawAnswer.init))
            #expect(refused.status == 413 && (refused.json?["message"] as? String)?.contains("over 33554432 bytes") == true, "\(refused.text)")
        }
    }

    // MARK: - Support

    static func arguments(_ command: String) -> [String] {
        command == "serve"
            ? ["serve", "--listen", "127.0.0.1:0"]
            : ["validate", "--listen", "127.0.0.1:0", "--vectors", Repository.vectors.path]
    }

    /// What a server says it is busy with as it answers: the other requests begun and not yet answered, and the
    /// bytes of request bodies read and not yet answered.
    struct Load: CustomStringConvertible {
        let inFlight: Int
        let bodyBytes: Int
        var description: String { "\(inFlight) requests in flight, \(bodyBytes) body bytes held" }
    }

    /// `GET /_forge/log`'s load headers on `forge serve`, `GET /hello`'s on `forge validate --listen`.
    static func load(_ server: BackgroundServer, _ command: String) async -> Load? {
        guard let answer = await RawHTTP.send(port: server.port, method: "GET", path: command == "serve" ? "/_forge/log" : "/hello"), answer.status == 200,
            let inFlight = answer.headers["x-forge-requests-in-flight"].flatMap({ Int($0) }), let bytes = answer.headers["x-forge-body-bytes-held"].flatMap({ Int($0) })
        else { return nil }
        return Load(inFlight: inFlight, bodyBytes: bytes)
    }

    /// Asks the server until its load says `condition`, and returns that answer's load.
    static func waitForLoad(_ server: BackgroundServer, _ command: String, _ what: String, _ condition: (Load) -> Bool) async throws -> Load {
        var last: Load?
        try await eventually(what, within: .seconds(60), every: .milliseconds(10)) {
            last = await load(server, command)
            return last.map(condition) ?? false
        }
        return try #require(last)
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
