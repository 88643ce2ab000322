import _ForgeSupport
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One HTTP/1.0 POST over a socket with one deadline for all of it, the answer read to its end and bounded: enough
/// for OCSP (RFC 6960 Appendix A) without an HTTP stack in the build of the code that asks (the reference validator).
/// It blocks in `poll`: ``SocketOCSPTransport`` runs it on a thread of its own.
enum OneShotHTTP {
    typealias Failure = OCSPTransportFailure

    /// POSTs `body` to an `http://` URL; the status and body of the answer, or why there is none within `timeout`.
    static func post(
        _ url: String, contentType: String, body: [UInt8], timeout: Duration, maximumBytes: Int
    ) -> Result<OCSPHTTPAnswer, Failure> {
        let checked: HTTPURL
        do throws(HTTPURL.Problem) { checked = try HTTPURL(url, schemes: [.http]) } catch { return .failure(Failure(.url, error.description)) }
        let (host, port, parsed) = (checked.host, checked.port, checked.url)
        let path = parsed.path.isEmpty ? "/" : parsed.path + (parsed.query.map { "?" + $0 } ?? "")
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        func remainingMilliseconds() -> Int32 {
            let left = clock.now.duration(to: deadline).components
            return Int32(clamping: max(0, left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000))
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found else { return .failure(Failure(.network, "cannot resolve \(host)")) }
        defer { freeaddrinfo(found) }
        let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard descriptor >= 0 else { return .failure(Failure(.network, "socket: \(String(cString: strerror(errno)))")) }
        defer { close(descriptor) }
        let flags = fcntl(descriptor, F_GETFL, 0)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else { return .failure(Failure(.network, "fcntl: \(String(cString: strerror(errno)))")) }
        if connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 {
            guard errno == EINPROGRESS else { return .failure(Failure(.network, "connect: \(String(cString: strerror(errno)))")) }
            guard wait(descriptor, for: Int16(POLLOUT), milliseconds: remainingMilliseconds()) else { return .failure(Failure(.deadline, "no connection within \(timeout)")) }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == 0 else {
                return .failure(Failure(.network, "connect: \(String(cString: strerror(error)))"))
            }
        }
        let head = "POST \(path) HTTP/1.0\r\nHost: \(host):\(port)\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let written = request.withUnsafeBytes { send(descriptor, $0.baseAddress.map { $0 + sent }, request.count - sent, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                sent += written
            } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                guard wait(descriptor, for: Int16(POLLOUT), milliseconds: remainingMilliseconds()) else { return .failure(Failure(.deadline, "not sent within \(timeout)")) }
            } else {
                return .failure(Failure(.network, "send: \(String(cString: strerror(errno)))"))
            }
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                response += buffer.prefix(count)
                guard response.count <= maximumBytes + 16 * 1024 else { return .failure(Failure(.oversized, "an answer over \(maximumBytes) bytes")) }
            } else if count == 0 {
                break
            } else if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                guard wait(descriptor, for: Int16(POLLIN), milliseconds: remainingMilliseconds()) else { return .failure(Failure(.deadline, "no answer within \(timeout)")) }
            } else {
                return .failure(Failure(.network, "recv: \(String(cString: strerror(errno)))"))
            }
        }
        return parse(response).map { .success(OCSPHTTPAnswer(status: $0.status, body: $0.body)) } ?? .failure(Failure(.malformed, "not an HTTP answer"))
    }

    /// Status and body of an HTTP/1.x answer read to its end (Content-Length honoured when present).
    static func parse(_ response: [UInt8]) -> (status: Int, body: [UInt8])? {
        let separator: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]
        guard response.count >= 12, let end = (0...(response.count - 4)).first(where: { response[$0..<($0 + 4)].elementsEqual(separator) }) else { return nil }
        let head = String(decoding: response[..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1."), statusLine.count >= 12,
            let status = Int(statusLine.dropFirst(9).prefix(3))
        else { return nil }
        var body = Array(response[(end + 4)...])
        for line in lines.dropFirst() where line.lowercased().hasPrefix("content-length:") {
            if let length = Int(line.dropFirst("content-length:".count).trimmingWhitespace()), length >= 0, length <= body.count {
                body = Array(body.prefix(length))
            }
        }
        return (status, body)
    }

    /// poll(2) for `events` until the deadline; false when it passed.
    private static func wait(_ descriptor: Int32, for events: Int16, milliseconds: Int32) -> Bool {
        guard milliseconds > 0 else { return false }
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        var ready = poll(&entry, 1, milliseconds)
        while ready < 0, errno == EINTR { ready = poll(&entry, 1, milliseconds) }
        return ready > 0
    }
}
