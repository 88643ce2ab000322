public import StoreModel
import Foundation
import ForgeCrypto
public import ReceiptModel
public import ForgeSupport

/// The id of every JWS mutation, owned once: recipes (the manifest's provenance, `forge mutate` recipe files)
/// carry the raw value and the parameters, so a step names exactly one defect.
public enum JWSMutationID: String, Sendable, Hashable, CaseIterable {
    case payloadSet = "jws.payload-set", payloadRemove = "jws.payload-remove", payloadFill = "jws.payload-fill"
    case headerSet = "jws.header-set", headerRemove = "jws.header-remove", headerFill = "jws.header-fill"
    case headerBytes = "jws.header-bytes", payloadBytes = "jws.payload-bytes", headerDuplicateAlg = "jws.header-duplicate-alg"
    case hs256WithLeafKey = "jws.hs256-with-leaf-key", headerEmbeddedJWK = "jws.header-embedded-jwk"
    case signForeignKey = "jws.sign-foreign-key", signWith = "jws.sign-with", signatureOfOtherPayload = "jws.signature-of-other-payload"
    case signatureRZero = "jws.signature-r-zero", signatureSZero = "jws.signature-s-zero", signatureZero = "jws.signature-zero"
    case signatureRPlusN = "jws.signature-r-plus-n", signatureSPlusN = "jws.signature-s-plus-n", signatureNegateS = "jws.signature-negate-s"
    case signatureSwapRS = "jws.signature-swap-r-s", signatureAppendZero = "jws.signature-append-zero", signatureEmpty = "jws.signature-empty"
    case signatureTruncate = "jws.signature-truncate", signatureFlipBit = "jws.signature-flip-bit", signatureDER = "jws.signature-der"
    case compactDropSignature = "jws.compact-drop-signature", compactAppendPart = "jws.compact-append-part", compactPadding = "jws.compact-padding"
    case compactSpace = "jws.compact-space", compactReplace = "jws.compact-replace", jsonSerialization = "jws.json-serialization"
    case signatureStandardBase64 = "jws.signature-standard-base64"
    case x5cClear = "jws.x5c-clear", x5c = "jws.x5c", x5cGarbageThird = "jws.x5c-garbage-third", x5cBase64URL = "jws.x5c-base64url", x5cPEM = "jws.x5c-pem"
    case x5cXcodeCertificate = "jws.x5c-xcode-certificate", chainForeignRoot = "jws.chain-foreign-root", leaf = "jws.leaf", intermediate = "jws.intermediate"
    case chainPathlenExceeded = "jws.chain-pathlen-exceeded", nested = "jws.nested", nestedReplace = "jws.nested-replace"
}

extension MutationStep {
    /// A step of a JWS mutation.
    public init(_ id: JWSMutationID, _ parameters: [String: String] = [:]) { self.init(id.rawValue, parameters) }
}

/// The named defects the JWS vectors are made of: ``named(_:)`` turns a recipe step (id and parameters)
/// into the mutation, checking every parameter before it sizes or indexes anything.
extension JWSMutation {
    /// P-256's group order n, big-endian.
    static let orderP256: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    // MARK: the registry

    /// The mutation a recipe step names. An unknown id or a parameter missing, malformed or out of range is
    /// an ``ForgeError/Code/invalidRecipe`` naming the mutation and the parameter.
    public static func named(_ step: MutationStep) throws(ForgeError) -> JWSMutation {
        try named(step, nestedAllowed: true)
    }

