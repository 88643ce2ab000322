import StoreModel
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ForgeCrypto
import ReceiptModel
import _ForgeSupport

extension Mutation {
    /// Every mutation the forge knows, receipts' then StoreKit 2 JWS's, in documentation order: one registry.
    public static let catalogue: [Mutation] = receiptMutations + jwsMutations
    static let receiptMutations: [Mutation] = payloadMutations + signingMutations + certificateMutations + containerMutations + transportMutations

    // MARK: Payload

    static let payloadMutations: [Mutation] = [
        Mutation(
            .dropAttribute, .attributes, "Removes every top-level attribute of a type.", bugClass: "missing-field",
            parameters: [("type", "attribute type")]
        ) { stages, p throws(ForgeError) in
            let type = try p.int("type", in: MutationBounds.attributeNumbers)
            stages.attributes.removeAll { $0.type == type }
        },
        Mutation(
            .setAttribute, .attributes, "Replaces (or adds) a top-level attribute's value.", bugClass: "field-value",
            parameters: [("type", "attribute type"), ("utf8|ia5|integer|hex", "the new value, as one of these kinds")]
        ) { stages, p throws(ForgeError) in
            let attribute = ReceiptAttribute(type: try p.int("type", in: MutationBounds.attributeNumbers), value: try attributeValue(p))
            if let index = stages.attributes.firstIndex(where: { $0.type == attribute.type }) {
                stages.attributes[index].value = attribute.value
            } else {
                stages.attributes.append(attribute)
            }
        },
        Mutation(
            .addAttribute, .attributes, "Adds an attribute, even one of a type already present (duplicates) or unknown.",
            bugClass: "duplicate-or-unknown-attribute",
            parameters: [("type", "attribute type"), ("utf8|ia5|integer|hex", "the value"), ("version", "attribute version, default 1")]
        ) { stages, p throws(ForgeError) in
            stages.attributes.append(
                ReceiptAttribute(
                    type: try p.int("type", in: MutationBounds.attributeNumbers), version: try p.int("version", in: MutationBounds.attributeNumbers, default: 1),
                    value: try attributeValue(p)))
        },
        Mutation(
            .retagAttribute, .attributes, "Changes the ASN.1 tag inside an attribute's value (e.g. UTF8String 0c → IA5String 16).",
            bugClass: "wrong-inner-tag", parameters: [("type", "attribute type"), ("tag", "the new tag, hex")]
        ) { stages, p throws(ForgeError) in
            let type = try p.int("type", in: MutationBounds.attributeNumbers), tag = try p.bytes("tag")
            guard tag.count == 1, let index = stages.attributes.firstIndex(where: { $0.type == type }), !stages.attributes[index].value.isEmpty else {
                throw ForgeError(.invalidScenario, "mutation retag-attribute: no attribute \(type) with a value, or tag is not one byte")
            }
            stages.attributes[index].value[0] = tag[0]
        },
        Mutation(
            .integerLeadingZero, .attributes, "Writes an INTEGER attribute value with a redundant leading 00 (not DER).",
            bugClass: "non-minimal-integer", parameters: [("type", "attribute type holding an INTEGER")]
        ) { stages, p throws(ForgeError) in
            let type = try p.int("type", in: MutationBounds.attributeNumbers)
            guard let index = stages.attributes.firstIndex(where: { $0.type == type }), let content = stages.attributes[index].innerContent(ASN1Tag.integer) else {
                throw ForgeError(.invalidScenario, "mutation integer-leading-zero: attribute \(type) is not an INTEGER")
            }
            stages.attributes[index].value = ASN1Value.integer(content: [0] + content)
        },
        Mutation(
            .purchaseSetAttribute, .attributes, "Replaces (or adds) an attribute inside every in-app purchase.",
            bugClass: "field-value", parameters: [("type", "in-app attribute type"), ("utf8|ia5|integer|hex", "the new value")]
        ) { stages, p throws(ForgeError) in
            let type = try p.int("type", in: MutationBounds.attributeNumbers), value = try attributeValue(p)
            try editPurchases(&stages) { fields in
                if let index = fields.firstIndex(where: { $0.type == type }) { fields[index].value = value } else { fields.append(ReceiptAttribute(type: type, value: value)) }
            }
        },
        Mutation(
            .purchaseDropAttribute, .attributes, "Removes an attribute from every in-app purchase.", bugClass: "missing-field",
            parameters: [("type", "in-app attribute type")]
        ) { stages, p throws(ForgeError) in
            let type = try p.int("type", in: MutationBounds.attributeNumbers)
            try editPurchases(&stages) { fields in fields.removeAll { $0.type == type } }
        },
        Mutation(
            .reverseOrder, .attributes, "Writes the payload SET in reverse DER order (unsorted, as no DER encoder would).",
            bugClass: "set-ordering"
        ) { stages, _ throws(ForgeError) in
            let sorted = stages.attributes.map { ($0, $0.encoded()) }.sorted { ReceiptPayload.derSetOrder($0.1, $1.1) }
            stages.attributes = sorted.reversed().map(\.0)
            stages.ordering = .asGiven
        },
        Mutation(
            .payloadTrailingBytes, .payload, "Appends bytes after the payload SET inside the signed content.",
            bugClass: "trailing-data", parameters: [("count", "how many zero bytes, default 2")]
        ) { stages, p throws(ForgeError) in
            stages.payload += [UInt8](repeating: 0, count: try p.int("count", in: 0...MutationBounds.maxAddedBytes, default: 2))
        },
    ]

