public import StoreModel
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes every file output forge names (`-o`, reports, certificate sets), by what is at the path (DESIGN §8):
///
/// - nothing or a regular file: a temporary sibling, then rename(2), which replaces the target atomically. A
///   failure leaves the old file (or none), never a partial one, and never the temporary file;
/// - a symbolic link: the same at the link's target, followed to the end (a dangling link gets its target
///   created); the link stays;
/// - a character or block device, a FIFO or a socket: opened and written through, never renamed over nor
///   unlinked (`-o /dev/null` leaves the device a device; a FIFO's reader gets the bytes). `/dev/stdout`,
///   `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` are the descriptor forge already holds;
/// - a directory: refused, nothing written.
///
/// Written with open/write/close, not `Data.write`, which fsyncs every file: durability across a power
/// cut is not what a test artefact needs, and the fsync was the largest cost of `forge make` after signing
/// (about 1 ms a file here, a fifth of a batch's time).
public enum AtomicFile {
    public static func write(_ data: Data, to url: URL) throws(ForgeError) {
        switch try OutputPath.destination(of: url.path) {
        case .replaced(let path): try replace(path, with: data, reportedAs: url.path)
        case .writtenThrough(let path): try PlainFile.writeThrough(data, to: path, reportedAs: url.path)
        case .descriptor(let descriptor):
            guard PlainFile.writeAll(data, to: descriptor) else { throw PlainFile.failure("cannot write \(url.path)") }
        }
    }

    /// A temporary sibling of `path` (a regular file or nothing), renamed over it.
    private static func replace(_ path: String, with data: Data, reportedAs shown: String) throws(ForgeError) {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
        do { try PlainFile.write(data, to: temporary, reportedAs: URL(fileURLWithPath: shown)) } catch {
            unlink(temporary.path)  // ours: a short or empty copy must not outlive the failure
            throw error
        }
        guard rename(temporary.path, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw ForgeError(.ioFailed, "cannot move the new file into place at \(shown): \(reason)")
        }
    }
}

/// What an output path names, found before a byte is written: what ``AtomicFile`` does there.
enum OutputPath: Equatable {
    /// Nothing, or a regular file (at the end of any symbolic links): replaced by a renamed temporary sibling.
    case replaced(String)
    /// A device, FIFO or socket: opened and written, never replaced.
    case writtenThrough(String)
    /// A standard stream named by path: written to the descriptor this process holds.
    case descriptor(Int32)

    /// Links followed before the path counts as a loop (Linux's own limit).
    static let maximumLinks = 40

    static func destination(of path: String) throws(ForgeError) -> OutputPath {
        var current = path
        for _ in 0...maximumLinks {
            if let descriptor = standardStream(current) { return .descriptor(descriptor) }
            var status = stat()
            guard lstat(current, &status) == 0 else {
                // Nothing there: created at this path (a missing folder fails then, with the system's reason).
                guard errno == ENOENT else { throw PlainFile.failure("cannot write \(path)") }
                return .replaced(current)
            }
            switch status.st_mode & S_IFMT {
            case S_IFREG: return .replaced(current)
            case S_IFDIR: throw directory(path)
            case S_IFLNK:
                // What the kernel reaches through the link decides first: a link in /proc/PID/fd names a pipe or a
                // socket by no path readlink(2) can give, yet opening the link reaches it.
                var reached = stat()
                if stat(current, &reached) == 0 {
                    switch reached.st_mode & S_IFMT {
                    case S_IFREG: break
                    case S_IFDIR: throw directory(path)
                    default: return .writtenThrough(current)
                    }
                }
                current = try target(of: current, named: path)
            default: return .writtenThrough(current)
            }
        }
        throw ForgeError(.ioFailed, "cannot write \(path): more than \(maximumLinks) symbolic links in a row")
    }

    private static func directory(_ path: String) -> ForgeError {
        ForgeError(.ioFailed, "cannot write \(path): it is a directory; name a file in it")
    }

    /// Where a symbolic link points, as a path from the current directory (a relative target is relative to the link's folder).
    private static func target(of link: String, named path: String) throws(ForgeError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer { bytes in bytes.baseAddress.map { readlink(link, $0, bytes.count - 1) } ?? -1 }
        guard count > 0 else { throw PlainFile.failure("cannot write \(path): cannot read the link \(link)") }
        let target = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if target.hasPrefix("/") { return target }
        guard let slash = link.lastIndex(of: "/") else { return target }
        return String(link[...slash]) + target
    }

    /// `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`: a descriptor the process already holds, written as
    /// it is (a pipe, a socket, a terminal, or a file opened for appending), as `-o -` writes standard output.
    static func standardStream(_ path: String) -> Int32? {
        switch path {
        case "/dev/stdout": return 1
        case "/dev/stderr": return 2
        default:
            for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
                let number = path.dropFirst(prefix.count)
                guard let descriptor = Int32(number), descriptor >= 0 else { return nil }
                return descriptor
            }
            return nil
        }
    }
}

