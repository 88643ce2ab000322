#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `forge serve --exit-with-parent`: the process sends itself `signal` once the process that started it is gone —
/// exited, killed or crashed — with no pipe for that parent to hold (a shell's `&`, a test runner whose child inherits
/// its stdio). A thread of its own compares `getppid()` with the parent seen at the start every ``pollMilliseconds``:
/// a new parent is an adoption (by init or a subreaper), so the old one is gone.
///
/// Not Linux's `prctl(PR_SET_PDEATHSIG)`: its signal follows the *thread* that started the process, so a server
/// started from a worker thread (a thread pool of the test runner) would stop when that thread ends, its process
/// alive; the check here follows the process, on every platform, for one system call every 200 ms. A parent that died
/// before this process started its watch is not seen: the watch starts before the server listens, so that parent never
/// saw it ready.
public enum ParentWatch {
    public static let pollMilliseconds: Int32 = 200

    public static func signalWhenGone(_ signal: Int32) {
        let parent = getppid()
        // No parent to outlive: the first process of a container's namespace. (A parent of pid 1 is watched like any
        // other: a container's init may be the parent.)
        guard parent > 0 else { return }
        DetachedThread.start(name: "forge.parent-watch") {
            while getppid() == parent { _ = poll(nil, 0, pollMilliseconds) }
            kill(getpid(), signal)
        }
    }
}
