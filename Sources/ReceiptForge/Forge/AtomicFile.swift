public import StoreModel
public import Foundation
public import ForgeSupport
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes files so that readers never see half of one: write a temporary sibling, then rename(2),
/// which replaces the target atomically. A failure leaves the old file (or none), never a partial one,
/// and never the temporary file.
///
/// Written with open/write/close, not `Data.write`, which fsyncs every file: durability across a power
/// cut is not what a test artefact needs, and the fsync was the largest cost of `forge make` after signing
/// (about 1 ms a file here, a fifth of a batch's time).
public enum AtomicFile {
    public static func write(_ data: Data, to url: URL) throws(ForgeError) {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
        do { try PlainFile.write(data, to: temporary, reportedAs: url) } catch {
            unlink(temporary.path)  // ours: a short or empty copy must not outlive the failure
            throw error
        }
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw ForgeError(.ioFailed, "cannot move the new file into place at \(url.path): \(reason)")
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
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = writeBytes(descriptor, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard written else {
            let error = failure("cannot write \(shown)")
            close(descriptor)
            throw error
        }
        // close(2) reports write-back errors some file systems (NFS) defer until then.
        guard close(descriptor) == 0 else { throw failure("cannot write \(shown)") }
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