    // MARK: Signature and algorithms

    static let signingMutations: [Mutation] = [
        Mutation(
            .digestOid, .signing, "Names another digest algorithm in SignerInfo and digestAlgorithms; the signature is still over the preset's digest.",
            bugClass: "algorithm-confusion", parameters: [("oid", "dotted digest OID")]
        ) { stages, p throws(ForgeError) in
            let oid = try p.oid("oid")
            stages.signerDigestOID = oid
            stages.digestAlgorithmOIDs = [oid]
        },
        Mutation(
            .signerDigestOid, .signing, "Changes only the SignerInfo's digest OID, so it contradicts SignedData.digestAlgorithms.",
            bugClass: "algorithm-confusion", parameters: [("oid", "dotted digest OID")]
        ) { stages, p throws(ForgeError) in
            stages.signerDigestOID = try p.oid("oid")
        },
        Mutation(
            .hashAlgorithm, .signing, "Signs a digest of another algorithm while the OIDs keep naming the preset's.",
            bugClass: "algorithm-confusion", parameters: [("algorithm", "md5, sha1, sha256, sha384 or sha512")]
        ) { stages, p throws(ForgeError) in
            stages.hashAlgorithm = try p.choice("algorithm")
        },
        Mutation(
            .consistentDigest, .signing, "Uses another digest everywhere: computed, in SignerInfo and in digestAlgorithms.",
            bugClass: "algorithm-support", parameters: [("algorithm", "md5, sha1, sha256, sha384 or sha512")]
        ) { stages, p throws(ForgeError) in
            let algorithm: DigestAlgorithm = try p.choice("algorithm")
            stages.hashAlgorithm = algorithm
            stages.signerDigestOID = algorithm.dottedOID
            stages.digestAlgorithmOIDs = [algorithm.dottedOID]
        },
        Mutation(
            .signatureAlgorithmOid, .signing, "Writes another SignerInfo signature algorithm OID.", bugClass: "algorithm-confusion",
            parameters: [("oid", "dotted OID, e.g. 1.2.840.113549.1.1.11 or 1.2.840.113549.1.1.5")]
        ) { stages, p throws(ForgeError) in
            stages.signatureAlgorithmOID = try p.oid("oid")
        },
        Mutation(
            .signWith, .signing, "Signs with another role's key while the embedded certificates stay the same.",
            bugClass: "signature-bypass", parameters: [("role", "certificate role whose key signs")]
        ) { stages, p throws(ForgeError) in
            stages.signerKey = stages.pki[try p.role("role")].privateKey
        },
        Mutation(
            .signedAttributes, .signing, "Adds CMS signed attributes (contentType, messageDigest) and signs them, as openssl cms -sign does.",
            bugClass: "signed-attributes", parameters: [("message-digest", "correct (default) or wrong")]
        ) { stages, p throws(ForgeError) in
            let wrong = try p.string("message-digest", default: "correct") == "wrong"
            stages.signedAttributes = ForgeStages.SignedAttributesChoice(messageDigest: wrong ? [UInt8](repeating: 0x5A, count: stages.hashAlgorithm.digestLength) : nil)
        },
        Mutation(
            .flipSignatureBit, .signed, "Flips one bit of the RSA signature.", bugClass: "signature-bypass",
            parameters: [("byte", "index in the signature, default 0"), ("signer", "index of the SignerInfo, default 0")]
        ) { stages, p throws(ForgeError) in
            let index = try p.int("byte", in: 0...Int(Int32.max), default: 0)
            let signer = try p.int("signer", in: 0...MutationBounds.maxSignerInfos, default: 0)
            guard stages.signers.indices.contains(signer), stages.signers[signer].signature.indices.contains(index) else {
                throw ForgeError(.invalidScenario, "mutation flip-signature-bit: no signature byte \(index) in SignerInfo \(signer)")
            }
            stages.signers[signer].signature[index] ^= 0x01
        },
        Mutation(
            .signerCount, .signed, "Writes 0 SignerInfos, or the one SignerInfo several times.", bugClass: "signer-count",
            parameters: [("count", "0, 2, …")]
        ) { stages, p throws(ForgeError) in
            let count = try p.int("count", in: 0...MutationBounds.maxSignerInfos)
            guard let signer = stages.signers.first else {
                throw ForgeError(.invalidScenario, "mutation signer-count: there is no SignerInfo to repeat (an earlier step removed it)")
            }
            stages.signers = Array(repeating: signer, count: count)
        },
        Mutation(
            .signerSerial, .signed, "Points the SignerInfo at a serial number no embedded certificate has.",
            bugClass: "signer-identification", parameters: [("serial", "hex serial number, default 7f")]
        ) { stages, p throws(ForgeError) in
            let serial = try p.bytes("serial", default: "7f")
            guard !stages.signers.isEmpty else { throw ForgeError(.invalidScenario, "mutation signer-serial: there is no SignerInfo (an earlier step removed it)") }
            stages.signers[0].serialNumber = serial
        },
        Mutation(.emptySignature, .signed, "Writes an empty signature OCTET STRING.", bugClass: "signature-bypass") { stages, _ throws(ForgeError) in
            guard !stages.signers.isEmpty else { throw ForgeError(.invalidScenario, "mutation empty-signature: there is no SignerInfo (an earlier step removed it)") }
            stages.signers[0].signature = []
        },
    ]

