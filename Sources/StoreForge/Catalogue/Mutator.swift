public import StoreModel
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptModel
public import ReceiptCorpus
import _ForgeSupport

/// A structure-aware mutant: a catalogue vector plus random mutation steps, all reproducible.
public struct MutantRecipe: Codable, Sendable, Hashable {
    /// The catalogue vector the mutant starts from.
    public var base: String
    /// Extra steps applied after the base vector's own.
    public var steps: [MutationStep]
    /// `must-reject` when signed bytes changed after signing (no valid signature can survive);
    /// `none` when the forge re-signed, so only differential testing can judge the mutant.
    public var oracle: String
    /// The base vector's own steps as a manifest records them (`provenance.recipe`): when present they
    /// replace the catalogue's, so a manifest vector's recipe replays from its record.
    public var own: [MutationStep]?
    /// The rest of the base vector's provenance as the manifest records it (its scenario, seed, time made, a
    /// notification's type and subtype): each, when present, replaces the catalogue's.
    public var scenario: Scenario?
    public var seed: String?
    public var made: String?
    public var notificationType: String?
    public var subtype: String?

    public init(base: String, steps: [MutationStep], oracle: String, own: [MutationStep]? = nil) {
        self.base = base
        self.steps = steps
        self.oracle = oracle
        self.own = own
    }

    /// The recipe that rebuilds a manifest vector from its provenance alone: no steps beyond the recorded ones.
    public init(replaying vector: Vector) throws(ForgeError) {
        self.init(base: vector.id.text, steps: [], oracle: "none", own: vector.provenance.recipe.map { MutationStep($0.mutation, $0.parameters) })
        let provenance = vector.provenance
        if let recorded = provenance.scenario {
            guard let data = try? JSONEncoder().encode(recorded), let scenario = try? JSONDecoder().decode(Scenario.self, from: data) else {
                throw ForgeError(.invalidRecipe, "\(vector.id): the recorded scenario is not a scenario")
            }
            self.scenario = scenario
        }
        (seed, made, notificationType, subtype) = (provenance.seed, provenance.made, provenance.notificationType, provenance.subtype)
    }

    /// A recipe read from bytes as a sequence of choices (the recipe-replay fuzz target's input): a base
    /// vector, then up to six steps of catalogue mutations whose parameters take values around every bound,
    /// text where numbers belong, and the words the parameters know. Any bytes make some recipe.
    public init(choosingFrom bytes: some Collection<UInt8>) {
        var choices = bytes.makeIterator()
        func next() -> Int { choices.next().map(Int.init) ?? 0 }
        var remaining = bytes.count
        func nextCounted() -> Int { remaining -= 1; return next() }
        let bases = VectorCatalogue.receipts
        let base = bases[nextCounted() % bases.count].id
        var steps: [MutationStep] = []
        while remaining > 0, steps.count < 6 {
            let mutation = Mutation.receiptMutations[nextCounted() % Mutation.receiptMutations.count]
            var parameters: [String: String] = [:]
            for name in mutation.parameterNames where nextCounted() % 4 != 0 {
                parameters[name] = Self.fuzzValues[nextCounted() % Self.fuzzValues.count]
            }
            steps.append(MutationStep(mutation.id, parameters))
        }
        self.init(base: base, steps: steps, oracle: Self.oracle(for: steps))
    }

    static let fuzzValues = [
        "-1", "0", "1", "2", "3", "4", "7", "16", "17", "100", "128", "255", "256", "1000", "4096", "4097", "65535",
        "100000", "1000000", "1000001", "1048576", "1048577", "2147483647", "2147483648", "-2147483649",
        "9223372036854775807", "-9223372036854775808", "1073741824", "-1073741825", "", "x", "00", "ff", "0c", "16",
        "zz", "reverse", "2,1,0", "0,0,0,0", "9,9", "root", "intermediate", "leaf", "foreign-root", "storekit", "md5",
        "sha1", "sha256", "sha512", "primitive", "detached", "constructed-0", "constructed-4096", "constructed-4097",
        "minimal", "indefinite", "long", "base64", "pem", "2025-06-15T12:00:00Z", "1.2.3", "1.2.840.113549.1.1.11", "..",
        "expired", "no-marker", "marker-critical", "self-signed",
    ]

    /// `must-reject` when a step edits bytes after signing, else `none`.
    static func oracle(for steps: [MutationStep]) -> String {
        steps.contains { [.encoded, .signed].contains((try? Mutation.named($0.mutation))?.stage) } ? "must-reject" : "none"
    }

    /// `mut::<base family>-<base name>::<first 8 hex of the recipe's hash>`: stable for the same recipe.
    public var id: String {
        let canonical =
            base + "|"
            + steps.map { step in
                step.mutation + "(" + step.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + ")"
            }.joined(separator: ";")
        let hex = String(StableHash.fnv1a(canonical.utf8), radix: 16)
        return "mut::\(base.replacing("::", with: "-"))::\(String(repeating: "0", count: max(0, 16 - hex.count)) + hex)".prefix(200).description
    }
}

