import Foundation
import ForgeTestSupport
import Testing

/// FuzzTesting is a package of its own, which no `swift build` of this one compiles: a change to what a fuzzer calls
/// went unnoticed once (FuzzWebhookAnswer read `SendAttempt.appleJSON` for an issue after it was gone). Each fuzzer's
/// source is type-checked here against the modules this test run was built with, as `scripts/fuzz.sh` would build it
/// (its `@testable import`s need those modules built for testing, which debug builds are).
@Suite("FuzzTesting's fuzzers type-check against today's modules", .timeLimit(.minutes(2)))
struct FuzzTargetsTypeCheckTests {
    static let swiftc = Oracle.tool("swiftc", installedBy: "the Swift toolchain")

    @Test("Every fuzz target's main.swift type-checks", .requires(swiftc))
    func everyTargetTypeChecks() async throws {
        let compiler = try Self.swiftc.required()
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let build = Binaries.forge.deletingLastPathComponent()
        let fuzzing = Repository.file("FuzzTesting/Sources")
        // The C modules: libFuzzer's driver (a module map of our own, as SwiftPM makes for a C target), this package's
        // and its dependencies' (SwiftPM's generated maps beside each C target's objects, and the checked-out ones).
        let driver = folder.appendingPathComponent("module.modulemap")
        try Data("module CLibFuzzer {\n  header \"\(fuzzing.path)/CLibFuzzer/include/CLibFuzzer.h\"\n  export *\n}\n".utf8).write(to: driver)
        let checkouts = build.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("checkouts")
        var maps = [driver] + Self.files(in: build, depth: 1) { $0.lastPathComponent == "module.modulemap" && $0.deletingLastPathComponent().pathExtension == "build" }
        maps += Self.files(in: checkouts, depth: 4) { $0.lastPathComponent == "module.modulemap" && $0.deletingLastPathComponent().lastPathComponent == "include" }
        maps += Self.files(in: Repository.file("Sources"), depth: 1) { $0.lastPathComponent == "module.modulemap" }
        let common =
            maps.flatMap { ["-Xcc", "-fmodule-map-file=\($0.path)"] } + [
                "-I", build.appendingPathComponent("Modules").path, "-I", folder.path, "-module-cache-path", folder.appendingPathComponent("cache").path,
            ]
        let support = try await run(
            compiler,
            ["-emit-module", "-module-name", "FuzzSupport", "-emit-module-path", folder.appendingPathComponent("FuzzSupport.swiftmodule").path]
                + common + [fuzzing.appendingPathComponent("FuzzSupport/FuzzSupport.swift").path], deadline: .seconds(120))
        try #require(support.status == 0, "FuzzSupport: \(support.stderr)")
        let targets = try FileManager.default.contentsOfDirectory(atPath: fuzzing.path).filter { $0.hasPrefix("Fuzz") && $0 != "FuzzSupport" }.sorted()
        #expect(targets.count >= 13, "\(targets)")
        for target in targets {
            let checked = try await run(compiler, ["-typecheck"] + common + [fuzzing.appendingPathComponent("\(target)/main.swift").path], deadline: .seconds(120))
            #expect(checked.status == 0, "\(target): \(checked.stderr.split(separator: "\n").filter { $0.contains("error:") }.prefix(5).joined(separator: "\n"))")
        }
    }

    /// Files below `folder`, at most `depth` folders down, that `keep` says.
    static func files(in folder: URL, depth: Int, _ keep: (URL) -> Bool) -> [URL] {
        guard depth >= 0, let entries = try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.isDirectoryKey]) else { return [] }
        return entries.flatMap { entry -> [URL] in
            let isFolder = (try? entry.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true
            return isFolder ? files(in: entry, depth: depth - 1, keep) : (keep(entry) ? [entry] : [])
        }
    }
}
