import Foundation
import ForgeTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
    private let streamSocket = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
    import Darwin
    private let streamSocket = SOCK_STREAM
#endif

/// A server that cannot listen where it is asked says so in one line and exits 69 (EX_UNAVAILABLE), never 70 with
/// NIO's `bind(descriptor:ptr:bytes:)` (issue 21, item 10). That the faults the control route lists are the JSON it
/// takes is proven in process: `VerifyReceiptServeTests.faultsRoundTrip`.
@Suite("Serve: listen errors", .timeLimit(.minutes(2)))
struct ServeBindErrorTests {
    /// A socket listening on 127.0.0.1, held by the test: its port is in use for as long as it is open.
    final class HeldPort {
        let descriptor: Int32
        let port: Int

        init() throws {
            let descriptor = socket(AF_INET, streamSocket, 0)
            self.descriptor = descriptor
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
            }
            guard bound, listen(descriptor, 1) == 0 else { throw Failed() }
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        func release() { _ = close(descriptor) }
        struct Failed: Error {}
    }

    @Test("A port in use: forge serve and forge validate --listen exit 69 with one line naming the address and the reason")
    func portInUse() async throws {
        let held = try HeldPort()
        defer { held.release() }
        for command in [["serve"], ["validate"]] {
            let result = try await run(Binaries.forge, command + ["--listen", "127.0.0.1:\(held.port)"], killAfter: .seconds(30))
            #expect(result.exited && result.status == 69, "\(command): exit \(result.status), \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(command): \(result.stderr)")
            #expect(result.stderr.hasPrefix("forge: error: cannot listen on 127.0.0.1:\(held.port): address already in use"), "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("bind(descriptor"), "\(result.stderr)")
        }
    }

    @Test("An address that is not this machine's (203.0.113.1, TEST-NET-3): exit 69, one line")
    func addressNotLocal() async throws {
        let result = try await run(Binaries.forge, ["serve", "--listen", "203.0.113.1:8080"], killAfter: .seconds(30))
        #expect(result.exited && result.status == 69, "exit \(result.status), \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("forge: error: cannot listen on 203.0.113.1:8080: not an address of this machine"), "\(result.stderr)")
    }

    @Test("A host name that does not resolve: exit 69, one line")
    func hostUnknown() async throws {
        let result = try await run(Binaries.forge, ["serve", "--listen", "nosuchhost.invalid:8080"], killAfter: .seconds(30))
        #expect(result.exited && result.status == 69, "exit \(result.status), \(result.stderr)")
        #expect(result.stderr == "forge: error: cannot listen on nosuchhost.invalid:8080: the host name does not resolve to an address of this machine\n")
    }

    @Test("forge serve --help and forge --help document exit 69 for an address that cannot be listened on")
    func documented() async throws {
        let help = try await forge("serve", "--help").text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("exits 69 with one line: forge: error: cannot listen on HOST:PORT"), "\(help)")
        let top = try await forge("--help").text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(top.contains("69 unavailable: forge-http needed but not built, or a server cannot listen where asked"), "\(top)")
    }
}
