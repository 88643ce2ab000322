import Foundation
import ForgeTestSupport
import Testing

/// Issue 24, item 1: `scripts/release.sh`'s tarball is used as a CI job without Swift would use it. It is
/// unpacked into an empty folder and run with the toolchain off `PATH`, no `LD_LIBRARY_PATH` and an empty
/// environment.
///
/// These tests never build the release (a static build of several minutes has no place inside `swift test`): they
/// read the folder `scripts/release.sh --out DIR` wrote, named by `FORGE_RELEASE_DIST`. `.ci/run` runs them as a
/// step of their own, after `scripts/release.sh` and `swift test`:
///
///     FORGE_RELEASE_DIST="$PWD/.build/static/dist" swift test --skip-build --filter ForgeCLITests.ReleaseTests
///
/// Without the variable they are skipped, and say so.
/// The folder `scripts/release.sh --out` wrote, from `FORGE_RELEASE_DIST` (relative to the working folder).
private let releaseDist: URL? = ProcessInfo.processInfo.environment["FORGE_RELEASE_DIST"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }

extension Oracle {
    /// What the action's install step downloads the release with.
    fileprivate static let curl = tool("curl", installedBy: "apt-get install curl")
}

@Suite(
    "Release binaries: scripts/release.sh", .serialized, .timeLimit(.minutes(2)),
    .enabled(
        if: releaseDist != nil,
        "FORGE_RELEASE_DIST names no folder: these tests read what scripts/release.sh --out DIR wrote (.ci/run runs them after it, with FORGE_RELEASE_DIST=DIR)"
    ))
struct ReleaseTests {
    struct Release {
        let directory: URL
        let tarball: URL
        let bundle: URL
        let version: String
    }

    struct ReleaseFailed: Error, CustomStringConvertible { let description: String }

