import Foundation
import ReceiptCorpus
import StoreForge
import Testing
import _ForgeSupport
import StoreModel

/// One catalogue, one registry, one mutator: receipt and StoreKit 2 vectors are one list, their mutations
/// one vocabulary whose stage says which artefact each edits, and one mutator draws and replays both.
@Suite("One registry", .timeLimit(.minutes(2)))
struct MutationRegistryTests {
    static let mutator = Mutator(forge: sharedForge)

    @Test("Every JWS mutation is used by a JWS vector; ids are unique across artefacts")
    func jwsCoverage() {
        let used = Set(
            VectorCatalogue.all.filter(\.artifact.isJWS).flatMap(\.mutations).flatMap { step in [step.mutation] + (step.parameters["mutation"].map { [$0] } ?? []) })
        let jws = Mutation.catalogue.filter { $0.stage.artefact == .jws }.map(\.id)
        #expect(jws.count >= 40)
        #expect(jws.allSatisfy { $0.hasPrefix("jws.") })
        #expect(Set(jws).subtracting(used).sorted() == [])
        #expect(Set(Mutation.catalogue.map(\.id)).count == Mutation.catalogue.count)
        #expect(Mutation.catalogue.map(\.id) == MutationID.allCases.map(\.rawValue))
    }

    @Test("A mutation of the other artefact is a coded error naming the step, never silently skipped")
    func wrongArtefact() throws {
        do {
            _ = try Self.mutator.replay(MutantRecipe(base: "valid::appstore-subscription", steps: [MutationStep(.jwsHeaderSet, ["key": "alg", "value": "1"])], oracle: "none"))
            Issue.record("a JWS step applied to a receipt")
        } catch {
            #expect(error.code == .invalidRecipe)
            #expect(error.message.contains("recipe step 1") && error.message.contains("not a receipt"), "\(error.message)")
        }
        do {
            _ = try Self.mutator.replay(MutantRecipe(base: "jws-valid::transaction-production", steps: [MutationStep(.dropAttribute, ["type": "2"])], oracle: "none"))
            Issue.record("a receipt step applied to a JWS")
        } catch {
            #expect(error.code == .invalidRecipe)
            #expect(error.message.contains("recipe step 1") && error.message.contains("not a JWS"), "\(error.message)")
        }
    }

    @Test("Mutants drawn over the whole catalogue start from receipts and JWS alike, and replay byte for byte")
    func drawsOverBoth() throws {
        let drawn = Self.mutator.recipes(from: VectorCatalogue.all, seed: 23, count: 40)
        let bases = Dictionary(uniqueKeysWithValues: VectorCatalogue.all.map { ($0.id, $0.artifact) })
        #expect(drawn.count == 40)
        #expect(drawn.contains { bases[$0.base]?.isJWS == true } && drawn.contains { bases[$0.base] == .receipt })
        for recipe in drawn {
            guard let mutant = try? Self.mutator.build(recipe) else { continue }
            #expect(try Self.mutator.replay(mutant.recipe) == mutant.bytes, "\(mutant.name)")
        }
    }
}
