import Foundation
import ForgeTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension KnownResultsTests.Online {
    /// The `online` vectors' certificates name their OCSP responder at 127.0.0.1:6960 (committed bytes: the port cannot
    /// move per run), so another process can hold it. A run whose responder could not start judged none of those vectors:
    /// it says why and exits 2, never "conformant". Nested in ``KnownResultsTests/Online``, whose other tests need the port free: that
    /// suite runs them one at a time.
    @Suite(.timeLimit(.minutes(2)))
    struct OnlineResponderPortTests {
        /// Holds 127.0.0.1:`port` (listening) until closed, once no other process does (another test's online run may,
        /// for a while): the test's premise is a port it holds itself, never one that may be freed under it.
        static func hold(port: UInt16, within limit: Duration = .seconds(60)) async throws -> Int32 {
            var held: Int32?
            try await eventually("127.0.0.1:\(port) is free to hold", within: limit, every: .milliseconds(100)) {
                held = try listening(port: port)
                return held != nil
            }
            return try #require(held)
        }

        /// A listening socket on 127.0.0.1:`port`, or nil when another process holds the port.
        static func listening(port: UInt16) throws -> Int32? {
            #if canImport(Glibc)
                let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
                let descriptor = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            // As forge's responder binds: the connections of an earlier online run, closed and in TIME_WAIT for a minute,
            // do not hold the port; a process listening there still does.
            var reuse: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0, listen(descriptor, 1) == 0 else {
                let error = errno
                close(descriptor)
                if error == EADDRINUSE { return nil }
                throw POSIXError(POSIXErrorCode(rawValue: error) ?? .EIO)
            }
            return descriptor
        }

        @Test(
            "forge run killed by SIGKILL while its OCSP responder serves: the responder sees its stdin end and stops, freeing 127.0.0.1:6960",
            .requires(.pgrep, .pkill))
        func responderDiesWithTheRun() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            // Each harness holds its vector until killed; the marker names this test's responder-free harnesses for pgrep.
            let script = directory.appendingPathComponent("hang.sh")
            try "#!/bin/sh\ncat > /dev/null\nsh -c \"sleep 600 # \(directory.path)\" & wait\n".write(to: script, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
            _ = try await Self.hold(port: 6960).closing()
            let forge = try Launched(
                Binaries.forge,
                ["run", "--target", "exit:\(script.path)", "--features", "online", "--artifacts", "jws", "--run", "jws-online::*", "--timeout", "600", "-q"])
            defer { forge.signal(SIGKILL) }
            // The run has started its responder (the port is taken) and a harness (it waits on it).
            try await HostileHarnessTests.waitForProcess(matching: "sleep 600 # \(directory.path)")
            #expect(try Self.listening(port: 6960).closing() == false, "no responder on 127.0.0.1:6960 while the run waits on its harness")
            forge.signal(SIGKILL)
            _ = try await forge.end(within: .seconds(30))
            try await eventually("the responder has stopped (127.0.0.1:6960 is free)", within: .seconds(30), every: .milliseconds(100)) {
                try Self.listening(port: 6960).closing()
            }
            // The harnesses, leading process groups of their own, are the harness protocol's business: stop them here.
            _ = try await run(try Oracle.pkill.required(), ["-KILL", "-f", "sleep 600 # \(directory.path)"])
        }

        @Test("with 127.0.0.1:6960 taken, swift:reference-online on jws-online::* exits 2 saying the responder could not start; the results say so too")
        func portTaken() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let held = try await Self.hold(port: 6960)
            defer { close(held) }
            let results = directory.appendingPathComponent("results.json")
            for quiet in [false, true] {
                let ran = try await forge(
                    arguments: ["run", "--target", "swift:reference-online", "--artifacts", "jws", "--run", "jws-online::*", "--results", results.path]
                        + (quiet ? ["--quiet"] : []))
                #expect(ran.status == 2, "\(ran.text)\(ran.stderr)")
                #expect(!ran.text.contains("conformant"), "\(ran.text)")
                let said = quiet ? "NOT JUDGED: the OCSP responder on 127.0.0.1:6960 could not start" : "Not judged: the OCSP responder on 127.0.0.1:6960 could"
                #expect(ran.text.contains(said), "\(ran.text)")
            }
            let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])
            let unavailable = try #require(object["unavailableServices"] as? [String])
            #expect(unavailable.count == 1 && unavailable[0].contains("127.0.0.1:6960 could not start"), "\(unavailable)")
            #expect((object["results"] as? [[String: Any]])?.allSatisfy { $0["outcome"] as? String == "SKIP" } == true)
        }
    }
}

extension Optional where Wrapped == Int32 {
    /// Closes the descriptor held, if any: whether there was one (a port free to hold).
    fileprivate func closing() -> Bool {
        guard let descriptor = self else { return false }
        close(descriptor)
        return true
    }
}

extension Int32 {
    /// Closes a descriptor a test held only to prove the port free.
    fileprivate func closing() {
        close(self)
    }
}