    // MARK: Certificates

    /// Leaf variants issued from the committed leaf key: same key, one property changed.
    enum LeafVariant: String, CaseIterable {
        case expired, notYetValid = "not-yet-valid", noMarker = "no-marker", noDigitalSignature = "no-digital-signature"
        case selfSigned = "self-signed", underRoot = "under-root", notMarkerCritical = "marker-critical"
    }

    /// Intermediate variants issued from the committed intermediate key.
    enum IntermediateVariant: String, CaseIterable {
        case noMarker = "no-marker", expired, notCA = "not-ca", underForeignRoot = "under-foreign-root"
    }

    static let certificateMutations: [Mutation] = [
        Mutation(
            .certificateOrder, .signing, "Embeds the certificates in another order (e.g. root first, or DER-sorted as openssl writes them).",
            bugClass: "certificate-order", parameters: [("order", "comma-separated indices, or reverse")]
        ) { stages, p throws(ForgeError) in
            let order = try p.string("order")
            if order == "reverse" {
                stages.certificates.reverse()
            } else {
                let indices = order.split(separator: ",").compactMap { Int($0) }
                guard indices.count == order.split(separator: ",").count, indices.allSatisfy(stages.certificates.indices.contains) else {
                    throw ForgeError(.invalidRecipe, "mutation certificate-order: '\(order)' is not a list of indices below \(stages.certificates.count)")
                }
                stages.certificates = indices.map { stages.certificates[$0] }
            }
        },
        Mutation(
            .dropCertificate, .signing, "Leaves an embedded certificate out.", bugClass: "incomplete-chain",
            parameters: [("index", "position in the embedded list")]
        ) { stages, p throws(ForgeError) in
            let index = try p.int("index", in: 0...Int(Int32.max))
            guard stages.certificates.indices.contains(index) else { throw ForgeError(.invalidScenario, "mutation drop-certificate: no certificate \(index)") }
            stages.certificates.remove(at: index)
        },
        Mutation(
            .addCertificate, .signing, "Embeds one more certificate of the test PKI at the end.", bugClass: "chain-shape",
            parameters: [("role", "certificate role")]
        ) { stages, p throws(ForgeError) in
            stages.certificates.append(stages.pki[try p.role("role")].certificate.derRepresentation)
        },
        Mutation(
            .embedCertificate, .signing, "Embeds arbitrary DER certificate bytes (e.g. the genuine Apple root as a decoy) at a position.",
            bugClass: "trust-anchor-confusion", parameters: [("hex", "certificate DER"), ("index", "position, default the end")]
        ) { stages, p throws(ForgeError) in
            let bytes = try p.bytes("hex")
            let index = try p.int("index", in: 0...Int(Int32.max), default: stages.certificates.count)
            stages.certificates.insert(bytes, at: min(max(0, index), stages.certificates.count))
        },
        Mutation(
            .reissueLeaf, .signing, "Replaces the signing certificate with a variant issued from the same key.",
            bugClass: "leaf-policy", parameters: [("variant", LeafVariant.allCases.map(\.rawValue).joined(separator: ", "))]
        ) { stages, p throws(ForgeError) in
            let variant: LeafVariant = try p.choice("variant")
            try reissueLeaf(&stages, variant)
        },
        Mutation(
            .reissueIntermediate, .signing, "Replaces the intermediate with a variant issued from the same key.",
            bugClass: "intermediate-policy", parameters: [("variant", IntermediateVariant.allCases.map(\.rawValue).joined(separator: ", "))]
        ) { stages, p throws(ForgeError) in
            let variant: IntermediateVariant = try p.choice("variant")
            try reissueIntermediate(&stages, variant)
        },
        Mutation(
            .leafValidity, .signing, "Reissues the signing certificate with a chosen validity window.", bugClass: "validation-time",
            parameters: [("not-before", "date"), ("not-after", "date")]
        ) { stages, p throws(ForgeError) in
            guard let notBefore = ReceiptDate.parse(try p.string("not-before")), let notAfter = ReceiptDate.parse(try p.string("not-after")) else {
                throw ForgeError(.invalidRecipe, "mutation leaf-validity: dates must look like 2025-01-31T00:00:00Z")
            }
            try reissue(&stages, role: stages.preset.chain[0], position: 0) { template in
                template.notBefore = notBefore
                template.notAfter = notAfter
            }
        },
    ]

