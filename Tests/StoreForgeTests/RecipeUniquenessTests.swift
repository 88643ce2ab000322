import Foundation
import ReceiptCorpus
import Testing
import ForgeTestSupport

/// A manifest recipe names its bytes: two vectors whose files differ never record the same provenance for the
/// same artefact, so a result or a replay that cites a recipe cannot mean two things.
@Suite("Recipe uniqueness", .timeLimit(.minutes(2)))
struct RecipeUniquenessTests {
    @Test("No two vectors with different bytes share a recipe")
    func recipesAreUnique() throws {
        let manifest = try ManifestIO.load(from: Repository.vectors)
        struct Recipe: Encodable {
            var artifact: ArtifactKind?
            var provenance: Provenance
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var first: [Data: Vector] = [:]
        var shared: [String] = []
        for vector in manifest.vectors {
            let key = try encoder.encode(Recipe(artifact: vector.context.artifact, provenance: vector.provenance))
            if let earlier = first[key] {
                if earlier.sha256 != vector.sha256 { shared.append("\(earlier.id) / \(vector.id)") }
            } else {
                first[key] = vector
            }
        }
        #expect(shared.isEmpty, "\(shared.count) pairs of vectors with different bytes share a recipe: \(shared)")
    }
}
