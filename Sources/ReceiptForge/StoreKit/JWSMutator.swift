public import StoreModel
import Foundation
import ReceiptModel
public import ForgeSupport

/// Mutants of the StoreKit 2 vectors (`forge mutate --from 'jws-*'`): a catalogue JWS vector with one to
/// three more named JWS mutations drawn from those the catalogue uses, each with a recipe that replays byte
/// for byte. The oracle is `none`: some compositions stay valid (a high-s signature, an unknown field), so
/// mutants are judged by comparing verifiers.
public struct JWSMutator: Sendable {
    let forge: JWSForge

    public init(forge: JWSForge) { self.forge = forge }

    /// Every step the catalogue uses (each id with its parameters, once), in catalogue order: what mutants draw.
    static let registry: [MutationStep] = {
        var seen = Set<MutationStep>()
        return JWSVectorCatalogue.all.flatMap(\.mutations).filter { seen.insert($0).inserted }
    }()

    /// `count` mutants of the vectors `bases`, drawn with `seed`.
    public func mutants(from bases: [JWSVectorSpec], seed: UInt64, count: Int) -> [(name: String, recipe: MutantRecipe)] {
        guard !bases.isEmpty else { return [] }
        var random = SeededGenerator(seed: seed ^ 0x6A77_735F_6D75_7461)  // "jws_muta"
        return (0..<count).map { _ in
            let base = bases[Int(random.below(UInt64(bases.count)))]
            let steps = (0...Int(random.below(3))).map { _ in Self.registry[Int(random.below(UInt64(Self.registry.count)))] }
            let recipe = MutantRecipe(base: base.id, steps: steps, oracle: "none")
            let digest = StableHash.fnv1a(recipe.id.utf8)
            let name = "mut-" + base.id.replacingOccurrences(of: "::", with: "-") + "-" + hexString(withUnsafeBytes(of: digest.bigEndian, Array.init).prefix(4))
            return (name, recipe)
        }
    }

    /// The mutant's bytes: the base vector with the recipe's steps after its own mutations. A step that is
    /// unknown or has a parameter missing, malformed or out of range is an ``ForgeError/Code/invalidRecipe``
    /// naming the recipe step and the parameter.
    public func build(_ recipe: MutantRecipe) throws(ForgeError) -> [UInt8] {
        guard var spec = JWSVectorCatalogue.all.first(where: { $0.id == recipe.base }) else {
            throw ForgeError(.invalidRecipe, "no JWS vector \(recipe.base)")
        }
        if let own = recipe.own { spec.mutations = own }
        guard spec.mutations.count + recipe.steps.count <= MutationBounds.maxSteps else {
            throw ForgeError(.invalidRecipe, "recipe has \(recipe.steps.count) steps; with the base vector's own, at most \(MutationBounds.maxSteps) are allowed")
        }
        for (index, step) in recipe.steps.enumerated() {
            do throws(ForgeError) { _ = try JWSMutation.named(step) } catch { throw ForgeError(error.code, "recipe step \(index + 1): \(error.message)") }
        }
        spec.mutations += recipe.steps
        return try JWSVectorCatalogue.bytes(of: spec, forge: forge).bytes
    }
}

/// Rebuilds any recipe, receipt or JWS, byte for byte: what `forge mutate --replay` runs.
public struct RecipeReplayer: Sendable {
    public let receipts: Mutator
    public let jws: JWSMutator

    public init(receipts: Mutator, jws: JWSMutator) {
        self.receipts = receipts
        self.jws = jws
    }

    public func replay(_ recipe: MutantRecipe) throws(ForgeError) -> [UInt8] {
        JWSVectorCatalogue.all.contains { $0.id == recipe.base } ? try jws.build(recipe) : try receipts.replay(recipe)
    }
}
