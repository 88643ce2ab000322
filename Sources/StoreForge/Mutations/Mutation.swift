public import StoreModel
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ForgeCrypto
import ReceiptModel
import _ForgeSupport

/// One step of a recipe: a mutation by id, with its parameters. Recipes replay byte for byte.
public struct MutationStep: Codable, Sendable, Hashable {
    public var mutation: String
    public var parameters: [String: String]

    public init(_ mutation: String, _ parameters: [String: String] = [:]) {
        self.mutation = mutation
        self.parameters = parameters
    }

    /// A step of a known mutation (the catalogues name them by case; recipes from files by text).
    public init(_ mutation: MutationID, _ parameters: [String: String] = [:]) {
        self.init(mutation.rawValue, parameters)
    }
}

/// A named, documented defect applied on top of a valid artefact: a receipt or a StoreKit 2 JWS.
///
/// Valid by default, invalid on purpose: the forge never takes a flag that breaks an artefact in its
/// happy path; every defect is one of these, with an id, a one-line summary and the bug class it
/// targets. Each edits one stage of its artefact's making (``ForgeStages`` for receipts, ``JWSDraft`` for
/// JWS) and composes with the others; the stage says which artefact.
public struct Mutation: Sendable {
    /// The artefacts mutations edit.
    public enum Artefact: String, Sendable, Hashable, CaseIterable {
        case receipt
        case jws
    }

    /// When in the build a mutation runs.
    public enum Stage: String, Sendable, Hashable, CaseIterable {
        /// Payload attributes, before encoding.
        case attributes
        /// The encoded payload, before signing.
        case payload
        /// Keys, algorithms, certificates, layout, before the signature is computed.
        case signing
        /// SignerInfos, after signing.
        case signed
        /// The final bytes (transport encodings, truncation, trailing data).
        case encoded
        /// JWS: the header members, the `x5c` chain, the payload and the key, before signing.
        case jwsBuild = "jws-build"
        /// JWS: the signature bytes, after signing.
        case jwsSigned = "jws-signed"
        /// JWS: the serialized text.
        case jwsCompact = "jws-compact"

        /// The artefact a mutation of this stage edits.
        public var artefact: Artefact {
            switch self {
            case .attributes, .payload, .signing, .signed, .encoded: .receipt
            case .jwsBuild, .jwsSigned, .jwsCompact: .jws
            }
        }
    }

    /// What a mutation does: a receipt edit reads its parameters as it runs; a JWS mutation reads and checks
    /// them first (``bind(_:)``), then edits the draft.
    enum Body: Sendable {
        case receipt(@Sendable (inout ForgeStages, Parameters) throws(ForgeError) -> Void)
        case jws(@Sendable (Parameters) throws(ForgeError) -> JWSEdit)
    }

    public let id: String
    public let summary: String
    /// The validator bug this defect exposes when accepted (or, for tolerance mutations, when rejected).
    public let bugClass: String
    public let stage: Stage
    /// Parameter names and what they mean; the first listed are required.
    public let parameters: [(name: String, meaning: String)]
    let body: Body

    init(_ id: MutationID, _ stage: Stage, _ summary: String, bugClass: String, parameters: [(String, String)] = [], body: Body) {
        self.id = id.rawValue
        self.stage = stage
        self.summary = summary
        self.bugClass = bugClass
        self.parameters = parameters.map { (name: $0.0, meaning: $0.1) }
        self.body = body
    }

    /// A receipt mutation.
    init(
        _ id: MutationID, _ stage: Stage, _ summary: String, bugClass: String, parameters: [(String, String)] = [],
        _ body: @escaping @Sendable (inout ForgeStages, Parameters) throws(ForgeError) -> Void
    ) {
        self.init(id, stage, summary, bugClass: bugClass, parameters: parameters, body: .receipt(body))
    }

    func apply(to stages: inout ForgeStages, _ parameters: [String: String]) throws(ForgeError) {
        guard case .receipt(let edit) = body else { throw ForgeError(.invalidRecipe, "mutation \(id) edits a StoreKit 2 JWS, not a receipt") }
        try edit(&stages, Parameters(mutation: id, values: parameters))
    }

