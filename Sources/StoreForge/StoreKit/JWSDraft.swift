public import AppStoreVocabulary
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ForgeCrypto
import ReceiptModel
public import _ForgeSupport
public import StoreModel
import JWSModel

/// A JWS between its parts and its bytes: what a JWS ``Mutation`` edits. Before signing, the header
/// members, the `x5c` chain, the payload and the key; after, the signature and the compact text.
public struct JWSDraft: Sendable {
    public var header: JSONObject
    /// DER certificates written into `header.x5c` (unless the header has its own `x5c`, or `x5cStrings`).
    public var x5c: [[UInt8]]
    /// The x5c entries as text, when they are not the standard base64 of ``x5c``.
    public var x5cStrings: [String]?
    /// Leave x5c out of the header.
    public var omitX5C = false
    public var payload: JSONValue
    /// Replaces the serialized header or payload (duplicate members, invalid UTF-8, …).
    public var headerBytes: [UInt8]?
    public var payloadBytes: [UInt8]?
    /// The key that signs; nil leaves the signature empty.
    public var key: ECPrivateKey?
    /// HS256 instead of ES256, keyed with these bytes.
    public var hmacKey: [UInt8]?
    public var signature: [UInt8] = []
    public var compact: String = ""

    /// The bytes of the header as they will be encoded: x5c after alg (App Store), or last (Xcode).
    func encodedHeader() -> [UInt8] {
        if let headerBytes { return headerBytes }
        var members = Array(header)
        if header["x5c"] == nil, !omitX5C {
            let entries = JSONValue.array((x5cStrings ?? x5c.map { Data($0).base64EncodedString() }).map(JSONValue.string))
            let index = members.first?.key == "alg" ? 1 : members.count
            members.insert(("x5c", entries), at: index)
        }
        return Array(JSONValue.object(JSONObject(members.map { ($0.key, $0.value) })).serialized(pretty: false).utf8)
    }
}

/// What mutations may draw on: the PKI, the signer, deterministic extra keys.
public struct JWSMutationContext: Sendable {
    let forge: Forge
    public var pki: CertificateSet<JWSRole> { forge.jwsPKI }

    /// A key derived from `label` (deterministic, so the corpus regenerates byte for byte).
    public func derivedKey(_ label: String, curve: ECCurve) throws(ForgeError) -> ECPrivateKey {
        try ForgeError.wrapping("deriving the key \(label)") {
            let digest = try (curve == .p256 ? DigestAlgorithm.sha256 : .sha384).digest(Array("receipt-forge jws \(label)".utf8))
            return try ECPrivateKey(scalar: [0x01] + digest.dropFirst(), curve: curve)
        }
    }

    /// A certificate for `key` from a role's template, edited, issued by `issuer` (self-signed when nil).
    public func issue(
        _ role: JWSRole, key: ECPrivateKey, issuer: (certificate: X509Certificate, key: ECPrivateKey)?,
        edit: (inout CertificateTemplate) -> Void = { _ in }
    ) throws(ForgeError) -> [UInt8] {
        var template = role.template
        edit(&template)
        return try ForgeError.wrapping("issuing a \(role.rawValue) variant") {
            try X509Certificate.issue(template, subjectKey: .ec(key.publicKey), issuer: issuer?.certificate, issuerKey: issuer?.key ?? key)
                .derRepresentation
        }
    }

    public func certificate(_ role: JWSRole) throws(ForgeError) -> X509Certificate { pki.certificate(role) }

    public func key(_ role: JWSRole) throws(ForgeError) -> ECPrivateKey { pki.privateKey(role) }

    /// Signs a payload as a complete JWS (for nested replacements).
    public func sign(_ payload: JSONValue, xcode: Bool = false) throws(ForgeError) -> String { try forge.sign(payload, xcode: xcode) }
}