    static func named(_ step: MutationStep, nestedAllowed: Bool) throws(ForgeError) -> JWSMutation {
        guard let id = JWSMutationID(rawValue: step.mutation) else {
            throw ForgeError(.invalidRecipe, "unknown JWS mutation '\(step.mutation)'; known: \(JWSMutationID.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let p = Mutation.Parameters(mutation: step.mutation, values: step.parameters)
        func build(_ edit: @escaping @Sendable (inout JWSDraft, JWSMutationContext) throws -> Void) -> JWSMutation { JWSMutation(id: id.rawValue, stage: .build, apply: edit) }
        func signed(_ edit: @escaping @Sendable (inout [UInt8]) -> Void) -> JWSMutation { JWSMutation(id: id.rawValue, stage: .signed) { draft, _ in edit(&draft.signature) } }
        func compact(_ edit: @escaping @Sendable (inout String) -> Void) -> JWSMutation { JWSMutation(id: id.rawValue, stage: .compact) { draft, _ in edit(&draft.compact) } }
        switch id {
        case .payloadSet:
            let key = try p.string("key"), value = try p.json("value")
            return build { draft, _ in setPayload(&draft, key, value) }
        case .payloadFill:
            let key = try p.string("key"), (count, character) = try p.filling()
            return build { draft, _ in setPayload(&draft, key, .string(String(repeating: character, count: count))) }
        case .payloadRemove:
            let key = try p.string("key")
            return build { draft, _ in setPayload(&draft, key, nil) }
        case .headerSet:
            let key = try p.string("key"), value = try p.json("value")
            return build { draft, _ in draft.header[key] = value }
        case .headerFill:
            let key = try p.string("key"), (count, character) = try p.filling()
            return build { draft, _ in draft.header[key] = .string(String(repeating: character, count: count)) }
        case .headerRemove:
            let key = try p.string("key")
            return build { draft, _ in
                draft.header[key] = nil
                if key == "x5c" { draft.omitX5C = true }
            }
        case .headerBytes:
            let bytes = try p.bytes("hex")
            return build { draft, _ in draft.headerBytes = bytes }
        case .payloadBytes:
            let bytes = try p.bytes("hex")
            return build { draft, _ in draft.payloadBytes = bytes }
        case .headerDuplicateAlg:
            return build { draft, _ in
                let chain = draft.x5c.map { "\"" + Data($0).base64EncodedString() + "\"" }.joined(separator: ",")
                draft.headerBytes = Array(#"{"alg":"ES256","x5c":[\#(chain)],"typ":"JWT","alg":"none"}"#.utf8)
            }
        case .hs256WithLeafKey:
            return build { draft, context in draft.hmacKey = try context.certificate(.leaf).publicKey.derRepresentation }
        case .headerEmbeddedJWK:
            return build { draft, context in
                let point = Array(try context.derivedKey("foreign-leaf", curve: .p256).publicKey.derRepresentation.suffix(64))
                draft.header["jwk"] = .object([
                    ("kty", .string("EC")), ("crv", .string("P-256")), ("x", .string(Base64URL.encode(point.prefix(32)))),
                    ("y", .string(Base64URL.encode(point.suffix(32)))),
                ])
            }
        case .signForeignKey:
            return build { draft, context in draft.key = try context.derivedKey("foreign-leaf", curve: .p256) }
        case .signWith:
            let role: JWSRole = try p.choice("role")
            return build { draft, context in draft.key = try context.key(role) }
        case .signatureOfOtherPayload:
            return JWSMutation(id: id.rawValue, stage: .signed) { draft, context in
                draft.signature = try ForgeError.wrapping("signing") { try context.key(.leaf).signature(for: Array((draft.compact + "x").utf8), algorithm: .sha256) }
            }
        // Every edit is total: after another step (truncate, empty, DER) the signature may be shorter than r‖s.
        case .signatureRZero: return signed { zero(&$0, 0..<32) }
        case .signatureSZero: return signed { zero(&$0, 32..<64) }
        case .signatureZero: return signed { $0 = [UInt8](repeating: 0, count: 64) }
        case .signatureRPlusN: return signed { $0 = add(Array($0.prefix(32)), orderP256) + Array($0.suffix(32)) }
        case .signatureSPlusN: return signed { $0 = Array($0.prefix(32)) + add(Array($0.suffix(32)), orderP256) }
        case .signatureNegateS: return signed { $0 = Array($0.prefix(32)) + subtract(orderP256, Array($0.suffix(32))) }
        case .signatureSwapRS: return signed { $0 = Array($0.suffix(32)) + Array($0.prefix(32)) }
        case .signatureAppendZero: return signed { $0.append(0) }
        case .signatureEmpty: return signed { $0 = [] }
        case .signatureTruncate:
            let count = try p.int("count", in: 0...MutationBounds.maxTruncation)
            return signed { $0 = Array($0.suffix(count)) }
        case .signatureFlipBit:
            let bit = try p.int("bit", in: 0...Int(Int32.max))
            return signed { if bit / 8 < $0.count { $0[bit / 8] ^= 1 << UInt8(bit % 8) } }
        case .signatureDER:
            return signed { signature in
                func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
                    var value = Array(bytes.drop { $0 == 0 })
                    if value.first.map({ $0 >= 0x80 }) ?? true { value.insert(0, at: 0) }
                    return [0x02, UInt8(value.count)] + value
                }
                let body = integer(signature.prefix(32)) + integer(signature.suffix(32))
                signature = [0x30, UInt8(body.count)] + body
            }
        case .compactDropSignature: return compact { $0 = String($0[..<($0.lastIndex(of: ".") ?? $0.endIndex)]) }
        case .compactAppendPart: return compact { $0 += ".AAAA" }
        case .compactPadding:
            return compact { text in
                text = text.split(separator: ".", omittingEmptySubsequences: false)
                    .map { $0 + String(repeating: "=", count: (4 - $0.count % 4) % 4 == 0 ? 4 : (4 - $0.count % 4) % 4) }.joined(separator: ".")
            }
        case .compactSpace:
            return compact { text in
                guard let dot = text.firstIndex(of: ".") else { return }
                text.insert(" ", at: text.index(dot, offsetBy: 5, limitedBy: text.endIndex) ?? text.endIndex)
            }
        case .compactReplace:
            let replacement = try p.string("text")
            return compact { $0 = replacement }
        case .jsonSerialization:
            return compact { text in
                let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 3 else { return }
                text = JSONValue.object([("protected", .string(parts[0])), ("payload", .string(parts[1])), ("signature", .string(parts[2]))]).serialized(pretty: false)
            }
        case .signatureStandardBase64:
            return JWSMutation(id: id.rawValue, stage: .compact) { draft, _ in
                guard let dot = draft.compact.lastIndex(of: ".") else { return }
                draft.compact = String(draft.compact[...dot]) + Data(draft.signature).base64EncodedString()
            }
        case .x5cClear:
            return build { draft, _ in
                draft.x5c = []
                draft.omitX5C = true
            }
        case .x5c:
            let roles = try p.roles("roles")
            return build { draft, context in
                var chain: [[UInt8]] = []
                for role in roles { chain.append(try context.certificate(role).derRepresentation) }
                draft.x5c = chain
            }
        case .x5cGarbageThird:
            return build { draft, _ in draft.x5cStrings = draft.x5c.prefix(2).map { Data($0).base64EncodedString() } + ["bm90IGEgY2VydGlmaWNhdGU="] }
        case .x5cBase64URL: return build { draft, _ in draft.x5cStrings = draft.x5c.map { Base64URL.encode($0) } }
        case .x5cPEM:
            return build { draft, _ in
                draft.x5cStrings = draft.x5c.map {
                    "-----BEGIN CERTIFICATE-----\n" + Data($0).base64EncodedString(options: .lineLength64Characters) + "\n-----END CERTIFICATE-----"
                }
            }
        case .x5cXcodeCertificate:
            return build { draft, context in
                draft.x5c = [try context.certificate(.xcode).derRepresentation]
                draft.key = try context.key(.xcode)
            }
        case .chainForeignRoot: return build(foreignChain)
        case .leaf:
            let variant: CertificateVariant = try p.choice("variant")
            return build { draft, context in try leafVariant(&draft, context, variant) }
        case .intermediate:
            let variant: CertificateVariant = try p.choice("variant")
            return build { draft, context in try intermediateVariant(&draft, context, variant) }
        case .chainPathlenExceeded: return build(pathlenExceeded)
        case .nested:
            guard nestedAllowed else { throw ForgeError(.invalidRecipe, "mutation jws.nested: a nested step cannot nest again") }
            let field = try p.string("field")
            var inner = step.parameters
            inner["field"] = nil
            inner["mutation"] = nil
            let mutation = try named(MutationStep(try p.string("mutation"), inner), nestedAllowed: false)
            return build { draft, context in
                guard var members = draft.payload.objectValue, var data = members["data"]?.objectValue, let nested = data[field]?.stringValue else { return }
                data[field] = .string(try context.forge.remake(nested: nested, mutations: [mutation]))
                members["data"] = .object(data)
                draft.payload = .object(members)
            }
        case .nestedReplace:
            let field = try p.string("field"), text = try p.string("text")
            return build { draft, _ in
                guard var members = draft.payload.objectValue, var data = members["data"]?.objectValue else { return }
                data[field] = .string(text)
                members["data"] = .object(data)
                draft.payload = .object(members)
            }
        }
    }

    /// Sets (or, with nil, removes) a payload member; a payload that is not an object is left alone.
    static func setPayload(_ draft: inout JWSDraft, _ key: String, _ value: JSONValue?) {
        guard var members = draft.payload.objectValue else { return }
        members[key] = value
        draft.payload = .object(members)
    }

    // MARK: signatures

    /// The bytes of `range` that the signature has, zeroed.
    static func zero(_ signature: inout [UInt8], _ range: Range<Int>) {
        let present = range.clamped(to: signature.indices)
        signature.replaceSubrange(present, with: [UInt8](repeating: 0, count: present.count))
    }

    /// `a` and `b` left-padded with zeros to the same length.
    static func aligned(_ a: [UInt8], _ b: [UInt8]) -> ([UInt8], [UInt8]) {
        let width = max(a.count, b.count)
        return ([UInt8](repeating: 0, count: width - a.count) + a, [UInt8](repeating: 0, count: width - b.count) + b)
    }

    /// Big-endian a + b, one byte longer when it carries.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        let (a, b) = aligned(a, b)
        var result = [UInt8](repeating: 0, count: a.count)
        var carry = 0
        for index in stride(from: a.count - 1, through: 0, by: -1) {
            let sum = Int(a[index]) + Int(b[index]) + carry
            result[index] = UInt8(sum & 0xFF)
            carry = sum >> 8
        }
        return carry > 0 ? [UInt8(carry)] + result : result
    }

    /// Big-endian a − b for a ≥ b.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        let (a, b) = aligned(a, b)
        var result = [UInt8](repeating: 0, count: a.count)
        var borrow = 0
        for index in stride(from: a.count - 1, through: 0, by: -1) {
            var difference = Int(a[index]) - Int(b[index]) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 256 }
            result[index] = UInt8(difference)
        }
        return result
    }

    // MARK: certificates

    /// A whole Apple-shaped chain from keys derived for this purpose, signed with its own leaf.
    static func foreignChain(_ draft: inout JWSDraft, _ context: JWSMutationContext) throws {
        let root = try context.derivedKey("foreign-root", curve: .p384)
        let intermediate = try context.derivedKey("foreign-intermediate", curve: .p384)
        let leaf = try context.derivedKey("foreign-leaf", curve: .p256)
        let rootDER = try context.issue(.root, key: root, issuer: nil)
        let rootCertificate = try ForgeError.wrapping("parsing") { try X509Certificate(derEncoded: rootDER) }
        let intermediateDER = try context.issue(.intermediate, key: intermediate, issuer: (rootCertificate, root))
        let intermediateCertificate = try ForgeError.wrapping("parsing") { try X509Certificate(derEncoded: intermediateDER) }
        draft.x5c = [try context.issue(.leaf, key: leaf, issuer: (intermediateCertificate, intermediate)), intermediateDER, rootDER]
        draft.key = leaf
    }

    public enum CertificateVariant: String, Sendable, CaseIterable {
        case noMarker = "no-marker", criticalMarker = "critical-marker", expired, notYetValid = "not-yet-valid", isCA = "ca"
        case signedByRoot = "signed-by-root", badSignature = "bad-signature", criticalUnknown = "critical-unknown", notCA = "not-ca", selfSigned = "self-signed"
        case noAKI = "no-aki", noSKI = "no-ski", keyUsageKeyCertSign = "ku-keycertsign", ekuServerAuth = "eku-server-auth"
    }

    static func edit(_ template: inout CertificateTemplate, _ variant: CertificateVariant, marker: String) {
        switch variant {
        case .noMarker: template.extensions.removeAll { $0 == .custom(oid: marker, critical: false, derValue: [0x05, 0x00]) }
        case .criticalMarker:
            template.extensions = template.extensions.map {
                $0 == .custom(oid: marker, critical: false, derValue: [0x05, 0x00]) ? .custom(oid: marker, critical: true, derValue: [0x05, 0x00]) : $0
            }
        case .expired: template.notAfter = ReceiptDate.instant(year: 2024, month: 12, day: 31)
        case .notYetValid: template.notBefore = ReceiptDate.instant(year: 2026, month: 1, day: 1)
        case .isCA: template.extensions = template.extensions.map { $0 == .basicConstraints(isCA: false, critical: true) ? .basicConstraints(isCA: true, critical: true) : $0 }
        case .notCA:
            template.extensions = template.extensions.map {
                $0 == .basicConstraints(isCA: true, pathLength: 0, critical: true) ? .basicConstraints(isCA: false, critical: true) : $0
            }
        case .criticalUnknown: template.extensions.append(.custom(oid: "1.3.6.1.4.1.55555.1", critical: true, derValue: [0x05, 0x00]))
        case .noAKI: template.extensions.removeAll { $0 == .authorityKeyIdentifier }
        case .noSKI: template.extensions.removeAll { $0 == .subjectKeyIdentifier }
        case .keyUsageKeyCertSign:
            template.extensions = template.extensions.map { $0 == .keyUsage([.digitalSignature], critical: true) ? .keyUsage([.keyCertSign], critical: true) : $0 }
        case .ekuServerAuth: template.extensions.append(.extendedKeyUsage([.serverAuth]))
        case .signedByRoot, .badSignature, .selfSigned: break
        }
    }

    /// The leaf replaced by a variant of it (same key, so the JWS signature still verifies).
    static func leafVariant(_ draft: inout JWSDraft, _ context: JWSMutationContext, _ variant: CertificateVariant) throws(ForgeError) {
        let issuerRole: JWSRole = variant == .signedByRoot ? .root : .intermediate
        var der = try context.issue(.leaf, key: try context.key(.leaf), issuer: (try context.certificate(issuerRole), try context.key(issuerRole))) {
            edit(&$0, variant, marker: KnownOID.appleReceiptSigningMarker)
        }
        if variant == .badSignature, der.count >= 3 { der[der.count - 3] ^= 0x01 }
        // After a step that emptied x5c there is no leaf to replace.
        guard !draft.x5c.isEmpty else { return }
        draft.x5c[0] = der
    }

    /// The intermediate replaced by a variant of it (same key, so the leaf still chains to it).
    static func intermediateVariant(_ draft: inout JWSDraft, _ context: JWSMutationContext, _ variant: CertificateVariant) throws(ForgeError) {
        let key = try context.key(.intermediate)
        let issuer = variant == .selfSigned ? nil : (try context.certificate(.root), try context.key(.root))
        let der = try context.issue(.intermediate, key: key, issuer: issuer) { edit(&$0, variant, marker: KnownOID.appleWWDRIntermediateMarker) }
        // After a step that shortened x5c there is no intermediate to replace.
        guard draft.x5c.count > 1 else { return }
        draft.x5c[1] = der
    }

    /// A second CA between the intermediate and a new leaf: the intermediate's pathlen 0 is exceeded.
    static func pathlenExceeded(_ draft: inout JWSDraft, _ context: JWSMutationContext) throws {
        let sub = try context.derivedKey("sub-ca", curve: .p384)
        // A name of its own: a self-issued CA would not count against pathlen (RFC 5280 §4.2.1.9).
        let subDER = try context.issue(.intermediate, key: sub, issuer: (try context.certificate(.intermediate), try context.key(.intermediate))) {
            $0.subject = DistinguishedName([("CN", "receipt-forge TEST Sub CA — not Apple"), ("O", "receipt-forge TEST"), ("C", "US")])
        }
        let subCertificate = try ForgeError.wrapping("parsing") { try X509Certificate(derEncoded: subDER) }
        let leaf = try context.derivedKey("sub-leaf", curve: .p256)
        draft.x5c = [try context.issue(.leaf, key: leaf, issuer: (subCertificate, sub)), subDER, try context.certificate(.intermediate).derRepresentation]
        draft.key = leaf
    }
}

