import Foundation
import ForgeTestSupport
import Testing

/// Issue 21 item 13: `forge make --count N --out DIR` writes into a new or empty DIR; a non-empty one (an earlier
/// batch included) refuses with 73 and changes nothing, unless `--force`, which replaces DIR whole, all or nothing.
@Suite("forge make --count --out: a non-empty folder needs --force", .timeLimit(.minutes(2)))
struct MakeBatchOutTests {
    private static let batch = ["make", "--product", "com.example.pro", "--seed", "7", "--now", "2025-01-01T00:00:00Z", "-q"]

    private func names(_ parent: URL) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: parent.path).sorted() }

    @Test("over an earlier batch: refused (73) naming --force, nothing changed; with --force the new batch alone, index listing every file")
    func earlierBatch() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("batch")
        #expect(try await forge(arguments: Self.batch + ["--count", "12", "--out", out.path]).status == 0)
        let before = try fileTree(out, folders: true)
        #expect(before.count == 13)

        let refused = try await forge(arguments: Self.batch + ["--count", "3", "--out", out.path])
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("not empty") && refused.stderr.contains("--force"), "\(refused.stderr)")
        #expect(try fileTree(out, folders: true) == before)
        #expect(try names(parent) == ["batch"])

        let forced = try await forge(arguments: Self.batch + ["--count", "3", "--out", out.path, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        let after = try fileTree(out, folders: true)
        #expect(Set(after.keys) == ["receipt-0.der", "receipt-1.der", "receipt-2.der", "index.jsonl"])
        let listed = String(decoding: try #require(after["index.jsonl"]), as: UTF8.self).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["file"] as? String
        }
        #expect(Set(listed) == Set(after.keys).subtracting(["index.jsonl"]))
        #expect(try names(parent) == ["batch"])
    }

    @Test("--force replaces a folder whole: files forge did not write and empty folders go too, as --help says")
    func forceReplacesWhole() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("batch")
        try FileManager.default.createDirectory(at: out.appendingPathComponent("empty/deeper"), withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: out.appendingPathComponent("notes.txt"))
        try Data("old".utf8).write(to: out.appendingPathComponent("receipt-7.der"))
        let refused = try await forge(arguments: Self.batch + ["--count", "2", "--out", out.path])
        #expect(refused.status == 73 && refused.stderr.contains("notes.txt"), "\(refused.stderr)")
        #expect(try fileTree(out, folders: true).count == 4)

        let forced = try await forge(arguments: Self.batch + ["--count", "2", "--out", out.path, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(Set(try fileTree(out, folders: true).keys) == ["receipt-0.der", "receipt-1.der", "index.jsonl"])
        #expect(try names(parent) == ["batch"])
        let help = try await forge("make", "--help")
        let words = help.text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("--force") && words.contains("Deletes everything in DIR (files forge did not write"), "\(help.text)")
    }

    @Test("--force is all or nothing: a batch that fails leaves the old folder as it was")
    func forceAllOrNothing() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let out = parent.appendingPathComponent("batch")
        #expect(try await forge(arguments: Self.batch + ["--count", "4", "--out", out.path]).status == 0)
        let before = try fileTree(out, folders: true)
        let failed = try await forge(arguments: Self.batch + ["--count", "4", "--out", out.path, "--force", "--renewals", "10000", "--period", "P1Y"])
        #expect(failed.status == 64, "\(failed.stderr)")
        #expect(try fileTree(out, folders: true) == before)
        #expect(try names(parent) == ["batch"])
    }

    @Test("--force never replaces a file, nor a folder that holds the current directory")
    func forceRefusals() async throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let file = parent.appendingPathComponent("file")
        try Data("keep".utf8).write(to: file)
        let onFile = try await forge(arguments: Self.batch + ["--count", "2", "--out", file.path, "--force"])
        #expect(onFile.status == 73, "\(onFile.stderr)")
        #expect(try Data(contentsOf: file) == Data("keep".utf8))

        let work = parent.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work.appendingPathComponent("inner"), withIntermediateDirectories: true)
        let here = try await forge(arguments: Self.batch + ["--count", "2", "--out", work.path, "--force"], in: work.appendingPathComponent("inner"))
        #expect(here.status == 73, "\(here.stderr)")
        #expect(here.stderr.contains("current directory"), "\(here.stderr)")
        #expect(FileManager.default.fileExists(atPath: work.appendingPathComponent("inner").path))
        let misuse = try await forge(arguments: ["make", "--product", "p", "--force"])
        #expect(misuse.status == 64 && misuse.stderr.contains("--force"), "\(misuse.stderr)")
    }
}
