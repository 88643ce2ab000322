import Foundation
import ReceiptForge
import ForgeSupport
import Testing

/// `MutantRecipe(choosingJWSFrom:)`, the JWS recipe-replay fuzz target's reading of bytes that are no JSON.
@Suite("JWS recipes from choice bytes")
struct JWSChoiceRecipeTests {
    static let inputs: [[UInt8]] = [[], [0], [0xFF], Array(0...255), Array(repeating: 7, count: 300), (0..<400).map { UInt8(($0 * 37 + 11) % 256) }]

    @Test("Any bytes make a JWS recipe of at most six JWS steps, the same on every read", arguments: inputs)
    func anyBytesMakeARecipe(_ bytes: [UInt8]) {
        let recipe = MutantRecipe(choosingJWSFrom: bytes)
        #expect(recipe == MutantRecipe(choosingJWSFrom: bytes))
        #expect(JWSVectorCatalogue.all.contains { $0.id == recipe.base })
        #expect(recipe.steps.count <= 6)
        #expect(recipe.steps.allSatisfy { JWSMutationID(rawValue: $0.mutation) != nil })
    }

    @Test("Every JWS mutation can be chosen, with every parameter its steps in the catalogue use")
    func everyMutationAndParameter() {
        // Second byte: the mutation; then for each parameter a byte that keeps it (non-zero mod 4) and two for its value.
        let chosen = JWSMutationID.allCases.indices.map { MutantRecipe(choosingJWSFrom: [0, UInt8($0)] + Array(repeating: 1, count: 24)).steps.first?.mutation }
        #expect(chosen == JWSMutationID.allCases.map(\.rawValue))
        for spec in JWSVectorCatalogue.all {
            for step in spec.mutations {
                guard let id = JWSMutationID(rawValue: step.mutation), id != .nested else { continue }
                #expect(Set(step.parameters.keys).isSubset(of: id.parameterNames), "\(step)")
            }
        }
    }

    @Test("A JWS step missing a parameter names one the mutation lists")
    func missingParametersAreListed() {
        for id in JWSMutationID.allCases {
            do { _ = try JWSMutation.named(MutationStep(id)) } catch {
                let named = error.message.split(separator: "'").dropFirst().first.map(String.init)
                #expect(named.map(id.parameterNames.contains) == true, "\(id): \(error.message)")
            }
        }
    }
}
