import StoreModel
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ForgeCrypto
import ReceiptModel
import _ForgeSupport

/// An edit of a JWS draft, its parameters already read and checked (``Mutation/bind(_:)``).
typealias JWSEdit = @Sendable (inout JWSDraft, JWSMutationContext) throws -> Void

/// The StoreKit 2 mutations: each reads and checks its parameters before anything is built (so a bad one is
/// refused naming the step and the parameter), then edits the ``JWSDraft`` at its stage.
extension Mutation {
    static func jws(
        _ id: MutationID, _ stage: Stage, _ summary: String, bugClass: String, parameters: [(String, String)] = [],
        _ bind: @escaping @Sendable (Parameters) throws(ForgeError) -> JWSEdit
    ) -> Mutation {
        Mutation(id, stage, summary, bugClass: bugClass, parameters: parameters, body: .jws(bind))
    }

    /// A signature-stage edit of the raw signature bytes.
    static func signature(_ id: MutationID, _ summary: String, _ edit: @escaping @Sendable (inout [UInt8]) -> Void) -> Mutation {
        jws(id, .jwsSigned, summary, bugClass: "jws-signature") { _ throws(ForgeError) in { draft, _ in edit(&draft.signature) } }
    }

    /// A compact-stage edit of the serialized text.
    static func compact(_ id: MutationID, _ summary: String, _ edit: @escaping @Sendable (inout String) -> Void) -> Mutation {
        jws(id, .jwsCompact, summary, bugClass: "jws-format") { _ throws(ForgeError) in { draft, _ in edit(&draft.compact) } }
    }

    /// P-256's group order n, big-endian.
    static let orderP256: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    // MARK: the registry

    static let jwsMutations: [Mutation] = jwsClaimMutations + jwsSignatureMutations + jwsCompactMutations + jwsChainMutations

