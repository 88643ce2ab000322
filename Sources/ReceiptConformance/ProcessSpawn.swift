#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Starts harness processes with `posix_spawn`, so that what the runner's own thread blocks or ignores does
/// not reach them: Foundation's `Process` hands its caller's signal mask on, and a harness started from a
/// Dispatch thread would run with SIGTERM, SIGINT, SIGHUP, SIGALRM and SIGCHLD blocked (its `timeout` and
/// `alarm` never firing), and with the runner's ignored SIGPIPE, SIGINT, SIGTERM and SIGHUP ignored.
///
/// A harness starts with an empty signal mask, every signal at its default action, as the leader of a new
/// process group, with three fresh pipes as its stdin, stdout and stderr and no other descriptor of the
/// runner's. Every return code is checked; the attribute and file-action objects are made and destroyed
/// by `spawn` alone.
enum ProcessSpawn {
    /// A started process and the runner's ends of its pipes.
    struct Started: Sendable {
        let pid: pid_t
        let stdin: OwnedDescriptor
        let stdout: OwnedDescriptor
        let stderr: OwnedDescriptor
    }

    /// Starts `arguments` (the first is an absolute path) with `environment`. `name` is for error messages.
    /// Callers serialize starts (`HarnessProcesses.live`), so a pipe being made is never handed to another child.
    static func start(_ arguments: [String], environment: [String: String], name: String) throws(HarnessStartError) -> Started {
        var opened: [Int32] = []
        do throws(HarnessStartError) {
            let input = try pipe(name, &opened)
            let output = try pipe(name, &opened)
            let errors = try pipe(name, &opened)
            let pid = try spawn(arguments, environment: environment, stdin: input.read, stdout: output.write, stderr: errors.write, name: name)
            for child in [input.read, output.write, errors.write] { _ = close(child) }
            return Started(
                pid: pid, stdin: OwnedDescriptor(input.write), stdout: OwnedDescriptor(output.read), stderr: OwnedDescriptor(errors.read))
        } catch {
            for descriptor in opened { _ = close(descriptor) }
            throw error
        }
    }

    /// A pipe whose ends are close-on-exec and above 2 (so that moving them to 0, 1 and 2 in the child
    /// cannot overwrite one another, even if the runner was started with a standard stream closed).
    private static func pipe(_ name: String, _ opened: inout [Int32]) throws(HarnessStartError) -> (read: Int32, write: Int32) {
        var ends: (Int32, Int32) = (-1, -1)
        let made = withUnsafeMutableBytes(of: &ends) { raw in
            raw.withMemoryRebound(to: Int32.self) { systemPipe($0.baseAddress) }
        }
        guard made == 0 else { throw failure(name, "pipe", errno) }
        var moved: [Int32] = []
        for end in [ends.0, ends.1] {
            let high = fcntl(end, F_DUPFD_CLOEXEC, 3)
            let error = errno
            _ = close(end)
            guard high >= 0 else {
                for descriptor in moved { _ = close(descriptor) }
                throw failure(name, "fcntl(F_DUPFD_CLOEXEC)", error)
            }
            moved.append(high)
        }
        opened += moved
        return (moved[0], moved[1])
    }

