import Foundation
import ForgeCrypto
import ReceiptForge
import ReceiptModel

/// The named defects the JWS vectors are made of. Each id is stable: it names the vector's recipe.
extension JWSMutation {
    /// P-256's group order n, big-endian.
    static let orderP256: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]

    // MARK: payload and header

    static func addField(_ key: String, _ value: JSONValue) -> Self {
        Self(id: "jws.payload-set-\(key)", stage: .build) { draft, _ in
            guard var members = draft.payload.objectValue else { return }
            members[key] = value
            draft.payload = .object(members)
        }
    }

    static func removeField(_ key: String) -> Self {
        Self(id: "jws.payload-remove-\(key)", stage: .build) { draft, _ in
            guard var members = draft.payload.objectValue else { return }
            members[key] = nil
            draft.payload = .object(members)
        }
    }

    static func setHeader(_ key: String, _ value: JSONValue) -> Self {
        Self(id: "jws.header-set-\(key)", stage: .build) { draft, _ in draft.header[key] = value }
    }

    static func addHeader(_ key: String, _ value: JSONValue) -> Self {
        Self(id: "jws.header-add-\(key)", stage: .build) { draft, _ in draft.header[key] = value }
    }

    static func removeHeader(_ key: String) -> Self {
        Self(id: "jws.header-remove-\(key)", stage: .build) { draft, _ in
            draft.header[key] = nil
            if key == "x5c" { draft.omitX5C = true }
        }
    }

    static func headerBytes(_ bytes: [UInt8]) -> Self { Self(id: "jws.header-bytes", stage: .build) { draft, _ in draft.headerBytes = bytes } }
    static func payloadBytes(_ bytes: [UInt8]) -> Self { Self(id: "jws.payload-bytes", stage: .build) { draft, _ in draft.payloadBytes = bytes } }

    static let duplicateAlgNone = Self(id: "jws.header-duplicate-alg", stage: .build) { draft, _ in
        let chain = draft.x5c.map { "\"" + Data($0).base64EncodedString() + "\"" }.joined(separator: ",")
        draft.headerBytes = Array(#"{"alg":"ES256","x5c":[\#(chain)],"typ":"JWT","alg":"none"}"#.utf8)
    }

    static let hmacWithLeafKey = Self(id: "jws.hs256-with-leaf-key", stage: .build) { draft, context in
        draft.hmacKey = try context.certificate(.leaf).publicKey.derRepresentation
    }

    static let embedForeignJWK = Self(id: "jws.header-embedded-jwk", stage: .build) { draft, context in
        let point = Array(try context.derivedKey("foreign-leaf", curve: .p256).publicKey.derRepresentation.suffix(64))
        draft.header["jwk"] = .object([
            ("kty", .string("EC")), ("crv", .string("P-256")), ("x", .string(Base64URL.encode(point.prefix(32)))), ("y", .string(Base64URL.encode(point.suffix(32)))),
        ])
    }

    // MARK: signatures

    static let signWithForeignKey = Self(id: "jws.sign-foreign-key", stage: .build) { draft, context in
        draft.key = try context.derivedKey("foreign-leaf", curve: .p256)
    }

    static func signWith(_ role: JWSRole) -> Self { Self(id: "jws.sign-with-\(role.rawValue)", stage: .build) { draft, context in draft.key = try context.key(role) } }

    static let signOtherPayload = Self(id: "jws.signature-of-other-payload", stage: .signed) { draft, context in
        draft.signature = try ForgeError.wrapping("signing") { try context.key(.leaf).signature(for: Array((draft.compact + "x").utf8), algorithm: .sha256) }
    }

    static func editSignature(_ id: String, _ edit: @escaping @Sendable (inout [UInt8]) -> Void) -> Self {
        Self(id: id, stage: .signed) { draft, _ in edit(&draft.signature) }
    }

    // Every edit is total: after another step (truncate, empty, DER) the signature may be shorter than r‖s.
    static let rZero = editSignature("jws.signature-r-zero") { zero(&$0, 0..<32) }
    static let sZero = editSignature("jws.signature-s-zero") { zero(&$0, 32..<64) }
    static let bothZero = editSignature("jws.signature-zero") { $0 = [UInt8](repeating: 0, count: 64) }
    static let rPlusN = editSignature("jws.signature-r-plus-n") { $0 = add(Array($0.prefix(32)), orderP256) + Array($0.suffix(32)) }
    static let sPlusN = editSignature("jws.signature-s-plus-n") { $0 = Array($0.prefix(32)) + add(Array($0.suffix(32)), orderP256) }
    static let negateS = editSignature("jws.signature-negate-s") { $0 = Array($0.prefix(32)) + subtract(orderP256, Array($0.suffix(32))) }
    static let swapRS = editSignature("jws.signature-swap-r-s") { $0 = Array($0.suffix(32)) + Array($0.prefix(32)) }
    static let appendZero = editSignature("jws.signature-append-zero") { $0.append(0) }
    static let emptySignature = editSignature("jws.signature-empty") { $0 = [] }
    static func truncate(_ count: Int) -> Self { editSignature("jws.signature-truncate-\(count)") { $0 = Array($0.suffix(count)) } }
    static func flipBit(_ bit: Int) -> Self { editSignature("jws.signature-flip-bit-\(bit)") { if bit / 8 < $0.count { $0[bit / 8] ^= 1 << UInt8(bit % 8) } } }
    static let derSignature = editSignature("jws.signature-der") { signature in
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.first.map({ $0 >= 0x80 }) ?? true { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(signature.prefix(32)) + integer(signature.suffix(32))
        signature = [0x30, UInt8(body.count)] + body
    }

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

    // MARK: compact form

    static func editCompact(_ id: String, _ edit: @escaping @Sendable (inout String) -> Void) -> Self {
        Self(id: id, stage: .compact) { draft, _ in edit(&draft.compact) }
    }

    static let dropSignaturePart = editCompact("jws.compact-drop-signature") { $0 = String($0[..<($0.lastIndex(of: ".") ?? $0.endIndex)]) }
    static let appendPart = editCompact("jws.compact-append-part") { $0 += ".AAAA" }
    static let padParts = editCompact("jws.compact-padding") { text in
        text = text.split(separator: ".", omittingEmptySubsequences: false).map { $0 + String(repeating: "=", count: (4 - $0.count % 4) % 4 == 0 ? 4 : (4 - $0.count % 4) % 4) }
            .joined(separator: ".")
    }
    static let insertSpace = editCompact("jws.compact-space") { text in
        guard let dot = text.firstIndex(of: ".") else { return }
        text.insert(" ", at: text.index(dot, offsetBy: 5, limitedBy: text.endIndex) ?? text.endIndex)
    }
    static func replaceCompact(_ replacement: String) -> Self { editCompact("jws.compact-replace") { $0 = replacement } }
    static let jsonSerialization = editCompact("jws.json-serialization") { text in
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { return }
        text = JSONValue.object([("protected", .string(parts[0])), ("payload", .string(parts[1])), ("signature", .string(parts[2]))]).serialized(pretty: false)
    }
    static let standardAlphabetSignature = Self(id: "jws.signature-standard-base64", stage: .compact) { draft, _ in
        guard let dot = draft.compact.lastIndex(of: ".") else { return }
        draft.compact = String(draft.compact[...dot]) + Data(draft.signature).base64EncodedString()
    }

    // MARK: x5c

    static let clearChain = Self(id: "jws.x5c-clear", stage: .build) { draft, _ in
        draft.x5c = []
        draft.omitX5C = true
    }

    static func chainRoles(_ roles: [JWSRole]) -> Self {
        Self(id: "jws.x5c-" + (roles.isEmpty ? "empty" : roles.count > 4 ? "\(roles.count)-entries" : roles.map(\.rawValue).joined(separator: "-")), stage: .build) {
            draft, context in
            var chain: [[UInt8]] = []
            for role in roles { chain.append(try context.certificate(role).derRepresentation) }
            draft.x5c = chain
        }
    }

    static let garbageThird = Self(id: "jws.x5c-garbage-third", stage: .build) { draft, _ in
        draft.x5cStrings = draft.x5c.prefix(2).map { Data($0).base64EncodedString() } + ["bm90IGEgY2VydGlmaWNhdGU="]
    }
    static let x5cBase64URL = Self(id: "jws.x5c-base64url", stage: .build) { draft, _ in draft.x5cStrings = draft.x5c.map { Base64URL.encode($0) } }
    static let x5cPEM = Self(id: "jws.x5c-pem", stage: .build) { draft, _ in
        draft.x5cStrings = draft.x5c.map { "-----BEGIN CERTIFICATE-----\n" + Data($0).base64EncodedString(options: .lineLength64Characters) + "\n-----END CERTIFICATE-----" }
    }
    static let xcodeChainInProduction = Self(id: "jws.x5c-xcode-certificate", stage: .build) { draft, context in
        draft.x5c = [try context.certificate(.xcode).derRepresentation]
        draft.key = try context.key(.xcode)
    }

    // MARK: certificates

    /// A whole Apple-shaped chain from keys derived for this purpose, signed with its own leaf.
    static let foreignChain = Self(id: "jws.chain-foreign-root", stage: .build) { draft, context in
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

    public enum CertificateVariant: String, Sendable {
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
    static func leafVariant(_ variant: CertificateVariant) -> Self {
        Self(id: "jws.leaf-\(variant.rawValue)", stage: .build) { draft, context in
            let issuerRole: JWSRole = variant == .signedByRoot ? .root : .intermediate
            var der = try context.issue(.leaf, key: try context.key(.leaf), issuer: (try context.certificate(issuerRole), try context.key(issuerRole))) {
                edit(&$0, variant, marker: KnownOID.appleReceiptSigningMarker)
            }
            if variant == .badSignature { der[der.count - 3] ^= 0x01 }
            // After a step that emptied x5c there is no leaf to replace.
            guard !draft.x5c.isEmpty else { return }
            draft.x5c[0] = der
        }
    }

    /// The intermediate replaced by a variant of it (same key, so the leaf still chains to it).
    static func intermediateVariant(_ variant: CertificateVariant) -> Self {
        Self(id: "jws.intermediate-\(variant.rawValue)", stage: .build) { draft, context in
            let key = try context.key(.intermediate)
            let issuer = variant == .selfSigned ? nil : (try context.certificate(.root), try context.key(.root))
            let der = try context.issue(.intermediate, key: key, issuer: issuer) { edit(&$0, variant, marker: KnownOID.appleWWDRIntermediateMarker) }
            // After a step that shortened x5c there is no intermediate to replace.
            guard draft.x5c.count > 1 else { return }
            draft.x5c[1] = der
        }
    }

    /// A second CA between the intermediate and a new leaf: the intermediate's pathlen 0 is exceeded.
    static let pathlenExceeded = Self(id: "jws.chain-pathlen-exceeded", stage: .build) { draft, context in
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

    // MARK: nested

    static func nested(_ field: String, _ mutation: JWSMutation) -> Self {
        Self(id: "jws.nested-\(field)-\(mutation.id)", stage: .build) { draft, context in
            guard var members = draft.payload.objectValue, var data = members["data"]?.objectValue, let inner = data[field]?.stringValue else { return }
            data[field] = .string(try context.forge.remake(nested: inner, mutations: [mutation]))
            members["data"] = .object(data)
            draft.payload = .object(members)
        }
    }

    static func nestedEnvironment(_ field: String, _ environment: String) -> Self { nested(field, addField("environment", .string(environment))) }
    static func nestedBundle(_ field: String, _ bundle: String) -> Self { nested(field, addField("bundleId", .string(bundle))) }

    static func replaceNested(_ field: String, _ text: String) -> Self {
        Self(id: "jws.nested-\(field)-replaced", stage: .build) { draft, _ in
            guard var members = draft.payload.objectValue, var data = members["data"]?.objectValue else { return }
            data[field] = .string(text)
            members["data"] = .object(data)
            draft.payload = .object(members)
        }
    }
}
