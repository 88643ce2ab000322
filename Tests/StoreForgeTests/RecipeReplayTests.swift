import Foundation
import ReceiptCorpus
import StoreForge
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport

/// Every vector's recorded recipe (`provenance`: scenario, seed, time made, steps) rebuilds its committed
/// bytes, through the mutator `forge mutate --replay` runs.
@Suite("Recipe replay", .timeLimit(.minutes(2)))
struct RecipeReplayTests {
    static let vectors = Repository.vectors

    static func mutator() throws -> Mutator {
        Mutator(forge: sharedForge)
    }

    @Test("Every manifest recipe replays byte for byte from its provenance")
    func everyRecipeReplays() throws {
        let manifest = try ManifestIO.load(from: Self.vectors)
        let mutator = try Self.mutator()
        var mismatches: [String] = []
        for vector in manifest.vectors {
            let committed = try Data(contentsOf: Self.vectors.appendingPathComponent(vector.file))
            do {
                let bytes = try mutator.replay(try MutantRecipe(replaying: vector))
                if Data(bytes) != committed { mismatches.append(vector.id.text) }
            } catch {
                mismatches.append("\(vector.id): \(error.message)")
            }
        }
        #expect(mismatches.isEmpty, "recipes that do not replay: \(mismatches)")
    }

    @Test("A JWS step names its value: two alg values are two recipes")
    func jwsStepsCarryValues() throws {
        let manifest = try ManifestIO.load(from: Self.vectors)
        let recipes = ["jws-header::alg-none-signed", "jws-header::alg-es384", "jws-header::alg-rs256", "jws-header::alg-lowercase"].map { id in
            manifest.vectors.first { $0.id == id }?.provenance.recipe
        }
        #expect(Set(recipes.compactMap { $0 }).count == 4)
        #expect(recipes[1] == [RecipeStep(mutation: "jws.header-set", parameters: ["key": "alg", "value": "\"ES384\""])])
    }

    @Test("A bad JWS step is a coded error naming the step and the parameter, never a trap")
    func badStepsAreCodedErrors() throws {
        let mutator = try Self.mutator()
        let cases: [(MutationStep, String)] = [
            (MutationStep("jws.header-set-alg"), "unknown JWS mutation"),
            (MutationStep(MutationID.jwsHeaderSet, ["key": "alg"]), "'value'"),
            (MutationStep(MutationID.jwsHeaderSet, ["key": "alg", "value": "none"]), "'value' must be JSON"),
            (MutationStep(MutationID.jwsSignatureTruncate, ["count": "-1"]), "'count' must be between"),
            (MutationStep(MutationID.jwsSignatureFlipBit, ["bit": "x"]), "'bit' must be an integer"),
            (MutationStep(MutationID.jwsSignWith, ["role": "boss"]), "'role' must be one of"),
            (MutationStep(MutationID.jwsX5C, ["roles": "leaf,nobody"]), "'roles'"),
            (MutationStep(MutationID.jwsPayloadFill, ["key": "k", "count": "1048577"]), "'count' must be between"),
            (MutationStep(MutationID.jwsNested, ["field": "signedTransactionInfo", "mutation": "jws.nested"]), "cannot nest"),
        ]
        for (step, expected) in cases {
            let recipe = MutantRecipe(base: "jws-valid::transaction-production", steps: [MutationStep(MutationID.jwsSignatureEmpty), step], oracle: "none")
            do {
                _ = try mutator.replay(recipe)
                Issue.record("\(step) was accepted")
            } catch {
                #expect(error.code == .invalidRecipe)
                #expect(error.message.contains("recipe step 2"), "\(error.message)")
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }
}