    /// A JWS mutation's edit with its parameters read and checked.
    func bind(_ parameters: [String: String]) throws(ForgeError) -> JWSEdit {
        guard case .jws(let bind) = body else { throw ForgeError(.invalidRecipe, "mutation \(id) edits a receipt, not a JWS") }
        return try bind(Parameters(mutation: id, values: parameters))
    }

    /// Looks a mutation of `artefact` up by id; one of the other artefact is refused, naming it.
    public static func named(_ id: String, editing artefact: Artefact = .receipt) throws(ForgeError) -> Mutation {
        guard let mutation = catalogue.first(where: { $0.id == id }) else {
            let known = catalogue.filter { $0.stage.artefact == artefact }.map(\.id).joined(separator: ", ")
            throw ForgeError(.invalidRecipe, "unknown \(artefact == .jws ? "JWS " : "")mutation '\(id)'; known: \(known)")
        }
        guard mutation.stage.artefact == artefact else {
            throw ForgeError(.invalidRecipe, "mutation \(id) edits \(artefact == .jws ? "a receipt, not a JWS" : "a StoreKit 2 JWS, not a receipt")")
        }
        return mutation
    }

    /// Typed access to a step's parameters, receipt or JWS, with errors that name the mutation and the parameter.
    package struct Parameters {
        package let mutation: String
        package let values: [String: String]

        package init(mutation: String, values: [String: String]) {
            self.mutation = mutation
            self.values = values
        }

        package func string(_ name: String, default fallback: String? = nil) throws(ForgeError) -> String {
            guard let value = values[name] ?? fallback else {
                throw ForgeError(.invalidRecipe, "mutation \(mutation) needs parameter '\(name)'")
            }
            return value
        }

        /// An integer within `range`: every number a recipe gives is checked before it sizes or indexes anything.
        package func int(_ name: String, in range: ClosedRange<Int>, default fallback: Int? = nil) throws(ForgeError) -> Int {
            let text = try string(name, default: fallback.map(String.init))
            guard let value = Int(text) else { throw ForgeError(.invalidRecipe, "mutation \(mutation): '\(name)' must be an integer, not '\(text)'") }
            guard range.contains(value) else {
                throw ForgeError(.invalidRecipe, "mutation \(mutation): '\(name)' must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
            }
            return value
        }

        /// A dotted object identifier that encodes, checked here so a bad one is blamed on its step.
        package func oid(_ name: String) throws(ForgeError) -> String {
            let text = try string(name)
            guard (try? OID.encodeContent(text)) != nil else {
                throw ForgeError(.invalidRecipe, "mutation \(mutation): '\(name)' must be a dotted object identifier such as 1.2.840.113549.1.1.11, not '\(text)'")
            }
            return text
        }

        package func bytes(_ name: String, default fallback: String? = nil) throws(ForgeError) -> [UInt8] {
            let text = try string(name, default: fallback)
            guard text.utf8.count <= 2 * MutationBounds.maxAddedBytes else {
                throw ForgeError(.invalidRecipe, "mutation \(mutation): '\(name)' holds more than \(MutationBounds.maxAddedBytes) bytes")
            }
            guard text.count % 2 == 0,
                let bytes = Optional(
                    stride(from: 0, to: text.count, by: 2).compactMap({ offset -> UInt8? in
                        let start = text.index(text.startIndex, offsetBy: offset)
                        return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)
                    })), bytes.count * 2 == text.count
            else {
                throw ForgeError(.invalidRecipe, "mutation \(mutation): '\(name)' must be hex, not '\(text)'")
            }
            return bytes
        }

        package func role(_ name: String) throws(ForgeError) -> CertificateRole {
            let text = try string(name)
            guard let role = CertificateRole(rawValue: text) else {
                throw ForgeError(.invalidRecipe, "mutation \(mutation): '\(name)' must be one of \(CertificateRole.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return role
        }

        package func choice<T: RawRepresentable & CaseIterable>(_ name: String, default fallback: T? = nil) throws(ForgeError) -> T where T.RawValue == String {
            let text = try string(name, default: fallback?.rawValue)
            guard let value = T(rawValue: text) else {
                throw ForgeError(.invalidRecipe, "mutation \(mutation): '\(name)' must be one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return value
        }
    }
}