    /// The release in ``dist``: the tarball its SHA256SUMS names (the one release.sh wrote last), the bundle beside it.
    static let built: Result<Release, ReleaseFailed> = {
        guard let directory = releaseDist else { return .failure(ReleaseFailed(description: "FORGE_RELEASE_DIST is not set")) }
        do {
            let sums = try String(contentsOf: directory.appendingPathComponent("SHA256SUMS"), encoding: .utf8)
            let names = sums.split(separator: "\n").compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init) }
            guard let tarball = names.first(where: { $0.hasSuffix(".tar.xz") }),
                let version = tarball.firstMatch(of: /^receipt-forge-(\d+\.\d+\.\d+)-linux-[a-z0-9_]+\.tar\.xz$/)?.1
            else { return .failure(ReleaseFailed(description: "SHA256SUMS in \(directory.path) names no receipt-forge-VERSION-linux-ARCH.tar.xz: \(names)")) }
            return .success(
                Release(
                    directory: directory, tarball: directory.appendingPathComponent(tarball),
                    bundle: directory.appendingPathComponent("forge.artifactbundle.zip"), version: String(version)))
        } catch {
            return .failure(ReleaseFailed(description: "\(error)"))
        }
    }()

    /// What a machine without Swift has: the system's binaries, nothing else.
    static let bare = ["PATH": "/usr/bin:/bin"]

    /// The libraries the release may still load from the system (README, "Release binaries").
    /// glibc's own libraries and the C++ runtime the Swift runtime needs: OpenSSL and SQLite are linked in (issue 41).
    static let systemLibraries: Set<String> = [
        "linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1",
    ]

    @Test(
        "release.sh writes the tarball, the artifact bundle and SHA256SUMS, which sha256sum -c accepts; the tarball holds both binaries, Vectors/, roots/, examples/, Documentation/ and README.md"
    )
    func packed() async throws {
        let release = try Self.built.get()
        let sums = try String(contentsOf: release.directory.appendingPathComponent("SHA256SUMS"), encoding: .utf8)
        #expect(sums.contains(release.tarball.lastPathComponent) && sums.contains("forge.artifactbundle.zip"))
        let checked = try await run(URL(fileURLWithPath: "/usr/bin/sha256sum"), ["-c", "SHA256SUMS"], in: release.directory)
        #expect(checked.status == 0, "\(checked.text)\(checked.stderr)")
        let listing = try await run(URL(fileURLWithPath: "/bin/tar"), ["-tJf", release.tarball.path])
        let top = "receipt-forge-\(release.version)-linux-x86_64/"
        let entries = Set(listing.text.split(separator: "\n").map(String.init))
        for entry in [
            "bin/forge", "bin/forge-http", "Vectors/manifest.json", "roots/root.pem", "roots/jws-root-g3.pem", "examples/openssl-harness.sh",
            "Documentation/runner.md", "README.md",
        ] {
            #expect(entries.contains(top + entry), "\(entry) is not in the tarball")
        }
        #expect(!entries.contains { $0.contains("/.build/") }, "a build folder was packed")
    }

    @Test(
        "Unpacked into an empty folder, with no toolchain on PATH, no LD_LIBRARY_PATH and an empty environment: ldd finds only glibc's libraries, libstdc++ and libgcc_s (OpenSSL and SQLite are linked in); forge makes a receipt, runs the corpus beside it against swift:reference (conformant), and forge serve answers verifyReceipt with status 0"
    )
    func runsWithoutToolchain() async throws {
        let release = try Self.built.get()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let unpacked = directory.appendingPathComponent("unpacked"), work = directory.appendingPathComponent("work")
        for folder in [unpacked, work] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        #expect(try await run(URL(fileURLWithPath: "/bin/tar"), ["-xJf", release.tarball.path, "-C", unpacked.path]).status == 0)
        let prefix = unpacked.appendingPathComponent("receipt-forge-\(release.version)-linux-x86_64")
        let forge = prefix.appendingPathComponent("bin/forge"), helper = prefix.appendingPathComponent("bin/forge-http")
        let shell = try await run(URL(fileURLWithPath: "/bin/sh"), ["-c", "command -v swift || echo none"], environment: Self.bare)
        try #require(shell.text == "none\n", "a Swift toolchain is on /usr/bin:/bin (\(shell.text)): this test could not tell")

        for binary in [forge, helper] {
            let ldd = try await run(URL(fileURLWithPath: "/usr/bin/ldd"), [binary.path], environment: Self.bare)
            #expect(ldd.status == 0, "\(ldd.stderr)")
            let lines = ldd.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(!lines.isEmpty)
            for line in lines {
                let library = String(line.split(separator: " ").first ?? "")
                let name = library.split(separator: "/").last.map(String.init) ?? library
                #expect(Self.systemLibraries.contains(name), "\(binary.lastPathComponent) loads \(line)")
                #expect(!line.contains("not found") && !line.contains("swift"), "\(binary.lastPathComponent): \(line)")
            }
        }

        let receipt = work.appendingPathComponent("receipt.der")
        let made = try await run(forge, ["make", "--product", "com.example.pro", "-o", receipt.path], in: work, environment: Self.bare)
        #expect(made.status == 0, "\(made.stderr)")
        let validated = try await run(forge, ["validate", receipt.path], in: work, environment: Self.bare)
        #expect(validated.status == 0, "\(validated.text)\(validated.stderr)")

        // No ./Vectors in the working folder: forge finds the corpus beside its bin/, not the checkout it was built in.
        let conformance = try await run(forge, ["run", "--target", "swift:reference"], in: work, environment: Self.bare)
        #expect(conformance.status == 0, "\(conformance.text.suffix(2000))\(conformance.stderr)")
        #expect(conformance.text.contains("conformant (exit 0)"))
        let vector = prefix.appendingPathComponent("Vectors/valid/appstore-subscription.der")
        let original = try Data(contentsOf: vector)
        try (original + Data([0])).write(to: vector)
        let lint = try await run(forge, ["vectors", "lint"], in: work, environment: Self.bare)
        #expect(lint.status != 0 && (lint.text + lint.stderr).contains("appstore-subscription"), "the lint did not read the unpacked corpus: \(lint.text)")
        try original.write(to: vector)

        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0"], executable: forge, environment: Self.bare)
        defer { server.kill() }
        let body = try JSONSerialization.data(withJSONObject: ["receipt-data": try Data(contentsOf: receipt).base64EncodedString()])
        let answer = try await request(server.url + "/verifyReceipt", method: "POST", headers: ["Content-Type": "application/json"], body: body)
        #expect(answer.status == 200)
        let json = try answer.json()
        #expect(json["status"] as? Int == 0, "\(answer.text)")
        let products = ((json["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])?.compactMap { $0["product_id"] as? String }
        #expect(products == ["com.example.pro"])
    }

    @Test(
        "forge.artifactbundle.zip is a SwiftPM artifact bundle: a package naming it as a binaryTarget runs forge from a command plugin"
    )
    func artifactBundle() async throws {
        let release = try Self.built.get()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plugin = directory.appendingPathComponent("Plugins/ForgeVersion")
        try FileManager.default.createDirectory(at: plugin, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: release.bundle, to: directory.appendingPathComponent("forge.artifactbundle.zip"))
        try """
        // swift-tools-version:6.0
        import PackageDescription
        let package = Package(
            name: "uses-forge",
            targets: [
                .binaryTarget(name: "forge", path: "forge.artifactbundle.zip"),
                .plugin(
                    name: "ForgeVersion", capability: .command(intent: .custom(verb: "forge-version", description: "forge --version")),
                    dependencies: ["forge"]),
            ])
        """.write(to: directory.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try """
        import Foundation
        import PackagePlugin
        @main struct ForgeVersion: CommandPlugin {
            func performCommand(context: PluginContext, arguments: [String]) async throws {
                let process = Process()
                process.executableURL = try context.tool(named: "forge").url
                process.arguments = ["--version"]
                let status: Int32 = try await withCheckedThrowingContinuation { ended in
                    process.terminationHandler = { ended.resume(returning: $0.terminationStatus) }
                    do { try process.run() } catch { ended.resume(throwing: error) }
                }
                if status != 0 { throw CocoaError(.executableLoad) }
            }
        }
        """.write(to: plugin.appendingPathComponent("plugin.swift"), atomically: true, encoding: .utf8)
        let swift = try await run(
            URL(fileURLWithPath: "/usr/bin/env"), ["swift", "package", "--disable-sandbox", "forge-version"], in: directory, deadline: .seconds(110))
        #expect(swift.status == 0, "\(swift.text)\(swift.stderr)")
        #expect(swift.text.split(separator: "\n").last.map(String.init) == release.version, "\(swift.text)")
    }

    @Test(
        "The action's install step takes the release by version from the repository's releases (a local stand-in for GitHub), checks its SHA-256, and its run step gates with the unpacked forge; a tampered tarball is refused",
        .requires(.python, .curl))
    func actionInstallsTheRelease() async throws {
        let release = try Self.built.get()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let assets = directory.appendingPathComponent("site/owner/receipt-forge/releases/download/v\(release.version)")
        try FileManager.default.createDirectory(at: assets, withIntermediateDirectories: true)
        for file in [release.tarball, release.directory.appendingPathComponent("SHA256SUMS")] {
            try FileManager.default.copyItem(at: file, to: assets.appendingPathComponent(file.lastPathComponent))
        }
        let site = try await BackgroundServer.start(
            ["-u", "-m", "http.server", "--bind", "127.0.0.1", "0", "--directory", directory.appendingPathComponent("site").path],
            executable: try Oracle.python.required())
        defer { site.kill() }

        /// The install step; what it added to PATH and to the job's environment.
        func install(in runner: URL) async throws -> (RunResult, paths: [String], environment: [String]) {
            try FileManager.default.createDirectory(at: runner, withIntermediateDirectories: true)
            let paths = runner.appendingPathComponent("github_path"), variables = runner.appendingPathComponent("github_env")
            for file in [paths, variables] { try Data().write(to: file) }
            let environment = [
                "PATH": "/usr/bin:/bin", "GITHUB_ACTION_PATH": Repository.root.path, "GITHUB_PATH": paths.path, "GITHUB_ENV": variables.path,
                "RUNNER_TEMP": runner.path,
                "GITHUB_SERVER_URL": site.url, "GITHUB_ACTION_REPOSITORY": "owner/receipt-forge", "INPUT_FORGE_VERSION": release.version,
            ]
            let result = try await run(URL(fileURLWithPath: "/bin/bash"), [Repository.file("scripts/action/install.sh").path], environment: environment)
            func lines(_ file: URL) throws -> [String] { try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init) }
            return (result, try lines(paths), try lines(variables))
        }

        let runner = directory.appendingPathComponent("runner")
        let (installed, paths, variables) = try await install(in: runner)
        #expect(installed.status == 0, "\(installed.text)\(installed.stderr)")
        let bin = try #require(paths.first)
        #expect(FileManager.default.isExecutableFile(atPath: bin + "/forge") && FileManager.default.isExecutableFile(atPath: bin + "/forge-http"))
        // The run step judges with the release's own corpus, not the action checkout's.
        let corpus = try #require(variables.first { $0.hasPrefix("RECEIPT_FORGE_VECTORS=") }?.dropFirst("RECEIPT_FORGE_VECTORS=".count))
        #expect(corpus == bin.dropLast("bin".count) + "Vectors" && FileManager.default.fileExists(atPath: corpus + "/manifest.json"), "\(variables)")

        let summary = directory.appendingPathComponent("summary.md"), output = directory.appendingPathComponent("output.txt")
        let environment = [
            "PATH": bin + ":/usr/bin:/bin", "GITHUB_ACTION_PATH": Repository.root.path, "GITHUB_STEP_SUMMARY": summary.path, "GITHUB_OUTPUT": output.path,
            "RECEIPT_FORGE_VECTORS": String(corpus), "INPUT_TARGET": "swift:reference", "INPUT_JUNIT": "junit.xml",
        ]
        let gated = try await run(URL(fileURLWithPath: "/bin/bash"), [Repository.file("scripts/action/run.sh").path], in: directory, environment: environment)
        #expect(gated.status == 0, "\(gated.text.suffix(2000))\(gated.stderr)")
        #expect(gated.text.contains("forge run --vectors \(corpus) --target swift:reference"), "\(gated.text.prefix(300))")
        #expect(try String(contentsOf: summary, encoding: .utf8).hasPrefix("## Receipt conformance: "))
        #expect(try String(contentsOf: output, encoding: .utf8) == "exit-code=0\n")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("junit.xml").path))

        // One flipped byte in the served tarball: the sum check refuses it and nothing reaches PATH.
        let served = assets.appendingPathComponent(release.tarball.lastPathComponent)
        var bytes = try Data(contentsOf: served)
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: served)
        let (tampered, tamperedPaths, _) = try await install(in: directory.appendingPathComponent("runner-tampered"))
        #expect(tampered.status != 0)
        #expect(tamperedPaths.isEmpty, "\(tamperedPaths)")
        #expect(tampered.text.contains("FAILED") || tampered.stderr.contains("FAILED"), "\(tampered.text)\(tampered.stderr)")
    }
}