    private static func spawn(
        _ arguments: [String], environment: [String: String], stdin: Int32, stdout: Int32, stderr: Int32, name: String
    ) throws(HarnessStartError) -> pid_t {
        #if canImport(Darwin)
            var attributes: posix_spawnattr_t? = nil
            var actions: posix_spawn_file_actions_t? = nil
        #else
            var attributes = posix_spawnattr_t()
            var actions = posix_spawn_file_actions_t()
        #endif
        try check(posix_spawnattr_init(&attributes), "posix_spawnattr_init", name)
        defer { _ = posix_spawnattr_destroy(&attributes) }
        try check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init", name)
        defer { _ = posix_spawn_file_actions_destroy(&actions) }

        var flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        #if canImport(Darwin)
            flags |= POSIX_SPAWN_CLOEXEC_DEFAULT  // no descriptor but 0, 1 and 2 reaches the child
        #endif
        guard let shortFlags = Int16(exactly: flags) else { throw HarnessStartError(description: "cannot start \(name): spawn flags \(flags)") }
        try check(posix_spawnattr_setflags(&attributes, shortFlags), "posix_spawnattr_setflags", name)
        try check(posix_spawnattr_setpgroup(&attributes, 0), "posix_spawnattr_setpgroup", name)
        var none = sigset_t()
        try check(sigemptyset(&none) == 0 ? 0 : errno, "sigemptyset", name)
        try check(posix_spawnattr_setsigmask(&attributes, &none), "posix_spawnattr_setsigmask", name)
        var all = sigset_t()
        try check(sigfillset(&all) == 0 ? 0 : errno, "sigfillset", name)
        #if os(Linux)
            // glibc's sigfillset leaves out the two real-time signals it keeps for itself (32 and 33), and its
            // posix_spawn sets whatever is not in this set to SIG_IGN in the child, which exec keeps: every harness
            // would start with them ignored. Their bits, set by hand (bits 31 and 32 of the set's first word).
            withUnsafeMutableBytes(of: &all) { raw in
                raw.storeBytes(of: raw.load(as: UInt64.self) | 1 << 31 | 1 << 32, as: UInt64.self)
            }
        #endif
        try check(posix_spawnattr_setsigdefault(&attributes, &all), "posix_spawnattr_setsigdefault", name)

        for (from, to) in [(stdin, STDIN_FILENO), (stdout, STDOUT_FILENO), (stderr, STDERR_FILENO)] {
            try check(posix_spawn_file_actions_adddup2(&actions, from, to), "posix_spawn_file_actions_adddup2", name)
        }
        #if !canImport(Darwin)
            // Descriptors the runner inherited without close-on-exec stay out of the harness too (glibc ≥ 2.34;
            // looked up at run time, as the Glibc module does not declare it).
            if let closeFrom = closeFrom {
                try check(closeFrom(&actions, 3), "posix_spawn_file_actions_addclosefrom_np", name)
            }
        #endif

        let argv = CStrings(arguments)
        defer { argv.release() }
        let envp = CStrings(environment.map { "\($0.key)=\($0.value)" })
        defer { envp.release() }
        guard argv.complete, envp.complete, let path = arguments.first else {
            throw HarnessStartError(description: "cannot start \(name): out of memory for its arguments")
        }
        var pid: pid_t = 0
        try check(posix_spawn(&pid, path, &actions, &attributes, argv.pointers, envp.pointers), "posix_spawn", name)
        return pid
    }

    #if !canImport(Darwin)
        private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
        private static let closeFrom: CloseFrom? = {
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
            return unsafeBitCast(symbol, to: CloseFrom.self)
        }()
    #endif

    /// `pipe(2)`, which the enum's own `pipe` hides.
    private static func systemPipe(_ ends: UnsafeMutablePointer<Int32>?) -> Int32 {
        #if canImport(Glibc)
            Glibc.pipe(ends)
        #else
            Darwin.pipe(ends)
        #endif
    }

    /// posix_spawn's functions return an error number (0 for success) rather than setting errno.
    private static func check(_ code: Int32, _ call: String, _ name: String) throws(HarnessStartError) {
        guard code != 0 else { return }
        throw failure(name, call, code)
    }

    private static func failure(_ name: String, _ call: String, _ code: Int32) -> HarnessStartError {
        HarnessStartError(description: "cannot start \(name): \(call): \(String(cString: strerror(code)))")
    }
}

/// NUL-terminated copies of strings with a final null pointer, as `argv` and `envp`; `release` frees them.
private struct CStrings {
    let pointers: [UnsafeMutablePointer<CChar>?]
    /// False when a copy could not be allocated.
    let complete: Bool

    init(_ strings: [String]) {
        let copies = strings.map { strdup($0) }
        pointers = copies + [nil]
        complete = !copies.contains(nil)
    }

    func release() {
        for pointer in pointers { free(pointer) }
    }
}