extension Mutation.Parameters {
    /// A fill's `count` copies of `character` (default "A"): the bytes they add, not only the copies, are at
    /// most ``MutationBounds/maxAddedBytes`` (a long `character` once asked for a gigabyte).
    func filling() throws(ForgeError) -> (count: Int, character: String) {
        let count = try int("count", in: 0...MutationBounds.maxAddedBytes), character = try string("character", default: "A")
        guard count == 0 || character.utf8.count <= MutationBounds.maxAddedBytes / count else {
            throw ForgeError(
                .invalidRecipe,
                "mutation \(mutation): 'character' (\(character.utf8.count) bytes) times 'count' (\(count)) adds more than \(MutationBounds.maxAddedBytes) bytes")
        }
        return (count, character)
    }

    /// A JSON value written as JSON text (`value="none"` is the string, `value=256` the number).
    func json(_ name: String) throws(ForgeError) -> JSONValue {
        let text = try string(name)
        guard let value = try? JSONValue(parsing: Array(text.utf8)) else {
            throw ForgeError(.invalidRecipe, "mutation \(mutation): '\(name)' must be JSON text (a string is quoted: \"none\"), not '\(text.prefix(80))'")
        }
        return value
    }

    /// Comma-separated JWS roles (empty: none), at most ``MutationBounds/maxChainEntries``.
    func roles(_ name: String) throws(ForgeError) -> [JWSRole] {
        let names = try string(name).split(separator: ",", omittingEmptySubsequences: false)
        let text = names.joined(separator: ",")
        if text.isEmpty { return [] }
        guard names.count <= MutationBounds.maxChainEntries else {
            throw ForgeError(.invalidRecipe, "mutation \(mutation): '\(name)' lists \(names.count) roles; at most \(MutationBounds.maxChainEntries)")
        }
        var roles: [JWSRole] = []
        for role in names {
            guard let parsed = JWSRole(rawValue: String(role)) else {
                throw ForgeError(
                    .invalidRecipe, "mutation \(mutation): '\(name)' must list roles among \(JWSRole.allCases.map(\.rawValue).joined(separator: ", ")), not '\(role.prefix(80))'")
            }
            roles.append(parsed)
        }
        return roles
    }
}