/// Makes mutants of catalogue vectors, receipts and StoreKit 2 JWS alike, and replays their recipes.
///
/// Receipt mutants are drawn frankencert-style: drop, duplicate or retag an attribute, change a length form,
/// truncate, flip a bit, swap or drop a certificate, add trailing data, re-sign or not. JWS mutants take one
/// to three more of the steps the JWS catalogue uses; their oracle is `none`: some compositions stay valid (a
/// high-s signature, an unknown field), so they are judged by comparing verifiers. Everything is drawn from
/// one seeded generator per artefact.
public struct Mutator: Sendable {
    public let forge: Forge
    public let specs: [VectorSpec]

    public init(forge: Forge, specs: [VectorSpec] = VectorCatalogue.all) {
        self.forge = forge
        self.specs = specs
    }

    /// A mutant made: its file name (without extension), its extension (`der` for every receipt mutant, as
    /// `forge mutate` has always written them; `jws`), its bytes and the recipe that replays it.
    public struct Mutant: Sendable {
        public let name: String
        public let fileExtension: String
        public let bytes: [UInt8]
        public let recipe: MutantRecipe
    }

    /// Every JWS step the catalogue uses (each id with its parameters, once), in catalogue order: what JWS
    /// mutants draw.
    static let jwsRegistry: [MutationStep] = {
        var seen = Set<MutationStep>()
        return VectorCatalogue.jws.flatMap(\.mutations).filter { seen.insert($0).inserted }
    }()

    /// `count` recipes over `bases` (already filtered by the caller): receipt and JWS bases share the count in
    /// proportion to how many of each there are; the JWS recipes come first.
    public func recipes(from bases: [VectorSpec], seed: UInt64, count: Int) -> [MutantRecipe] {
        // Transaction receipts take no receipt or JWS mutation: their defects are the catalogue's own.
        let bases = bases.filter { $0.artifact != .transactionReceipt }
        let jwsBases = bases.filter(\.artifact.isJWS)
        let receiptBases = bases.filter { !$0.artifact.isJWS }
        guard !bases.isEmpty else { return [] }
        let jwsCount = count * jwsBases.count / bases.count
        var recipes: [MutantRecipe] = []
        if !jwsBases.isEmpty {
            var random = SeededGenerator(seed: seed ^ 0x6A77_735F_6D75_7461)  // "jws_muta"
            for _ in 0..<jwsCount {
                let base = jwsBases[Int(random.below(UInt64(jwsBases.count)))]
                let steps = (0...Int(random.below(3))).map { _ in Self.jwsRegistry[Int(random.below(UInt64(Self.jwsRegistry.count)))] }
                recipes.append(MutantRecipe(base: base.id, steps: steps, oracle: "none"))
            }
        }
        if !receiptBases.isEmpty {
            var random = SeededGenerator(seed: seed)
            for _ in 0..<(count - jwsCount) {
                let base = receiptBases[Int(random.below(UInt64(receiptBases.count)))]
                let length = 1 + Int(random.below(3))
                let steps = (0..<length).map { _ in randomStep(&random) }
                recipes.append(MutantRecipe(base: base.id, steps: steps, oracle: MutantRecipe.oracle(for: steps)))
            }
        }
        return recipes
    }

    /// What a drawn recipe is called in messages before it is made.
    public func label(of drawn: MutantRecipe) -> String {
        isJWS(drawn) ? jwsName(drawn) : drawn.id
    }

    /// Makes a drawn recipe's mutant. A receipt step that needs a structure the mutated receipt lacks (a
    /// SignerInfo an earlier step removed, a purchase where there is none) is dropped: the recipe returned
    /// holds only the steps that applied, so it replays exactly (``replay(_:)``) and its id names what was
    /// made. A JWS recipe applies whole or is an error.
    public func build(_ drawn: MutantRecipe) throws(ForgeError) -> Mutant {
        if isJWS(drawn) { return Mutant(name: jwsName(drawn), fileExtension: "jws", bytes: try replay(drawn), recipe: drawn) }
        var spec = try base(of: drawn)
        let own = spec.mutations
        var applied: [MutationStep] = []
        for step in drawn.steps {
            spec.mutations = own + applied + [step]
            if (try? spec.bytes(forge: forge)) != nil { applied.append(step) }
        }
        spec.mutations = own + applied
        let recipe = MutantRecipe(base: drawn.base, steps: applied, oracle: MutantRecipe.oracle(for: applied))
        return Mutant(
            name: recipe.id.replacing("::", with: "-"), fileExtension: "der", bytes: try spec.bytes(forge: forge),
            recipe: recipe)
    }

