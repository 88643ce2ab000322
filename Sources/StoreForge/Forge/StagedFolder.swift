public import StoreModel
import CForgeSystem
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import Synchronization
import _ForgeSupport
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A folder of output written whole (DESIGN §8: all or nothing; never delete a file you did not write).
///
/// Files go into a staging sibling of the target (`.NAME.forge-staging-PID`). ``commit()`` swaps it in with one
/// atomic exchange, so a reader or an interrupt sees the old folder or the new one, never a mix; a failure or
/// ``discard()`` removes the staging folder and leaves the target as it was. The target must be new, empty or
/// hold only files an earlier run wrote (the caller names them from that run's manifest or index) and files
/// carried over untouched (`kept`, e.g. a README of the user's): anything else refuses before any work,
/// naming the entry. Of the previous folder only those files are removed, unless the user asked for the folder to be
/// replaced whole (``init(replacingWhole:)``, `forge make --count --force`).
public final class StagedFolder: Sendable {
    public let target: URL
    public let staging: URL
    private let carried: [String]
    private let owned: Set<String>
    /// Whether the previous folder goes whole at commit (``init(replacingWhole:)``), the user's files too.
    private let whole: Bool
    private let state = Mutex(State.staging)

    private enum State { case staging, committed, discarded }

    /// Surveys `target` and creates the staging folder. `owned` reads the files of an earlier run from the
    /// target (called only when it holds something); paths outside the folder are never owned.
    public convenience init(replacing target: URL, kept: Set<String> = [], owned: (URL) throws(ForgeError) -> Set<String>) throws(ForgeError) {
        try self.init(target, kept: kept, whole: false, owned: owned)
    }

    /// Replaces `target` whole, whatever it holds: only when the user said so (`forge make --count --force`). Its
    /// previous content is removed once the new folder is in place; a file where the folder should be still refuses.
    public convenience init(replacingWhole target: URL) throws(ForgeError) {
        try self.init(target, kept: [], whole: true) { _ throws(ForgeError) in [] }
    }

    private init(_ target: URL, kept: Set<String>, whole: Bool, owned: (URL) throws(ForgeError) -> Set<String>) throws(ForgeError) {
        let target = target.standardizedFileURL.resolvingSymlinksInPath()
        self.target = target
        self.whole = whole
        let holdsSomething = try Self.holdsSomething(target)
        var owned: Set<String> = holdsSomething ? try owned(target).filter(Self.isInside) : []
        owned.subtract(kept)
        self.owned = owned
        carried = kept.filter { name in
            var status = stat()
            return lstat(target.appendingPathComponent(name).path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
        }.sorted()
        let ancestors = Set(owned.union(carried).flatMap(Self.ancestors))
        let foreign =
            try !holdsSomething || whole
            ? nil
            : Self.firstEntry(in: target) { path, isDirectory in
                isDirectory ? !ancestors.contains(path) : !owned.contains(path) && !kept.contains(path)
            }
        if let (path, isDirectory) = foreign {
            throw ForgeError(
                .wouldOverwrite,
                "refusing to write into \(target.path): it holds \(path)\(isDirectory ? "/" : ""), which forge did not write there "
                    + "(give a new or empty folder, or one an earlier run of this command wrote); nothing was changed")
        }
        let parent = target.deletingLastPathComponent()
        var candidate = parent.appendingPathComponent(".\(target.lastPathComponent).forge-staging-\(getpid())")
        var attempt = 1
        while mkdir(candidate.path, 0o755) != 0 {
            guard errno == EEXIST, attempt < 100 else {
                throw PlainFile.failure("cannot create a staging folder beside \(target.path) (\(candidate.path))")
            }
            attempt += 1
            candidate = parent.appendingPathComponent(".\(target.lastPathComponent).forge-staging-\(getpid())-\(attempt)")
        }
        staging = candidate
    }

    /// Writes one file of the new folder (`relative`: a path inside it; folders are created as needed).
    /// Safe from several threads; refused once the folder is committed or discarded.
    public func write(_ data: Data, to relative: String) throws(ForgeError) {
        guard Self.isInside(relative) else { throw ForgeError(.ioFailed, "\(relative) is not a path inside the output folder") }
        try state.withLock { state throws(ForgeError) in
            guard state == .staging else { throw ForgeError(.ioFailed, "the output folder \(target.path) is no longer being written") }
            let url = staging.appendingPathComponent(relative)
            for folder in Self.ancestors(of: relative) where mkdir(staging.appendingPathComponent(folder).path, 0o755) != 0 && errno != EEXIST {
                throw PlainFile.failure("cannot create \(target.appendingPathComponent(folder).path)")
            }
            try PlainFile.write(data, to: url, reportedAs: target.appendingPathComponent(relative))
        }
    }

    /// Swaps the staged folder in and removes the previous folder's owned files. Returns the path of anything
    /// that appeared in the old folder while this ran (left where it is, beside the target), or nil.
    public func commit() throws(ForgeError) -> URL? {
        try state.withLock { state throws(ForgeError) -> URL? in
            guard state == .staging else { throw ForgeError(.ioFailed, "the output folder \(target.path) was already committed or discarded") }
            var status = stat()
            guard lstat(target.path, &status) == 0 else {
                guard errno == ENOENT else { throw PlainFile.failure("cannot read \(target.path)") }
                guard rename(staging.path, target.path) == 0 else { throw PlainFile.failure("cannot move the new folder into place at \(target.path)") }
                state = .committed
                return nil
            }
            for name in carried {
                guard let data = FileManager.default.contents(atPath: target.appendingPathComponent(name).path) else {
                    throw ForgeError(.ioFailed, "cannot read \(target.appendingPathComponent(name).path) to carry it over")
                }
                try PlainFile.write(data, to: staging.appendingPathComponent(name), reportedAs: target.appendingPathComponent(name))
            }
            _ = chmod(staging.path, status.st_mode & 0o7777)
            let previous = try swapIn()
            state = .committed
            if whole { return (try? FileManager.default.removeItem(at: previous)) == nil ? previous : nil }
            for file in owned.union(carried) { _ = unlink(previous.appendingPathComponent(file).path) }
            for folder in Set(owned.union(carried).flatMap(Self.ancestors)).sorted(by: { $0.count > $1.count }) {
                _ = rmdir(previous.appendingPathComponent(folder).path)
            }
            return rmdir(previous.path) == 0 ? nil : previous
        }
    }

    /// Removes the staging folder (all of it was written here) unless it was committed; false when it was. For
    /// failures and interrupts; safe from any thread, and waits for a write or commit under way.
    @discardableResult
    public func discard() -> Bool {
        state.withLock { state in
            guard state != .committed else { return false }
            if state == .staging { try? FileManager.default.removeItem(at: staging) }
            state = .discarded
            return true
        }
    }

    /// Puts the staging folder at the target's path; returns where the previous folder now is.
    private func swapIn() throws(ForgeError) -> URL {
        if forge_exchange_paths(staging.path, target.path) == 0 { return staging }
        guard errno == EINVAL || errno == ENOSYS || errno == ENOTSUP else { throw PlainFile.failure("cannot swap the new folder into \(target.path)") }
        // A file system without exchange: two renames, with a moment at which the target is absent.
        let previous = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).forge-previous-\(getpid())")
        guard rename(target.path, previous.path) == 0 else { throw PlainFile.failure("cannot move \(target.path) aside") }
        guard rename(staging.path, target.path) == 0 else {
            let error = PlainFile.failure("cannot move the new folder into place at \(target.path)")
            _ = rename(previous.path, target.path)
            throw error
        }
        return previous
    }