    static let jwsClaimMutations: [Mutation] = [
        jws(.jwsPayloadSet, .jwsBuild, "Sets a payload member to a JSON value.", bugClass: "jws-claim", parameters: [("key", "member"), ("value", "JSON text")]) {
            p throws(ForgeError) in
            let key = try p.string("key"), value = try p.json("value")
            return { draft, _ in setPayload(&draft, key, value) }
        },
        jws(.jwsPayloadRemove, .jwsBuild, "Removes a payload member.", bugClass: "jws-claim", parameters: [("key", "member")]) { p throws(ForgeError) in
            let key = try p.string("key")
            return { draft, _ in setPayload(&draft, key, nil) }
        },
        jws(
            .jwsPayloadFill, .jwsBuild, "Sets a payload member to a long string.", bugClass: "resource",
            parameters: [("key", "member"), ("count", "characters"), ("character", "default A")]
        ) { p throws(ForgeError) in
            let key = try p.string("key"), (count, character) = try p.filling()
            return { draft, _ in setPayload(&draft, key, .string(String(repeating: character, count: count))) }
        },
        jws(.jwsHeaderSet, .jwsBuild, "Sets a header member to a JSON value.", bugClass: "jws-header", parameters: [("key", "member"), ("value", "JSON text")]) {
            p throws(ForgeError) in
            let key = try p.string("key"), value = try p.json("value")
            return { draft, _ in draft.header[key] = value }
        },
        jws(.jwsHeaderRemove, .jwsBuild, "Removes a header member (x5c too).", bugClass: "jws-header", parameters: [("key", "member")]) { p throws(ForgeError) in
            let key = try p.string("key")
            return { draft, _ in
                draft.header[key] = nil
                if key == "x5c" { draft.omitX5C = true }
            }
        },
        jws(
            .jwsHeaderFill, .jwsBuild, "Sets a header member to a long string.", bugClass: "resource",
            parameters: [("key", "member"), ("count", "characters"), ("character", "default A")]
        ) { p throws(ForgeError) in
            let key = try p.string("key"), (count, character) = try p.filling()
            return { draft, _ in draft.header[key] = .string(String(repeating: character, count: count)) }
        },
        jws(.jwsHeaderBytes, .jwsBuild, "Replaces the serialized header.", bugClass: "jws-header", parameters: [("hex", "the header's bytes")]) {
            p throws(ForgeError) in
            let bytes = try p.bytes("hex")
            return { draft, _ in draft.headerBytes = bytes }
        },
        jws(.jwsPayloadBytes, .jwsBuild, "Replaces the serialized payload.", bugClass: "jws-format", parameters: [("hex", "the payload's bytes")]) {
            p throws(ForgeError) in
            let bytes = try p.bytes("hex")
            return { draft, _ in draft.payloadBytes = bytes }
        },
        jws(.jwsHeaderDuplicateAlg, .jwsBuild, "Writes alg twice: ES256, then none.", bugClass: "jws-algorithm") { _ throws(ForgeError) in
            { draft, _ in
                let chain = draft.x5c.map { "\"" + Data($0).base64EncodedString() + "\"" }.joined(separator: ",")
                draft.headerBytes = Array(#"{"alg":"ES256","x5c":[\#(chain)],"typ":"JWT","alg":"none"}"#.utf8)
            }
        },
        jws(.jwsHS256WithLeafKey, .jwsBuild, "HMACs with the leaf's public key bytes (algorithm confusion).", bugClass: "jws-algorithm") { _ throws(ForgeError) in
            { draft, context in draft.hmacKey = try context.certificate(.leaf).publicKey.derRepresentation }
        },
        jws(.jwsHeaderEmbeddedJWK, .jwsBuild, "Embeds a foreign key as a jwk header member.", bugClass: "jws-key-injection") { _ throws(ForgeError) in
            { draft, context in
                let point = Array(try context.derivedKey("foreign-leaf", curve: .p256).publicKey.derRepresentation.suffix(64))
                draft.header["jwk"] = .object([
                    ("kty", .string("EC")), ("crv", .string("P-256")), ("x", .string(Base64URL.encode(point.prefix(32)))),
                    ("y", .string(Base64URL.encode(point.suffix(32)))),
                ])
            }
        },
        jws(.jwsSignForeignKey, .jwsBuild, "Signs with a P-256 key outside the chain.", bugClass: "jws-signature") { _ throws(ForgeError) in
            { draft, context in draft.key = try context.derivedKey("foreign-leaf", curve: .p256) }
        },
        jws(.jwsSignWith, .jwsBuild, "Signs with another role's key.", bugClass: "jws-signature", parameters: [("role", "root, intermediate, leaf or xcode")]) {
            p throws(ForgeError) in
            let role: JWSRole = try p.choice("role")
            return { draft, context in draft.key = try context.key(role) }
        },
    ]

    // Every signature edit is total: after another step (truncate, empty, DER) the signature may be shorter than r‖s.
    static let jwsSignatureMutations: [Mutation] = [
        jws(.jwsSignatureOfOtherPayload, .jwsSigned, "A valid signature of another input.", bugClass: "jws-signature") { _ throws(ForgeError) in
            { draft, context in
                draft.signature = try ForgeError.wrapping("signing") { try context.key(.leaf).signature(for: Array((draft.compact + "x").utf8), algorithm: .sha256) }
            }
        },
        signature(.jwsSignatureRZero, "Sets r to zero.") { zero(&$0, 0..<32) },
        signature(.jwsSignatureSZero, "Sets s to zero.") { zero(&$0, 32..<64) },
        signature(.jwsSignatureZero, "Sets r and s to zero.") { $0 = [UInt8](repeating: 0, count: 64) },
        signature(.jwsSignatureRPlusN, "Replaces r with r + n.") { $0 = add(Array($0.prefix(32)), orderP256) + Array($0.suffix(32)) },
        signature(.jwsSignatureSPlusN, "Replaces s with s + n.") { $0 = Array($0.prefix(32)) + add(Array($0.suffix(32)), orderP256) },
        signature(.jwsSignatureNegateS, "Replaces s with n − s: the other valid signature.") { $0 = Array($0.prefix(32)) + subtract(orderP256, Array($0.suffix(32))) },
        signature(.jwsSignatureSwapRS, "Swaps r and s.") { $0 = Array($0.suffix(32)) + Array($0.prefix(32)) },
        signature(.jwsSignatureAppendZero, "Appends a zero byte.") { $0.append(0) },
        signature(.jwsSignatureEmpty, "Empties the signature.") { $0 = [] },
        jws(.jwsSignatureTruncate, .jwsSigned, "Keeps the last bytes of the signature.", bugClass: "jws-signature", parameters: [("count", "bytes kept")]) {
            p throws(ForgeError) in
            let count = try p.int("count", in: 0...MutationBounds.maxTruncation)
            return { draft, _ in draft.signature = Array(draft.signature.suffix(count)) }
        },
        jws(.jwsSignatureFlipBit, .jwsSigned, "Flips one bit of the signature.", bugClass: "jws-signature", parameters: [("bit", "bit index")]) {
            p throws(ForgeError) in
            let bit = try p.int("bit", in: 0...Int(Int32.max))
            return { draft, _ in if bit / 8 < draft.signature.count { draft.signature[bit / 8] ^= 1 << UInt8(bit % 8) } }
        },
        signature(.jwsSignatureDER, "Writes the signature as X9.62 DER instead of r‖s.") { signature in
            func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
                var value = Array(bytes.drop { $0 == 0 })
                if value.first.map({ $0 >= 0x80 }) ?? true { value.insert(0, at: 0) }
                return [0x02, UInt8(value.count)] + value
            }
            let body = integer(signature.prefix(32)) + integer(signature.suffix(32))
            signature = [0x30, UInt8(body.count)] + body
        },
    ]

