import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's standard streams, read and written with read(2) and write(2): Foundation's `FileHandle` is
/// Foundation proper, and one use of it links ICU's 34 MB of data into `forge` (issue 41).
public enum StandardStream: Sendable {
    case input, output, error

    private var descriptor: Int32 {
        switch self {
        case .input: 0
        case .output: 1
        case .error: 2
        }
    }

    /// Writes every byte; stops at the first failure (a closed pipe, a full disk), as a diagnostic must never trap
    /// the process that writes it.
    public func write(_ bytes: some Collection<UInt8>) {
        _ = writeAll(descriptor, bytes)
    }

    /// Writes `text` as UTF-8.
    public func write(_ text: String) {
        write(text.utf8)
    }

    /// Up to `limit` bytes, fewer only at the end of the stream; nil when a read fails.
    public func read(upTo limit: Int) -> [UInt8]? {
        readBytes(descriptor, upTo: limit, whole: true)
    }
}

/// A descriptor this process owns (the end of a pipe to a child), read or written by one thread at a time and
/// closed once: by ``close()`` or when the last reference goes. Foundation's `FileHandle` is Foundation proper,
/// see ``StandardStream``.
public final class OwnedDescriptor: Sendable {
    public let descriptor: Int32
    private let closed = Atomic<Bool>(false)

    public init(_ descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close() }

    /// Some bytes, at most `limit`, as soon as there are any: empty at the end, nil when the read fails.
    public func readAvailable(upTo limit: Int = 1 << 16) -> [UInt8]? {
        readBytes(descriptor, upTo: limit, whole: false)
    }

    /// Writes every byte; false at the first failure (EPIPE when the reader is gone).
    public func write(_ bytes: some Collection<UInt8>) -> Bool {
        writeAll(descriptor, bytes)
    }

    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { _ = systemClose(descriptor) }
    }
}

/// write(2) until every byte is written, resuming after a signal and a partial write.
private func writeAll(_ descriptor: Int32, _ bytes: some Collection<UInt8>) -> Bool {
    func write(buffer: UnsafeRawBufferPointer) -> Bool {
        guard var base = buffer.baseAddress else { return true }
        var left = buffer.count
        while left > 0 {
            let count = systemWrite(descriptor, base, left)
            if count > 0 {
                base += count
                left -= count
            } else if !(count < 0 && errno == EINTR) {
                return false
            }
        }
        return true
    }
    return bytes.withContiguousStorageIfAvailable { write(buffer: UnsafeRawBufferPointer($0)) } ?? Array(bytes).withUnsafeBytes { write(buffer: $0) }
}

/// read(2) into a buffer of `limit` bytes: until it is full or the end (`whole`), or once something came.
private func readBytes(_ descriptor: Int32, upTo limit: Int, whole: Bool) -> [UInt8]? {
    var failed = false
    let bytes = [UInt8](unsafeUninitializedCapacity: max(limit, 0)) { buffer, initialized in
        guard let base = buffer.baseAddress else { return }
        while initialized < buffer.count {
            let count = systemRead(descriptor, base + initialized, buffer.count - initialized)
            if count > 0 {
                initialized += count
                if !whole { return }
            } else if count == 0 {
                return
            } else if errno != EINTR {
                failed = true
                return
            }
        }
    }
    return failed ? nil : bytes
}

/// read(2), write(2) and close(2), which the methods of the same names would otherwise shadow.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
