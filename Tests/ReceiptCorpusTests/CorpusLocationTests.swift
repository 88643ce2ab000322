import Foundation
import ReceiptCorpus
import Testing
import _ForgeSupport

/// Each test gets its own tree: explicit/, env/, cwd/Vectors/, an unpacked release (release/bin/forge beside
/// release/Vectors/), and a fake package checkout whose Sources/ReceiptCorpus/CorpusLocation.swift stands in
/// for `#filePath`.
@Suite(.timeLimit(.minutes(2)))
struct CorpusLocationTests {
    private let tree: TemporaryDirectory
    private let explicit: URL
    private let fromEnvironment: URL
    private let workingDirectory: URL
    private let packageVectors: URL
    private let releaseVectors: URL
    private let releaseExecutable: URL
    private let fakeSourceFile: String

    init() throws {
        tree = try TemporaryDirectory("location")
        let root = tree.url
        explicit = root.appendingPathComponent("explicit", isDirectory: true)
        fromEnvironment = root.appendingPathComponent("env", isDirectory: true)
        workingDirectory = root.appendingPathComponent("cwd", isDirectory: true)
        packageVectors = root.appendingPathComponent("package/Vectors", isDirectory: true)
        releaseVectors = root.appendingPathComponent("release/Vectors", isDirectory: true)
        releaseExecutable = root.appendingPathComponent("release/bin/forge")
        fakeSourceFile = root.appendingPathComponent("package/Sources/ReceiptCorpus/CorpusLocation.swift").path
        for directory in [explicit, fromEnvironment, workingDirectory.appendingPathComponent("Vectors"), packageVectors, releaseVectors] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
    }

    private func resolve(explicit: String?, environment: [String: String], executable: URL? = nil) throws -> URL {
        try CorpusLocation.resolve(
            explicit: explicit, environment: environment, currentDirectory: workingDirectory, executable: executable,
            filePath: fakeSourceFile
        ).vectors
    }

    private func expectSame(_ actual: URL, _ expected: URL, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(actual.standardizedFileURL.path == expected.standardizedFileURL.path, sourceLocation: sourceLocation)
    }

    private var environment: [String: String] { [CorpusLocation.environmentVariable: fromEnvironment.path] }

    @Test func explicitPathWins() throws {
        expectSame(try resolve(explicit: explicit.path, environment: environment), explicit)
    }

    @Test func relativeExplicitPathIsFromCurrentDirectory() throws {
        expectSame(try resolve(explicit: "../explicit", environment: environment), explicit)
    }

    @Test func environmentBeatsWorkingDirectory() throws {
        expectSame(try resolve(explicit: nil, environment: environment), fromEnvironment)
        expectSame(try resolve(explicit: "", environment: environment), fromEnvironment)
    }

    @Test func workingDirectoryVectorsBeatPackage() throws {
        expectSame(try resolve(explicit: nil, environment: [:]), workingDirectory.appendingPathComponent("Vectors"))
        expectSame(
            try resolve(explicit: nil, environment: [CorpusLocation.environmentVariable: ""]),
            workingDirectory.appendingPathComponent("Vectors"))
    }

    @Test func packageVectorsFromFilePathLast() throws {
        try FileManager.default.removeItem(at: workingDirectory.appendingPathComponent("Vectors"))
        expectSame(try resolve(explicit: nil, environment: [:]), packageVectors)
    }

    /// A release binary copied off its build machine reads its own corpus, never the checkout it was built in.
    @Test func releaseVectorsBesideTheExecutableBeatThePackage() throws {
        expectSame(try resolve(explicit: nil, environment: [:], executable: releaseExecutable), workingDirectory.appendingPathComponent("Vectors"))
        try FileManager.default.removeItem(at: workingDirectory.appendingPathComponent("Vectors"))
        expectSame(try resolve(explicit: nil, environment: [:], executable: releaseExecutable), releaseVectors)
        let elsewhere = tree.url.appendingPathComponent("bin/forge")
        expectSame(try resolve(explicit: nil, environment: [:], executable: elsewhere), packageVectors)
    }

    @Test func missingExplicitOrEnvironmentDirectoryDoesNotFallThrough() throws {
        for (explicitPath, environment) in [
            (tree.url.appendingPathComponent("absent").path, environment),
            (nil, [CorpusLocation.environmentVariable: "/nonexistent/vectors"]),
        ] {
            do {
                _ = try CorpusLocation.resolve(
                    explicit: explicitPath, environment: environment, currentDirectory: workingDirectory,
                    executable: releaseExecutable, filePath: fakeSourceFile)
                Issue.record("resolved a directory that does not exist")
            } catch {
                #expect(error.code == .notFound)
            }
        }
    }

    @Test func nothingFoundIsNotFound() throws {
        try FileManager.default.removeItem(at: workingDirectory.appendingPathComponent("Vectors"))
        try FileManager.default.removeItem(at: packageVectors)
        #expect(throws: CorpusError(.notFound, "")) {
            try CorpusLocation.resolve(
                explicit: nil, environment: [:], currentDirectory: workingDirectory, executable: nil, filePath: fakeSourceFile)
        }
    }

    /// The default `filePath` is the library's own source (not the caller's), in Sources/ReceiptCorpus/.
    @Test func defaultFilePathIsTheLibrarySource() {
        #expect(CorpusLocation.librarySourceFile.hasSuffix("Sources/ReceiptCorpus/CorpusLocation.swift"))
    }
}

@Suite("Id patterns", .timeLimit(.minutes(2)))
struct IDPatternTests {
    @Test(
        "* matches any run of characters; other characters match themselves",
        arguments: [
            ("chain::foreign-root", "chain::*", true), ("chain::foreign-root", "*root", true), ("chain::foreign-root", "*eign*", true),
            ("chain::foreign-root", "chain::foreign-root", true), ("chain::foreign-root", "signature::*", false), ("chain::foreign-root", "*x*", false),
            ("valid::a", "*", true), ("valid::a", "valid::a*b", false),
        ])
    func matching(id: String, pattern: String, expected: Bool) {
        #expect(IDPattern.matches(id, pattern) == expected)
    }
}
