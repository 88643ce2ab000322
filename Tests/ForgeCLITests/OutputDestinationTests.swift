import Foundation
import ForgeTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Every file output by what is at its path (DESIGN §8): nothing or a regular file is replaced whole by a renamed
/// temporary sibling; a symbolic link keeps being one, its target replaced; a device, FIFO or socket is written
/// through and stays what it was; a directory is exit 73. Every path is in the test's own folder: the devices too.
@Suite(.timeLimit(.minutes(2)))
struct OutputDestinationTests {
    static let now = "2025-06-01T00:00:00Z"
    static let example = Repository.file("examples/storekit/Products.storekit").path
    static let vectors = Repository.vectors.path

    /// Commands that write one file with `-o`, each the same bytes on every run (`--now` pins time and seed).
    static let writers: [[String]] = [
        ["make", "--product", "com.example.pro", "--now", now, "-q"],
        ["jws", "make", "transaction", "--product", "com.example.pro", "--now", now, "-q"],
        ["storekit", "scenario", example, "--product", "com.example.coins"],
    ]

    /// The file type bits of what is at `path`, the link itself for a link.
    static func kind(_ path: String) -> mode_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : nil
    }

    static func inode(_ path: String) -> ino_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_ino : nil
    }

    /// What `arguments` writes to a regular file: the bytes every other destination must receive.
    static func expected(_ arguments: [String], in directory: URL) async throws -> Data {
        let file = directory.appendingPathComponent("expected-\(UUID().uuidString)")
        let made = try await forge(arguments: arguments + ["-o", file.path])
        try #require(made.status == 0, "\(arguments): \(made.stderr)")
        defer { try? FileManager.default.removeItem(at: file) }
        return try Data(contentsOf: file)
    }

    @Test("a FIFO is written through: its reader gets the whole output of make, jws make and storekit scenario, and it stays a FIFO")
    func fifo() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for arguments in Self.writers {
            let expected = try await Self.expected(arguments, in: directory)
            let path = directory.appendingPathComponent("pipe").path
            let reader = try Drain.fifo(at: path)
            let made = try await forge(arguments: arguments + ["-o", path])
            let received = await reader.finish()
            #expect(made.status == 0, "\(arguments): \(made.stderr)")
            #expect(received == expected, "\(arguments): the reader got \(received.count) bytes of \(expected.count)")
            #expect(Self.kind(path) == S_IFIFO, "\(arguments): the FIFO was replaced")
            try FileManager.default.removeItem(atPath: path)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [], "nothing else was written beside it")
    }

    @Test("forge run's four reports, each to a FIFO: every reader gets its report whole; forge run matrix -o too")
    func reportsToFIFOs() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let names = ["results", "junit", "markdown", "html"]
        let readers = try names.map { try Drain.fifo(at: directory.appendingPathComponent($0).path) }
        let ran = try await forge(
            arguments: ["run", "--target", "swift:reference", "--vectors", Self.vectors, "--run", "chain::*", "--quiet"]
                + names.flatMap { ["--\($0)", directory.appendingPathComponent($0).path] })
        var reports: [String: Data] = [:]
        for (name, reader) in zip(names, readers) { reports[name] = await reader.finish() }
        #expect(ran.status == 0, "\(ran.text)\(ran.stderr)")
        for name in names { #expect(Self.kind(directory.appendingPathComponent(name).path) == S_IFIFO, "--\(name) replaced its FIFO") }
        let results = try #require(try JSONSerialization.jsonObject(with: reports["results"] ?? Data()) as? [String: Any], "results.json read whole")
        #expect((results["results"] as? [Any])?.isEmpty == false)
        #expect(String(decoding: reports["junit"] ?? Data(), as: UTF8.self).hasSuffix("</testsuites>\n"))
        #expect(String(decoding: reports["markdown"] ?? Data(), as: UTF8.self).hasPrefix("## Receipt conformance"))
        #expect(String(decoding: reports["html"] ?? Data(), as: UTF8.self).contains("</html>"))

        let saved = directory.appendingPathComponent("saved.json")
        try (reports["results"] ?? Data()).write(to: saved)
        let expected = try await forge("run", "matrix", saved.path)
        let matrix = directory.appendingPathComponent("matrix").path
        let reader = try Drain.fifo(at: matrix)
        let written = try await forge("run", "matrix", saved.path, "-o", matrix)
        let received = await reader.finish()
        #expect(written.status == 0 && received == expected.stdout && !received.isEmpty, "\(written.stderr)")
        #expect(Self.kind(matrix) == S_IFIFO)
    }

    @Test(
        "a character device the test makes (mknod c 1 3, a null device) is written through and stays that device", .requires(.root))
    func device() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("null").path
        // makedev(1, 3) as glibc encodes it (the macro does not reach Swift).
        try #require(mknod(path, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0, "mknod: \(String(cString: strerror(errno)))")
        for arguments in Self.writers {
            let made = try await forge(arguments: arguments + ["-o", path])
            #expect(made.status == 0, "\(arguments): \(made.stderr)")
            var status = stat()
            #expect(lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR && status.st_rdev == dev_t(1 << 8 | 3), "\(arguments) replaced the device")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["null"])
    }

    @Test("a Unix socket is written through (connected to): the listener gets the output, and the socket stays")
    func socket() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = Self.writers[0]
        let expected = try await Self.expected(arguments, in: directory)
        let path = directory.appendingPathComponent("s").path
        let listener = try Drain.socket(at: path)
        let made = try await forge(arguments: arguments + ["-o", path])
        let received = await listener.finish()
        #expect(made.status == 0, "\(made.stderr)")
        #expect(received == expected, "the listener got \(received.count) bytes of \(expected.count)")
        #expect(Self.kind(path) == S_IFSOCK)
    }

    @Test("a symbolic link stays a link: the file it names (through a second link, relatively) is replaced whole, not rewritten in place")
    func linkToFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let target = folder.appendingPathComponent("receipt.der")
        try Data("old".utf8).write(to: target)
        let old = try FileHandle(forReadingFrom: target)
        defer { try? old.close() }
        let inner = directory.appendingPathComponent("inner").path
        let outer = directory.appendingPathComponent("outer").path
        try FileManager.default.createSymbolicLink(atPath: inner, withDestinationPath: "real/receipt.der")
        try FileManager.default.createSymbolicLink(atPath: outer, withDestinationPath: "inner")
        let before = Self.inode(target.path)
        let arguments = Self.writers[0]
        let expected = try await Self.expected(arguments, in: directory)
        let made = try await forge(arguments: arguments + ["-o", outer])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(Self.kind(outer) == S_IFLNK && Self.kind(inner) == S_IFLNK, "the links were replaced")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: outer) == "inner")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: inner) == "real/receipt.der")
        #expect(try Data(contentsOf: target) == expected)
        #expect(Self.inode(target.path) != before, "a new file was renamed in, not the old one rewritten")
        #expect(try old.readToEnd() == Data("old".utf8), "a reader of the old file still sees it whole")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["receipt.der"], "no temporary file is left")
    }

    @Test("a dangling symbolic link gets its target created; the link stays")
    func danglingLink() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let link = directory.appendingPathComponent("link").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "made.der")
        let arguments = Self.writers[1]
        let expected = try await Self.expected(arguments, in: directory)
        let made = try await forge(arguments: arguments + ["-o", link])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(Self.kind(link) == S_IFLNK)
        #expect(try Data(contentsOf: directory.appendingPathComponent("made.der")) == expected)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == ["link", "made.der"])
    }

    @Test("a directory is refused with exit 73 saying so, and left as it was: -o, --junit, a file of forge ca init")
    func directory() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: folder.appendingPathComponent("keep.txt"))
        let pki = directory.appendingPathComponent("pki")
        try FileManager.default.createDirectory(at: pki.appendingPathComponent("root.pem"), withIntermediateDirectories: true)
        let commands: [(arguments: [String], named: String)] = [
            (Self.writers[0] + ["-o", folder.path], folder.path),
            (["run", "--target", "swift:reference", "--vectors", Self.vectors, "--run", "chain::*", "--quiet", "--junit", folder.path], folder.path),
            (["ca", "init", "--out", pki.path, "--force"], pki.appendingPathComponent("root.pem").path),
        ]
        for (arguments, named) in commands {
            let result = try await forge(arguments: arguments)
            #expect(result.status == 73, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("\(named): it is a directory"), "\(arguments): \(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["keep.txt"])
            #expect(try Data(contentsOf: folder.appendingPathComponent("keep.txt")) == Data("mine".utf8))
        }
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == ["folder", "pki"], "no temporary file is left")
    }

    @Test("a regular file is replaced whole, by rename: a reader holding the old one still reads it, no temporary file is left")
    func regularFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("receipt.der")
        try Data("old".utf8).write(to: file)
        let old = try FileHandle(forReadingFrom: file)
        defer { try? old.close() }
        let before = Self.inode(file.path)
        let arguments = Self.writers[0]
        let expected = try await Self.expected(arguments, in: directory)
        let made = try await forge(arguments: arguments + ["-o", file.path])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(Self.kind(file.path) == S_IFREG && Self.inode(file.path) != before)
        #expect(try Data(contentsOf: file) == expected)
        #expect(try old.readToEnd() == Data("old".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["receipt.der"])
    }

    @Test("/dev/fd/1, and a link the test makes to /dev/stdout, are forge's standard output: the bytes arrive there and the link stays")
    func standardOutputByName() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = Self.writers[0]
        let expected = try await Self.expected(arguments, in: directory)
        let link = directory.appendingPathComponent("out").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/stdout")
        for path in ["/dev/fd/1", link] {
            let made = try await forge(arguments: arguments + ["-o", path])
            #expect(made.status == 0 && made.stdout == expected, "\(path): \(made.stdout.count) bytes on stdout; \(made.stderr)")
        }
        #expect(Self.kind(link) == S_IFLNK)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "/dev/stdout")
    }
}