    // MARK: Container and transport

    enum Wrapper: String, CaseIterable { case minimal, indefinite, long }
    enum Transport: String, CaseIterable { case base64, lines = "base64-lines", urlSafe = "base64url", unpadded = "base64-unpadded", double = "double-base64", pem }

    static let containerMutations: [Mutation] = [
        Mutation(
            .layout, .signing, "Writes the container with other length forms or eContent segmentation (all valid BER).",
            bugClass: "ber-tolerance",
            parameters: [("wrapper", "minimal, indefinite or long (4 length octets)"), ("econtent", "primitive, constructed-N or detached")]
        ) { stages, p throws(ForgeError) in
            let wrapper: Wrapper = try p.choice("wrapper", default: .minimal)
            let eContent = try p.string("econtent", default: "primitive")
            stages.layout.wrapperLength =
                switch wrapper {
                case .minimal: .minimal;
                case .indefinite: .indefinite;
                case .long: .longForm(octets: 4)
                }
            if eContent == "primitive" {
                stages.layout.eContent = .primitive
            } else if eContent == "detached" {
                stages.layout.eContent = .detached
            } else if eContent.hasPrefix("constructed-"), let segments = Int(eContent.dropFirst(12)), (1...MutationBounds.maxSegments).contains(segments) {
                stages.layout.eContent = .constructed(segments: segments)
            } else {
                throw ForgeError(
                    .invalidRecipe, "mutation layout: econtent must be primitive, detached or constructed-N (N from 1 to \(MutationBounds.maxSegments)), not '\(eContent)'")
            }
        },
        Mutation(
            .trailingBytes, .encoded, "Appends bytes after the ContentInfo.", bugClass: "trailing-data",
            parameters: [("count", "how many, default 4"), ("byte", "their value in hex, default 00")]
        ) { stages, p throws(ForgeError) in
            let byte = try p.bytes("byte", default: "00").first ?? 0
            stages.bytes += [UInt8](repeating: byte, count: try p.int("count", in: 0...MutationBounds.maxAddedBytes, default: 4))
        },
        Mutation(
            .truncate, .encoded, "Cuts the receipt after a number of bytes.", bugClass: "truncation",
            parameters: [("length", "bytes kept; negative counts from the end")]
        ) { stages, p throws(ForgeError) in
            let length = try p.int("length", in: -MutationBounds.maxTruncation...MutationBounds.maxTruncation)
            let kept = length >= 0 ? min(length, stages.bytes.count) : max(0, stages.bytes.count + length)
            stages.bytes = Array(stages.bytes.prefix(kept))
        },
        Mutation(
            .nestedSequences, .encoded, "Replaces the receipt with indefinite-length SEQUENCEs nested to a depth.",
            bugClass: "unbounded-recursion", parameters: [("depth", "nesting depth, default 100000")]
        ) { stages, p throws(ForgeError) in
            let depth = try p.int("depth", in: 1...MutationBounds.maxNestingDepth, default: 100_000)
            stages.bytes = Array([[UInt8]](repeating: [0x30, 0x80], count: depth).joined())
        },
        Mutation(
            .hugeDeclaredLength, .encoded, "Rewrites the outer length to declare about 2 GiB while the bytes stay as they are.",
            bugClass: "length-trust"
        ) { stages, _ throws(ForgeError) in
            guard let header = try? BERReader(stages.bytes).node(at: 0) else {
                throw ForgeError(.invalidScenario, "mutation huge-declared-length: the receipt has no outer header to rewrite")
            }
            stages.bytes = [0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF] + stages.bytes[header.contentRange.lowerBound...]
        },
        Mutation(
            .flipPayloadBit, .encoded, "Flips one bit inside the signed payload after signing.", bugClass: "signature-bypass",
            parameters: [("offset", "payload byte, default the middle")]
        ) { stages, p throws(ForgeError) in
            guard let start = firstOccurrence(of: stages.payload, in: stages.bytes) else {
                throw ForgeError(.invalidScenario, "mutation flip-payload-bit: the payload is not stored contiguously (segmented eContent)")
            }
            let offset = try p.int("offset", in: 0...Int(Int32.max), default: stages.payload.count / 2)
            guard stages.payload.indices.contains(offset) else { throw ForgeError(.invalidScenario, "mutation flip-payload-bit: no payload byte \(offset)") }
            stages.bytes[start + offset] ^= 0x01
        },
    ]

