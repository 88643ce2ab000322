import Foundation
import ForgeTestSupport
import Testing

/// `forge run merge` and `forge run matrix` read results.json files anyone can edit: a number out of the range the
/// runner writes (results.schema.json: durations, counts and the error budget ≥ 0, revisions ≥ 1) is refused with
/// exit 65 naming its place; a number in range, however large, is rendered, never a trap.
@Suite(.timeLimit(.minutes(2)))
struct ResultsFileRangeTests {
    static let vectors = Repository.vectors.path

    /// A real run's results.json of `chain::*` (one shard of two, or all of it), as a JSON object to edit.
    static func results(shard: String? = nil, in directory: URL) async throws -> [String: Any] {
        let file = directory.appendingPathComponent("run-\(UUID().uuidString).json")
        let ran = try await forge(
            arguments: ["run", "--target", "swift:reference", "--vectors", vectors, "--run", "chain::*", "--quiet", "--results", file.path]
                + (shard.map { ["--shard", $0] } ?? []))
        try #require(ran.status == 0, "\(ran.text)\(ran.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
    }

    static func save(_ object: [String: Any], in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("edited-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: object).write(to: file)
        return file.path
    }

    /// `object` with the first vector result's `key` set to `value`.
    static func editingFirstResult(_ object: [String: Any], _ key: String, _ value: Any) -> [String: Any] {
        var object = object
        var results = object["results"] as? [[String: Any]] ?? []
        if !results.isEmpty { results[0][key] = value }
        object["results"] = results
        return object
    }

    @Test("a run lasting Int64.max milliseconds merges and renders (JUnit time 9223372036854775.807000), no arithmetic overflow")
    func largestDuration() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var object = try await Self.results(in: directory)
        object["durationMilliseconds"] = Int.max
        object = Self.editingFirstResult(object, "durationMicroseconds", Int.max)
        let junit = directory.appendingPathComponent("junit.xml")
        let merged = try await forge("run", "merge", try Self.save(object, in: directory), "--vectors", Self.vectors, "--junit", junit.path)
        #expect(merged.exited && merged.status == 0, "\(merged.status) \(merged.stderr)")
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.contains(#"<testsuites name="receipt-conformance""#) && xml.contains(#"time="9223372036854775.807000""#), "\(xml.prefix(300))")
        #expect(xml.contains(#"time="9223372036854.775807""#), "the vector's microseconds")
    }

    @Test(
        "a number out of range is refused by merge and matrix with exit 65, naming its place; nothing is written",
        arguments: [
            ("/results/0/durationMicroseconds", "durationMicroseconds", -123_456), ("/results/0/durationMicroseconds", "durationMicroseconds", -1),
            ("/results/0/revision", "revision", 0), ("/durationMilliseconds", "durationMilliseconds", -1), ("/errorBudget", "errorBudget", -1),
            ("/counts/PASS", "counts", -5), ("/artifacts/excluded", "excluded", -1), ("/hello/maxConcurrency", "maxConcurrency", 0),
        ])
    func outOfRange(place: String, field: String, value: Int) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var object = try await Self.results(in: directory)
        switch field {
        case "durationMicroseconds", "revision": object = Self.editingFirstResult(object, field, value)
        case "counts": object["counts"] = ["PASS": value]
        case "excluded", "maxConcurrency":
            let member = field == "excluded" ? "artifacts" : "hello"
            var inner = try #require(object[member] as? [String: Any])
            inner[field] = value
            object[member] = inner
        default: object[field] = value
        }
        let file = try Self.save(object, in: directory)
        let junit = directory.appendingPathComponent("junit.xml")
        for arguments in [["run", "merge", file, "--vectors", Self.vectors, "--junit", junit.path], ["run", "matrix", file, "-o", junit.path]] {
            let result = try await forge(arguments: arguments)
            #expect(result.exited && result.status == 65, "\(arguments[1]) \(place) = \(value): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("\(place): expected at least"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: junit.path))
        }
    }

    @Test("two shards each excluding Int64.max vectors of other artefacts merge without overflow; the count is the corpus's")
    func excludedCountsAdded() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [String] = []
        for shard in ["1/2", "2/2"] {
            var object = try await Self.results(shard: shard, in: directory)
            var artifacts = try #require(object["artifacts"] as? [String: Any])
            artifacts["excluded"] = Int.max
            object["artifacts"] = artifacts
            files.append(try Self.save(object, in: directory))
        }
        let merged = directory.appendingPathComponent("merged.json")
        let result = try await forge(arguments: ["run", "merge"] + files + ["--vectors", Self.vectors, "--results", merged.path])
        #expect(result.exited && result.status == 0, "\(result.status) \(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: merged)) as? [String: Any])
        #expect(((object["artifacts"] as? [String: Any])?["excluded"] as? Int).map { $0 >= 0 && $0 < corpusCount } == true)
    }
}
