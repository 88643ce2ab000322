#if os(Linux)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport

/// Where the corpus (`Vectors/`) is, so tools and Swift dependents find it without configuration.
public struct CorpusLocation: Sendable {
    /// The vectors directory, holding `manifest.json`.
    public let vectors: URL

    public init(vectors: URL) {
        self.vectors = vectors
    }

    /// The environment variable naming the vectors directory.
    public static let environmentVariable = "RECEIPT_FORGE_VECTORS"

    /// This source file's `#filePath`, captured here rather than at the call site so a Swift dependent
    /// calling `resolve` with the default finds this package's checkout, not its own sources.
    public static var librarySourceFile: String { #filePath }

    /// This process's executable, symlinks resolved: a release unpacks as `bin/forge` beside `Vectors/`. On Linux
    /// read from /proc, as Foundation's `Bundle` does: Bundle is Foundation proper, which links ICU (issue 41).
    public static var mainExecutable: URL? {
        #if os(Linux)
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
            Bundle.main.executableURL?.resolvingSymlinksInPath()
        #endif
    }

    /// Picks the first of: the explicit path; `RECEIPT_FORGE_VECTORS`; `./Vectors` if it exists; the
    /// release's `Vectors/`, beside the `bin/` holding `executable`; the package's own `Vectors/`, two
    /// directories above `Sources/ReceiptCorpus/` (derived from `filePath`). The release's comes before the
    /// package's because a binary copied off its build machine must not read that machine's checkout.
    /// Relative paths are taken from `currentDirectory`. An explicit path or a set variable that names no
    /// directory is `.notFound` rather than falling through: the caller asked for that corpus.
    public static func resolve(
        explicit: String?, environment: [String: String], currentDirectory: URL, executable: URL? = mainExecutable,
        filePath: String = librarySourceFile
    ) throws(CorpusError) -> CorpusLocation {
        if let explicit, !explicit.isEmpty {
            return try existing(explicit, relativeTo: currentDirectory, source: "explicit path")
        }
        if let variable = environment[environmentVariable], !variable.isEmpty {
            return try existing(variable, relativeTo: currentDirectory, source: environmentVariable)
        }
        let local = currentDirectory.appendingPathComponent("Vectors", isDirectory: true)
        if isDirectory(local) {
            return CorpusLocation(vectors: local.standardizedFileURL)
        }
        // <release>/bin/forge → <release>/Vectors
        if let executable {
            let released = executable.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Vectors", isDirectory: true)
            if isDirectory(released) { return CorpusLocation(vectors: released.standardizedFileURL) }
        }
        // <package>/Sources/ReceiptCorpus/<file>.swift → <package>/Vectors
        let packageRoot = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let bundled = packageRoot.appendingPathComponent("Vectors", isDirectory: true)
        guard isDirectory(bundled) else {
            throw CorpusError(
                .notFound,
                "no corpus: pass a path, set \(environmentVariable), or run where ./Vectors exists (also looked beside the executable's folder and in \(bundled.path))")
        }
        return CorpusLocation(vectors: bundled.standardizedFileURL)
    }

    private static func existing(_ path: String, relativeTo base: URL, source: String) throws(CorpusError) -> CorpusLocation {
        let url = URL(fileURLWithPath: path, isDirectory: true, relativeTo: base).standardizedFileURL
        guard isDirectory(url) else {
            throw CorpusError(.notFound, "\(source) \(path) is not a directory")
        }
        return CorpusLocation(vectors: url)
    }

    private static func isDirectory(_ url: URL) -> Bool {
        FileBytes.status(url.path)?.isDirectory == true
    }
}