    static let transportMutations: [Mutation] = [
        Mutation(
            .transport, .encoded, "Wraps the bytes as they travel: base64 variants, base64 of base64, PEM.", bugClass: "transport-encoding",
            parameters: [("encoding", Transport.allCases.map(\.rawValue).joined(separator: ", "))]
        ) { stages, p throws(ForgeError) in
            let encoding: Transport = try p.choice("encoding")
            let base64 = Data(stages.bytes).base64EncodedString()
            let text: String =
                switch encoding {
                case .base64: base64
                case .lines: Data(stages.bytes).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed]) + "\n"
                case .urlSafe: base64.replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
                case .unpadded: base64.replacing("=", with: "")
                case .double: Data(base64.utf8).base64EncodedString()
                case .pem: "-----BEGIN PKCS7-----\n" + Data(stages.bytes).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed]) + "\n-----END PKCS7-----\n"
                }
            stages.bytes = Array(text.utf8)
        },
        Mutation(.jwsInstead, .encoded, "Replaces the receipt with a StoreKit 2 JWS, as clients send by mistake.", bugClass: "transport-confusion") {
            stages, _ throws(ForgeError) in
            func segment(_ json: String) -> String {
                Data(json.utf8).base64EncodedString().replacing("=", with: "").replacing("+", with: "-").replacing("/", with: "_")
            }
            let signature = Data(stages.signers.first?.signature.prefix(64) ?? []).base64EncodedString()
                .replacing("=", with: "").replacing("+", with: "-").replacing("/", with: "_")
            stages.bytes = Array((segment(#"{"alg":"ES256","kid":"TEST"}"#) + "." + segment(#"{"transactionId":"1","bundleId":"com.example.app"}"#) + "." + signature).utf8)
        },
    ]

    // MARK: Helpers

    /// A value from `utf8=`, `ia5=`, `integer=` or `hex=` parameters.
    static func attributeValue(_ p: Parameters) throws(ForgeError) -> [UInt8] {
        if let text = p.values["utf8"] { return ASN1Value.utf8String(text) }
        if let text = p.values["ia5"] { return ASN1Value.ia5String(text) }
        if let text = p.values["integer"] {
            guard let number = Int64(text) else { throw ForgeError(.invalidRecipe, "mutation \(p.mutation): integer '\(text)' is not a number") }
            return ASN1Value.integer(number)
        }
        if p.values["hex"] != nil { return try p.bytes("hex") }
        throw ForgeError(.invalidRecipe, "mutation \(p.mutation) needs a value: utf8=, ia5=, integer= or hex=")
    }

    static func editPurchases(_ stages: inout ForgeStages, _ edit: (inout [ReceiptAttribute]) -> Void) throws(ForgeError) {
        var found = false
        for index in stages.attributes.indices where stages.attributes[index].type == AttributeType.inAppPurchase {
            guard let decoded = try? DecodedPayload(berEncoded: stages.attributes[index].value) else { continue }
            var fields = decoded.payload.attributes
            edit(&fields)
            stages.attributes[index].value = ReceiptPayload(fields).encoded(ordering: decoded.isDERSorted ? .derSorted : .asGiven)
            found = true
        }
        if !found { throw ForgeError(.invalidScenario, "this mutation edits in-app purchases, and the receipt has none") }
    }

    static func firstOccurrence(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] && haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }

    /// Re-issues the certificate of `role` (embedded at `position`) from its own key with an edited template.
    static func reissue(
        _ stages: inout ForgeStages, role: CertificateRole, position: Int, issuerRole: CertificateRole?? = .none,
        _ edit: (inout CertificateTemplate) -> Void
    ) throws(ForgeError) {
        var template = role.template
        edit(&template)
        let subject = stages.pki[role]
        let issuer: Credential<RSAPrivateKey>? = (issuerRole ?? role.issuer).map { stages.pki[$0] }
        let certificate = try ForgeError.wrapping("issuing a \(role.fileStem) variant") {
            try X509Certificate.issue(
                template, subjectKey: subject.privateKey.publicKey, issuer: issuer?.certificate,
                issuerKey: issuer?.privateKey ?? subject.privateKey)
        }
        guard stages.certificates.indices.contains(position) else {
            throw ForgeError(.invalidScenario, "the receipt embeds no certificate at position \(position) to replace")
        }
        stages.certificates[position] = certificate.derRepresentation
        if position == 0 {
            stages.signerIdentity = try ForgeError.encoding("reading the reissued certificate") { () throws(ReceiptDecodingError) in
                try CertificateIdentity(derEncoded: certificate.derRepresentation)
            }
        }
    }

    static let leafMarker = CertificateExtension.custom(oid: KnownOID.appleReceiptSigningMarker, critical: false, derValue: [0x05, 0x00])
    static let intermediateMarker = CertificateExtension.custom(oid: KnownOID.appleWWDRIntermediateMarker, critical: false, derValue: [0x05, 0x00])

    static func reissueLeaf(_ stages: inout ForgeStages, _ variant: LeafVariant) throws(ForgeError) {
        let role = stages.preset.chain[0]
        switch variant {
        case .expired, .notYetValid:
            // Outside its window at the receipt's creation time, whatever that is: a window long past or far ahead.
            try reissue(&stages, role: role, position: 0) { template in
                template.notBefore = variant == .expired ? TestPKIProfile.date(2000, 1, 1) : TestPKIProfile.date(2098, 1, 1)
                template.notAfter = variant == .expired ? TestPKIProfile.date(2001, 1, 1) : TestPKIProfile.date(2098, 12, 31)
            }
        case .noMarker:
            try reissue(&stages, role: role, position: 0) { $0.extensions.removeAll { $0 == leafMarker } }
        case .notMarkerCritical:
            try reissue(&stages, role: role, position: 0) { template in
                template.extensions = template.extensions.map { $0 == leafMarker ? .custom(oid: KnownOID.appleReceiptSigningMarker, critical: true, derValue: [0x05, 0x00]) : $0 }
            }
        case .noDigitalSignature:
            try reissue(&stages, role: role, position: 0) { template in
                template.extensions = template.extensions.map { $0 == .keyUsage([.digitalSignature], critical: true) ? .keyUsage([.keyEncipherment], critical: true) : $0 }
            }
        case .selfSigned:
            try reissue(&stages, role: role, position: 0, issuerRole: .some(nil)) { template in
                template.extensions.removeAll { $0 == .authorityKeyIdentifier }
            }
        case .underRoot:
            try reissue(&stages, role: role, position: 0, issuerRole: .some(.root)) { _ in }
        }
    }

    static func reissueIntermediate(_ stages: inout ForgeStages, _ variant: IntermediateVariant) throws(ForgeError) {
        let role: CertificateRole = stages.preset == .appstoreSHA1 ? .intermediateSHA1 : .intermediate
        switch variant {
        case .noMarker:
            try reissue(&stages, role: role, position: 1) { $0.extensions.removeAll { $0 == intermediateMarker } }
        case .expired:
            try reissue(&stages, role: role, position: 1) { template in
                template.notBefore = TestPKIProfile.date(2000, 1, 1)
                template.notAfter = TestPKIProfile.date(2001, 1, 1)
            }
        case .notCA:
            try reissue(&stages, role: role, position: 1) { template in
                template.extensions = template.extensions.map {
                    $0 == .basicConstraints(isCA: true, pathLength: 0, critical: true) ? .basicConstraints(isCA: false, critical: true) : $0
                }
            }
        case .underForeignRoot:
            try reissue(&stages, role: role, position: 1, issuerRole: .some(.foreignRoot)) { _ in }
            if stages.certificates.count > 2 { stages.certificates[2] = stages.pki[.foreignRoot].certificate.derRepresentation }
        }
    }
}
