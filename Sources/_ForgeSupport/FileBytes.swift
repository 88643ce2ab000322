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

/// A whole file read straight into an array. `Data(contentsOf:)` and then `[UInt8](data)` copy each byte twice,
/// and the runner reads every vector on every pass (the corpus's largest is 1.4 MB).
public enum FileBytes {
    /// Whether `path` names a directory, and its size in bytes (following symlinks, as FileManager does); nil when
    /// it names nothing. FileManager's `fileExists(atPath:isDirectory:)` takes an ObjCBool on Apple platforms and a
    /// Bool elsewhere, and its `attributesOfItem` size is an Int only with Foundation proper.
    public static func status(_ path: String) -> (isDirectory: Bool, size: Int)? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return ((status.st_mode & S_IFMT) == S_IFDIR, Int(exactly: status.st_size) ?? Int.max)
    }

    /// The file's bytes to its end (one that grows while it is read is read whole); nil when it cannot be opened
    /// or a read fails.
    public static func read(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        // The size is a hint for the first read (zero for a pipe); the loop reads to the end whatever it is.
        let hint = fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG ? Int(exactly: status.st_size) ?? 0 : 0
        var bytes: [UInt8] = []
        // One byte past the size, so a file that does not change meets its end inside the first buffer, which
        // then becomes the array without a copy.
        var capacity = min(max(hint, 0), InputLimits.maximumSize) + 1
        while true {
            var reachedEnd = false
            var failed = false
            let chunk = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                guard let base = buffer.baseAddress else { return }
                while initialized < buffer.count {
                    let count = systemRead(descriptor, base + initialized, buffer.count - initialized)
                    if count > 0 {
                        initialized += count
                    } else if count == 0 {
                        reachedEnd = true
                        return
                    } else if errno != EINTR {
                        failed = true
                        return
                    }
                }
            }
            if failed { return nil }
            if bytes.isEmpty { bytes = chunk } else { bytes += chunk }
            if reachedEnd { return bytes }
            capacity = max(capacity, 1 << 16)
        }
    }
}

/// read(2), which ``FileBytes/read(_:)`` would otherwise shadow.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
