import _ForgeSupport
/// Where the container puts what, and in which encoding: the choices that distinguish App Store
/// receipts (DER, primitive eContent) from Xcode ones (indefinite, one-segment constructed eContent).
public struct ContainerLayout: Sendable, Hashable, Codable {
    /// Length form of the wrapper nodes: ContentInfo, its [0], SignedData, EncapsulatedContentInfo,
    /// its [0] and (when constructed) the eContent. Other nodes are always definite.
    public var wrapperLength: ASN1Writer.Length
    /// How the eContent OCTET STRING is written.
    public var eContent: EContent

    public enum EContent: Sendable, Hashable, Codable {
        case primitive
        /// A constructed OCTET STRING holding this many primitive segments (the last takes the rest).
        case constructed(segments: Int)
        /// No eContent at all (detached signature).
        case detached
    }

    public init(wrapperLength: ASN1Writer.Length = .minimal, eContent: EContent = .primitive) {
        self.wrapperLength = wrapperLength
        self.eContent = eContent
    }

    /// Definite lengths, primitive eContent: every App Store and sandbox receipt.
    public static let appStore = ContainerLayout()
    /// Indefinite lengths, one-segment constructed eContent: every Xcode receipt.
    public static let xcode = ContainerLayout(wrapperLength: .indefinite, eContent: .constructed(segments: 1))
}

/// One SignerInfo to write.
public struct SignerInfoDraft: Sendable, Hashable {
    public var version: Int64 = 1
    public var issuer: [UInt8]
    public var serialNumber: [UInt8]
    public var digestAlgorithmOID: String
    /// DER `SET OF Attribute` (tag 0x31) as signed; written with the `[0]` tag. nil: no signed attributes.
    public var signedAttributes: [UInt8]?
    public var signatureAlgorithmOID: String
    public var signature: [UInt8]

    public init(
        identity: CertificateIdentity, digestAlgorithmOID: String, signatureAlgorithmOID: String,
        signedAttributes: [UInt8]? = nil, signature: [UInt8]
    ) {
        issuer = identity.issuer
        serialNumber = identity.serialNumber
        self.digestAlgorithmOID = digestAlgorithmOID
        self.signatureAlgorithmOID = signatureAlgorithmOID
        self.signedAttributes = signedAttributes
        self.signature = signature
    }
}

/// Everything a `ContentInfo(signedData)` holds, in the order and form it will be written.
public struct SignedDataDraft: Sendable, Hashable {
    public var version: Int64 = 1
    public var digestAlgorithmOIDs: [String]
    public var encapsulatedContentTypeOID: String = KnownOID.data
    public var payload: [UInt8]
    /// DER certificates in the order they are embedded (Apple: leaf, intermediate, root — not DER SET order).
    public var certificates: [[UInt8]]
    public var signers: [SignerInfoDraft]
    public var layout: ContainerLayout

    public init(
        digestAlgorithmOIDs: [String], payload: [UInt8], certificates: [[UInt8]], signers: [SignerInfoDraft],
        layout: ContainerLayout
    ) {
        self.digestAlgorithmOIDs = digestAlgorithmOIDs
        self.payload = payload
        self.certificates = certificates
        self.signers = signers
        self.layout = layout
    }

    /// Writes the container.
    public func encoded() throws(ReceiptDecodingError) -> [UInt8] {
        let wrapper = layout.wrapperLength
        let certificateBytes = certificates.reduce(0) { $0 + $1.count }
        var writer = ASN1Writer(reservingCapacity: payload.count + certificateBytes + 512 * max(1, signers.count))
        try writer.appendConstructed(ASN1Tag.sequence, length: wrapper) { (writer) throws(ReceiptDecodingError) in
            try writer.appendObjectIdentifier(KnownOID.signedData)
            try writer.appendConstructed(ASN1Tag.contextConstructed(0), length: wrapper) { (writer) throws(ReceiptDecodingError) in
                try writer.appendConstructed(ASN1Tag.sequence, length: wrapper) { (writer) throws(ReceiptDecodingError) in
                    writer.appendInteger(version)
                    try writer.appendConstructed(ASN1Tag.set) { (writer) throws(ReceiptDecodingError) in
                        for oid in digestAlgorithmOIDs { try writer.appendAlgorithmIdentifier(oid) }
                    }
                    try appendEncapsulatedContent(into: &writer)
                    if !certificates.isEmpty {
                        writer.appendConstructed(ASN1Tag.contextConstructed(0)) { writer in
                            for certificate in certificates { writer.appendEncoded(certificate) }
                        }
                    }
                    try writer.appendConstructed(ASN1Tag.set) { (writer) throws(ReceiptDecodingError) in
                        for signer in signers { try Self.append(signer, into: &writer) }
                    }
                }
            }
        }
        return writer.bytes
    }

