import _ForgeSupport
/// A receipt's PKCS#7 `ContentInfo(signedData)`, read tolerantly and kept byte for byte.
///
/// RFC 2315 / RFC 5652 SignedData as receipts use it. BER is accepted (indefinite lengths,
/// constructed eContent with any number of segments) and every deviation from the App Store shape
/// is recorded in `shape` rather than rejected, because judging is the validator's job.
public struct ReceiptContainer: Sendable, Hashable {
    /// One `SignerInfo`, with its parts as they were encoded.
    public struct Signer: Sendable, Hashable {
        public let version: Int64
        /// `issuerAndSerialNumber.issuer`: the Name TLV exactly as encoded.
        public let issuer: [UInt8]
        /// `issuerAndSerialNumber.serialNumber`: INTEGER content.
        public let serialNumber: [UInt8]
        public let digestAlgorithmOID: String
        public let signatureAlgorithmOID: String
        /// `signedAttrs` re-tagged as `SET` (0x31), the bytes a signature over them covers; nil when absent.
        public let signedAttributes: [UInt8]?
        /// The `messageDigest` signed attribute's value, when present.
        public let messageDigest: [UInt8]?
        public let hasUnsignedAttributes: Bool
        public let signature: [UInt8]
    }

    /// The whole input (after transport decoding).
    public let bytes: [UInt8]
    public let contentTypeOID: String
    public let signedDataVersion: Int64
    public let digestAlgorithmOIDs: [String]
    public let encapsulatedContentTypeOID: String
    /// The signed payload (all eContent segments joined); nil when the content is detached.
    public let payload: [UInt8]?
    /// Embedded certificates, each exactly as encoded, in wire order.
    public let certificates: [[UInt8]]
    public let hasCRLs: Bool
    public let signers: [Signer]
    public let shape: ContainerShape
    /// Offset of the first payload byte when the eContent is one primitive OCTET STRING, for error messages.
    public let payloadOffset: Int?

