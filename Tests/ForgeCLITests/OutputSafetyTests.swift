import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

/// DESIGN §8: output is all or nothing, and a command never deletes a file it did not write. Through the built
/// binary, with real folders; a full disk is played by RLIMIT_FSIZE (writes past it fail with EFBIG, as ENOSPC
/// would), set by a Python launcher that also starts forge with no blocked signals; an interruption is a SIGINT a
/// Python driver sends forge after a delay of its own.
@Suite("output is all or nothing; foreign files are never touched", .timeLimit(.minutes(2)))
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

    private func launch(_ arguments: [String], fileSizeLimit: Int = -1) async throws -> RunResult {
        try await run(try Oracle.python.required(), ["-c", Self.launcher, String(fileSizeLimit), Binaries.forge.path] + arguments)
    }

    /// Starts forge with an empty signal mask, sends it SIGINT after `sys.argv[1]` milliseconds (the sleep is the
    /// driver's, another process's: no thread of the tests waits), and exits once forge has.
    private static let interrupter = """
        import signal, subprocess, sys, time
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        child = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(int(sys.argv[1]) / 1000)
        child.send_signal(signal.SIGINT)
        child.communicate()
        print(child.returncode)
        """

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
    func generateRefusesForeignFolder() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let project = parent.appendingPathComponent("project")
        try write("mine", "notes.txt", in: project)
        try write("print(1)", "src/main.py", in: project)
        try write("[core]", ".git/config", in: project)
        let before = try fileTree(project)
        let result = try await forge("vectors", "generate", "--out", project.path)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.contains("it holds .git/"), "\(result.stderr)")
        #expect(try fileTree(project) == before)
        #expect(try leftovers(in: parent, besides: ["project"]) == [])
    }

    @Test("generate replaces its own corpus whole: removes only files the old manifest listed, keeps README.md, refuses a foreign file")
    func generateReplacesOwnCorpus() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("v")
        #expect(try await forge("vectors", "generate", "--out", out.path).status == 0)
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

        let again = try await forge("vectors", "generate", "--out", out.path)
        #expect(again.status == 0, "\(again.stderr)")
        var expected = fresh
        expected["README.md"] = Data("# my notes".utf8)
        #expect(try fileTree(out) == expected)
        #expect(try leftovers(in: parent, besides: ["v"]) == [])

        try write("keep me", "chain/notes.txt", in: out)
        let before = try fileTree(out)
        let refused = try await forge("vectors", "generate", "--out", out.path)
        #expect(refused.status == 73)
        #expect(refused.stderr.contains("chain/notes.txt"), "\(refused.stderr)")
        #expect(try fileTree(out) == before)
    }

    @Test("generate on a full disk exits 73 and leaves the old corpus exactly as it was, with no temporary files", .requires(.python))
    func generateFullDisk() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("v")
        #expect(try await forge("vectors", "generate", "--out", out.path).status == 0)
        try write("tampered", "chain/foreign-root.der", in: out)
        let before = try fileTree(out)
        // manifest.json is far larger than 64 KiB; every vector is smaller.
        let result = try await launch(["vectors", "generate", "--out", out.path], fileSizeLimit: 64 << 10)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain"), "\(result.stderr)")
        #expect(try fileTree(out) == before)
        #expect(try leftovers(in: parent, besides: ["v"]) == [])
    }

    @Test("an interrupted generate leaves the old corpus or the new one, never a mix, and no staging folder", .requires(.python))
    func generateInterrupted() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("v")
        #expect(try await forge("vectors", "generate", "--out", out.path).status == 0)
        let new = try fileTree(out)
        for delay in [300, 600, 900, 1200, 1500, 2000, 2500, 3000] {
            for name in new.keys.sorted().filter({ $0.hasSuffix(".der") }).prefix(40) { try write("old \(name)", name, in: out) }
            let old = try fileTree(out)
            let interrupted = try await run(
                try Oracle.python.required(), ["-c", Self.interrupter, String(delay), Binaries.forge.path, "vectors", "generate", "--out", out.path])
            #expect(interrupted.status == 0, "the driver: \(interrupted.stderr)")
            let after = try fileTree(out)
            let exit = interrupted.text.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(
                after == old || after == new,
                "after SIGINT at \(delay) ms (forge exited \(exit)): \(after.filter { old[$0.key] != $0.value }.count) files changed of \(old.count)")
            #expect(try leftovers(in: parent, besides: ["v"]) == [], "after SIGINT at \(delay) ms")
        }
    }

    // MARK: forge make --count

    private static let batch = ["make", "--product", "com.example.pro", "--seed", "7", "--now", "2025-01-01T00:00:00Z", "-q"]

    @Test("a batch on a full disk exits 73 and leaves nothing: no folder, no receipts, no temporary files", .requires(.python))
    func batchFullDisk() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("batch")
        // Every receipt fits in 8 KiB; index.jsonl of 300 lines does not.
        let result = try await launch(Self.batch + ["--count", "300", "--out", out.path], fileSizeLimit: 8 << 10)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(!result.stderr.contains("NSCocoaErrorDomain"), "\(result.stderr)")
        #expect(try leftovers(in: parent, besides: []) == [])
    }

    @Test("a batch refuses a folder with a directory in the way or a file of the user's, before making anything")
    func batchForeignEntries() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("batch")
        try FileManager.default.createDirectory(at: out.appendingPathComponent("receipt-3.der"), withIntermediateDirectories: true)
        try write("x", "receipt-3.der/inside", in: out)
        let inTheWay = try await forge(arguments: Self.batch + ["--count", "10", "--out", out.path])
        #expect(inTheWay.status == 73, "\(inTheWay.stderr)")
        #expect(inTheWay.stderr.contains("receipt-3.der"), "\(inTheWay.stderr)")
        #expect(try fileTree(out) == ["receipt-3.der/inside": Data("x".utf8)])
        #expect(try leftovers(in: parent, besides: ["batch"]) == [])

        try FileManager.default.removeItem(at: out.appendingPathComponent("receipt-3.der"))
        try write("mine", "notes.txt", in: out)
        let foreign = try await forge(arguments: Self.batch + ["--count", "10", "--out", out.path])
        #expect(foreign.status == 73)
        #expect(foreign.stderr.contains("notes.txt"), "\(foreign.stderr)")
        #expect(try fileTree(out) == ["notes.txt": Data("mine".utf8)])
    }

    @Test("with --force, a batch replaces an earlier batch whole: the new receipts and index only")
    func batchReplacesEarlierBatch() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("batch")
        #expect(try await forge(arguments: Self.batch + ["--count", "5", "--out", out.path]).status == 0)
        #expect(try fileTree(out).count == 6)
        let again = try await forge(arguments: Self.batch + ["--count", "3", "--out", out.path, "--force"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(Set(try fileTree(out).keys) == ["receipt-0.der", "receipt-1.der", "receipt-2.der", "index.jsonl"])
        #expect(try leftovers(in: parent, besides: ["batch"]) == [])
    }

    // MARK: forge make -o

    @Test("make -o on a full disk exits 73 with a plain message and leaves no temporary file", .requires(.python))
    func singleFullDisk() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("target.der")
        let result = try await launch(["make", "--product", "p", "-o", target.path], fileSizeLimit: 512)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.contains("target.der") && !result.stderr.contains("NSCocoaErrorDomain"), "\(result.stderr)")
        #expect(try leftovers(in: directory, besides: []) == [])
    }

    @Test(
        "a folder that cannot be made is named with the system's reason, never a Cocoa error number",
        arguments: [["seeds", "--out"], ["mutate", "--from", "valid::*", "--count", "1", "--out"], ["vectors", "generate", "--out"]])
    func folderErrorsInPlainWords(command: [String]) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A regular file of the test's own as the parent: no folder can be made below it (ENOTDIR).
        let file = directory.appendingPathComponent("file")
        try Data("mine".utf8).write(to: file)
        let result = try await forge(arguments: command + [file.appendingPathComponent("out").path])
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.contains("Not a directory") && !result.stderr.contains("NSCocoaErrorDomain"), "\(result.stderr)")
        #expect(try Data(contentsOf: file) == Data("mine".utf8))
    }

    @Test("make refuses a receipt larger than validate reads (16 MiB), before the work")
    func makeRefusesOversizedReceipt() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receipt = directory.appendingPathComponent("receipt.der").path
        // 16 subscriptions of 10,001 periods each: about 40 MB of receipt.
        let products = (0..<16).flatMap { ["--product", "com.example.sub\($0)"] }
        let result = try await forge(arguments: ["make"] + products + ["--renewals", "10000", "--now", "2025-01-01T00:00:00Z", "-o", receipt])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("transactions") && result.stderr.contains("at most"), "\(result.stderr)")
        // Within the bounds but over 16 MiB of bytes (forward from 1990: 10,000 months back from 2025 is before 1970).
        let large = (0..<2).flatMap { ["--product", "com.example.sub\($0)-\(String(repeating: "x", count: 1000))"] }
        let bytes = try await forge(
            arguments: ["make"] + large + ["--renewals", "10000", "--purchase-date", "1990-01-01T00:00:00Z", "--now", "2025-01-01T00:00:00Z", "-o", receipt])
        #expect(bytes.status == 64, "\(bytes.stderr)")
        #expect(bytes.stderr.contains("16777216"), "\(bytes.stderr)")
    }
}