    /// Rebuilds a recipe's mutant byte for byte, receipt or JWS. Every step must apply: an unknown mutation, a
    /// parameter missing, malformed or out of range, or a step the artefact cannot take at that point (a
    /// SignerInfo an earlier step removed) is an error naming the recipe step.
    public func replay(_ recipe: MutantRecipe) throws(ForgeError) -> [UInt8] {
        var spec = try base(of: recipe)
        let own = spec.mutations.count
        if spec.artifact.isJWS {
            // The base's own fills count too; a bad own step is left for the make to report.
            var filled = 0
            for step in spec.mutations { try? Mutation.countFill(step, into: &filled) }
            for (index, step) in recipe.steps.enumerated() {
                do throws(ForgeError) {
                    _ = try Mutation.named(step.mutation, editing: .jws).bind(step.parameters)
                    try Mutation.countFill(step, into: &filled)
                } catch {
                    throw ForgeError(error.code, "recipe step \(index + 1): \(error.message)")
                }
            }
        }
        spec.mutations += recipe.steps
        do throws(ForgeError) {
            return try spec.bytes(forge: forge)
        } catch {
            // The forge numbers steps from the base vector's own; people number the recipe's.
            let at = error.step.map { $0 > own ? "recipe step \($0 - own) (\(recipe.steps[$0 - own - 1].mutation))" : "the base vector's step \($0)" }
            throw ForgeError(error.code == .invalidRecipe ? .invalidRecipe : .invalidScenario, (at.map { "\($0): " } ?? "") + error.message)
        }
    }

    private func isJWS(_ recipe: MutantRecipe) -> Bool { specs.first { $0.id == recipe.base }?.artifact.isJWS ?? false }

    /// `mut-<base>-<8 hex of the recipe's hash>`.
    private func jwsName(_ recipe: MutantRecipe) -> String {
        let digest = StableHash.fnv1a(recipe.id.utf8)
        return "mut-" + recipe.base.replacing("::", with: "-") + "-" + hexString(withUnsafeBytes(of: digest.bigEndian, Array.init).prefix(4))
    }

    /// The catalogue vector a recipe starts from, with what the recipe records of it in place of the catalogue's.
    private func base(of recipe: MutantRecipe) throws(ForgeError) -> VectorSpec {
        guard var spec = specs.first(where: { $0.id == recipe.base }) else {
            throw ForgeError(.invalidRecipe, "recipe base '\(recipe.base)' is not a catalogue vector")
        }
        if let own = recipe.own { spec.mutations = own }
        if let scenario = recipe.scenario { spec.scenario = scenario }
        if let seed = recipe.seed {
            guard let value = UInt64(seed) else { throw ForgeError(.invalidRecipe, "recipe seed '\(seed.prefix(40))' is not a decimal UInt64") }
            spec.seed = value
        }
        if let made = recipe.made { spec.made = made }
        if let type = recipe.notificationType { spec.notificationType = type }
        if let subtype = recipe.subtype { spec.subtype = subtype }
        guard spec.mutations.count + recipe.steps.count <= MutationBounds.maxSteps else {
            throw ForgeError(.invalidRecipe, "recipe has \(recipe.steps.count) steps; with the base vector's own, at most \(MutationBounds.maxSteps) are allowed")
        }
        return spec
    }
    private func randomStep(_ random: inout SeededGenerator) -> MutationStep {
        let attributeTypes = [0, 1, 2, 3, 4, 5, 12, 17, 19, 21]
        func pick<T>(_ values: [T]) -> T { values[Int(random.below(UInt64(values.count)))] }
        switch random.below(12) {
        case 0: return MutationStep(.dropAttribute, ["type": String(pick(attributeTypes))])
        case 1: return MutationStep(.addAttribute, ["type": String(pick(attributeTypes + [9999])), "hex": hexString(random.bytes(1 + Int(random.below(8))))])
        case 2: return MutationStep(.retagAttribute, ["type": String(pick([0, 2, 3, 12, 19])), "tag": pick(["0c", "16", "13", "04", "02"])])
        case 3: return MutationStep(.layout, ["wrapper": pick(["minimal", "indefinite", "long"]), "econtent": pick(["primitive", "constructed-1", "constructed-3"])])
        case 4: return MutationStep(.truncate, ["length": String(-1 - Int(random.below(400)))])
        case 5: return MutationStep(.flipPayloadBit, ["offset": String(random.below(300))])
        case 6: return MutationStep(.certificateOrder, ["order": pick(["reverse", "1,0,2", "2,0,1", "0,2,1"])])
        case 7: return MutationStep(.dropCertificate, ["index": String(random.below(3))])
        case 8: return MutationStep(.trailingBytes, ["count": String(1 + random.below(16)), "byte": hexString(random.bytes(1))])
        case 9: return MutationStep(.integerLeadingZero, ["type": pick(["1", "11", "13"])])
        case 10: return MutationStep(.flipSignatureBit, ["byte": String(random.below(256))])
        default: return MutationStep("reverse-order")
        }
    }
}
