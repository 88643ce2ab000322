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

extension JWSMutationID {
    /// The parameters ``JWSMutation/named(_:)`` reads for this mutation (`nested` also passes the inner
    /// mutation's own on): what the JWS recipe-replay fuzz target gives hostile values to.
    public var parameterNames: [String] {
        switch self {
        case .payloadSet, .headerSet: ["key", "value"]
        case .payloadFill, .headerFill: ["key", "count", "character"]
        case .payloadRemove, .headerRemove: ["key"]
        case .headerBytes, .payloadBytes: ["hex"]
        case .signWith: ["role"]
        case .signatureTruncate: ["count"]
        case .signatureFlipBit: ["bit"]
        case .compactReplace: ["text"]
        case .x5c: ["roles"]
        case .leaf, .intermediate: ["variant"]
        case .nested: ["field", "mutation"]
        case .nestedReplace: ["field", "text"]
        case .headerDuplicateAlg, .hs256WithLeafKey, .headerEmbeddedJWK, .signForeignKey, .signatureOfOtherPayload, .signatureRZero, .signatureSZero,
            .signatureZero, .signatureRPlusN, .signatureSPlusN, .signatureNegateS, .signatureSwapRS, .signatureAppendZero, .signatureEmpty, .signatureDER,
            .compactDropSignature, .compactAppendPart, .compactPadding, .compactSpace, .jsonSerialization, .signatureStandardBase64, .x5cClear,
            .x5cGarbageThird, .x5cBase64URL, .x5cPEM, .x5cXcodeCertificate, .chainForeignRoot, .chainPathlenExceeded:
            []
        }
    }
}

extension MutantRecipe {
    /// A JWS recipe read from bytes as a sequence of choices (the JWS recipe-replay fuzz target's input): a
    /// JWS base vector, then up to six JWS mutation steps whose parameters take values around every bound,
    /// text where numbers belong, the words the parameters know and JSON of every kind. A `nested` step
    /// carries a chosen inner mutation and its parameters. Any bytes make some recipe.
    public init(choosingJWSFrom bytes: some Collection<UInt8>) {
        var choices = bytes.makeIterator()
        var remaining = bytes.count
        func next() -> Int {
            remaining -= 1
            return choices.next().map(Int.init) ?? 0
        }
        let ids = JWSMutationID.allCases, values = JWSMutator.fuzzValues
        func parameters(of id: JWSMutationID) -> [String: String] {
            var chosen: [String: String] = [:]
            // Two bytes a value: there are more than 256 of them.
            for name in id.parameterNames where next() % 4 != 0 { chosen[name] = values[(next() << 8 | next()) % values.count] }
            return chosen
        }
        let bases = JWSVectorCatalogue.all
        let base = bases[next() % bases.count].id
        var steps: [MutationStep] = []
        while remaining > 0, steps.count < 6 {
            let id = ids[next() % ids.count]
            var chosen = parameters(of: id)
            if id == .nested, next() % 4 != 0 {
                let inner = ids[next() % ids.count]
                chosen["mutation"] = inner.rawValue
                chosen.merge(parameters(of: inner)) { outer, _ in outer }
            }
            steps.append(MutationStep(id, chosen))
        }
        self.init(base: base, steps: steps, oracle: "none")
    }
}

extension JWSMutator {
    /// Hostile parameter values, in a fixed order (a fail case's bytes must choose the same values on every
    /// run): each bound of ``MutationBounds`` and its neighbours, integer extremes, text where numbers belong,
    /// JSON of every kind (numbers no double holds, nesting past the parser's depth, lone surrogates, repeated
    /// keys, text that is no JSON), the roles, variants and mutation ids, and every value the catalogue's own
    /// steps use.
    static let fuzzValues: [String] = {
        let bounds = [MutationBounds.maxAddedBytes, MutationBounds.maxTruncation, MutationBounds.maxChainEntries, MutationBounds.maxSteps, Int(Int32.max), 32, 64, 8]
        let numbers = bounds.flatMap { [$0 - 1, $0, $0 + 1].map(String.init) } + ["-1", "0", "1", "2", String(Int.max), String(Int.min), "9223372036854775808", "-0"]
        let notNumbers = ["", " ", "x", "1.5", "1e3", "0x10", "+1", " 1", "1 ", "١", "NaN"]
        let json = [
            "null", "true", "false", "0", "-0", "1e400", "-1e400", "1e-400", "9.3e18", "1.7e308", "\"none\"", "\"ES256\"", "\"\"", "[]", "{}", "[1]",
            "[\"MII\"]", "{\"a\":{}}", "\"\\ud800\"", "\"\\u0000\"", "{\"a\":1,\"a\":2}", "{", "'none'", "none", "[1,]", "01",
            String(repeating: "[", count: JSONParseError.maximumDepth - 1) + String(repeating: "]", count: JSONParseError.maximumDepth - 1),
            String(repeating: "[", count: JSONParseError.maximumDepth + 1) + String(repeating: "]", count: JSONParseError.maximumDepth + 1),
        ]
        let words = [
            "alg", "typ", "kid", "x5c", "x5u", "jku", "jwk", "crit", "b64", "data", "environment", "signedDate", "bundleId", "appAppleId", "signedTransactionInfo",
            "signedRenewalInfo", "signedPayload", "notificationType", "transactionId", "/data/appAppleId", "a.b", "__proto__", "A", "AB", "é", "😀", "\"", "\\",
            "\u{0}", "..", "a.b.c", "...", "eyJhbGciOiJub25lIn0..", "00", "ff", "zz", "0", "7b7d", "c3", "leaf,intermediate,root", ",", "leaf,,root", "boss",
            Array(repeating: "leaf", count: MutationBounds.maxChainEntries + 1).joined(separator: ","), "mutation", "field",
        ]
        let vocabulary =
            JWSRole.allCases.map(\.rawValue) + JWSMutation.CertificateVariant.allCases.map(\.rawValue) + JWSMutationID.allCases.map(\.rawValue)
            + registry.flatMap(\.parameters.values)
        var seen = Set<String>()
        return (numbers + notNumbers + json + words + vocabulary.sorted()).filter { seen.insert($0).inserted }
    }()
}
