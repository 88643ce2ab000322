import Foundation
import ReceiptCorpus
import StoreForge
import _ForgeSupport
import Testing
import StoreModel

/// `MutantRecipe(choosingJWSFrom:)`, the JWS recipe-replay fuzz target's reading of bytes that are no JSON.
@Suite("JWS recipes from choice bytes", .timeLimit(.minutes(2)))
struct JWSChoiceRecipeTests {
    static let inputs: [[UInt8]] = [[], [0], [0xFF], Array(0...255), Array(repeating: 7, count: 300), (0..<400).map { UInt8(($0 * 37 + 11) % 256) }]
    static let jwsMutations = Mutation.catalogue.filter { $0.stage.artefact == .jws }
    static let jwsBases = VectorCatalogue.all.filter(\.artifact.isJWS)

    @Test("Any bytes make a JWS recipe of at most six JWS steps, the same on every read", arguments: inputs)
    func anyBytesMakeARecipe(_ bytes: [UInt8]) {
        let recipe = MutantRecipe(choosingJWSFrom: bytes)
        #expect(recipe == MutantRecipe(choosingJWSFrom: bytes))
        #expect(Self.jwsBases.contains { $0.id == recipe.base })
        #expect(recipe.steps.count <= 6)
        #expect(recipe.steps.allSatisfy { step in Self.jwsMutations.contains { $0.id == step.mutation } })
    }

    @Test("Every JWS mutation can be chosen, with every parameter its steps in the catalogue use")
    func everyMutationAndParameter() throws {
        // Second byte: the mutation; then for each parameter a byte that keeps it (non-zero mod 4) and two for its value.
        let chosen = Self.jwsMutations.indices.map { MutantRecipe(choosingJWSFrom: [0, UInt8($0)] + Array(repeating: 1, count: 24)).steps.first?.mutation }
        #expect(chosen == Self.jwsMutations.map(\.id))
        for spec in Self.jwsBases {
            for step in spec.mutations where step.mutation != MutationID.jwsNested.rawValue {
                let mutation = try #require(Self.jwsMutations.first { $0.id == step.mutation })
                #expect(Set(step.parameters.keys).isSubset(of: mutation.parameterNames), "\(step)")
            }
        }
    }

    @Test("A JWS step missing a parameter names one the mutation lists")
    func missingParametersAreListed() throws {
        let mutator = Mutator(forge: try Forge.bundled())
        let base = try #require(Self.jwsBases.first).id
        for mutation in Self.jwsMutations {
            do { _ = try mutator.replay(MutantRecipe(base: base, steps: [MutationStep(mutation.id)], oracle: "none")) } catch {
                let named = error.message.split(separator: "'").dropFirst().first.map(String.init)
                #expect(named.map(mutation.parameterNames.contains) == true, "\(mutation.id): \(error.message)")
            }
        }
    }
}