extension AtomicFile {
    /// Writes a file that must not exist yet, whole or not at all, readable by `permissions` only (a private key:
    /// 0o600 from its first byte): a temporary sibling, then link(2), which refuses an existing target atomically.
    public static func create(_ data: Data, at url: URL, permissions: Int) throws(ForgeError) {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
        defer { unlink(temporary.path) }  // ours, linked or not
        try PlainFile.write(data, to: temporary, reportedAs: url, permissions: permissions)
        // open(2) keeps the mode of a file that was there (a stale temporary of a reused process id).
        guard chmod(temporary.path, mode_t(truncatingIfNeeded: permissions)) == 0 else { throw PlainFile.failure("cannot create \(url.path)") }
        guard link(temporary.path, url.path) == 0 else {
            if errno == EEXIST { throw ForgeError(.wouldOverwrite, "\(url.path) already exists") }
            throw PlainFile.failure("cannot create \(url.path)")
        }
    }
}

/// Creates or truncates a file and writes `data` into it, without fsync (see ``AtomicFile``): for files
/// nobody reads before they are complete, like the receipts of a staged batch (``StagedFolder``).
public enum PlainFile {
    /// `reportedAs`: the path errors name, when `url` is a temporary one the user never asked for.
    public static func write(_ data: Data, to url: URL, reportedAs: URL? = nil, permissions: Int = 0o644) throws(ForgeError) {
        let shown = (reportedAs ?? url).path
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(truncatingIfNeeded: permissions))
        guard descriptor >= 0 else { throw failure("cannot write \(shown)") }
        guard writeAll(data, to: descriptor) else {
            let error = failure("cannot write \(shown)")
            close(descriptor)
            throw error
        }
        // close(2) reports write-back errors some file systems (NFS) defer until then.
        guard close(descriptor) == 0 else { throw failure("cannot write \(shown)") }
    }

    /// Writes into what is at `path` (a device, FIFO or socket: ``OutputPath/writtenThrough(_:)``) without creating,
    /// truncating or replacing it. A FIFO waits here for its reader, as `cat > FIFO` does.
    static func writeThrough(_ data: Data, to path: String, reportedAs shown: String) throws(ForgeError) {
        var descriptor = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
        if descriptor < 0, errno == ENXIO { descriptor = connectedSocket(path) }  // open(2) cannot reach a socket; connect(2) can
        guard descriptor >= 0 else { throw failure("cannot write \(shown)") }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let error = failure("cannot write \(shown)")
            close(descriptor)
            throw error
        }
        // Swapped for a file between the look and the open: writing into it would leave half of one.
        guard status.st_mode & S_IFMT != S_IFREG, status.st_mode & S_IFMT != S_IFDIR else {
            close(descriptor)
            throw ForgeError(.ioFailed, "cannot write \(shown): it changed while forge opened it; nothing was written")
        }
        guard writeAll(data, to: descriptor) else {
            let error = failure("cannot write \(shown)")
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else { throw failure("cannot write \(shown)") }
    }

    /// A stream connection to the Unix socket at `path`, or -1 with errno set.
    private static func connectedSocket(_ path: String) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            errno = ENAMETOOLONG
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        #if canImport(Glibc)
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return -1 }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let error = errno
            close(descriptor)
            errno = error
            return -1
        }
        return descriptor
    }

    /// Every byte of `data` to `descriptor`, through short writes and EINTR; false with errno set on a failure.
    static func writeAll(_ data: Data, to descriptor: Int32) -> Bool {
        data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = writeBytes(descriptor, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
    }

    /// A write error in plain words: the path and strerror ("No space left on device", "File too large").
    static func failure(_ what: String) -> ForgeError { ForgeError(.ioFailed, "\(what): \(String(cString: strerror(errno)))") }
}

/// `mkdir -p` with the system's reason on failure ("Not a directory", "Permission denied"): Linux Foundation's
/// `createDirectory` reports only "NSCocoaErrorDomain error 512".
public enum Folder {
    public static func create(_ url: URL) throws(ForgeError) {
        var path = url.standardizedFileURL.path.hasPrefix("/") ? "" : "."
        for component in url.standardizedFileURL.path.split(separator: "/") {
            path += "/" + component
            var status = stat()
            if stat(path, &status) == 0 {  // through links: a link to a folder is a folder
                guard status.st_mode & S_IFMT == S_IFDIR else { throw ForgeError(.ioFailed, "cannot create \(url.path): Not a directory (\(path))") }
                continue
            }
            guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw PlainFile.failure("cannot create \(url.path)") }
        }
    }

    /// The names in a folder (not `.` and `..`), unsorted; the system's reason when it cannot be read.
    public static func names(in path: String) throws(ForgeError) -> [String] {
        guard let stream = opendir(path) else { throw PlainFile.failure("cannot list \(path)") }
        defer { closedir(stream) }
        var names: [String] = []
        errno = 0
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        guard errno == 0 else { throw PlainFile.failure("cannot list \(path)") }
        return names
    }
}

/// write(2), named apart so that it is not taken for a method (the C library's, on Linux and macOS alike).
private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { write(descriptor, bytes, count) }