/// A reader on a thread of its own, outside the cooperative pool (its reads and polls block, so no task may do
/// them): a FIFO's bytes until every writer closed it, or a Unix socket's first connection's bytes until it closed.
/// `finish()`, called once forge exited, ends the wait whether forge wrote or not, so a regression fails, never hangs.
final class Drain: Sendable {
    private struct State {
        var data = Data()
        var ended = false
        var waiter: CheckedContinuation<Data, Never>?
        var finishing = false
    }
    private let state = Mutex(State())
    /// The FIFO's write end the test holds until `finish()`: the reader's end of file then means forge is done too.
    private let keeper: Int32

    private init(reading descriptor: Int32, accepting: Bool, keeper: Int32) {
        self.keeper = keeper
        let thread = Thread { [self] in
            let received = Self.collect(descriptor, accepting: accepting) { state.withLock(\.finishing) }
            let waiter = state.withLock { state in
                state.data = received
                state.ended = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: received)
        }
        thread.start()
    }

    /// Makes a FIFO at `path` and opens both of its ends (without waiting): forge's open(2) then finds a reader.
    static func fifo(at path: String) throws -> Drain {
        guard mkfifo(path, 0o600) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard reader >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let keeper = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard keeper >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return Drain(reading: reader, accepting: false, keeper: keeper)
    }

