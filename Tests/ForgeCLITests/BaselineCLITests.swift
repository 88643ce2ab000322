import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

@Suite("forge run --baseline / --write-baseline", .timeLimit(.minutes(2)))
struct BaselineCLITests {
    static let arguments = [
        "run", "--target", "exit:\(Repository.file("examples/openssl-harness.sh").path)",
        "--run", "signature::*", "--run", "valid::appstore-no-purchases", "--profile", "apple-compatible",
        "--vectors", Repository.vectors.path,
    ]

    func edit(_ file: URL, _ change: (inout [[String: Any]]) -> Void) throws {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var entries = object["entries"] as? [[String: Any]] ?? []
        change(&entries)
        object["entries"] = entries
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(to: file)
    }

    @Test(
        "Known failures become XFAIL; a pass is XPASS, another failure CHANGED_FAILURE, an expired entry fails; reasons survive rewriting",
        .requires(.openssl))
    func lifecycle() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let baseline = directory.appendingPathComponent("baseline.json")
        let first = try await forge(arguments: Self.arguments + ["--write-baseline", baseline.path])
        #expect(first.status == 1, "three FALSE_ACCEPTs without a baseline")
        #expect(try await forge(arguments: Self.arguments + ["--baseline", baseline.path]).status == 0)

        try edit(baseline) { entries in
            for index in entries.indices where entries[index]["id"] as? String == "signature::md5" {
                entries[index]["reason"] = "openssl accepts MD5"
                entries[index]["issue"] = "https://example.invalid/issues/1"
            }
        }
        #expect(try await forge(arguments: Self.arguments + ["--baseline", baseline.path, "--write-baseline", baseline.path]).status == 0)
        let rewritten = try String(contentsOf: baseline, encoding: .utf8)
        #expect(rewritten.contains("openssl accepts MD5") && rewritten.contains("issues/1"))

        try edit(baseline) { $0.append(["id": "valid::appstore-no-purchases", "outcome": "FALSE_REJECT", "reason": "stale"]) }
        let stale = try await forge(arguments: Self.arguments + ["--baseline", baseline.path])
        #expect(stale.status == 1)
        #expect(stale.text.contains("XPASS"))

        try edit(baseline) { entries in
            entries.removeAll { $0["id"] as? String == "valid::appstore-no-purchases" }
            for index in entries.indices where entries[index]["id"] as? String == "signature::md5" { entries[index]["outcome"] = "FALSE_REJECT" }
        }
        let changed = try await forge(arguments: Self.arguments + ["--baseline", baseline.path])
        #expect(changed.status == 1)
        #expect(changed.text.contains("CHANGED_FAILURE  signature::md5"))

        try edit(baseline) { entries in
            for index in entries.indices where entries[index]["id"] as? String == "signature::md5" {
                entries[index]["outcome"] = "FALSE_ACCEPT"
                entries[index]["expires"] = "2001-01-01"
            }
        }
        let expired = try await forge(arguments: Self.arguments + ["--baseline", baseline.path])
        #expect(expired.status == 1)
        #expect(expired.text.contains("EXPIRED BASELINE ENTRY signature::md5"))

        try Data("not json".utf8).write(to: baseline)
        #expect(try await forge(arguments: Self.arguments + ["--baseline", baseline.path]).status == 65)
    }
}
