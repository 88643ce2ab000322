#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ForgeCrypto
import _ForgeSupport
import ReceiptModel
public import StoreModel

/// An RFC 6960 responder for TEST PKIs, socket-free: an `OCSPRequest` in, the bytes and HTTP status of the answer
/// out. It answers for the certificates its issuers issued, found by CertID (SHA-1 or SHA-256 hashes of the
/// issuer's name and key), signs with the issuer's own key (or a delegate it certifies), names the responder by
/// key hash (Apple's Python verifier cannot match a responder named by name) and echoes a nonce.
public struct OCSPResponder: Sendable {
    /// A key that signs responses: the issuer's own, RSA (the receipt PKI) or EC (the JWS PKI).
    public enum SigningKey: Sendable {
        case rsa(RSAPrivateKey)
        case ec(ECPrivateKey)
    }

    /// One CA the responder answers for.
    public struct Issuer: Sendable {
        public let certificate: X509Certificate
        public let key: SigningKey
        /// The issuer's subject Name DER and subjectPublicKey BIT STRING value, which CertIDs hash.
        let nameDER: [UInt8]
        let keyBits: [UInt8]
        /// A responder certificate it issued with the ocspSigning EKU, and one without, with their key.
        let delegate: (certificate: [UInt8], key: ECPrivateKey)
        let delegateWithoutEKU: (certificate: [UInt8], key: ECPrivateKey)
        /// The delegates' subjectPublicKey bits (both certify the same key): their responder key hash.
        let delegateKeyBits: [UInt8]

        public init(certificate: X509Certificate, key: SigningKey) throws(ForgeError) {
            self.certificate = certificate
            self.key = key
            (nameDER, keyBits) = try Self.identity(of: certificate)
            let delegateKey = try OCSPWire.derivedKey("ocsp-delegate")
            let responder = try Self.issueResponder(certificate, key, delegateKey, ocspSigning: true)
            delegate = (responder, delegateKey)
            delegateWithoutEKU = (try Self.issueResponder(certificate, key, delegateKey, ocspSigning: false), delegateKey)
            delegateKeyBits = try Self.identity(of: try ForgeError.wrapping("parsing the responder certificate") { try X509Certificate(derEncoded: responder) }).keyBits
        }

        static func identity(of certificate: X509Certificate) throws(ForgeError) -> (nameDER: [UInt8], keyBits: [UInt8]) {
            guard let identity = certificate.ocspIdentity else { throw ForgeError(.certificateSetInvalid, "cannot read the name and key of \(certificate.subject)") }
            return identity
        }

        private static func issueResponder(_ issuer: X509Certificate, _ key: SigningKey, _ subject: ECPrivateKey, ocspSigning: Bool) throws(ForgeError) -> [UInt8] {
            let template = CertificateTemplate(
                serialNumber: ocspSigning ? [0x0C, 0x5B] : [0x0C, 0x5C],
                subject: DistinguishedName([
                    ("CN", "receipt-forge TEST OCSP \(ocspSigning ? "Responder" : "Non-responder") — not Apple"), ("O", "receipt-forge TEST"), ("C", "US"),
                ]),
                notBefore: issuer.notBefore, notAfter: issuer.notAfter,
                extensions: [
                    .basicConstraints(isCA: false, critical: true), .authorityKeyIdentifier, .subjectKeyIdentifier,
                    .keyUsage([.digitalSignature], critical: true),
                ]
                    + (ocspSigning
                        ? [.extendedKeyUsage([.oid(OCSPWire.ocspSigningEKU)], critical: false), .custom(oid: OCSPWire.noCheck, critical: false, derValue: [0x05, 0x00])] : []),
                signatureDigest: .sha256)
            return try ForgeError.wrapping("issuing the OCSP responder certificate of \(issuer.subject)") {
                switch key {
                case .rsa(let rsa): try rsa.issue(template, subjectKey: subject.certifiedKey, issuer: issuer).derRepresentation
                case .ec(let ec): try ec.issue(template, subjectKey: subject.certifiedKey, issuer: issuer).derRepresentation
                }
            }
        }
    }

