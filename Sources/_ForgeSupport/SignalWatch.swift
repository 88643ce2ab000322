import CForgeSystem
public import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Signals seen from the moment ``init(_:queue:handler:)`` returns, each calling `handler` on `queue` (where it
/// may lock and write, as no signal handler may): a handler installed with sigaction writes the signal's number
/// to a pipe, and one dispatch read source of the process hands it to every watch of that signal.
///
/// Dispatch's own signal sources arm later, on their manager thread, after the signal was set to be ignored: a
/// signal in between was lost, and `forge serve` started by a test, asked to stop at once, did not (about one
/// start in fifty, found in issue 22's review).
public final class SignalWatch: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String { "cannot watch for signals: \(String(cString: strerror(errno)))" }
    }

    private struct Watcher {
        let signals: Set<Int32>
        let queue: DispatchQueue
        let handler: @Sendable (Int32) -> Void
    }

    /// Every watch in force, and the one read source of the signal pipe.
    private struct Hub {
        var watchers: [ObjectIdentifier: Watcher] = [:]
        var source: (any DispatchSourceRead)?
    }
    private static let hub = Mutex(Hub())

    private let signals: [Int32]

    public init(_ signals: [Int32], queue: DispatchQueue, handler: @escaping @Sendable (Int32) -> Void) throws(Failure) {
        self.signals = signals
        let watcher = Watcher(signals: Set(signals), queue: queue, handler: handler)
        let identifier = ObjectIdentifier(self)
        try Self.hub.withLock { (hub) throws(Failure) in
            let descriptor = signals.withUnsafeBufferPointer { forge_signals_to_pipe($0.baseAddress, Int32($0.count)) }
            guard descriptor >= 0 else { throw Failure(errno: errno) }
            hub.watchers[identifier] = watcher
            if hub.source == nil {
                let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: DispatchQueue(label: "forge.signals"))
                source.setEventHandler { Self.deliver(from: descriptor) }
                source.resume()
                hub.source = source
            }
        }
    }

    /// Stops watching; a signal no other watch wants gets its default action back.
    public func cancel() {
        let identifier = ObjectIdentifier(self)
        Self.hub.withLock { hub in
            guard hub.watchers.removeValue(forKey: identifier) != nil else { return }
            let watched = hub.watchers.values.reduce(into: Set<Int32>()) { $0.formUnion($1.signals) }
            let released = signals.filter { !watched.contains($0) }
            _ = released.withUnsafeBufferPointer { forge_signals_default($0.baseAddress, Int32($0.count)) }
        }
    }

    /// Reads every signal number waiting in the pipe and hands each to the watches of that signal.
    private static func deliver(from descriptor: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            for byte in bytes.prefix(count) {
                let number = Int32(byte)
                let watchers = hub.withLock { $0.watchers.values.filter { $0.signals.contains(number) } }
                for watcher in watchers { watcher.queue.async { watcher.handler(number) } }
            }
        }
    }
}
