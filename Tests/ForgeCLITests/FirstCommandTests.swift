import Foundation
import ForgeTestSupport
import Testing

/// A reader installs as the README says (`swift build -c release`, then `.build/release` on PATH) and types the first
/// `forge` command of a page. That command must work as written: `forge …` is the installed pair (forge and
/// forge-http); `swift run forge …` is a debug `forge` SwiftPM builds on its own, with no `forge-http` beside it, so
/// anything that speaks HTTP there exits 69 (`serve.md` opened with such a command until issue 38). Each command
/// runs in a folder of its own that sees the repository's `examples/`, `Vectors/` and `Certificates/`; a server is
/// started on port 0 (a fixed port may be taken) and stopped once it says where it listens.
@Suite("The first command of every page works after the README's install", .timeLimit(.minutes(2)))
struct FirstCommandTests {
    /// The first forge command of each page that shows one, with whether it is `swift run forge`.
    static func firstCommands() throws -> [(page: String, line: Int, arguments: [String], swiftRun: Bool)] {
        try DocumentedCommandTests.pages.compactMap { page in
            let text = try String(contentsOf: page, encoding: .utf8)
            guard let first = DocumentedCommands.forgeCommands(inMarkdown: text).first else { return nil }
            let source = text.components(separatedBy: "\n")[first.line - 1]
            return (page.lastPathComponent, first.line, first.arguments, source.contains("swift run forge"))
        }
    }

    @Test("The README's install puts the release build on PATH, so the pages' `forge …` is the installed pair")
    func installPutsForgeOnPath() throws {
        let readme = try String(contentsOf: Repository.file("README.md"), encoding: .utf8)
        let install = readme.components(separatedBy: "## Install").dropFirst().first?.components(separatedBy: "\n## ").first ?? ""
        #expect(install.contains("swift build -c release"))
        #expect(install.contains(#"export PATH="$PWD/.build/release:$PATH""#), "the install section does not put forge on PATH")
    }

    @Test("Each page's first forge command runs as written: exit 0, or a server that starts")
    func firstCommandsRun() async throws {
        let commands = try Self.firstCommands()
        #expect(commands.count >= 6, "\(commands.map(\.page))")
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // What `swift run forge` runs after the README's install: a forge with no forge-http beside it.
        let alone = folder.appendingPathComponent("swift-run/forge")
        try FileManager.default.createDirectory(at: alone.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Binaries.forge, to: alone)
        for (page, line, arguments, swiftRun) in commands {
            let directory = folder.appendingPathComponent("\(page)-\(line)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for shared in ["examples", "Vectors", "Certificates"] {
                try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent(shared), withDestinationURL: Repository.file(shared))
            }
            let executable = swiftRun ? alone : Binaries.forge
            let shown = "\(page):\(line): \(swiftRun ? "swift run forge" : "forge") \(arguments.joined(separator: " "))"
            if arguments.first == "serve" || arguments.contains("--listen") {
                let onPortZero = arguments.map { $0.replacingOccurrences(of: #":\d+$"#, with: ":0", options: .regularExpression) }
                do {
                    let server = try await BackgroundServer.start(onPortZero, executable: executable, environment: ["PATH": "/usr/bin:/bin"], in: directory)
                    _ = await server.stop()
                } catch {
                    Issue.record("\(shown): \(error)")
                }
            } else {
                let result = try await run(executable, arguments, in: directory, environment: ["PATH": "/usr/bin:/bin", "HOME": folder.path])
                #expect(result.status == 0, "\(shown): exit \(result.status): \(result.stderr.suffix(2000))")
            }
        }
    }
}