    /// One certificate a request asks about.
    public struct Question: Sendable, Hashable {
        /// The CertID as the request encoded it, echoed in the response.
        public let certID: [UInt8]
        public let hashAlgorithm: DigestAlgorithm
        /// The serial number's big-endian magnitude, as ``X509Certificate/serialNumber`` gives it.
        public let serialNumber: [UInt8]
        /// The issuer the hashes name; nil: none of the responder's.
        public let issuer: Int?
    }

    /// What the responder sends back.
    public struct Reply: Sendable {
        public var status: Int
        public var body: [UInt8]
        /// How long to wait before sending it (`slow`).
        public var delaySeconds: Int
        /// The certificates asked about with the answer given, for logs.
        public var summary: String
    }

    public let issuers: [Issuer]

    public init(issuers: [Issuer]) { self.issuers = issuers }

    /// The request's questions, or why it is not an OCSP request.
    public func questions(in request: [UInt8]) throws(ForgeError) -> (questions: [Question], nonce: [UInt8]?) {
        let parsed = try OCSPWire.parseRequest(request)
        let questions = parsed.certIDs.map { id in
            Question(
                certID: id.encoded, hashAlgorithm: id.algorithm, serialNumber: id.serial,
                issuer: issuers.firstIndex { issuer in
                    guard let name = try? id.algorithm.digest(issuer.nameDER), let key = try? id.algorithm.digest(issuer.keyBits) else { return false }
                    return name == id.nameHash && key == id.keyHash
                })
        }
        return (questions, parsed.nonce)
    }

    /// Answers `request` at `now`; `answer` says what to say about each certificate asked (its issuer and serial).
    /// A request that does not parse, or that asks with a corrupted CertID (``OCSPWire/parseRequest(_:)`` says
    /// which), is `malformedRequest`, as RFC 6960 §2.3 says.
    public func respond(to request: [UInt8], now: Date, answer: (Question) -> OCSPAnswer) -> Reply {
        let questions: [Question], nonce: [UInt8]?
        do { (questions, nonce) = try self.questions(in: request) } catch {
            return Reply(status: 200, body: OCSPWire.status(1), delaySeconds: 0, summary: "malformed request: \(error.message)")
        }
        let answers = questions.map { answer($0) }
        let summary = zip(questions, answers).map { "\($0.hashAlgorithm.rawValue):\(hexString($0.serialNumber))=\($1)" }.joined(separator: " ")
        // The first question decides what is not per certificate: the response status, the transport, the signer.
        let lead = answers.first ?? .good
        switch lead.kind {
        case .http500: return Reply(status: 500, body: [], delaySeconds: 0, summary: summary)
        case .garbage: return Reply(status: 200, body: Array("not an OCSP response".utf8), delaySeconds: 0, summary: summary)
        case .tryLater: return Reply(status: 200, body: OCSPWire.status(3), delaySeconds: 0, summary: summary)
        case .malformed: return Reply(status: 200, body: OCSPWire.status(1), delaySeconds: 0, summary: summary)
        case .unauthorized: return Reply(status: 200, body: OCSPWire.status(6), delaySeconds: 0, summary: summary)
        default: break
        }
        // A request naming none of its issuers gets `unauthorized`, as a real responder answers for a CA it does not serve.
        guard let issuerIndex = questions.first?.issuer, issuers.indices.contains(issuerIndex) else {
            return Reply(status: 200, body: OCSPWire.status(6), delaySeconds: 0, summary: summary + " (issuer not served)")
        }
        let issuer = issuers[issuerIndex]
        do {
            let body = try OCSPWire.basicResponse(
                questions: zip(questions, answers).map { ($0.certID, $0.issuer == issuerIndex ? $1 : OCSPAnswer(.unknown)) }, lead: lead, issuer: issuer,
                nonce: nonce, now: now)
            return Reply(status: 200, body: body, delaySeconds: lead.kind == .slow ? lead.seconds : 0, summary: summary)
        } catch {
            return Reply(status: 200, body: OCSPWire.status(2), delaySeconds: 0, summary: summary + " (internal error: \(error.message))")
        }
    }
}

/// The DER of OCSP (RFC 6960 §4): reading requests, writing responses.
enum OCSPWire {
    static let basicResponseType = "1.3.6.1.5.5.7.48.1.1"
    static let nonceExtension = "1.3.6.1.5.5.7.48.1.2"
    static let noCheck = "1.3.6.1.5.5.7.48.1.5"
    static let ocspSigningEKU = "1.3.6.1.5.5.7.3.9"