    private func appendEncapsulatedContent(into writer: inout ASN1Writer) throws(ReceiptDecodingError) {
        let wrapper = layout.wrapperLength
        try writer.appendConstructed(ASN1Tag.sequence, length: wrapper) { (writer) throws(ReceiptDecodingError) in
            try writer.appendObjectIdentifier(encapsulatedContentTypeOID)
            switch layout.eContent {
            case .detached:
                break
            case .primitive:
                writer.appendConstructed(ASN1Tag.contextConstructed(0), length: wrapper) { writer in
                    writer.appendPrimitive(ASN1Tag.octetString, payload)
                }
            case .constructed(let segments):
                writer.appendConstructed(ASN1Tag.contextConstructed(0), length: wrapper) { writer in
                    writer.appendConstructed(ASN1Tag.constructedOctetString, length: wrapper) { writer in
                        for segment in Self.split(payload, into: segments) { writer.appendPrimitive(ASN1Tag.octetString, segment) }
                    }
                }
            }
        }
    }

    /// Splits into `count` parts of near-equal size (at least one part, never an empty part unless the payload is empty).
    static func split(_ bytes: [UInt8], into count: Int) -> [ArraySlice<UInt8>] {
        let parts = max(1, min(count, max(1, bytes.count)))
        let size = bytes.count / parts
        return (0..<parts).map { index in
            let start = index * size
            return bytes[start..<(index == parts - 1 ? bytes.count : start + size)]
        }
    }

    private static func append(_ signer: SignerInfoDraft, into writer: inout ASN1Writer) throws(ReceiptDecodingError) {
        try writer.appendConstructed(ASN1Tag.sequence) { (writer) throws(ReceiptDecodingError) in
            writer.appendInteger(signer.version)
            writer.appendConstructed(ASN1Tag.sequence) { writer in
                writer.appendEncoded(signer.issuer)
                writer.appendPrimitive(ASN1Tag.integer, signer.serialNumber)
            }
            try writer.appendAlgorithmIdentifier(signer.digestAlgorithmOID)
            if var attributes = signer.signedAttributes, !attributes.isEmpty {
                attributes[0] = ASN1Tag.contextConstructed(0)
                writer.appendEncoded(attributes)
            }
            try writer.appendAlgorithmIdentifier(signer.signatureAlgorithmOID)
            writer.appendPrimitive(ASN1Tag.octetString, signer.signature)
        }
    }
}

/// The CMS signed attributes a signer may carry (Apple's receipts carry none).
public enum SignedAttributes {
    /// DER `SET OF Attribute` with contentType, signingTime and messageDigest, as `openssl cms -sign` writes them.
    /// `signingTime` is a UTCTime string such as `"250101000000Z"`.
    public static func encode(contentTypeOID: String = KnownOID.data, messageDigest: [UInt8], signingTime: String?) throws(ReceiptDecodingError) -> [UInt8] {
        var elements: [[UInt8]] = []
        var contentType = ASN1Writer()
        try contentType.appendConstructed(ASN1Tag.sequence) { (writer) throws(ReceiptDecodingError) in
            try writer.appendObjectIdentifier(KnownOID.contentTypeAttribute)
            try writer.appendConstructed(ASN1Tag.set) { (writer) throws(ReceiptDecodingError) in try writer.appendObjectIdentifier(contentTypeOID) }
        }
        elements.append(contentType.bytes)
        if let signingTime {
            var time = ASN1Writer()
            try time.appendConstructed(ASN1Tag.sequence) { (writer) throws(ReceiptDecodingError) in
                try writer.appendObjectIdentifier(KnownOID.signingTimeAttribute)
                writer.appendConstructed(ASN1Tag.set) { writer in writer.appendPrimitive(ASN1Tag.utcTime, Array(signingTime.utf8)) }
            }
            elements.append(time.bytes)
        }
        var digest = ASN1Writer()
        try digest.appendConstructed(ASN1Tag.sequence) { (writer) throws(ReceiptDecodingError) in
            try writer.appendObjectIdentifier(KnownOID.messageDigestAttribute)
            writer.appendConstructed(ASN1Tag.set) { writer in writer.appendPrimitive(ASN1Tag.octetString, messageDigest) }
        }
        elements.append(digest.bytes)
        elements.sort(by: ReceiptPayload.derSetOrder)
        var set = ASN1Writer()
        set.appendConstructed(ASN1Tag.set) { writer in for element in elements { writer.appendEncoded(element) } }
        return set.bytes
    }
}