/// The steps the JWS catalogue is written in: each names its mutation and parameters, so the manifest's
/// provenance replays (``JWSMutation/named(_:)``) to the same bytes.
extension MutationStep {
    static func addField(_ key: String, _ value: JSONValue) -> Self { Self(.payloadSet, ["key": key, "value": value.serialized(pretty: false)]) }
    static func fillField(_ key: String, count: Int) -> Self { Self(.payloadFill, ["key": key, "count": String(count)]) }
    static func removeField(_ key: String) -> Self { Self(.payloadRemove, ["key": key]) }
    static func setHeader(_ key: String, _ value: JSONValue) -> Self { Self(.headerSet, ["key": key, "value": value.serialized(pretty: false)]) }
    static func fillHeader(_ key: String, count: Int) -> Self { Self(.headerFill, ["key": key, "count": String(count)]) }
    static func removeHeader(_ key: String) -> Self { Self(.headerRemove, ["key": key]) }
    static func headerBytes(_ bytes: [UInt8]) -> Self { Self(.headerBytes, ["hex": hexString(bytes)]) }
    static func payloadBytes(_ bytes: [UInt8]) -> Self { Self(.payloadBytes, ["hex": hexString(bytes)]) }
    static let duplicateAlgNone = Self(.headerDuplicateAlg)
    static let hmacWithLeafKey = Self(.hs256WithLeafKey)
    static let embedForeignJWK = Self(.headerEmbeddedJWK)

