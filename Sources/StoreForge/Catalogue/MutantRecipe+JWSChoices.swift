import _ForgeSupport
import JWSModel
import ReceiptModel

extension MutantRecipe {
    /// A JWS recipe read from bytes as a sequence of choices (the JWS recipe-replay fuzz target's input): a
    /// JWS base vector, then up to six JWS mutation steps whose parameters take values around every bound,
    /// text where numbers belong, the words the parameters know and JSON of every kind. A `jws.nested` step
    /// carries a chosen inner mutation and its parameters. Any bytes make some recipe.
    public init(choosingJWSFrom bytes: some Collection<UInt8>) {
        var choices = bytes.makeIterator()
        var remaining = bytes.count
        func next() -> Int {
            remaining -= 1
            return choices.next().map(Int.init) ?? 0
        }
        let mutations = Mutation.jwsMutations, values = Self.jwsFuzzValues
        func parameters(of mutation: Mutation) -> [String: String] {
            var chosen: [String: String] = [:]
            // Two bytes a value: there are more than 256 of them.
            for name in mutation.parameterNames where next() % 4 != 0 { chosen[name] = values[(next() << 8 | next()) % values.count] }
            return chosen
        }
        let bases = VectorCatalogue.jws
        let base = bases[next() % bases.count].id
        var steps: [MutationStep] = []
        while remaining > 0, steps.count < 6 {
            let mutation = mutations[next() % mutations.count]
            var chosen = parameters(of: mutation)
            if mutation.id == MutationID.jwsNested.rawValue, next() % 4 != 0 {
                let inner = mutations[next() % mutations.count]
                chosen["mutation"] = inner.id
                chosen.merge(parameters(of: inner)) { outer, _ in outer }
            }
            steps.append(MutationStep(mutation.id, chosen))
        }
        self.init(base: base, steps: steps, oracle: "none")
    }

    /// Hostile parameter values for JWS steps, in a fixed order (a fail case's bytes must choose the same
    /// values on every run): each bound of ``MutationBounds`` and its neighbours, integer extremes, text where
    /// numbers belong, JSON of every kind (numbers no double holds, nesting past the parser's depth, lone
    /// surrogates, repeated keys, text that is no JSON), the roles, variants and mutation ids, and every value
    /// the catalogue's own steps use.
    static let jwsFuzzValues: [String] = {
        let bounds = [MutationBounds.maxAddedBytes, MutationBounds.maxTruncation, MutationBounds.maxChainEntries, MutationBounds.maxSteps, Int(Int32.max), 32, 64, 8]
        let numbers = bounds.flatMap { [$0 - 1, $0, $0 + 1].map(String.init) } + ["-1", "0", "1", "2", String(Int.max), String(Int.min), "9223372036854775808", "-0"]
        let notNumbers = ["", " ", "x", "1.5", "1e3", "0x10", "+1", " 1", "1 ", "١", "NaN"]
        let depth = JSONParseError.maximumDepth
        let json = [
            "null", "true", "false", "0", "-0", "1e400", "-1e400", "1e-400", "9.3e18", "1.7e308", "\"none\"", "\"ES256\"", "\"\"", "[]", "{}", "[1]",
            "[\"MII\"]", "{\"a\":{}}", "\"\\ud800\"", "\"\\u0000\"", "{\"a\":1,\"a\":2}", "{", "'none'", "none", "[1,]", "01",
            String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1),
            String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1),
        ]
        let words = [
            "alg", "typ", "kid", "x5c", "x5u", "jku", "jwk", "crit", "b64", "data", "environment", "signedDate", "bundleId", "appAppleId", "signedTransactionInfo",
            "signedRenewalInfo", "signedPayload", "notificationType", "transactionId", "/data/appAppleId", "a.b", "__proto__", "A", "AB", "é", "😀", "\"", "\\",
            "\u{0}", "..", "a.b.c", "...", "eyJhbGciOiJub25lIn0..", "00", "ff", "zz", "0", "7b7d", "c3", "leaf,intermediate,root", ",", "leaf,,root", "boss",
            Array(repeating: "leaf", count: MutationBounds.maxChainEntries + 1).joined(separator: ","), "mutation", "field",
        ]
        let vocabulary =
            JWSRole.allCases.map(\.rawValue) + Mutation.CertificateVariant.allCases.map(\.rawValue) + Mutation.jwsMutations.map(\.id)
            + Mutator.jwsRegistry.flatMap(\.parameters.values)
        var seen = Set<String>()
        return (numbers + notNumbers + json + words + vocabulary.sorted()).filter { seen.insert($0).inserted }
    }()
}

extension Mutation {
    /// The parameters the mutation reads (a `key|hex` alternative counts both): what fuzz targets give
    /// hostile values to. `jws.nested` also passes its inner mutation's own on.
    public var parameterNames: [String] { parameters.flatMap { $0.name.split(separator: "|").map(String.init) } }
}