    static let jwsCompactMutations: [Mutation] = [
        // The compact edits count and find in UTF-8: linear however long a fill made the parts (counting
        // characters took 13 s on an 8 MiB JWS, a fuzz finding).
        compact(.jwsCompactDropSignature, "Drops the signature part.") { text in
            guard let dot = text.utf8.lastIndex(of: UInt8(ascii: ".")) else { return }
            text = String(text[..<dot])
        },
        compact(.jwsCompactAppendPart, "Appends a part.") { $0 += ".AAAA" },
        compact(.jwsCompactPadding, "Pads every part with one to four base64 '=' (to a multiple of four).") { text in
            var padded: [UInt8] = []
            padded.reserveCapacity(text.utf8.count + 16)
            for (index, part) in Array(text.utf8).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).enumerated() {
                if index > 0 { padded.append(UInt8(ascii: ".")) }
                padded += part
                padded += repeatElement(UInt8(ascii: "="), count: 4 - part.count % 4)
            }
            text = String(decoding: padded, as: UTF8.self)
        },
        compact(.jwsCompactSpace, "Inserts a space into the payload part.") { text in
            guard let dot = text.utf8.firstIndex(of: UInt8(ascii: ".")) else { return }
            text.insert(" ", at: text.index(dot, offsetBy: 5, limitedBy: text.endIndex) ?? text.endIndex)
        },
        jws(.jwsCompactReplace, .jwsCompact, "Replaces the whole text.", bugClass: "jws-format", parameters: [("text", "the replacement")]) { p throws(ForgeError) in
            let replacement = try p.string("text")
            return { draft, _ in draft.compact = replacement }
        },
        compact(.jwsJSONSerialization, "Writes the flattened JSON serialization instead of compact.") { text in
            let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            guard parts.count == 3 else { return }
            text = JSONValue.object([("protected", .string(parts[0])), ("payload", .string(parts[1])), ("signature", .string(parts[2]))]).serialized(pretty: false)
        },
        jws(.jwsSignatureStandardBase64, .jwsCompact, "Writes the signature in standard base64 (+ and /).", bugClass: "jws-format") { _ throws(ForgeError) in
            { draft, _ in
                guard let dot = draft.compact.utf8.lastIndex(of: UInt8(ascii: ".")) else { return }
                draft.compact = String(draft.compact[...dot]) + Data(draft.signature).base64EncodedString()
            }
        },
    ]

    static let jwsChainMutations: [Mutation] = [
        jws(.jwsX5CClear, .jwsBuild, "Leaves x5c out.", bugClass: "jws-x5c") { _ throws(ForgeError) in
            { draft, _ in
                draft.x5c = []
                draft.omitX5C = true
            }
        },
        jws(.jwsX5C, .jwsBuild, "Writes x5c as the given roles' certificates.", bugClass: "jws-x5c", parameters: [("roles", "comma-separated roles, may be empty")]) {
            p throws(ForgeError) in
            let roles = try p.roles("roles")
            return { draft, context in
                var chain: [[UInt8]] = []
                for role in roles { chain.append(try context.certificate(role).derRepresentation) }
                draft.x5c = chain
            }
        },
        jws(.jwsX5CGarbageThird, .jwsBuild, "Makes x5c[2] not a certificate.", bugClass: "jws-x5c") { _ throws(ForgeError) in
            { draft, _ in draft.x5cStrings = draft.x5c.prefix(2).map { Data($0).base64EncodedString() } + ["bm90IGEgY2VydGlmaWNhdGU="] }
        },
        jws(.jwsX5CBase64URL, .jwsBuild, "Writes x5c entries in base64url.", bugClass: "jws-x5c") { _ throws(ForgeError) in
            { draft, _ in draft.x5cStrings = draft.x5c.map { Base64URL.encode($0) } }
        },
        jws(.jwsX5CPEM, .jwsBuild, "Writes x5c entries as PEM text.", bugClass: "jws-x5c") { _ throws(ForgeError) in
            { draft, _ in
                draft.x5cStrings = draft.x5c.map {
                    "-----BEGIN CERTIFICATE-----\n" + Data($0).base64EncodedString(options: .lineLength64Characters) + "\n-----END CERTIFICATE-----"
                }
            }
        },
        jws(.jwsX5CXcodeCertificate, .jwsBuild, "Signs as Xcode: its one certificate in x5c, its key.", bugClass: "jws-x5c") { _ throws(ForgeError) in
            { draft, context in
                draft.x5c = [try context.certificate(.xcode).derRepresentation]
                draft.key = try context.key(.xcode)
            }
        },
        jws(.jwsChainForeignRoot, .jwsBuild, "Signs under a complete Apple-shaped chain of another root.", bugClass: "chain-untrusted") { _ throws(ForgeError) in
            foreignChain
        },
        jws(.jwsLeaf, .jwsBuild, "Replaces the leaf by a variant of it (same key).", bugClass: "chain", parameters: [("variant", "the certificate variant")]) {
            p throws(ForgeError) in
            let variant: CertificateVariant = try p.choice("variant")
            return { draft, context in try leafVariant(&draft, context, variant) }
        },
        jws(
            .jwsIntermediate, .jwsBuild, "Replaces the intermediate by a variant of it (same key).", bugClass: "chain", parameters: [("variant", "the certificate variant")]
        ) { p throws(ForgeError) in
            let variant: CertificateVariant = try p.choice("variant")
            return { draft, context in try intermediateVariant(&draft, context, variant) }
        },
        jws(.jwsChainPathlenExceeded, .jwsBuild, "Puts a second CA between the intermediate and a new leaf.", bugClass: "chain") { _ throws(ForgeError) in
            pathlenExceeded
        },
        jws(
            .jwsOCSP, .jwsBuild,
            "Re-issues the intermediate and the leaf (same keys) with AIA OCSP URLs at the TEST responder on 127.0.0.1:6960, each at the answer it names (/ocsp/revoked), or with none.",
            bugClass: "revocation", parameters: [("leaf", "the leaf's answer, or none"), ("intermediate", "the intermediate's answer, or none")]
        ) { p throws(ForgeError) in
            let leaf: OCSPPointer = try p.choice("leaf", default: .answer(.good))
            let intermediate: OCSPPointer = try p.choice("intermediate", default: .answer(.good))
            return { draft, context in try onlineChain(&draft, context, leaf: leaf, intermediate: intermediate) }
        },
        jws(
            .jwsNested, .jwsBuild, "Applies a JWS mutation to a notification's nested JWS.", bugClass: "unverified-nested-jws",
            parameters: [("field", "the data (or appData) member holding the nested JWS"), ("mutation", "the JWS mutation; its parameters beside")]
        ) { p throws(ForgeError) in
            let field = try p.string("field"), inner = try p.string("mutation")
            guard inner != MutationID.jwsNested.rawValue else { throw ForgeError(.invalidRecipe, "mutation jws.nested: a nested step cannot nest again") }
            var values = p.values
            values["field"] = nil
            values["mutation"] = nil
            let mutation = try Mutation.named(inner, editing: .jws)
            let edit = try mutation.bind(values)
            return { draft, context in
                guard var members = draft.payload.objectValue, let container = nestedContainer(members, field),
                    var data = members[container]?.objectValue, let nested = data[field]?.stringValue
                else { return }
                data[field] = .string(try context.forge.remake(nested: nested, steps: [(mutation, edit)]))
                members[container] = .object(data)
                draft.payload = .object(members)
            }
        },
        jws(
            .jwsNestedReplace, .jwsBuild, "Replaces a notification's nested JWS with text.", bugClass: "unverified-nested-jws",
            parameters: [("field", "the data (or appData) member"), ("text", "the replacement")]
        ) { p throws(ForgeError) in
            let field = try p.string("field"), text = try p.string("text")
            return { draft, _ in
                guard var members = draft.payload.objectValue, let container = nestedContainer(members, field), var data = members[container]?.objectValue else { return }
                data[field] = .string(text)
                members[container] = .object(data)
                draft.payload = .object(members)
            }
        },
    ]

    /// The member of a notification that holds (or, if none does, would hold) the nested JWS `field`: `data`, or
    /// RESCIND_CONSENT's `appData`.
    static func nestedContainer(_ members: JSONObject, _ field: String) -> String? {
        let containers = ["data", "appData"].filter { members[$0]?.objectValue != nil }
        return containers.first { members[$0]?.objectValue?[field] != nil } ?? containers.first
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

    /// The intermediate and the leaf re-issued with the same keys, their AIA naming the TEST responder at their answers.
    static func onlineChain(_ draft: inout JWSDraft, _ context: JWSMutationContext, leaf: OCSPPointer, intermediate: OCSPPointer) throws(ForgeError) {
        let key = try context.key(.intermediate)
        let intermediateDER = try context.issue(.intermediate, key: key, issuer: (try context.certificate(.root), try context.key(.root))) {
            $0 = JWSProfile.template(for: .intermediate, ocsp: intermediate.urls)
        }
        let issuer = try ForgeError.wrapping("parsing") { try X509Certificate(derEncoded: intermediateDER) }
        let leafDER = try context.issue(.leaf, key: try context.key(.leaf), issuer: (issuer, key)) { $0 = JWSProfile.template(for: .leaf, ocsp: leaf.urls) }
        // After a step that shortened x5c there is nothing to replace.
        guard draft.x5c.count > 1 else { return }
        draft.x5c[0] = leafDER
        draft.x5c[1] = intermediateDER
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

extension Mutation {
    /// The bytes a JWS step's fill adds (`count` × `character`; a `jws.nested` step's inner fill), 0 for any
    /// other step. All the fills of one JWS add at most ``MutationBounds/maxAddedBytes``, as one fill may: JSON
    /// writes a byte as up to six (`\u0000`), and distinct keys once let 256 fills make a 2 GB JWS from a 25 KB
    /// recipe (a fuzz finding). Read by the fill's own reader, so a step it refuses adds nothing (binding reports it).
    static func fillBytes(of step: MutationStep) -> Int {
        switch step.mutation {
        case MutationID.jwsPayloadFill.rawValue, MutationID.jwsHeaderFill.rawValue:
            // filling() bounds count × character by maxAddedBytes, so the product cannot overflow.
            guard let (count, character) = try? Parameters(mutation: step.mutation, values: step.parameters).filling() else { return 0 }
            return count * character.utf8.count
        case MutationID.jwsNested.rawValue:
            return fillBytes(of: MutationStep(step.parameters["mutation"] ?? "", step.parameters))
        default:
            return 0
        }
    }

    /// Adds `step`'s fill to `total`, the running sum of one JWS's steps, and throws past the bound.
    static func countFill(_ step: MutationStep, into total: inout Int) throws(ForgeError) {
        let (sum, overflow) = total.addingReportingOverflow(fillBytes(of: step))
        total = overflow ? Int.max : sum
        guard total <= MutationBounds.maxAddedBytes else {
            throw ForgeError(
                .invalidRecipe,
                "mutation \(step.mutation): with this step the fills ('count' × 'character') add \(total) bytes; the fills of a JWS add at most \(MutationBounds.maxAddedBytes)"
            )
        }
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
/// provenance replays (``Mutation/bind(_:)``) to the same bytes.
extension MutationStep {
    static func addField(_ key: String, _ value: JSONValue) -> Self { Self(.jwsPayloadSet, ["key": key, "value": value.serialized(pretty: false)]) }
    static func fillField(_ key: String, count: Int) -> Self { Self(.jwsPayloadFill, ["key": key, "count": String(count)]) }
    static func removeField(_ key: String) -> Self { Self(.jwsPayloadRemove, ["key": key]) }
    static func setHeader(_ key: String, _ value: JSONValue) -> Self { Self(.jwsHeaderSet, ["key": key, "value": value.serialized(pretty: false)]) }
    static func fillHeader(_ key: String, count: Int) -> Self { Self(.jwsHeaderFill, ["key": key, "count": String(count)]) }
    static func removeHeader(_ key: String) -> Self { Self(.jwsHeaderRemove, ["key": key]) }
    static func headerBytes(_ bytes: [UInt8]) -> Self { Self(.jwsHeaderBytes, ["hex": hexString(bytes)]) }
    static func payloadBytes(_ bytes: [UInt8]) -> Self { Self(.jwsPayloadBytes, ["hex": hexString(bytes)]) }
    static let duplicateAlgNone = Self(.jwsHeaderDuplicateAlg)
    static let hmacWithLeafKey = Self(.jwsHS256WithLeafKey)
    static let embedForeignJWK = Self(.jwsHeaderEmbeddedJWK)

    static let signWithForeignKey = Self(.jwsSignForeignKey)
    static func signWith(_ role: JWSRole) -> Self { Self(.jwsSignWith, ["role": role.rawValue]) }
    static let signOtherPayload = Self(.jwsSignatureOfOtherPayload)
    static let rZero = Self(.jwsSignatureRZero)
    static let sZero = Self(.jwsSignatureSZero)
    static let bothZero = Self(.jwsSignatureZero)
    static let rPlusN = Self(.jwsSignatureRPlusN)
    static let sPlusN = Self(.jwsSignatureSPlusN)
    static let negateS = Self(.jwsSignatureNegateS)
    static let swapRS = Self(.jwsSignatureSwapRS)
    static let appendZero = Self(.jwsSignatureAppendZero)
    static let emptySignature = Self(.jwsSignatureEmpty)
    static func truncate(_ count: Int) -> Self { Self(.jwsSignatureTruncate, ["count": String(count)]) }
    static func flipBit(_ bit: Int) -> Self { Self(.jwsSignatureFlipBit, ["bit": String(bit)]) }
    static let derSignature = Self(.jwsSignatureDER)

    static let dropSignaturePart = Self(.jwsCompactDropSignature)
    static let appendPart = Self(.jwsCompactAppendPart)
    static let padParts = Self(.jwsCompactPadding)
    static let insertSpace = Self(.jwsCompactSpace)
    static func replaceCompact(_ text: String) -> Self { Self(.jwsCompactReplace, ["text": text]) }
    static let jsonSerialization = Self(.jwsJSONSerialization)
    static let standardAlphabetSignature = Self(.jwsSignatureStandardBase64)

    static let clearChain = Self(.jwsX5CClear)
    static func chainRoles(_ roles: [JWSRole]) -> Self { Self(.jwsX5C, ["roles": roles.map(\.rawValue).joined(separator: ",")]) }
    static let garbageThird = Self(.jwsX5CGarbageThird)
    static let x5cBase64URL = Self(.jwsX5CBase64URL)
    static let x5cPEM = Self(.jwsX5CPEM)
    static let xcodeChainInProduction = Self(.jwsX5CXcodeCertificate)

    static let foreignChain = Self(.jwsChainForeignRoot)
    static func leafVariant(_ variant: Mutation.CertificateVariant) -> Self { Self(.jwsLeaf, ["variant": variant.rawValue]) }
    static func intermediateVariant(_ variant: Mutation.CertificateVariant) -> Self { Self(.jwsIntermediate, ["variant": variant.rawValue]) }
    static let pathlenExceeded = Self(.jwsChainPathlenExceeded)
    static func ocsp(leaf: OCSPPointer, intermediate: OCSPPointer = .answer(.good)) -> Self {
        Self(.jwsOCSP, ["leaf": leaf.rawValue, "intermediate": intermediate.rawValue])
    }

    /// `step` applied to the notification's nested JWS `field` (its parameters beside `field` and `mutation`).
    static func nested(_ field: String, _ step: Self) -> Self {
        Self(.jwsNested, step.parameters.merging(["field": field, "mutation": step.mutation]) { _, new in new })
    }
    static func nestedEnvironment(_ field: String, _ environment: String) -> Self { nested(field, addField("environment", .string(environment))) }
    static func nestedBundle(_ field: String, _ bundle: String) -> Self { nested(field, addField("bundleId", .string(bundle))) }
    static func replaceNested(_ field: String, _ text: String) -> Self { Self(.jwsNestedReplace, ["field": field, "text": text]) }
}
