#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
import ForgeCrypto
import _ForgeSupport
import ReceiptCorpus
import ReceiptModel

/// The reference verifier's online checks, as Apple's verifiers make them with `enableOnlineChecks`: OCSP for the
/// intermediate, then the leaf, each at the first OCSP URL of its AIA, a SHA-256 CertID and a nonce; the answer
/// must be `good`, signed by the issuer or by a delegate the issuer certified for `ocspSigning`, echo the nonce if it
/// carries one, and be fresh by the wall clock with a `nextUpdate` (Swift's rule; the stricter of Apple's four).
/// Revoked is `chain.revoked`; no usable answer `chain.revocation-unknown`; no answer at all (a network error, HTTP
/// other than 200) `chain.revocation-unavailable`, which Apple's libraries call retryable.
package struct OnlineRevocation: Sendable {
    /// The deadline of one request, connection to last byte.
    package var timeout: Duration
    /// Skew allowed between the responder's clock and ours.
    package var leewaySeconds: TimeInterval
    package var now: @Sendable () -> Date
    /// How the requests reach the responders: a socket of its own unless injected.
    package var transport: any OCSPTransport

    package init(
        timeout: Duration = .seconds(10), leewaySeconds: TimeInterval = 300, transport: any OCSPTransport = SocketOCSPTransport(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.timeout = timeout
        self.leewaySeconds = leewaySeconds
        self.transport = transport
        self.now = now
    }

    /// The intermediate (issued by `root`), then the leaf: the first that is not good decides.
    func check(leaf: X509Certificate, intermediate: X509Certificate, root: X509Certificate) async -> Check {
        for (certificate, issuer, name) in [(intermediate, root, "intermediate"), (leaf, intermediate, "leaf")] {
            if case .failed(let errorClass, let why) = await status(of: certificate, issuer: issuer) {
                return .failed(.revocation, errorClass, "the \(name): \(why)")
            }
        }
        return .passed(.revocation, "OCSP says good for the intermediate and the leaf")
    }

    enum Finding: Equatable {
        case good
        case failed(ErrorClass, String)
    }

    static let ocspAccessMethod = "1.3.6.1.5.5.7.48.1"
    static let nonceOID = "1.3.6.1.5.5.7.48.1.2"
    static let basicResponseType = "1.3.6.1.5.5.7.48.1.1"
    static let maximumResponseBytes = 64 * 1024

    func status(of certificate: X509Certificate, issuer: X509Certificate) async -> Finding {
        guard let url = Self.responderURL(of: certificate) else { return .failed(.chainRevocationUnknown, "its AIA names no OCSP responder") }
        guard let identity = issuer.ocspIdentity, let nameHash = try? DigestAlgorithm.sha256.digest(identity.nameDER),
            let keyHash = try? DigestAlgorithm.sha256.digest(identity.keyBits), let nonce = try? DigestAlgorithm.sha256.digest(certificate.derRepresentation)
        else { return .failed(.chainRevocationUnknown, "cannot hash its issuer for a CertID") }
        let request = Self.request(nameHash: nameHash, keyHash: keyHash, serial: certificate.serialNumber, nonce: Array(nonce.prefix(16)))
        let answer: OCSPHTTPAnswer
        do throws(OCSPTransportFailure) {
            answer = try await transport.post(request, to: url, timeout: timeout, maximumBytes: Self.maximumResponseBytes)
        } catch {
            return .failed(.chainRevocationUnavailable, "\(url): \(error.message)")
        }
        guard answer.status == 200 else { return .failed(.chainRevocationUnavailable, "\(url) answered HTTP \(answer.status)") }
        do {
            return try judge(answer.body, certificate: certificate, issuer: issuer, nonce: Array(nonce.prefix(16)))
        } catch {
            return .failed(.chainRevocationUnknown, "\(url): \(error.message)")
        }
    }

    /// The first OCSP URL of the certificate's authorityInfoAccess.
    static func responderURL(of certificate: X509Certificate) -> String? {
        guard let value = certificate.extensionValue(oid: "1.3.6.1.5.5.7.1.1") else { return nil }
        let reader = BERReader(value)
        guard let sequence = try? reader.node(at: 0, expecting: ASN1Tag.sequence, "AuthorityInfoAccessSyntax"),
            let descriptions = try? reader.children(of: sequence, maximumCount: 16, "access descriptions")
        else { return nil }
        for description in descriptions where description.identifier == ASN1Tag.sequence {
            guard let members = try? reader.children(of: description, maximumCount: 2, "AccessDescription"), members.count == 2,
                members[0].identifier == ASN1Tag.objectIdentifier, OID.dotted(reader.content(of: members[0])) == ocspAccessMethod,
                members[1].identifier == ASN1Tag.contextPrimitive(6)
            else { continue }
            return String(bytes: reader.content(of: members[1]), encoding: .ascii)
        }
        return nil
    }

    /// `OCSPRequest` for one certificate: a SHA-256 CertID and a nonce extension.
    static func request(nameHash: [UInt8], keyHash: [UInt8], serial: [UInt8], nonce: [UInt8]) -> [UInt8] {
        let sha256 = (try? OID.encodeContent(KnownOID.sha256)) ?? []
        let nonceOID = (try? OID.encodeContent(Self.nonceOID)) ?? []
        let serialContent = serial.first.map { $0 & 0x80 != 0 ? [0] + serial : serial } ?? [0]
        let certID = ASN1Value.tlv(
            ASN1Tag.sequence,
            ASN1Value.tlv(ASN1Tag.sequence, ASN1Value.tlv(ASN1Tag.objectIdentifier, sha256) + [0x05, 0x00]) + ASN1Value.tlv(ASN1Tag.octetString, nameHash)
                + ASN1Value.tlv(ASN1Tag.octetString, keyHash) + ASN1Value.integer(content: serialContent))
        let requestList = ASN1Value.tlv(ASN1Tag.sequence, ASN1Value.tlv(ASN1Tag.sequence, certID))
        let nonceExtension = ASN1Value.tlv(
            ASN1Tag.sequence, ASN1Value.tlv(ASN1Tag.objectIdentifier, nonceOID) + ASN1Value.tlv(ASN1Tag.octetString, ASN1Value.tlv(ASN1Tag.octetString, nonce)))
        let extensions = ASN1Value.tlv(ASN1Tag.contextConstructed(2), ASN1Value.tlv(ASN1Tag.sequence, nonceExtension))
        return ASN1Value.tlv(ASN1Tag.sequence, ASN1Value.tlv(ASN1Tag.sequence, requestList + extensions))
    }

    struct Refusal: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// Reads and checks an `OCSPResponse` (RFC 6960 §4.2.1) about `certificate`.
    func judge(_ body: [UInt8], certificate: X509Certificate, issuer: X509Certificate, nonce: [UInt8]) throws(Refusal) -> Finding {
        let reader = BERReader(body)
        func node(_ offset: Int, in parent: BERNode?, _ tag: UInt8, _ what: String) throws(Refusal) -> BERNode {
            do { return try reader.node(at: offset, limit: parent?.contentRange.upperBound, expecting: tag, what) } catch { throw Refusal(error.message) }
        }
        func children(_ parent: BERNode, _ what: String) throws(Refusal) -> [BERNode] {
            do { return try reader.children(of: parent, maximumCount: 32, what) } catch { throw Refusal(error.message) }
        }
        guard body.count <= Self.maximumResponseBytes else { throw Refusal("a response of \(body.count) bytes") }
        let outer = try node(0, in: nil, ASN1Tag.sequence, "OCSPResponse")
        let top = try children(outer, "OCSPResponse members")
        guard let status = top.first, status.identifier == 0x0A, status.contentRange.count == 1 else { throw Refusal("no responseStatus") }
        let code = reader.content(of: status).first ?? 0xFF
        guard code == 0 else { return .failed(.chainRevocationUnknown, "responseStatus \(code) (\(Self.statusName(code)))") }
        guard top.count == 2, top[1].identifier == ASN1Tag.contextConstructed(0) else { throw Refusal("a successful response without responseBytes") }
        let responseBytes = try children(try node(top[1].contentRange.lowerBound, in: top[1], ASN1Tag.sequence, "ResponseBytes"), "ResponseBytes members")
        guard responseBytes.count == 2, responseBytes[0].identifier == ASN1Tag.objectIdentifier,
            OID.dotted(reader.content(of: responseBytes[0])) == Self.basicResponseType, responseBytes[1].identifier == ASN1Tag.octetString
        else { throw Refusal("not a basic OCSP response") }

        let basicBytes = Array(reader.content(of: responseBytes[1]))
        let basicReader = BERReader(basicBytes)
        func basicNode(_ offset: Int, in parent: BERNode?, _ tag: UInt8, _ what: String) throws(Refusal) -> BERNode {
            do { return try basicReader.node(at: offset, limit: parent?.contentRange.upperBound, expecting: tag, what) } catch { throw Refusal(error.message) }
        }
        func basicChildren(_ parent: BERNode, _ what: String) throws(Refusal) -> [BERNode] {
            do { return try basicReader.children(of: parent, maximumCount: 32, what) } catch { throw Refusal(error.message) }
        }
        let basic = try basicChildren(try basicNode(0, in: nil, ASN1Tag.sequence, "BasicOCSPResponse"), "BasicOCSPResponse members")
        guard basic.count >= 3, basic[0].identifier == ASN1Tag.sequence, basic[1].identifier == ASN1Tag.sequence, basic[2].identifier == 0x03 else {
            throw Refusal("a BasicOCSPResponse that is not { tbsResponseData, signatureAlgorithm, signature, … }")
        }
        let tbs = basicReader.encoding(of: basic[0])
        let algorithm = try basicNode(basic[1].contentRange.lowerBound, in: basic[1], ASN1Tag.objectIdentifier, "signatureAlgorithm")
        guard basicReader.content(of: basic[2]).first == 0 else { throw Refusal("a signature BIT STRING with unused bits") }
        let signature = Array(basicReader.content(of: basic[2]).dropFirst())
        var certificates: [X509Certificate] = []
        if basic.count > 3, basic[3].identifier == ASN1Tag.contextConstructed(0) {
            let list = try basicNode(basic[3].contentRange.lowerBound, in: basic[3], ASN1Tag.sequence, "certs")
            for entry in try basicChildren(list, "certs") {
                guard let parsed = try? X509Certificate(derEncoded: Array(basicReader.encoding(of: entry))) else { throw Refusal("a certificate in certs does not parse") }
                certificates.append(parsed)
            }
        }

        // ResponseData: [0] version?, responderID, producedAt, responses, [1] responseExtensions?
        var data = try basicChildren(basic[0], "ResponseData members")
        if data.first?.identifier == ASN1Tag.contextConstructed(0) { data.removeFirst() }
        guard data.count >= 3, data[2].identifier == ASN1Tag.sequence else { throw Refusal("a ResponseData without its responses") }
        let signer = try responder(data[0], basicReader, issuer: issuer, certificates: certificates)
        try verifySignature(signature, over: tbs, algorithm: OID.dotted(basicReader.content(of: algorithm)) ?? "", key: signer.publicKey)
        if data.count > 3, data[3].identifier == ASN1Tag.contextConstructed(1) {
            let echoed = try nonceValue(data[3], basicReader)
            if let echoed, echoed != ASN1Value.tlv(ASN1Tag.octetString, nonce), echoed != nonce { throw Refusal("the nonce it echoes is not the one sent") }
        }

        let now = now()
        for single in try basicChildren(data[2], "responses") where single.identifier == ASN1Tag.sequence {
            let members = try basicChildren(single, "SingleResponse members")
            guard members.count >= 3, members[0].identifier == ASN1Tag.sequence, try answers(members[0], basicReader, about: certificate, issuer: issuer) else {
                continue
            }
            guard let thisUpdate = Self.time(basicReader.content(of: members[2])), members[2].identifier == ASN1Tag.generalizedTime else {
                throw Refusal("no thisUpdate")
            }
            guard thisUpdate <= now + leewaySeconds else { throw Refusal("thisUpdate \(ReceiptDate.format(thisUpdate)) is in the future") }
            guard let next = members.dropFirst(3).first(where: { $0.identifier == ASN1Tag.contextConstructed(0) }),
                let inner = try? basicReader.node(at: next.contentRange.lowerBound, limit: next.contentRange.upperBound, expecting: ASN1Tag.generalizedTime, "nextUpdate"),
                let nextUpdate = Self.time(basicReader.content(of: inner))
            else { return .failed(.chainRevocationUnknown, "the answer has no nextUpdate") }
            guard nextUpdate >= now - leewaySeconds else { return .failed(.chainRevocationUnknown, "the answer went stale at \(ReceiptDate.format(nextUpdate))") }
            switch members[1].identifier {
            case ASN1Tag.contextPrimitive(0): return .good
            case ASN1Tag.contextConstructed(1): return .failed(.chainRevoked, "OCSP says revoked")
            default: return .failed(.chainRevocationUnknown, "OCSP says unknown")
            }
        }
        throw Refusal("no answer about the certificate asked")
    }

    /// Who signed: the issuer itself, or a delegate in `certs` the issuer certified with the ocspSigning EKU.
    private func responder(_ id: BERNode, _ reader: BERReader, issuer: X509Certificate, certificates: [X509Certificate]) throws(Refusal) -> X509Certificate {
        let candidates = [issuer] + certificates
        let matches: (X509Certificate) -> Bool
        switch id.identifier {
        case ASN1Tag.contextConstructed(2):
            guard let hash = try? reader.node(at: id.contentRange.lowerBound, limit: id.contentRange.upperBound, expecting: ASN1Tag.octetString, "KeyHash") else {
                throw Refusal("a byKey responderID without its hash")
            }
            let wanted = Array(reader.content(of: hash))
            matches = { candidate in candidate.ocspIdentity.flatMap { try? DigestAlgorithm.sha1.digest($0.keyBits) } == wanted }
        case ASN1Tag.contextConstructed(1):
            let name = Array(reader.content(of: id))
            matches = { $0.ocspIdentity?.nameDER == name }
        default:
            throw Refusal("a responderID that is neither byName nor byKey")
        }
        guard let signer = candidates.first(where: matches) else { throw Refusal("signed by a responder that is neither the issuer nor a certificate it sent") }
        if signer == issuer { return signer }
        guard signer.isIssued(by: issuer) else { throw Refusal("signed by a delegate the issuer did not certify") }
        guard let usages = signer.extendedKeyUsage, usages.contains(where: { $0 == "OCSPSigning" || $0 == "1.3.6.1.5.5.7.3.9" }) else {
            throw Refusal("signed by a certificate of the issuer without the ocspSigning EKU")
        }
        let now = now()
        guard signer.notBefore <= now, now <= signer.notAfter else { throw Refusal("signed by a delegate outside its validity") }
        return signer
    }

    private func verifySignature(_ signature: [UInt8], over tbs: ArraySlice<UInt8>, algorithm: String, key: PublicKey) throws(Refusal) {
        let digests: [String: DigestAlgorithm] = [
            "1.2.840.10045.4.3.2": .sha256, "1.2.840.10045.4.3.3": .sha384, "1.2.840.10045.4.3.4": .sha512,
            KnownOID.sha256WithRSAEncryption: .sha256, KnownOID.sha384WithRSAEncryption: .sha384, KnownOID.sha512WithRSAEncryption: .sha512,
        ]
        guard let digest = digests[algorithm] else { throw Refusal("signature algorithm \(algorithm) is not one OCSP responders of Apple's use") }
        let valid: Bool =
            switch key {
            case .ec(let ec): algorithm.hasPrefix("1.2.840.10045") && ec.isValidDERSignature(signature, for: tbs, algorithm: digest)
            case .rsa(let rsa): !algorithm.hasPrefix("1.2.840.10045") && rsa.isValidSignature(signature, for: tbs, algorithm: digest)
            }
        guard valid else { throw Refusal("the response's signature does not verify under its responder's key") }
    }

    /// Whether a CertID is about `certificate` of `issuer`, in the hash it names (SHA-1 or SHA-256).
    private func answers(_ certID: BERNode, _ reader: BERReader, about certificate: X509Certificate, issuer: X509Certificate) throws(Refusal) -> Bool {
        guard let members = try? reader.children(of: certID, maximumCount: 4, "CertID members"), members.count == 4,
            let oid = try? reader.node(at: members[0].contentRange.lowerBound, limit: members[0].contentRange.upperBound, expecting: ASN1Tag.objectIdentifier, "hashAlgorithm"),
            let algorithm = OID.dotted(reader.content(of: oid)).flatMap(DigestAlgorithm.init(dottedOID:)), let identity = issuer.ocspIdentity
        else { throw Refusal("a CertID that does not read") }
        var serial = Array(reader.content(of: members[3]))
        while serial.count > 1, serial.first == 0 { serial.removeFirst() }
        return serial == certificate.serialNumber && Array(reader.content(of: members[1])) == (try? algorithm.digest(identity.nameDER))
            && Array(reader.content(of: members[2])) == (try? algorithm.digest(identity.keyBits))
    }

    /// The extnValue of the nonce in `[1] EXPLICIT Extensions`, if there is one.
    private func nonceValue(_ tagged: BERNode, _ reader: BERReader) throws(Refusal) -> [UInt8]? {
        guard let sequence = try? reader.node(at: tagged.contentRange.lowerBound, limit: tagged.contentRange.upperBound, expecting: ASN1Tag.sequence, "Extensions"),
            let extensions = try? reader.children(of: sequence, maximumCount: 16, "extensions")
        else { throw Refusal("responseExtensions that do not read") }
        for candidate in extensions {
            guard let members = try? reader.children(of: candidate, maximumCount: 3, "Extension"), let first = members.first,
                OID.dotted(reader.content(of: first)) == Self.nonceOID, let value = members.last, value.identifier == ASN1Tag.octetString
            else { continue }
            return Array(reader.content(of: value))
        }
        return nil
    }

    /// `YYYYMMDDHHMMSSZ`.
    static func time(_ content: ArraySlice<UInt8>) -> Date? {
        let text = String(decoding: content, as: UTF8.self)
        guard text.count == 15, text.hasSuffix("Z") else { return nil }
        let digits = Array(text.utf8.prefix(14))
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        func number(_ range: Range<Int>) -> Int { digits[range].reduce(0) { $0 * 10 + Int($1 - 0x30) } }
        return ReceiptDate.parse(
            "\(number(0..<4))-\(String(number(4..<6)).leftPadded(2))-\(String(number(6..<8)).leftPadded(2))T\(String(number(8..<10)).leftPadded(2)):\(String(number(10..<12)).leftPadded(2)):\(String(number(12..<14)).leftPadded(2))Z"
        )
    }

    static func statusName(_ code: UInt8) -> String {
        switch code {
        case 1: "malformedRequest"
        case 2: "internalError"
        case 3: "tryLater"
        case 5: "sigRequired"
        case 6: "unauthorized"
        default: "not a status RFC 6960 defines"
        }
    }
}
