import Foundation
import ForgeTestSupport
import Testing

/// Issue 20's reproductions: `forge mutate` over the whole catalogue, receipts and JWS together, died with SIGILL
/// (a JWS step wrote `x5c[0]` after an earlier step removed x5c) for seeds 23, 29 and 31, and over `jws-valid::*`.
@Suite("forge mutate never traps", .timeLimit(.minutes(2)))
struct MutateTotalityTests {
    @Test(
        "forge mutate makes every drawn mutant or skips it with a reason, exit 0",
        arguments: [("*", 23), ("*", 29), ("*", 31), ("jws-valid::*", 23)])
    func neverTraps(_ pattern: String, _ seed: Int) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("m")
        let result = try await forge("mutate", "--from", pattern, "--seed", String(seed), "--count", "300", "--out", out.path)
        #expect(result.status == 0, "exit \(result.status) (132 is SIGILL): \(result.stderr.suffix(400))")
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path)
        let recipes = files.filter { $0.hasSuffix(".recipe.json") }
        #expect(!recipes.isEmpty)
        #expect(files.count == 2 * recipes.count, "each mutant has its recipe")
    }
}
