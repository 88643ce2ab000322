public import StoreModel
import Foundation
import ForgeCrypto
import ReceiptModel
public import ForgeSupport

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

/// A named, documented defect applied on top of a valid receipt.
///
/// Valid by default, invalid on purpose: the forge never takes a flag that breaks a receipt in its
/// happy path; every defect is one of these, with an id, a one-line summary and the bug class it
/// targets. Each edits one stage of ``ForgeStages`` and composes with the others.
public struct Mutation: Sendable {
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
    }

    public let id: String
    public let summary: String
    /// The validator bug this defect exposes when accepted (or, for tolerance mutations, when rejected).
    public let bugClass: String
    public let stage: Stage
    /// Parameter names and what they mean; the first listed are required.
    public let parameters: [(name: String, meaning: String)]
    let body: @Sendable (inout ForgeStages, Parameters) throws(ForgeError) -> Void

    init(
        _ id: MutationID, _ stage: Stage, _ summary: String, bugClass: String, parameters: [(String, String)] = [],
        _ body: @escaping @Sendable (inout ForgeStages, Parameters) throws(ForgeError) -> Void
    ) {
        self.id = id.rawValue
        self.stage = stage
        self.summary = summary
        self.bugClass = bugClass
        self.parameters = parameters.map { (name: $0.0, meaning: $0.1) }
        self.body = body
    }

    func apply(to stages: inout ForgeStages, _ parameters: [String: String]) throws(ForgeError) {
        try body(&stages, Parameters(mutation: id, values: parameters))
    }

    /// Looks a mutation up by id.
    public static func named(_ id: String) throws(ForgeError) -> Mutation {
        guard let mutation = catalogue.first(where: { $0.id == id }) else {
            throw ForgeError(.invalidRecipe, "unknown mutation '\(id)'; known: \(catalogue.map(\.id).joined(separator: ", "))")
        }
        return mutation
    }

    /// Typed access to a step's parameters, with errors that name the mutation and the parameter (the JWS
    /// mutations read theirs with it too).
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