    struct CertID {
        var encoded: [UInt8]
        var algorithm: DigestAlgorithm
        var nameHash: [UInt8]
        var keyHash: [UInt8]
        var serial: [UInt8]
    }

    /// The largest request read: a request names a few certificates in a few hundred bytes.
    static let maximumRequestBytes = 64 * 1024
    static let maximumCertIDs = 16

    /// `OCSPRequest ::= SEQUENCE { tbsRequest TBSRequest, optionalSignature [0] EXPLICIT Signature OPTIONAL }`,
    /// `TBSRequest ::= SEQUENCE { version [0] EXPLICIT DEFAULT v1, requestorName [1] EXPLICIT OPTIONAL,
    /// requestList SEQUENCE OF Request, requestExtensions [2] EXPLICIT Extensions OPTIONAL }`,
    /// `Request ::= SEQUENCE { reqCert CertID, singleRequestExtensions [0] EXPLICIT Extensions OPTIONAL }`.
    ///
    /// Refused (the responder answers `malformedRequest`, RFC 6960 §2.3): anything but one OCSPRequest, a member
    /// these definitions do not list, out of their order or repeated, more than ``maximumCertIDs`` requests or none,
    /// a length that is not DER's (indefinite or not minimal) on any structure read, and a CertID ``certID(_:_:)``
    /// refuses. The contents of requestorName, the signature and the extensions are not read (only a nonce is echoed).
    static func parseRequest(_ bytes: [UInt8]) throws(ForgeError) -> (certIDs: [CertID], nonce: [UInt8]?) {
        guard bytes.count <= maximumRequestBytes else { throw ForgeError(.encodingFailed, "an OCSP request of \(bytes.count) bytes") }
        do throws(ReceiptDecodingError) {
            let reader = BERReader(bytes)
            let outer = try der(reader.node(at: 0, expecting: ASN1Tag.sequence, "OCSPRequest"))
            guard outer.endOffset == bytes.count else { throw ReceiptDecodingError(.trailingBytes, at: outer.endOffset, "bytes after the OCSPRequest") }
            let top = try ordered(reader.children(of: outer, maximumCount: 2, "OCSPRequest members"), [ASN1Tag.sequence, ASN1Tag.contextConstructed(0)], "OCSPRequest")
            guard let tbs = top.first, tbs.identifier == ASN1Tag.sequence else {
                throw ReceiptDecodingError(.unexpectedTag, at: outer.contentRange.lowerBound, "an OCSPRequest without its tbsRequest")
            }
            let members = try ordered(
                reader.children(of: try der(tbs), maximumCount: 4, "TBSRequest members"),
                [ASN1Tag.contextConstructed(0), ASN1Tag.contextConstructed(1), ASN1Tag.sequence, ASN1Tag.contextConstructed(2)], "TBSRequest")
            var certIDs: [CertID] = []
            var nonce: [UInt8]?
            for member in members {
                switch member.identifier {
                case ASN1Tag.contextConstructed(0):
                    // `Version ::= INTEGER { v1(0) }`: the only version there is.
                    let version = try der(reader.node(at: member.contentRange.lowerBound, limit: member.contentRange.upperBound, expecting: ASN1Tag.integer, "version"))
                    guard version.endOffset == member.contentRange.upperBound, Array(reader.content(of: version)) == [0] else {
                        throw ReceiptDecodingError(.invalidValue, at: version.offset, "a version other than v1 (0)")
                    }
                case ASN1Tag.sequence:
                    for request in try reader.children(of: try der(member), maximumCount: maximumCertIDs, "requests") {
                        guard request.identifier == ASN1Tag.sequence else { throw ReceiptDecodingError(.unexpectedTag, at: request.offset, "a Request that is not a SEQUENCE") }
                        let parts = try ordered(
                            reader.children(of: try der(request), maximumCount: 2, "Request members"), [ASN1Tag.sequence, ASN1Tag.contextConstructed(0)], "Request")
                        guard let certID = parts.first, certID.identifier == ASN1Tag.sequence else {
                            throw ReceiptDecodingError(.unexpectedTag, at: request.offset, "a Request without its reqCert")
                        }
                        certIDs.append(try self.certID(certID, reader))
                    }
                case ASN1Tag.contextConstructed(2):
                    nonce = try extensionValue(nonceExtension, in: member, reader)
                default:
                    break  // requestorName: not read
                }
            }
            guard !certIDs.isEmpty else { throw ReceiptDecodingError(.truncated, at: tbs.offset, "an OCSP request that asks about no certificate") }
            return (certIDs, nonce)
        } catch { throw ForgeError(.encodingFailed, "not an OCSP request: \(error.message)") }
    }

