import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

/// `forge make --count N --out DIR`: many receipts in one process, deterministic whatever the thread count.
@Suite("forge make --count (batch)", .timeLimit(.minutes(2)))
struct BatchTests {
    static let pinned = ["--product", "com.example.pro", "--renewals", "1", "--seed", "7", "--now", "2025-01-01T00:00:00Z"]

    private func files(_ directory: URL) throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            contents[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return contents
    }

    @Test("the same bytes with 1 and 2 jobs; receipt 0 is the single receipt of the same seed; every receipt distinct and valid")
    func deterministic() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let one = directory.appendingPathComponent("one"), two = directory.appendingPathComponent("two")
        let first = try await forge(arguments: ["make"] + Self.pinned + ["--count", "40", "--out", one.path, "--jobs", "1"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("made 40 appstore receipts"))
        #expect(try await forge(arguments: ["make"] + Self.pinned + ["--count", "40", "--out", two.path, "--jobs", "2", "-q"]).status == 0)
        let made = try files(one)
        #expect(made.count == 41)  // 40 receipts and index.jsonl
        #expect(made == (try files(two)))
        #expect(Set(made.values).count == 41, "every receipt differs")

        let single = directory.appendingPathComponent("single.der")
        #expect(try await forge(arguments: ["make"] + Self.pinned + ["-o", single.path, "-q"]).status == 0)
        #expect(made["receipt-00.der"] == (try Data(contentsOf: single)))

        let index = String(decoding: try #require(made["index.jsonl"]), as: UTF8.self).split(separator: "\n")
        #expect(index.count == 40)
        let last = try #require(try JSONSerialization.jsonObject(with: Data(index[39].utf8)) as? [String: Any])
        #expect(last["file"] as? String == "receipt-39.der")
        #expect(last["seed"] as? String == "46")
        #expect((last["transactionIds"] as? [String])?.count == 2)
        let checked = try await forge("validate", one.appendingPathComponent("receipt-39.der").path, "--at", "2025-01-01T00:00:00Z")
        #expect(checked.status == 0, "\(checked.text)")
    }

    @Test(
        "misuse is a usage error naming the fix",
        arguments: [
            (["--count", "3"], "needs --out"), (["--out", "x"], "give --count"), (["--count", "3", "--out", "x", "-o", "y"], "-o/--output is for one receipt"),
            (["--count", "0", "--out", "x"], "between 1 and"), (["--count", "3", "--out", "x", "--jobs", "0"], "--jobs"),
            (["--jobs", "2"], "--jobs is for a batch"),
        ])
    func misuse(arguments: [String], message: String) async throws {
        let result = try await forge(arguments: ["make", "--product", "p"] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