extension Forge {
    /// Forges `kind` from `scenario`, applying the recipe `steps` (JWS mutations) on the way: the corpus's JWS
    /// vectors. A step that is unknown, edits a receipt, or has a parameter missing, malformed or out of range
    /// is an ``ForgeError/Code/invalidRecipe`` naming the step, before anything is signed.
    public func make(
        _ kind: JWSKind, scenario: Scenario, now: Date, options: JWSOptions = JWSOptions(), steps: [MutationStep]
    ) throws(ForgeError) -> ForgedJWS {
        var bound: [(Mutation, JWSEdit)] = [], filled = 0
        for (index, step) in steps.enumerated() {
            do throws(ForgeError) {
                let mutation = try Mutation.named(step.mutation, editing: .jws)
                bound.append((mutation, try mutation.bind(step.parameters)))
                try Mutation.countFill(step, into: &filled)
            } catch {
                throw ForgeError(error.code, "step \(index + 1) (\(step.mutation)): \(error.message)")
            }
        }
        let base = try make(kind, scenario: scenario, now: now, options: options)
        let xcode = base.xcodeSigned
        let header: JSONObject =
            xcode ? [("kid", .string("Apple_Xcode_Key")), ("typ", .string("JWT")), ("alg", .string("ES256"))] : [("alg", .string("ES256")), ("typ", .string("JWT"))]
        var draft = JWSDraft(header: header, x5c: jwsPKI.x5c(xcode: xcode).map(\.derRepresentation), payload: base.payload, key: jwsPKI.privateKey(xcode ? .xcode : .leaf))
        let compact = try assemble(&draft, steps: bound)
        return ForgedJWS(
            kind: kind, compact: compact, payload: draft.payload, store: base.store, environment: base.environment, xcodeSigned: xcode,
            appAppleID: base.appAppleID)
    }

    /// Runs the stages: build edits, signing, signed edits, encoding, compact edits.
    func assemble(_ draft: inout JWSDraft, steps: [(Mutation, JWSEdit)]) throws(ForgeError) -> String {
        let context = JWSMutationContext(forge: self)
        func run(_ stage: Mutation.Stage) throws(ForgeError) {
            for (mutation, edit) in steps where mutation.stage == stage {
                do { try edit(&draft, context) } catch let error as ForgeError { throw error } catch {
                    throw ForgeError(.invalidRecipe, "mutation \(mutation.id): \(error)")
                }
            }
        }
        try run(.jwsBuild)
        let input = Base64URL.encode(draft.encodedHeader()) + "." + Base64URL.encode(draft.payloadBytes ?? Array(draft.payload.serialized(pretty: false).utf8))
        if let hmacKey = draft.hmacKey {
            draft.signature = try ForgeError.wrapping("HMAC") { try HMACSHA256.mac(key: hmacKey, message: Array(input.utf8)) }
        } else if let key = draft.key {
            draft.signature = try ForgeError.wrapping("signing") { try key.signature(for: Array(input.utf8), algorithm: key.curve == .p256 ? .sha256 : .sha384) }
        }
        draft.compact = input
        try run(.jwsSigned)
        draft.compact = input + "." + Base64URL.encode(draft.signature)
        try run(.jwsCompact)
        return draft.compact
    }

    /// A nested JWS (a notification's signed transaction or renewal info) rebuilt with `steps`.
    func remake(nested compact: String, steps: [(Mutation, JWSEdit)]) throws(ForgeError) -> String {
        guard let jws = try? CompactJWS(parsing: compact), let header = try? JSONValue(parsing: jws.header), let payload = try? JSONValue(parsing: jws.payload),
            var members = header.objectValue
        else { throw ForgeError(.invalidRecipe, "the nested value is not a JWS") }
        let chain = (members["x5c"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { Data(base64Encoded: $0) }.map(Array.init) }
        members["x5c"] = nil
        var draft = JWSDraft(header: members, x5c: chain, payload: payload, key: jwsPKI.privateKey(chain.count == 1 ? .xcode : .leaf))
        return try assemble(&draft, steps: steps)
    }
}