    /// Whether `target` is a folder with anything in it; false when it does not exist; a file refuses.
    private static func holdsSomething(_ target: URL) throws(ForgeError) -> Bool {
        var status = stat()
        guard lstat(target.path, &status) == 0 else {
            guard errno == ENOENT else { throw PlainFile.failure("cannot read \(target.path)") }
            return false
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw ForgeError(.wouldOverwrite, "refusing to write into \(target.path): it is a file, not a folder; nothing was changed")
        }
        return try firstEntry(in: target) { _, _ in true } != nil
    }

    /// The first entry below `target` (hidden ones too; links not followed; each folder's entries in name order
    /// before its subfolders') that `matches`: the walk stops there, so a large folder of the user's is refused at once.
    private static func firstEntry(in target: URL, where matches: (_ path: String, _ isDirectory: Bool) -> Bool) throws(ForgeError) -> (String, Bool)? {
        var pending = [""]
        while let relative = pending.popLast() {
            let folder = relative.isEmpty ? target.path : target.path + "/" + relative
            let names = try Folder.names(in: folder).sorted()
            var subfolders: [String] = []
            for name in names {
                let path = relative.isEmpty ? name : relative + "/" + name
                var status = stat()
                let isDirectory = lstat(target.path + "/" + path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
                if matches(path, isDirectory) { return (path, isDirectory) }
                if isDirectory { subfolders.append(path) }
            }
            pending += subfolders.reversed()
        }
        return nil
    }

    /// A relative path that stays inside the folder: no empty, `.` or `..` component, not absolute.
    static func isInside(_ relative: String) -> Bool {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        return !relative.hasPrefix("/") && !parts.isEmpty && parts.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }

    /// `a/b/c.der` → `a`, `a/b`.
    static func ancestors(of relative: String) -> [String] {
        let parts = relative.split(separator: "/")
        return parts.indices.dropLast().map { parts[...$0].joined(separator: "/") }
    }
}

/// Where an interrupt meets a staged folder (DESIGN §8): the folder is made under the lock the interrupt takes, so
/// a signal that lands while it is being made either finds it (and discards it) or comes first (and it is never
/// made). Without that, a signal during the work before the folder exists ends the process while the main thread
/// goes on to create the staging folder, which the exit then leaves behind.
public final class StagingSlot: Sendable {
    private enum State { case open(StagedFolder?), stopped }
    private let state = Mutex(State.open(nil))

    public init() {}

    /// Makes the staged folder with `make`, unless ``stop()`` came first: then nothing is made and this throws.
    public func stage(_ make: () throws(ForgeError) -> StagedFolder) throws(ForgeError) -> StagedFolder {
        try state.withLock { state throws(ForgeError) -> StagedFolder in
            guard case .open = state else { throw ForgeError(.ioFailed, "interrupted before the output folder was made; nothing was written") }
            let folder = try make()
            state = .open(folder)
            return folder
        }
    }

    /// For an interrupt: discards the folder made so far and refuses to make one later. Nil when none was made,
    /// false when it was already committed (the output is complete), true when it was discarded.
    public func stop() -> Bool? {
        state.withLock { state in
            defer { state = .stopped }
            guard case .open(let folder?) = state else { return nil }
            return folder.discard()
        }
    }
}