    /// Decodes a DER or BER receipt.
    public init(berEncoded bytes: [UInt8]) throws(ReceiptDecodingError) {
        guard !bytes.isEmpty else { throw ReceiptDecodingError(.empty, at: 0, "expected a PKCS#7 receipt, found no bytes") }
        let reader = BERReader(bytes)
        var forms = LengthFormTally()

        let contentInfo = try reader.node(at: 0, expecting: ASN1Tag.sequence, "ContentInfo")
        forms.add(contentInfo)
        let infoParts = try reader.children(of: contentInfo)
        guard infoParts.count >= 2 else {
            throw ReceiptDecodingError(.truncated, at: contentInfo.contentRange.upperBound, "expected ContentInfo { contentType, [0] content }, found \(infoParts.count) field(s)")
        }
        contentTypeOID = try Self.oid(infoParts[0], reader, "ContentInfo.contentType")
        guard contentTypeOID == KnownOID.signedData else {
            throw ReceiptDecodingError(.unexpectedTag, at: infoParts[0].offset, "expected contentType signedData (1.2.840.113549.1.7.2), found \(contentTypeOID)")
        }
        let explicit = infoParts[1]
        guard explicit.identifier == ASN1Tag.contextConstructed(0) else {
            throw ReceiptDecodingError(.unexpectedTag, at: explicit.offset, "expected [0] content, found \(ASN1Tag.name(explicit.identifier))")
        }
        forms.add(explicit)
        let signedData = try reader.node(
            at: explicit.contentRange.lowerBound, limit: explicit.contentRange.upperBound,
            expecting: ASN1Tag.sequence, "SignedData")
        forms.add(signedData)
        let parts = try reader.children(of: signedData)
        guard parts.count >= 4 else {
            throw ReceiptDecodingError(
                .truncated, at: signedData.contentRange.upperBound,
                "expected SignedData with version, digestAlgorithms, encapContentInfo, signerInfos; found \(parts.count) field(s)")
        }
        signedDataVersion = try Self.integer(parts[0], reader, "SignedData.version")
        let digestSet = try Self.expect(parts[1], ASN1Tag.set, "SignedData.digestAlgorithms")
        forms.add(digestSet, wrapper: false)
        digestAlgorithmOIDs = try reader.children(of: digestSet, maximumCount: ReceiptLimits.maximumDigestAlgorithms, "digest algorithms").map {
            node throws(ReceiptDecodingError) in
            try Self.algorithm(node, reader, "digestAlgorithm")
        }

        // EncapsulatedContentInfo ::= SEQUENCE { eContentType, eContent [0] EXPLICIT OCTET STRING OPTIONAL }
        let encap = try Self.expect(parts[2], ASN1Tag.sequence, "EncapsulatedContentInfo")
        forms.add(encap)
        let encapParts = try reader.children(of: encap)
        guard let typeNode = encapParts.first else {
            throw ReceiptDecodingError(.truncated, at: encap.contentRange.lowerBound, "expected eContentType in EncapsulatedContentInfo")
        }
        encapsulatedContentTypeOID = try Self.oid(typeNode, reader, "eContentType")
        var eContentForm = ContainerShape.EContentForm.absent
        if encapParts.count > 1 {
            let wrapper = try Self.expect(encapParts[1], ASN1Tag.contextConstructed(0), "[0] eContent")
            forms.add(wrapper)
            let octets = try reader.node(at: wrapper.contentRange.lowerBound, limit: wrapper.contentRange.upperBound)
            guard octets.identifier == ASN1Tag.octetString || octets.identifier == ASN1Tag.constructedOctetString else {
                throw ReceiptDecodingError(.unexpectedTag, at: octets.offset, "expected eContent OCTET STRING, found \(ASN1Tag.name(octets.identifier))")
            }
            forms.add(octets)
            let content = try reader.octetStringContent(octets)
            payload = content.bytes
            payloadOffset = octets.identifier == ASN1Tag.octetString ? octets.contentRange.lowerBound : nil
            eContentForm = octets.identifier == ASN1Tag.octetString ? .primitive : .constructed(segments: content.segments)
        } else {
            payload = nil
            payloadOffset = nil
        }

        var index = 3
        var certificates: [[UInt8]] = []
        if parts[index].identifier == ASN1Tag.contextConstructed(0) {
            forms.add(parts[index], wrapper: false)
            certificates = try reader.children(of: parts[index], maximumCount: ReceiptLimits.maximumCertificates, "certificates").map { Array(reader.encoding(of: $0)) }
            index += 1
        }
        self.certificates = certificates
        hasCRLs = index < parts.count && parts[index].identifier == ASN1Tag.contextConstructed(1)
        if hasCRLs { index += 1 }
        guard index < parts.count else {
            throw ReceiptDecodingError(.truncated, at: signedData.contentRange.upperBound, "expected SignerInfos (SET) at the end of SignedData")
        }
        let signerSet = try Self.expect(parts[index], ASN1Tag.set, "SignedData.signerInfos")
        forms.add(signerSet, wrapper: false)
        signers = try reader.children(of: signerSet, maximumCount: ReceiptLimits.maximumSignerInfos, "SignerInfos").map { node throws(ReceiptDecodingError) in
            try Self.signer(node, reader)
        }

        shape = ContainerShape(
            lengths: forms.summary,
            eContent: eContentForm,
            signedDataVersion: signedDataVersion,
            digestAlgorithmOIDs: digestAlgorithmOIDs,
            signatureAlgorithmOIDs: signers.map(\.signatureAlgorithmOID),
            certificateCount: certificates.count,
            signerCount: signers.count,
            hasSignedAttributes: signers.contains { $0.signedAttributes != nil },
            hasUnsignedAttributes: signers.contains(where: \.hasUnsignedAttributes),
            hasCRLs: hasCRLs,
            trailingByteCount: bytes.count - contentInfo.endOffset)
        self.bytes = bytes
    }

    // MARK: - Pieces

    private static func expect(_ node: BERNode, _ identifier: UInt8, _ what: String) throws(ReceiptDecodingError) -> BERNode {
        guard node.identifier == identifier else {
            throw ReceiptDecodingError(
                .unexpectedTag, at: node.offset,
                "expected \(what) (\(ASN1Tag.name(identifier))), found \(ASN1Tag.name(node.identifier))")
        }
        return node
    }

    static func oid(_ node: BERNode, _ reader: BERReader, _ what: String) throws(ReceiptDecodingError) -> String {
        _ = try expect(node, ASN1Tag.objectIdentifier, what)
        guard let dotted = OID.dotted(reader.content(of: node)) else {
            throw ReceiptDecodingError(.invalidValue, at: node.offset, "\(what) is not a well-formed OBJECT IDENTIFIER")
        }
        return dotted
    }

    static func integer(_ node: BERNode, _ reader: BERReader, _ what: String) throws(ReceiptDecodingError) -> Int64 {
        _ = try expect(node, ASN1Tag.integer, what)
        guard let value = ASN1Value.integerValue(reader.content(of: node)) else {
            throw ReceiptDecodingError(.invalidValue, at: node.offset, "\(what) is not an INTEGER of at most 8 bytes")
        }
        return value
    }

