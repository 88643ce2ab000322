public import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes files so that readers never see half of one: write a temporary sibling, then rename(2),
/// which replaces the target atomically. A failure leaves the old file (or none), never a partial one.
///
/// Written with open/write/close, not `Data.write`, which fsyncs every file: durability across a power
/// cut is not what a test artefact needs, and the fsync was the largest cost of `forge make` after signing
/// (about 1 ms a file here, a fifth of a batch's time).
public enum AtomicFile {
    public static func write(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(ProcessInfo.processInfo.processIdentifier).tmp")
        try PlainFile.write(data, to: temporary)
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot move the new file into place at \(url.path): \(reason)"])
        }
    }
}

/// Creates or truncates a file and writes `data` into it, without fsync (see ``AtomicFile``): for files
/// nobody reads before they are complete, like the receipts of a batch.
public enum PlainFile {
    public static func write(_ data: Data, to url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create \(url.path)") }
        defer { close(descriptor) }
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = writeBytes(descriptor, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw failure("cannot write \(url.path)") }
                offset += written
            }
        }
    }

    private static func failure(_ what: String) -> CocoaError {
        CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: strerror(errno)))"])
    }
}

/// write(2), named apart so that it is not taken for a method (the C library's, on Linux and macOS alike).
private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int { write(descriptor, bytes, count) }
