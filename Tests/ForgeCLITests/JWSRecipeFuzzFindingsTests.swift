import Foundation
import ForgeTestSupport
import Testing

/// What fuzzing JWS recipe replay found (`FuzzTesting/FailCases/FuzzJWSRecipeReplay-*`), through the built
/// `forge mutate --replay` as users run it: each hostile recipe exits 65 naming the step and the parameter.
@Suite("JWS recipe fuzz findings (CLI)", .timeLimit(.minutes(2)))
struct JWSRecipeFuzzFindingsTests {
    /// Replays `steps` on `base`; forge must end within a minute (these took minutes, and gigabytes, before their
    /// bounds), else it is killed and the test fails with ``DeadlineExceeded``.
    func replay(_ steps: [[String: Any]], base: String = "jws-valid::transaction-production") async throws -> RunResult {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recipeFile = directory.appendingPathComponent("recipe.json")
        try JSONSerialization.data(withJSONObject: ["base": base, "oracle": "none", "steps": steps]).write(to: recipeFile)
        return try await run(Binaries.forge, ["mutate", "--replay", recipeFile.path, "-o", directory.appendingPathComponent("out.jws").path], deadline: .seconds(60))
    }

    /// `count` bounded the copies, not the bytes: 1,048,576 copies of a 1,000-byte `character` asked for
    /// a gigabyte (3.5 GB resident, minutes).
    @Test("A fill whose count times character exceeds the added-bytes bound exits 65 naming the step and 'character'", arguments: ["jws.payload-fill", "jws.header-fill"])
    func fillBytesAreBounded(_ mutation: String) async throws {
        let result = try await replay([
            ["mutation": "jws.signature-empty", "parameters": [String: String]()],
            ["mutation": mutation, "parameters": ["key": "k", "count": "1048576", "character": String(repeating: "A", count: 1000)]],
        ])
        #expect(result.status == 65)
        #expect(result.stderr.contains("recipe step 2") && result.stderr.contains("'character'"), "\(result.stderr)")
    }

    @Test("A fill of exactly the bound still makes its mutant")
    func fillAtTheBound() async throws {
        let result = try await replay([["mutation": "jws.payload-fill", "parameters": ["key": "k", "count": "524288", "character": "é"]]])
        #expect(result.status == 0, "\(result.stderr)")
    }
}

extension JWSRecipeFuzzFindingsTests {
    static func fill(_ mutation: String, _ key: String, count: Int) -> [String: Any] {
        ["mutation": mutation, "parameters": ["key": key, "count": String(count)]]
    }

    /// Each fill was bounded, not their sum: 256 fills of 1 MiB of NUL (six bytes each in JSON) under distinct
    /// keys made a 2 GB JWS from a 25 KB recipe (20 of them: 168 MB, 16 s).
    @Test("Fills that add more than 1 MiB in all exit 65 naming the step past the bound and 'count'")
    func fillsAreBoundedInAll() async throws {
        let full = (1...4).map { Self.fill($0 % 2 == 0 ? "jws.header-fill" : "jws.payload-fill", "k\($0)", count: 1 << 18) }
        let atBound = try await replay(full)
        #expect(atBound.status == 0, "\(atBound.stderr)")
        let past = try await replay(full + [Self.fill("jws.payload-fill", "k5", count: 1)])
        #expect(past.status == 65)
        #expect(past.stderr.contains("recipe step 5") && past.stderr.contains("'count'"), "\(past.stderr)")
        let nested = try await replay(
            full + [["mutation": "jws.nested", "parameters": ["field": "signedTransactionInfo", "mutation": "jws.payload-fill", "key": "k", "count": "1"]]],
            base: "jws-valid::notification-production")
        #expect(nested.status == 65)
        #expect(nested.stderr.contains("recipe step 5") && nested.stderr.contains("'count'"), "\(nested.stderr)")
    }
}
