public import Foundation
public import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An independent program a test judges forge by (openssl, Python and its libraries, Apple's own library), or a
/// resource it reads (the real receipts): found once, and named with what installs it. A test that needs one says
/// `@Test(.requires(.appleLibrary))`, so that without it the test is skipped and says why, never passes unjudged.
public struct Oracle: Sendable, CustomStringConvertible {
    public let name: String
    /// The program to run, or the folder to read; nil when it is absent.
    public let location: URL?
    /// What installs it, said when it is absent.
    public let installedBy: String

    public var isAvailable: Bool { location != nil }
    public var description: String { name }

    /// The program or folder, or a thrown error naming what is missing (for a test that knows it is available).
    public func required() throws -> URL {
        guard let location else { throw Missing(oracle: self) }
        return location
    }

    public struct Missing: Error, CustomStringConvertible {
        public let oracle: Oracle
        public var description: String { "\(oracle.name) is absent: \(oracle.installedBy)" }
    }

    /// A program on `PATH` (or in the usual system folders).
    public static func tool(_ name: String, installedBy: String) -> Oracle {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/local/bin"]
        let found = folders.lazy.map { URL(fileURLWithPath: $0).appendingPathComponent(name) }.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return Oracle(name: name, location: found, installedBy: installedBy)
    }

    /// The Python of one of the venvs `.ci/run` makes under `.oracles/` (`scripts/known-results.sh --install-only`).
    public static func venv(_ folder: String, _ name: String) -> Oracle {
        let python = Repository.file(".oracles/\(folder)/bin/python")
        return Oracle(
            name: name, location: FileManager.default.isExecutableFile(atPath: python.path) ? python : nil,
            installedBy: ".ci/run installs it into .oracles/\(folder) (scripts/known-results.sh --install-only .oracles)")
    }

    public static let openssl = tool("openssl", installedBy: "apt-get install openssl")
    public static let python = tool("python3", installedBy: "apt-get install python3")
    public static let sqlite3 = tool("sqlite3", installedBy: "apt-get install sqlite3")
    public static let script = tool("script", installedBy: "apt-get install bsdutils")
    /// Apple's `app-store-server-library` (with httpx for its async client) and Python's `cryptography`.
    public static let appleLibrary = venv("asl", "Apple's app-store-server-library")
    /// Python's `requests`, the client of the verifyReceipt examples.
    public static let requests = venv("requests", "Python's requests")
    /// Python's `jsonschema`, the oracle of the schema validator.
    public static let jsonschema = venv("jsonschema", "Python's jsonschema")

    /// `../shared/interop`: the real receipts, present on the project's machines only.
    public static let interop = Oracle(
        name: "../shared/interop (real receipts)",
        location: FileManager.default.fileExists(atPath: Repository.interop.appendingPathComponent("receipts").path) ? Repository.interop : nil,
        installedBy: "it is kept beside the checkout on the project's machines, not in the repository")

    /// Root, for what only root may do (`mknod` of a device the test makes in its own folder).
    public static let root = Oracle(
        name: "root", location: geteuid() == 0 ? URL(fileURLWithPath: "/") : nil, installedBy: "run the tests as root (CI does) to make device nodes")
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when every oracle is there; otherwise it is skipped, and the skip names what is missing
    /// and what installs it.
    public static func requires(_ oracles: Oracle...) -> Self {
        let missing = oracles.filter { !$0.isAvailable }
        let reason = missing.map { "\($0.name) is absent: \($0.installedBy)" }.joined(separator: "; ")
        return .enabled(if: missing.isEmpty, Comment(rawValue: reason))
    }
}
