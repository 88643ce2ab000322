import Foundation
import _ForgeSupport
import FuzzSupport
@testable import StoreServer
@testable import HTTPServers

#if canImport(Glibc)
    import Glibc
#endif

/// What every connection to the listener is answered with: the current input, with `{port}` the listener's port (so a
/// redirect can lead back to it).
final class CurrentAnswer: @unchecked Sendable {
    static let shared = CurrentAnswer()
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    var value: [UInt8] {
        get { lock.withLock { bytes } }
        set { lock.withLock { bytes = newValue } }
    }
}

/// The end of an HTTP request's head (the index after its blank line), if it has arrived.
func headEnd(_ bytes: [UInt8]) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
        return index + 4
    }
    return nil
}

/// The request's Content-Length, 0 when it has none.
func contentLength(_ head: ArraySlice<UInt8>) -> Int {
    for line in String(decoding: head, as: UTF8.self).lowercased().split(separator: "\r\n") where line.hasPrefix("content-length:") {
        return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }
    return 0
}

/// A loopback listener on a port of its own, on a thread of its own: each connection's request is read (its head,
/// then Content-Length bytes, two seconds at most), answered with ``CurrentAnswer/shared`` and closed.
func startListener() -> UInt16? {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard listener >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
    guard bound == 0, listen(listener, 64) == 0 else { return nil }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
    let port = UInt16(bigEndian: address.sin_port)
    Thread {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            var limit = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            var request: [UInt8] = []
            while request.count < 1 << 20 {
                let count = read(connection, &buffer, buffer.count)
                guard count > 0 else { break }
                request += buffer[0..<count]
                if let end = headEnd(request), request.count >= end + contentLength(request[..<end]) { break }
            }
            let answer = CurrentAnswer.shared.value
            var written = 0
            while written < answer.count {
                let count = answer[written...].withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                written += count
            }
            close(connection)
        }
    }.start()
    return port
}

/// The listener and the request, made once, lazily: LeakSanitizer reads what a one-time initializer (`_WZ`) allocates
/// as not leaked (lsan.supp).
enum Fixture {
    static let port = startListener()
    static let webhook = port.flatMap { try? HTTPURL("http://127.0.0.1:\($0)/hook") }
    static let notification = WebhookRequest.body(signedPayload: "eyJhbGciOiJFUzI1NiJ9.e30.c2ln")
}

_ = signal(SIGPIPE, SIG_IGN)

/// The answer `request` gets, waited for here: libFuzzer calls this synchronously, on the main thread, never on
/// one of Swift concurrency's threads.
func delivered(_ request: WebhookRequest) -> WebhookAnswer? {
    final class Box: @unchecked Sendable { var answer: WebhookAnswer? }
    let box = Box(), done = DispatchSemaphore(value: 0)
    Task {
        box.answer = await WebhookClient.deliver([request], concurrency: 1).first
        done.signal()
    }
    done.wait()
    return box.answer
}

/// A webhook's answer to a notification or a realtime request, over loopback through the HTTP client `forge serve
/// --notify`, `forge notify` and `forge bench realtime` send with. The first byte picks what the rest is: the whole
/// answer as sent (status line, headers, body; `{port}` is the listener's, so a redirect can come back), or a body
/// sent as a 200 with its Content-Length. Then what reads the answer: the attempt Apple's history and `forge notify`
/// write, and `forge bench realtime`'s check of the body.
func fuzzWebhookAnswer(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    guard let port = Fixture.port, let webhook = Fixture.webhook, let mode = bytes.first else { return 0 }
    let rest = Array(bytes.dropFirst())
    if mode % 2 == 0 {
        CurrentAnswer.shared.value = Array(String(decoding: rest, as: UTF8.self).replacing("{port}", with: String(port)).utf8)
    } else {
        CurrentAnswer.shared.value = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(rest.count)\r\n\r\n".utf8) + rest
    }
    guard let answer = delivered(WebhookRequest(url: webhook, body: Fixture.notification, timeoutSeconds: 3)) else { return 0 }
    _ = answer.attempt.json.serialized(pretty: false)
    _ = try? JSONValue(encoding: answer.attempt.item).serialized(pretty: false)
    _ = RealtimeResponse.accepts(answer.body)
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzWebhookAnswer(data.map(UnsafeRawPointer.init), size) }

runFuzzer { data, size in testOneInput(data, size) }
