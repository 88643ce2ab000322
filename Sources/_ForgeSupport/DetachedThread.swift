import CForgeSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A thread of its own for work that blocks (a read, a worker's wait), started with pthreads: Foundation's
/// `Thread` is Foundation proper, which links ICU's 34 MB of data into `forge` (issue 41).
public enum DetachedThread {
    /// Runs `body` on a new detached thread named `name` (cut to the 15 bytes Linux keeps), with `stackSize` bytes
    /// of stack, or the system's default when nil. False when the system refuses a thread (then `body` never runs).
    @discardableResult
    public static func start(name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        guard pthread_attr_init(&attributes) == 0 else { return false }
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN))) }
        let context = Unmanaged.passRetained(Context(name: name, body: body)).toOpaque()
        #if canImport(Darwin)
            var thread: pthread_t?
        #else
            var thread = pthread_t()
        #endif
        guard
            pthread_create(
                &thread, &attributes,
                { raw in
                    guard let raw else { return nil }
                    let context = Unmanaged<Context>.fromOpaque(raw).takeRetainedValue()
                    context.nameThread()
                    context.body()
                    return nil
                }, context) == 0
        else {
            Unmanaged<Context>.fromOpaque(context).release()
            return false
        }
        return true
    }

    private final class Context {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }

        /// Names the calling thread (`ps -L`, debuggers).
        func nameThread() { _ = forge_name_thread(name) }
    }
}

/// A mutex and its condition variable, as Foundation's `NSCondition` (Foundation proper, see ``DetachedThread``):
/// `lock`, `wait` (which unlocks while it waits), `signal`, `broadcast`, `unlock`.
public final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Called locked; returns locked, after a `signal` or `broadcast` (or spuriously: wait in a loop on the state).
    public func wait() { pthread_cond_wait(condition, mutex) }
    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }
}