    /// The longest serial number read, in octets of its value: RFC 5280 §4.1.2.2's bound.
    static let maximumSerialOctets = 20

    /// `CertID ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier, issuerNameHash OCTET STRING, issuerKeyHash OCTET STRING,
    /// serialNumber CertificateSerialNumber }`, refused when corrupted: a member missing, added or of another type;
    /// an AlgorithmIdentifier other than `{ OID, NULL }` or `{ OID }`; an OID that names no digest forge computes
    /// (``DigestAlgorithm``), since nothing then says whose certificate is asked about; a hash whose length is not
    /// its algorithm's; a serial number that is not a DER INTEGER (empty, or a leading 00 or FF octet it does not
    /// need) or not a positive one of at most 20 octets (RFC 5280 §4.1.2.2: a negative serial would otherwise be
    /// read as the positive one with the same octets).
    private static func certID(_ node: BERNode, _ reader: BERReader) throws(ReceiptDecodingError) -> CertID {
        let members = try reader.children(of: try der(node), maximumCount: 4, "CertID members").map { (member) throws(ReceiptDecodingError) in try der(member) }
        guard members.count == 4, members[0].identifier == ASN1Tag.sequence, members[1].identifier == ASN1Tag.octetString,
            members[2].identifier == ASN1Tag.octetString, members[3].identifier == ASN1Tag.integer
        else { throw ReceiptDecodingError(.unexpectedTag, at: node.offset, "a CertID that is not { AlgorithmIdentifier, OCTET STRING, OCTET STRING, INTEGER }") }
        let identifier = try reader.children(of: members[0], maximumCount: 2, "AlgorithmIdentifier members").map { (member) throws(ReceiptDecodingError) in try der(member) }
        guard let oid = identifier.first, oid.identifier == ASN1Tag.objectIdentifier,
            identifier.count == 1 || (identifier[1].identifier == ASN1Tag.null && identifier[1].contentRange.isEmpty)
        else { throw ReceiptDecodingError(.unexpectedTag, at: members[0].offset, "a hashAlgorithm that is not { OBJECT IDENTIFIER, NULL }") }
        let dotted = OID.dotted(reader.content(of: oid))
        guard let algorithm = dotted.flatMap(DigestAlgorithm.init(dottedOID:)) else {
            let named = dotted.map { $0.count <= 64 ? $0 : $0.prefix(64) + "…" } ?? "not an OID"
            throw ReceiptDecodingError(
                .invalidValue, at: oid.offset, "a hashAlgorithm that names no digest (\(named); one of \(DigestAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let nameHash = Array(reader.content(of: members[1])), keyHash = Array(reader.content(of: members[2]))
        guard nameHash.count == algorithm.digestLength, keyHash.count == algorithm.digestLength else {
            throw ReceiptDecodingError(
                .invalidValue, at: members[1].offset,
                "issuer hashes of \(nameHash.count) and \(keyHash.count) bytes; \(algorithm.rawValue) hashes have \(algorithm.digestLength)")
        }
        // The value's octets: a positive INTEGER's content has a leading 00 exactly when its first value octet is ≥ 0x80.
        let serial = Array(reader.content(of: members[3]))
        let magnitude = serial.first == 0 ? Array(serial.dropFirst()) : serial
        guard let leading = magnitude.first, leading != 0, magnitude.count <= maximumSerialOctets, (leading < 0x80) == (magnitude.count == serial.count) else {
            throw ReceiptDecodingError(
                .invalidValue, at: members[3].offset,
                "a serialNumber that is not a positive DER INTEGER of at most \(maximumSerialOctets) octets (\(serial.count) content bytes)")
        }
        return CertID(encoded: Array(reader.encoding(of: node)), algorithm: algorithm, nameHash: nameHash, keyHash: keyHash, serial: magnitude)
    }

    /// `node` when its length is DER's: definite, in the fewest octets.
    private static func der(_ node: BERNode) throws(ReceiptDecodingError) -> BERNode {
        guard case .definite(_, isMinimal: true) = node.lengthForm else {
            throw ReceiptDecodingError(.invalidLength, at: node.offset, "a \(ASN1Tag.name(node.identifier)) whose length is not DER's (indefinite or not minimal)")
        }
        return node
    }

    /// `members` when each has one of `tags`, in that order, at most once each.
    private static func ordered(_ members: [BERNode], _ tags: [UInt8], _ what: String) throws(ReceiptDecodingError) -> [BERNode] {
        var next = 0
        for member in members {
            guard let place = tags[next...].firstIndex(of: member.identifier) else {
                throw ReceiptDecodingError(.unexpectedTag, at: member.offset, "a \(ASN1Tag.name(member.identifier)) out of place in the \(what)")
            }
            next = place + 1
        }
        return members
    }

    /// The extnValue of `oid` in `[n] EXPLICIT Extensions`, as sent (echoed whole).
    private static func extensionValue(_ oid: String, in tagged: BERNode, _ reader: BERReader) throws(ReceiptDecodingError) -> [UInt8]? {
        let sequence = try reader.node(at: tagged.contentRange.lowerBound, limit: tagged.contentRange.upperBound, expecting: ASN1Tag.sequence, "Extensions")
        for candidate in try reader.children(of: sequence, maximumCount: 16, "extensions") where candidate.identifier == ASN1Tag.sequence {
            let members = try reader.children(of: candidate, maximumCount: 3, "Extension members")
            guard let first = members.first, first.identifier == ASN1Tag.objectIdentifier, OID.dotted(reader.content(of: first)) == oid,
                let value = members.last, value.identifier == ASN1Tag.octetString
            else { continue }
            return Array(reader.content(of: value))
        }
        return nil
    }

    /// A deterministic P-256 key for `label`: the responder's own keys (delegates, the wrong key) need no secrecy.
    static func derivedKey(_ label: String) throws(ForgeError) -> ECPrivateKey {
        try ForgeError.wrapping("deriving the key \(label)") {
            let digest = try DigestAlgorithm.sha256.digest(Array("receipt-forge ocsp \(label)".utf8))
            return try ECPrivateKey(scalar: [0x01] + digest.dropFirst(), curve: .p256)
        }
    }

    /// `OCSPResponse` with a status other than successful and no responseBytes.
    static func status(_ code: UInt8) -> [UInt8] { [0x30, 0x03, 0x0A, 0x01, code] }

    /// `GeneralizedTime` of a date, whole seconds.
    static func generalizedTime(_ date: Date) -> [UInt8] {
        ASN1Value.tlv(ASN1Tag.generalizedTime, Array(ReceiptDate.format(date).utf8.filter { $0 != 0x2D && $0 != 0x3A && $0 != 0x54 }))
    }

    static func basicResponse(questions: [([UInt8], OCSPAnswer)], lead: OCSPAnswer, issuer: OCSPResponder.Issuer, nonce: [UInt8]?, now: Date) throws(ForgeError) -> [UInt8] {
        let now = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let day: TimeInterval = 86_400
        let thisUpdate = lead.kind == .stale ? now - 8 * day : now
        let nextUpdate: Date? =
            switch lead.kind {
            case .stale: now - day
            case .noNextUpdate: nil
            default: now + 7 * day
            }
        // Who signs, and the certificates that prove it.
        let signer: (key: OCSPResponder.SigningKey, keyBits: [UInt8], certs: [[UInt8]])
        switch lead.kind {
        case .delegate:
            signer = (.ec(issuer.delegate.key), issuer.delegateKeyBits, [issuer.delegate.certificate])
        case .delegateWithoutEKU:
            signer = (.ec(issuer.delegateWithoutEKU.key), issuer.delegateKeyBits, [issuer.delegateWithoutEKU.certificate])
        case .wrongKey:
            signer = (.ec(try derivedKey("wrong-key")), issuer.keyBits, [])
        default:
            signer = (issuer.key, issuer.keyBits, [])
        }
        var responses: [UInt8] = []
        for (certID, answer) in questions {
            let status: [UInt8]
            switch answer.kind {
            case .revoked:
                var info = generalizedTime(answer.revokedAt ?? now - day)
                if let reason = answer.reason { info += ASN1Value.tlv(ASN1Tag.contextConstructed(0), ASN1Value.tlv(0x0A, [UInt8(reason.rawValue)])) }
                status = ASN1Value.tlv(ASN1Tag.contextConstructed(1), info)
            case .unknown: status = [0x82, 0x00]
            default: status = [0x80, 0x00]
            }
            var single = certID + status + generalizedTime(thisUpdate)
            if let nextUpdate { single += ASN1Value.tlv(ASN1Tag.contextConstructed(0), generalizedTime(nextUpdate)) }
            responses += ASN1Value.tlv(ASN1Tag.sequence, single)
        }
        let keyHash = try ForgeError.wrapping("hashing the responder key") { try DigestAlgorithm.sha1.digest(signer.keyBits) }
        var data = ASN1Value.tlv(ASN1Tag.contextConstructed(2), ASN1Value.tlv(ASN1Tag.octetString, keyHash)) + generalizedTime(now)
        data += ASN1Value.tlv(ASN1Tag.sequence, responses)
        if let nonce {
            let nonceExtension = ASN1Value.tlv(ASN1Tag.sequence, try oid(Self.nonceExtension) + ASN1Value.tlv(ASN1Tag.octetString, nonce))
            data += ASN1Value.tlv(ASN1Tag.contextConstructed(1), ASN1Value.tlv(ASN1Tag.sequence, nonceExtension))
        }
        let tbs = ASN1Value.tlv(ASN1Tag.sequence, data)
        let (algorithm, signature) = try sign(tbs, with: signer.key)
        var basic = tbs + algorithm + ASN1Value.tlv(0x03, [0x00] + signature)
        if !signer.certs.isEmpty { basic += ASN1Value.tlv(ASN1Tag.contextConstructed(0), ASN1Value.tlv(ASN1Tag.sequence, signer.certs.flatMap { $0 })) }
        let responseBytes = ASN1Value.tlv(ASN1Tag.sequence, try oid(basicResponseType) + ASN1Value.tlv(ASN1Tag.octetString, ASN1Value.tlv(ASN1Tag.sequence, basic)))
        return ASN1Value.tlv(ASN1Tag.sequence, [0x0A, 0x01, 0x00] + ASN1Value.tlv(ASN1Tag.contextConstructed(0), responseBytes))
    }

    private static func oid(_ dotted: String) throws(ForgeError) -> [UInt8] {
        do throws(ReceiptDecodingError) { return ASN1Value.tlv(ASN1Tag.objectIdentifier, try OID.encodeContent(dotted)) } catch {
            throw ForgeError(.encodingFailed, error.message)
        }
    }

    /// The AlgorithmIdentifier and signature: ecdsa-with-SHA256 on P-256, SHA384 on P-384; sha256WithRSAEncryption.
    private static func sign(_ tbs: [UInt8], with key: OCSPResponder.SigningKey) throws(ForgeError) -> ([UInt8], [UInt8]) {
        try ForgeError.wrapping("signing the OCSP response") {
            switch key {
            case .rsa(let rsa):
                let signature = try rsa.signature(forDigest: try DigestAlgorithm.sha256.digest(tbs), algorithm: .sha256)
                return (ASN1Value.tlv(ASN1Tag.sequence, try oid(KnownOID.sha256WithRSAEncryption) + [0x05, 0x00]), signature)
            case .ec(let ec):
                let digest: DigestAlgorithm = ec.curve == .p384 ? .sha384 : .sha256
                let signature = try ec.derSignature(forDigest: try digest.digest(tbs), algorithm: digest)
                return (ASN1Value.tlv(ASN1Tag.sequence, try oid(digest == .sha384 ? "1.2.840.10045.4.3.3" : "1.2.840.10045.4.3.2")), signature)
            }
        }
    }
}