    static let signWithForeignKey = Self(.signForeignKey)
    static func signWith(_ role: JWSRole) -> Self { Self(JWSMutationID.signWith, ["role": role.rawValue]) }
    static let signOtherPayload = Self(.signatureOfOtherPayload)
    static let rZero = Self(.signatureRZero)
    static let sZero = Self(.signatureSZero)
    static let bothZero = Self(.signatureZero)
    static let rPlusN = Self(.signatureRPlusN)
    static let sPlusN = Self(.signatureSPlusN)
    static let negateS = Self(.signatureNegateS)
    static let swapRS = Self(.signatureSwapRS)
    static let appendZero = Self(.signatureAppendZero)
    static let emptySignature = Self(JWSMutationID.signatureEmpty)
    static func truncate(_ count: Int) -> Self { Self(.signatureTruncate, ["count": String(count)]) }
    static func flipBit(_ bit: Int) -> Self { Self(.signatureFlipBit, ["bit": String(bit)]) }
    static let derSignature = Self(.signatureDER)

    static let dropSignaturePart = Self(.compactDropSignature)
    static let appendPart = Self(.compactAppendPart)
    static let padParts = Self(.compactPadding)
    static let insertSpace = Self(.compactSpace)
    static func replaceCompact(_ text: String) -> Self { Self(.compactReplace, ["text": text]) }
    static let jsonSerialization = Self(JWSMutationID.jsonSerialization)
    static let standardAlphabetSignature = Self(.signatureStandardBase64)