    /// A Unix stream socket listening at `path`.
    static func socket(at path: String) throws -> Drain {
        #if canImport(Glibc)
            let listener = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let listener = Darwin.socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard listener >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 1) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return Drain(reading: listener, accepting: true, keeper: -1)
    }

    /// Closes the test's write end (a FIFO) or stops listening for a connection that never came (a socket), then
    /// returns what was read.
    func finish() async -> Data {
        if keeper >= 0 { close(keeper) }
        return await withCheckedContinuation { continuation in
            let ready: Data? = state.withLock { state in
                state.finishing = true
                if state.ended { return state.data }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Reads to end of file (accepting the first connection first), in 100 ms polls, for at most a minute.
    private static func collect(_ descriptor: Int32, accepting: Bool, finishing: () -> Bool) -> Data {
        var source = descriptor
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(60))
        var waitingForConnection = accepting
        while clock.now < deadline {
            let finished = finishing()
            var entry = pollfd(fd: source, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, 100)
            if waitingForConnection {
                if ready > 0 {
                    source = accept(descriptor, nil, nil)
                    guard source >= 0 else { break }
                    waitingForConnection = false
                } else if finished {
                    break
                }
                continue
            }
            guard ready > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count > 0 {
                received.append(contentsOf: buffer[..<count])
            } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                break
            }
        }
        if source != descriptor { close(source) }
        close(descriptor)
        return received
    }
}