    private static func algorithm(_ node: BERNode, _ reader: BERReader, _ what: String) throws(ReceiptDecodingError) -> String {
        let sequence = try expect(node, ASN1Tag.sequence, "\(what) AlgorithmIdentifier")
        guard let first = try reader.children(of: sequence).first else {
            throw ReceiptDecodingError(.truncated, at: sequence.contentRange.lowerBound, "expected the \(what) OBJECT IDENTIFIER")
        }
        return try oid(first, reader, what)
    }

    private static func signer(_ node: BERNode, _ reader: BERReader) throws(ReceiptDecodingError) -> Signer {
        let info = try expect(node, ASN1Tag.sequence, "SignerInfo")
        let fields = try reader.children(of: info)
        guard fields.count >= 5 else {
            throw ReceiptDecodingError(.truncated, at: info.contentRange.upperBound, "expected SignerInfo with at least 5 fields, found \(fields.count)")
        }
        let version = try integer(fields[0], reader, "SignerInfo.version")
        let sid = try expect(fields[1], ASN1Tag.sequence, "SignerInfo.issuerAndSerialNumber")
        let sidParts = try reader.children(of: sid)
        guard sidParts.count == 2, sidParts[0].identifier == ASN1Tag.sequence, sidParts[1].identifier == ASN1Tag.integer else {
            throw ReceiptDecodingError(.unexpectedTag, at: sid.offset, "expected issuerAndSerialNumber { issuer Name, serialNumber INTEGER }")
        }
        let digest = try algorithm(fields[2], reader, "SignerInfo.digestAlgorithm")
        var index = 3
        var signedAttributes: [UInt8]?
        var messageDigest: [UInt8]?
        if fields[index].identifier == ASN1Tag.contextConstructed(0) {
            let attributes = fields[index]
            // The signature covers the DER of the attributes with the SET tag, not the [0] tag.
            var retagged = Array(reader.encoding(of: attributes))
            retagged[0] = ASN1Tag.set
            signedAttributes = retagged
            for attribute in try reader.children(of: attributes, maximumCount: ReceiptLimits.maximumSignedAttributes, "signed attributes") {
                let pair = try reader.children(of: attribute)
                if pair.count == 2, (try? oid(pair[0], reader, "attrType")) == KnownOID.messageDigestAttribute,
                    let value = try reader.children(of: pair[1]).first, value.identifier == ASN1Tag.octetString
                {
                    messageDigest = Array(reader.content(of: value))
                }
            }
            index += 1
        }
        guard index + 1 < fields.count else {
            throw ReceiptDecodingError(.truncated, at: info.contentRange.upperBound, "expected signatureAlgorithm and signature in SignerInfo")
        }
        let signatureAlgorithm = try algorithm(fields[index], reader, "SignerInfo.signatureAlgorithm")
        let signature = try expect(fields[index + 1], ASN1Tag.octetString, "SignerInfo.signature")
        return Signer(
            version: version,
            issuer: Array(reader.encoding(of: sidParts[0])),
            serialNumber: Array(reader.content(of: sidParts[1])),
            digestAlgorithmOID: digest,
            signatureAlgorithmOID: signatureAlgorithm,
            signedAttributes: signedAttributes,
            messageDigest: messageDigest,
            hasUnsignedAttributes: index + 2 < fields.count && fields[index + 2].identifier == ASN1Tag.contextConstructed(1),
            signature: Array(reader.content(of: signature)))
    }
}

/// Counts how the container's nodes wrote their lengths. The wrappers (ContentInfo, its [0],
/// SignedData, EncapsulatedContentInfo, its [0], the eContent) are the nodes Xcode writes with
/// indefinite lengths; the other nodes only count towards "minimal".
private struct LengthFormTally {
    var definite = 0
    var indefinite = 0
    var nonMinimal = 0

    mutating func add(_ node: BERNode, wrapper: Bool = true) {
        switch node.lengthForm {
        case .indefinite:
            if wrapper { indefinite += 1 }
        case .definite(_, let isMinimal):
            if wrapper { definite += 1 }
            if !isMinimal { nonMinimal += 1 }
        }
    }

    var summary: ContainerShape.Lengths {
        if indefinite == 0 { return nonMinimal == 0 ? .definiteMinimal : .definiteNonMinimal }
        return definite == 0 ? .indefinite : .mixed(indefinite: indefinite, definite: definite)
    }
}