    static let clearChain = Self(.x5cClear)
    static func chainRoles(_ roles: [JWSRole]) -> Self { Self(.x5c, ["roles": roles.map(\.rawValue).joined(separator: ",")]) }
    static let garbageThird = Self(.x5cGarbageThird)
    static let x5cBase64URL = Self(.x5cBase64URL)
    static let x5cPEM = Self(.x5cPEM)
    static let xcodeChainInProduction = Self(.x5cXcodeCertificate)

    static let foreignChain = Self(.chainForeignRoot)
    static func leafVariant(_ variant: JWSMutation.CertificateVariant) -> Self { Self(.leaf, ["variant": variant.rawValue]) }
    static func intermediateVariant(_ variant: JWSMutation.CertificateVariant) -> Self { Self(.intermediate, ["variant": variant.rawValue]) }
    static let pathlenExceeded = Self(.chainPathlenExceeded)

    /// `step` applied to the notification's nested JWS `field` (its parameters beside `field` and `mutation`).
    static func nested(_ field: String, _ step: Self) -> Self {
        Self(.nested, step.parameters.merging(["field": field, "mutation": step.mutation]) { _, new in new })
    }
    static func nestedEnvironment(_ field: String, _ environment: String) -> Self { nested(field, addField("environment", .string(environment))) }
    static func nestedBundle(_ field: String, _ bundle: String) -> Self { nested(field, addField("bundleId", .string(bundle))) }
    static func replaceNested(_ field: String, _ text: String) -> Self { Self(.nestedReplace, ["field": field, "text": text]) }
}
