import Foundation
import ForgeTestSupport

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
private func receiveBytes(_ descriptor: Int32, _ base: UnsafeMutableRawPointer, _ count: Int) -> Int { recv(descriptor, base, count, 0) }

/// A raw TCP connection, for clients that misbehave on purpose (half a body, broken framing, a trickle): a
/// non-blocking socket whose every wait is a `Task.sleep` under a deadline, so no test thread is ever held.
final class RawConnection: Sendable {
    private let descriptor: Int32

    struct Failed: Error, CustomStringConvertible {
        let what: String
        var description: String { what }
    }

    /// Connects to `host:port` (IPv4), within `within`.
    init(host: String = "127.0.0.1", port: Int, within: Duration = .seconds(20)) async throws {
        let descriptor = socket(AF_INET, streamSocket, 0)
        guard descriptor >= 0 else { throw Failed(what: "socket: errno \(errno)") }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 {
            guard errno == EINPROGRESS else {
                let failure = errno
                closeDescriptor(descriptor)
                throw Failed(what: "connect to \(host):\(port): errno \(failure)")
            }
            // Connected (or refused) once the socket is writable.
            let deadline = ContinuousClock.now + within
            while true {
                var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                if poll(&poller, 1, 0) > 0 { break }
                guard ContinuousClock.now < deadline else {
                    closeDescriptor(descriptor)
                    throw Failed(what: "connect to \(host):\(port): no answer within \(within)")
                }
                try? await Task.sleep(for: .milliseconds(2))
            }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length)
            guard failure == 0 else {
                closeDescriptor(descriptor)
                throw Failed(what: "connect to \(host):\(port): errno \(failure)")
            }
        }
        self.descriptor = descriptor
    }

    /// Sends all of `bytes`, waiting (never blocking) while the peer's window is full; throws once the peer has
    /// closed or reset the connection, or at `within`.
    func send(_ bytes: [UInt8], within: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + within
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in sendBytes(descriptor, buffer.baseAddress! + sent, buffer.count - sent) }
            if count > 0 {
                sent += count
                continue
            }
            guard count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { throw Failed(what: "send: errno \(errno)") }
            guard ContinuousClock.now < deadline else { throw Failed(what: "send: the peer took nothing within \(within)") }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// What the peer sent until it closed the connection (or reset it), or nil when it is still open at `within`.
    func readToEnd(within: Duration) async -> [UInt8]? {
        let deadline = ContinuousClock.now + within
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { receiveBytes(descriptor, $0.baseAddress!, $0.count) }
            if count > 0 {
                received += buffer.prefix(count)
                continue
            }
            if count == 0 { return received }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { return received }
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    func close() { closeDescriptor(descriptor) }
}

/// One request over a fresh connection (`Connection: close`), and the answer read to the connection's end.
enum RawHTTP {
    /// What a control POST must say without a control token.
    static let json = ["Content-Type": "application/json"]

    static func request(method: String, path: String, headers: [String: String] = [:], body: [UInt8] = []) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    /// The answer, or nil when the server could not be reached or did not close the connection within `within`.
    static func send(
        host: String = "127.0.0.1", port: Int, method: String, path: String, headers: [String: String] = [:], body: [UInt8] = [],
        within: Duration = .seconds(20)
    ) async -> RawAnswer? {
        guard let connection = try? await RawConnection(host: host, port: port) else { return nil }
        defer { connection.close() }
        // A server may answer (and close) before the whole body is sent: the answer still counts.
        try? await connection.send(request(method: method, path: path, headers: headers, body: body), within: within)
        return await connection.readToEnd(within: within).flatMap(RawAnswer.init)
    }
}

/// A parsed HTTP/1.1 response (identity or chunked body), header names in lower case.
struct RawAnswer {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]

    init?(_ bytes: [UInt8]) {
        guard let parsed = ParsedResponse(bytes) else { return nil }
        (status, headers, body) = (parsed.status, parsed.headers, parsed.body)
    }

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }
}

/// Status, lower-case headers and (de-chunked) body of an HTTP/1.1 response.
private struct ParsedResponse {
    let status: Int
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
