import _ForgeSupport
import Foundation
import StoreServer
import HTTPServers
import Testing
import ForgeTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Every input that ever crashed FuzzWebhookAnswer (`FuzzTesting/FailCases/FuzzWebhookAnswer-*`), replayed as the
/// target reads it: a loopback listener answers the notification POST with the input's bytes, and the answer goes
/// through the HTTP client `forge serve --notify`, `forge notify` and `forge bench realtime` send with, then through
/// what reads it. A trap here kills the test process: the run fails.
@Suite("Fuzz fail cases of a webhook's answer", .timeLimit(.minutes(2)))
struct WebhookAnswerFailCaseTests {
    static let directory = Repository.file("FuzzTesting/FailCases")
    static let cases = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasPrefix("FuzzWebhookAnswer-") }.sorted()

    /// A listener on 127.0.0.1 (a port of its own) that reads each request's head and body, answers with `answer`
    /// (`{port}` replaced by its port) and closes; on a thread of its own, until ``stop()``.
    final class Answerer: @unchecked Sendable {
        let port: UInt16
        private let socket: Int32

        init(_ answer: @escaping @Sendable (UInt16) -> [UInt8]) throws {
            let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
            guard listener >= 0, bound == 0, listen(listener, 16) == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
            let port = UInt16(bigEndian: address.sin_port)
            self.port = port
            socket = listener
            Thread {
                var buffer = [UInt8](repeating: 0, count: 16 << 10)
                while true {
                    let connection = accept(listener, nil, nil)
                    guard connection >= 0 else { return }  // stopped
                    var limit = timeval(tv_sec: 2, tv_usec: 0)
                    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
                    var request: [UInt8] = []
                    while request.count < 1 << 20 {
                        let count = read(connection, &buffer, buffer.count)
                        guard count > 0 else { break }
                        request += buffer[0..<count]
                        if let end = Self.headEnd(request), request.count >= end + Self.contentLength(request[..<end]) { break }
                    }
                    let bytes = answer(port)
                    var written = 0
                    while written < bytes.count {
                        let count = bytes[written...].withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                        guard count > 0 else { break }
                        written += count
                    }
                    close(connection)
                }
            }.start()
        }

        func stop() {
            shutdown(socket, Int32(SHUT_RDWR))
            close(socket)
        }

        static func headEnd(_ bytes: [UInt8]) -> Int? {
            guard bytes.count >= 4 else { return nil }
            for index in 0...(bytes.count - 4) where bytes[index...].starts(with: [13, 10, 13, 10]) { return index + 4 }
            return nil
        }

        static func contentLength(_ head: ArraySlice<UInt8>) -> Int {
            for line in String(decoding: head, as: UTF8.self).lowercased().split(separator: "\r\n") where line.hasPrefix("content-length:") {
                return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            }
            return 0
        }
    }

    @Test("Each fail case is answered by the client as an attempt with a result, never a trap", arguments: cases)
    func replay(name: String) async throws {
        _ = signal(SIGPIPE, SIG_IGN)
        let bytes = [UInt8](try Data(contentsOf: Self.directory.appendingPathComponent(name)))
        let rest = Array(bytes.dropFirst())
        let whole = (bytes.first ?? 0) % 2 == 0
        let answerer = try Answerer { port in
            whole
                ? Array(String(decoding: rest, as: UTF8.self).replacing("{port}", with: String(port)).utf8)
                : Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(rest.count)\r\n\r\n".utf8) + rest
        }
        defer { answerer.stop() }
        let url = try HTTPURL("http://127.0.0.1:\(answerer.port)/hook")
        let request = WebhookRequest(url: url, body: WebhookRequest.body(signedPayload: "eyJhbGciOiJFUzI1NiJ9.e30.c2ln"), timeoutSeconds: 3)
        let answer = try #require(await WebhookClient.deliver([request], concurrency: 1).first)
        _ = answer.attempt.json.serialized(pretty: false)
        _ = try JSONValue(encoding: answer.attempt.item).serialized(pretty: false)
        _ = RealtimeResponse.accepts(answer.body)
        #expect(SendAttemptResult.allCases.contains(answer.attempt.result))
    }
}
