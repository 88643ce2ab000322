import Foundation
import ForgeTestSupport
import Testing
import ForgeSupport
import StoreModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// DESIGN §8: output is all or nothing, and a command never deletes a file it did not write. Through the built
/// binary, with real folders; a full disk is played by RLIMIT_FSIZE (writes past it fail with EFBIG, as ENOSPC
/// would), set by a Python launcher that also starts forge with no blocked signals.
@Suite("output is all or nothing; foreign files are never touched", .timeLimit(.minutes(10)))
struct OutputSafetyTests {
    /// Runs forge with an optional file-size limit (bytes), SIGXFSZ ignored and an empty signal mask.
    private static let launcher = """
        import os, resource, signal, sys
        limit = int(sys.argv[1])
        if limit >= 0:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.execv(sys.argv[2], sys.argv[2:])
        """

    private func launch(_ arguments: [String], fileSizeLimit: Int = -1) throws -> RunResult {
        try runBlocking(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", Self.launcher, String(fileSizeLimit), forgeBinary.path] + arguments)
    }

    /// Names in `parent` other than `expected`: staging folders or temporary files left behind.
    private func leftovers(in parent: URL, besides expected: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: parent.path).filter { !expected.contains($0) }.sorted()
    }

    private func write(_ text: String, _ relative: String, in directory: URL) throws {
        let url = directory.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    // MARK: forge vectors generate

    @Test("generate --out a folder of the user's refuses (73, naming a file) and deletes nothing")
    func generateRefusesForeignFolder() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let project = parent.appendingPathComponent("project")
        try write("mine", "notes.txt", in: project)
        try write("print(1)", "src/main.py", in: project)
        try write("[core]", ".git/config", in: project)
        let before = try fileTree(project)
        let result = try forgeBlocking("vectors", "generate", "--out", project.path)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.contains("it holds .git/"), "\(result.stderr)")
        #expect(try fileTree(project) == before)
        #expect(try leftovers(in: parent, besides: ["project"]) == [])
    }

    @Test("generate replaces its own corpus whole: removes only files the old manifest listed, keeps README.md, refuses a foreign file")
    func generateReplacesOwnCorpus() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("v")
        #expect(try forgeBlocking("vectors", "generate", "--out", out.path).status == 0)
        let fresh = try fileTree(out)

        // An older generation: a retired vector the old manifest lists, a tampered file, the user's README.
        let manifestURL = out.appendingPathComponent("manifest.json")
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        var vectors = try #require(manifest["vectors"] as? [[String: Any]])
        var retired = vectors[0]
        retired["id"] = "retired::old"
        retired["file"] = "retired/old.der"
        vectors.append(retired)
        manifest["vectors"] = vectors
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifestURL)
        try write("old", "retired/old.der", in: out)
        try write("tampered", "chain/foreign-root.der", in: out)
        try write("# my notes", "README.md", in: out)

        let again = try forgeBlocking("vectors", "generate", "--out", out.path)
        #expect(again.status == 0, "\(again.stderr)")
        var expected = fresh
        expected["README.md"] = Data("# my notes".utf8)
        #expect(try fileTree(out) == expected)
        #expect(try leftovers(in: parent, besides: ["v"]) == [])

        try write("keep me", "chain/notes.txt", in: out)
        let before = try fileTree(out)
        let refused = try forgeBlocking("vectors", "generate", "--out", out.path)
        #expect(refused.status == 73)
        #expect(refused.stderr.contains("chain/notes.txt"), "\(refused.stderr)")
        #expect(try fileTree(out) == before)
    }

    @Test("generate on a full disk exits 73 and leaves the old corpus exactly as it was, with no temporary files")
    func generateFullDisk() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("v")
        #expect(try forgeBlocking("vectors", "generate", "--out", out.path).status == 0)
        try write("tampered", "chain/foreign-root.der", in: out)
        let before = try fileTree(out)
        // manifest.json is far larger than 64 KiB; every vector is smaller.
        let result = try launch(["vectors", "generate", "--out", out.path], fileSizeLimit: 64 << 10)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain"), "\(result.stderr)")
        #expect(try fileTree(out) == before)
        #expect(try leftovers(in: parent, besides: ["v"]) == [])
    }

    @Test("an interrupted generate leaves the old corpus or the new one, never a mix, and no staging folder")
    func generateInterrupted() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("v")
        #expect(try forgeBlocking("vectors", "generate", "--out", out.path).status == 0)
        let new = try fileTree(out)
        for delay in [300, 600, 900, 1200, 1500, 2000, 2500, 3000] {
            for name in new.keys.sorted().filter({ $0.hasSuffix(".der") }).prefix(40) { try write("old \(name)", name, in: out) }
            let old = try fileTree(out)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", Self.launcher, "-1", forgeBinary.path, "vectors", "generate", "--out", out.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32(delay) * 1000)
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
            let after = try fileTree(out)
            #expect(after == old || after == new, "after SIGINT at \(delay) ms: \(after.filter { old[$0.key] != $0.value }.count) files changed of \(old.count)")
            #expect(try leftovers(in: parent, besides: ["v"]) == [], "after SIGINT at \(delay) ms")
        }
    }

    // MARK: forge make --count

    private static let batch = ["make", "--product", "com.example.pro", "--seed", "7", "--now", "2025-01-01T00:00:00Z", "-q"]

    @Test("a batch on a full disk exits 73 and leaves nothing: no folder, no receipts, no temporary files")
    func batchFullDisk() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("batch")
        // Every receipt fits in 8 KiB; index.jsonl of 300 lines does not.
        let result = try launch(Self.batch + ["--count", "300", "--out", out.path], fileSizeLimit: 8 << 10)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain"), "\(result.stderr)")
        #expect(try leftovers(in: parent, besides: []) == [])
    }

    @Test("a batch refuses a folder with a directory in the way or a file of the user's, before making anything")
    func batchForeignEntries() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("batch")
        try FileManager.default.createDirectory(at: out.appendingPathComponent("receipt-3.der"), withIntermediateDirectories: true)
        try write("x", "receipt-3.der/inside", in: out)
        let inTheWay = try forgeBlocking(arguments: Self.batch + ["--count", "10", "--out", out.path])
        #expect(inTheWay.status == 73, "\(inTheWay.stderr)")
        #expect(inTheWay.stderr.contains("receipt-3.der"), "\(inTheWay.stderr)")
        #expect(try fileTree(out) == ["receipt-3.der/inside": Data("x".utf8)])
        #expect(try leftovers(in: parent, besides: ["batch"]) == [])

        try FileManager.default.removeItem(at: out.appendingPathComponent("receipt-3.der"))
        try write("mine", "notes.txt", in: out)
        let foreign = try forgeBlocking(arguments: Self.batch + ["--count", "10", "--out", out.path])
        #expect(foreign.status == 73)
        #expect(foreign.stderr.contains("notes.txt"), "\(foreign.stderr)")
        #expect(try fileTree(out) == ["notes.txt": Data("mine".utf8)])
    }

    @Test("with --force, a batch replaces an earlier batch whole: the new receipts and index only")
    func batchReplacesEarlierBatch() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("batch")
        #expect(try forgeBlocking(arguments: Self.batch + ["--count", "5", "--out", out.path]).status == 0)
        #expect(try fileTree(out).count == 6)
        let again = try forgeBlocking(arguments: Self.batch + ["--count", "3", "--out", out.path, "--force"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Set(try fileTree(out).keys) == ["receipt-0.der", "receipt-1.der", "receipt-2.der", "index.jsonl"])
        #expect(try leftovers(in: parent, besides: ["batch"]) == [])
    }

    // MARK: forge make -o

    @Test("make -o on a full disk exits 73 with a plain message and leaves no temporary file")
    func singleFullDisk() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("target.der")
        let result = try launch(["make", "--product", "p", "-o", target.path], fileSizeLimit: 512)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.contains("target.der") && !result.stderr.contains("NSCocoaErrorDomain"), "\(result.stderr)")
        #expect(try leftovers(in: directory, besides: []) == [])
    }

    @Test(
        "a folder that cannot be made is named with the system's reason, never a Cocoa error number",
        arguments: [
            ["seeds", "--out", "/dev/null/seeds"], ["mutate", "--from", "valid::*", "--count", "1", "--out", "/dev/null/m"], ["vectors", "generate", "--out", "/dev/null/v"],
        ])
    func folderErrorsInPlainWords(arguments: [String]) throws {
        let result = try forgeBlocking(arguments: arguments)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.contains("Not a directory") && !result.stderr.contains("NSCocoaErrorDomain"), "\(result.stderr)")
    }

    @Test("make refuses a receipt larger than validate reads (16 MiB), before the work")
    func makeRefusesOversizedReceipt() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receipt = directory.appendingPathComponent("receipt.der").path
        // 16 subscriptions of 10,001 periods each: about 40 MB of receipt.
        let products = (0..<16).flatMap { ["--product", "com.example.sub\($0)"] }
        let result = try forgeBlocking(arguments: ["make"] + products + ["--renewals", "10000", "--now", "2025-01-01T00:00:00Z", "-o", receipt])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("transactions") && result.stderr.contains("at most"), "\(result.stderr)")
        // Within the bounds but over 16 MiB of bytes (forward from 1990: 10,000 months back from 2025 is before 1970).
        let large = (0..<2).flatMap { ["--product", "com.example.sub\($0)-\(String(repeating: "x", count: 1000))"] }
        let bytes = try forgeBlocking(
            arguments: ["make"] + large + ["--renewals", "10000", "--purchase-date", "1990-01-01T00:00:00Z", "--now", "2025-01-01T00:00:00Z", "-o", receipt])
        #expect(bytes.status == 64, "\(bytes.stderr)")
        #expect(bytes.stderr.contains("16777216"), "\(bytes.stderr)")
    }
}
