import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

/// Sharding and merging, the error budget, differential mode and the report files, through the binary.
@Suite("forge run controls and reports", .timeLimit(.minutes(2)))
struct RunControlsCLITests {
    static let vectors = Repository.vectors.path
    /// The openssl example harness: `openssl cms -verify`, with false accepts the corpus knows.
    static let opensslHarness = "exit:" + Repository.file("examples/openssl-harness.sh").path

    static func load(_ url: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    @Test("Three shards partition the corpus; merge gives back the whole run, and names vectors no shard ran")
    func shardAndMerge() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [String] = [], seen: [String] = []
        for index in 1...3 {
            let file = directory.appendingPathComponent("shard\(index).json")
            let run = try await forge(
                "run", "--target", "swift:reference", "--profile", "apple-compatible", "--vectors", Self.vectors,
                "--shard", "\(index)/3", "--results", file.path, "--quiet")
            #expect(run.status == 0, "\(run.text)\(run.stderr)")
            let ids = (try Self.load(file)["results"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(ids.count > corpusCount / 6 && ids.count < corpusCount / 2, "shard \(index) has \(ids.count)")
            seen += ids
            files.append(file.path)
        }
        #expect(seen.count == corpusCount && Set(seen).count == corpusCount)
        // Stable: the same shard twice holds the same ids.
        let again = directory.appendingPathComponent("again.json")
        _ = try await forge("run", "--target", "swift:reference", "--vectors", Self.vectors, "--shard", "2/3", "--results", again.path, "--quiet")
        let first = (try Self.load(URL(fileURLWithPath: files[1]))["results"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect((try Self.load(again)["results"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } == first)

        let merged = directory.appendingPathComponent("merged.json"), junit = directory.appendingPathComponent("junit.xml")
        let merge = try await forge(arguments: ["run", "merge"] + files + ["--vectors", Self.vectors, "--results", merged.path, "--junit", junit.path])
        #expect(merge.status == 0, "\(merge.text)\(merge.stderr)")
        let whole = try Self.load(merged)
        #expect((whole["results"] as? [Any])?.count == corpusCount)
        #expect(agreeing.reduce(0) { $0 + ((whole["counts"] as? [String: Int])?[$1] ?? 0) } == corpusCount - corpusOnlineCount)
        #expect((whole["counts"] as? [String: Int])?["SKIP"] == corpusOnlineCount, "the reference validator does not go online")
        #expect(try String(contentsOf: junit, encoding: .utf8).components(separatedBy: "<testcase ").count - 1 == corpusCount)

        let partial = try await forge(arguments: ["run", "merge", files[0], files[2], "--vectors", Self.vectors, "--results", merged.path])
        #expect(partial.status == 0)
        #expect(partial.stderr.contains("in no shard"))
        let skipped = (try Self.load(merged)["results"] as? [[String: Any]] ?? []).filter { $0["outcome"] as? String == "SKIP" && !isOfflineSkip($0) }.count
        #expect(skipped == first.count)

        let twice = try await forge(arguments: ["run", "merge", files[0], files[0], "--vectors", Self.vectors])
        #expect(twice.status == 65 && twice.stderr.contains("more than one shard"))
        #expect(try await forge("run", "--target", "swift:reference", "--shard", "4/3").status == 64)
    }

    @Test("--max-errors: failures within the budget let the run finish; one more stops it with the rest SKIP and exit 2")
    func errorBudget() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Crashes on chain vectors and accepts the rest (valid ones here).
        let script = directory.appendingPathComponent("flaky.sh")
        try "#!/bin/sh\ncat > /dev/null\ncase \"$RF_ID\" in chain::*) kill -9 $$ ;; esac\nexit 0\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let results = directory.appendingPathComponent("results.json")
        let common = [
            "run", "--target", "exit:\(script.path)", "--vectors", Self.vectors, "--run", "valid::appstore-*", "--run", "chain::*",
            "--parallel", "1", "--results", results.path, "--quiet",
        ]
        let tolerant = try await forge(arguments: common + ["--max-errors", "100"])
        #expect(tolerant.status == 0, "crashes within the budget are tolerated: \(tolerant.text)")
        let all = try Self.load(results)["results"] as? [[String: Any]] ?? []
        #expect(all.contains { $0["outcome"] as? String == "CRASH" } && !all.contains { $0["outcome"] as? String == "SKIP" })

        let strict = try await forge(arguments: common + ["--max-errors", "2"])
        #expect(strict.status == 2)
        #expect(strict.text.contains("STOPPED"))
        let stopped = try Self.load(results)
        let outcomes = (stopped["results"] as? [[String: Any]] ?? []).compactMap { $0["outcome"] as? String }
        #expect(outcomes.count == all.count, "every selected vector is still listed")
        #expect(outcomes.filter { $0 == "CRASH" }.count == 3)
        #expect(outcomes.contains("SKIP"))
        #expect(stopped["stoppedEarly"] is String)
    }

    @Test("Two targets: differential mode lists where they disagree, in results.json and on stdout", .requires(.openssl))
    func differential() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let results = directory.appendingPathComponent("diff.json"), html = directory.appendingPathComponent("matrix.html")
        let run = try await forge(
            "run", "--target", "swift:reference", "--target", Self.opensslHarness,
            "--vectors", Self.vectors, "--run", "signature::*", "--run", "valid::appstore-*", "--profile", "apple-compatible",
            "--results", results.path, "--html", html.path, "--quiet")
        #expect(run.status == 1, "the openssl harness has false accepts: \(run.text)")
        #expect(run.text.contains("DISAGREE signature::md5"))
        #expect(!run.text.contains("DISAGREE valid::"))
        let parsed = try Self.load(results)
        let ids = (parsed["disagreements"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(ids.contains("signature::md5") && ids.contains("signature::two-signer-infos"))
        #expect((parsed["runs"] as? [Any])?.count == 2)
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.contains("signature::md5"))
        #expect(try await forge("run", "--target", "swift:reference", "--target", "swift:reference", "--baseline", "x.json").status == 64)
    }

    @Test(
        "Per-target --label, --features and --granularity in differential mode; each target's time; forge run matrix puts the runs side by side",
        .requires(.openssl))
    func perTargetOptionsAndMatrix() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let openssl = Self.opensslHarness
        let results = directory.appendingPathComponent("diff.json")
        // Two exit targets over the same script: one claims Xcode support, the other does not; only the second reads reasons.
        let run = try await forge(
            "run", "--target", openssl, "--target", openssl, "--label", "openssl-all", "--label", "openssl-no-xcode",
            "--features", "device-hash,sha1,robustness,large,xcode", "--features", "device-hash,sha1,robustness,large",
            "--granularity", "none", "--granularity", "coarse",
            "--vectors", Self.vectors, "--run", "xcode::*", "--run", "valid::appstore-no-purchases", "--run", "signature::md5",
            "--profile", "apple-compatible", "--results", results.path, "--quiet")
        #expect(run.text.contains("== openssl-all: ") && run.text.contains("== openssl-no-xcode: "), "\(run.text)\(run.stderr)")
        #expect(run.text.contains("Times: openssl-all ") && run.text.contains(", openssl-no-xcode "))
        let parsed = try Self.load(results)
        #expect(parsed["targets"] as? [String] == ["openssl-all", "openssl-no-xcode"])
        let runs = parsed["runs"] as? [[String: Any]] ?? []
        #expect(runs.map { $0["label"] as? String } == ["openssl-all", "openssl-no-xcode"])
        let skipped = runs.map { ($0["results"] as? [[String: Any]] ?? []).filter { $0["outcome"] as? String == "SKIP" }.count }
        #expect(skipped[0] == 0 && skipped[1] == corpusXcodeCount, "the second target declared no xcode: \(skipped)")
        #expect((runs[1]["hello"] as? [String: Any])?["errorGranularity"] as? String == "coarse")
        #expect((runs[0]["hello"] as? [String: Any])?["errorGranularity"] as? String == "none")

        // The same runs as single-target result files, then the matrix.
        var files: [String] = []
        for (label, features) in [("openssl-all", "device-hash,sha1,robustness,large,xcode"), ("openssl-no-xcode", "device-hash,sha1,robustness,large")] {
            let file = directory.appendingPathComponent("\(label).json")
            _ = try await forge(
                "run", "--target", openssl, "--label", label, "--features", features, "--vectors", Self.vectors, "--run", "xcode::*",
                "--run", "valid::appstore-no-purchases", "--run", "signature::md5", "--profile", "apple-compatible", "--results", file.path, "--quiet")
            files.append(file.path)
        }
        let matrix = try await forge(arguments: ["run", "matrix"] + files)
        #expect(matrix.status == 0, "\(matrix.stderr)")
        #expect(matrix.text.contains("| openssl-all | ") && matrix.text.contains("| openssl-no-xcode | "), "\(matrix.text)")
        #expect(matrix.text.contains("| family | openssl-all | openssl-no-xcode |"))
        #expect(matrix.text.contains("| signature (1) | 0 / 1 / 0 / 0 / 0 | 0 / 1 / 0 / 0 / 0 |"), "md5 is a false accept for openssl: \(matrix.text)")
        #expect(try await forge("run", "matrix", directory.appendingPathComponent("nope.json").path).status != 0)

        // Counts that do not match the targets are usage errors, as are unknown features.
        #expect(try await forge("run", "--target", openssl, "--target", openssl, "--label", "only-one").status == 64)
        #expect(try await forge("run", "--target", openssl, "--target", openssl, "--features", "xcode", "--features", "sha1", "--features", "large").status == 64)
        let unknown = try await forge("run", "--target", openssl, "--features", "xcode,teleport")
        #expect(unknown.status == 64 && unknown.stderr.contains("teleport") && unknown.stderr.contains("transport-decoding"))
    }

    @Test("Markdown and HTML reports are written from the run, name the failures and stand alone", .requires(.openssl))
    func reports() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let markdown = directory.appendingPathComponent("summary.md"), html = directory.appendingPathComponent("report.html")
        let run = try await forge(
            "run", "--target", Self.opensslHarness, "--vectors", Self.vectors,
            "--run", "signature::*", "--run", "valid::appstore-*", "--profile", "apple-compatible",
            "--markdown", markdown.path, "--html", html.path)
        #expect(run.status == 1)
        let summary = try String(contentsOf: markdown, encoding: .utf8)
        #expect(summary.contains("FALSE_ACCEPT") && summary.contains("signature::md5") && summary.contains("| "))
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.hasPrefix("<!DOCTYPE html>") || page.hasPrefix("<!doctype html>"))
        #expect(page.contains("signature::md5"))
        #expect(!page.contains("src=\"http") && !page.contains("href=\"http"))
        // The console summary table comes after the failures.
        #expect(run.text.contains("FALSE_ACCEPT"))
    }
}
