import Foundation
public import ReceiptForge
import ReceiptModel

/// Mutants of the StoreKit 2 vectors (`forge mutate --from 'jws-*'`): a catalogue JWS vector with one to
/// three more named JWS mutations drawn from those the catalogue uses, each with a recipe that replays byte
/// for byte. The oracle is `none`: some compositions stay valid (a high-s signature, an unknown field), so
/// mutants are judged by comparing verifiers.
public struct JWSMutator: Sendable {
    let forge: JWSForge

    public init(forge: JWSForge) { self.forge = forge }

    /// Every mutation the catalogue uses, by id (the first of each id), in catalogue order.
    static let registry: [(id: String, mutation: JWSMutation)] = {
        var seen = Set<String>()
        return JWSVectorCatalogue.all.flatMap(\.mutations).filter { seen.insert($0.id).inserted }.map { ($0.id, $0) }
    }()

    /// `count` mutants of the vectors `bases`, drawn with `seed`.
    public func mutants(from bases: [JWSVectorSpec], seed: UInt64, count: Int) -> [(name: String, recipe: MutantRecipe)] {
        guard !bases.isEmpty else { return [] }
        var random = SeededGenerator(seed: seed ^ 0x6A77_735F_6D75_7461)  // "jws_muta"
        return (0..<count).map { _ in
            let base = bases[Int(random.below(UInt64(bases.count)))]
            let steps = (0...Int(random.below(3))).map { _ in MutationStep(Self.registry[Int(random.below(UInt64(Self.registry.count)))].id) }
            let recipe = MutantRecipe(base: base.id, steps: steps, oracle: "none")
            let digest = StableHash.fnv1a((base.id + steps.map(\.mutation).joined(separator: "+")).utf8)
            let name = "mut-" + base.id.replacingOccurrences(of: "::", with: "-") + "-" + hexString(withUnsafeBytes(of: digest.bigEndian, Array.init).prefix(4))
            return (name, recipe)
        }
    }

    /// The mutant's bytes: the base vector with the recipe's steps after its own mutations.
    public func build(_ recipe: MutantRecipe) throws(ForgeError) -> [UInt8] {
        guard var spec = JWSVectorCatalogue.all.first(where: { $0.id == recipe.base }) else {
            throw ForgeError(.invalidRecipe, "no JWS vector \(recipe.base)")
        }
        for step in recipe.steps {
            guard let mutation = Self.registry.first(where: { $0.id == step.mutation })?.mutation else {
                throw ForgeError(.invalidRecipe, "unknown JWS mutation \(step.mutation); known: \(Self.registry.map(\.id).joined(separator: ", "))")
            }
            spec.mutations.append(mutation)
        }
        return try JWSVectorCatalogue.bytes(of: spec, forge: forge).bytes
    }
}
