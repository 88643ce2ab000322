import Foundation
import ForgeTestSupport
import Testing

/// A manifest's provenance is self-describing: copied into a recipe file, its scenario, seed, time made and
/// steps rebuild the vector through `forge mutate --replay` even from another base vector.
@Suite("Manifest provenance replay (CLI)", .timeLimit(.minutes(2)))
struct ManifestReplayCLITests {
    @Test(
        "A receipt vector's recorded provenance replays to its bytes from another base",
        arguments: ["valid::appstore-non-consumable", "time::leaf-expired-now-valid-at-creation", "time::creation-after-leaf-expiry", "xcode::2023-subscription"])
    func replaysFromAnotherBase(_ id: String) async throws {
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: Repository.vectors.appendingPathComponent("manifest.json"))) as? [String: Any]
        let vector = try #require((manifest?["vectors"] as? [[String: Any]])?.first { $0["id"] as? String == id })
        let provenance = try #require(vector["provenance"] as? [String: Any])
        var recipe: [String: Any] = ["base": "binding::production-matches", "steps": [], "oracle": "none", "own": provenance["recipe"] ?? []]
        for key in ["scenario", "seed", "made"] { recipe[key] = provenance[key] }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recipeFile = directory.appendingPathComponent("recipe.json")
        try JSONSerialization.data(withJSONObject: recipe).write(to: recipeFile)
        let out = directory.appendingPathComponent("again.der")
        let result = try await forge("mutate", "--replay", recipeFile.path, "-o", out.path)
        #expect(result.status == 0, "\(result.stderr)")
        let file = try #require(vector["file"] as? String)
        #expect(try Data(contentsOf: out) == Data(contentsOf: Repository.vectors.appendingPathComponent(file)), "\(id)")
    }
}
