import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

/// `forge mutate --replay` rebuilds a JWS vector from the recipe the manifest records for it.
@Suite("Recipe replay (CLI)", .timeLimit(.minutes(2)))
struct RecipeReplayCLITests {
    /// The manifest's provenance of `id`, as a recipe file's `own` steps.
    func recordedRecipe(_ id: String) throws -> (recipe: [String: Any], file: String) {
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: Repository.vectors.appendingPathComponent("manifest.json"))) as? [String: Any]
        let vector = try #require((manifest?["vectors"] as? [[String: Any]])?.first { $0["id"] as? String == id })
        let provenance = try #require(vector["provenance"] as? [String: Any])
        let recipe: [String: Any] = ["base": id, "steps": [], "oracle": "none", "own": provenance["recipe"] ?? []]
        return (recipe, try #require(vector["file"] as? String))
    }

    @Test(
        "A JWS vector's recorded recipe replays through forge mutate --replay to the committed bytes",
        arguments: [
            "jws-header::alg-es384", "jws-header::alg-rs256", "jws-header::alg-hs256-ec-key", "jws-nested::transaction-tampered", "jws-x5c::leaf-only",
        ])
    func replaysJWS(_ id: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (recipe, file) = try recordedRecipe(id)
        let recipeFile = directory.appendingPathComponent("recipe.json")
        try JSONSerialization.data(withJSONObject: recipe).write(to: recipeFile)
        let out = directory.appendingPathComponent("again.jws")
        let result = try await forge("mutate", "--replay", recipeFile.path, "-o", out.path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Data(contentsOf: out) == Data(contentsOf: Repository.vectors.appendingPathComponent(file)))
    }

    @Test("A JWS step with a bad parameter exits 65 naming the step and the parameter")
    func badParameter() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recipe: [String: Any] = [
            "base": "jws-valid::transaction-production", "oracle": "none",
            "steps": [["mutation": "jws.signature-truncate", "parameters": ["count": "99999999999"]]],
        ]
        let recipeFile = directory.appendingPathComponent("recipe.json")
        try JSONSerialization.data(withJSONObject: recipe).write(to: recipeFile)
        let result = try await forge("mutate", "--replay", recipeFile.path, "-o", directory.appendingPathComponent("x.jws").path)
        #expect(result.status == 65)
        #expect(result.stderr.contains("recipe step 1") && result.stderr.contains("'count'"), "\(result.stderr)")
    }
}
