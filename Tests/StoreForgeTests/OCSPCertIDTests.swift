import Foundation
import ForgeCrypto
import _ForgeSupport
import ForgeTestSupport
import StoreForge
import ReceiptModel
import StoreServer
import Testing

/// `forge serve --ocsp` on requests whose CertID is corrupted, built here byte by byte: each one is answered
/// `malformedRequest` (RFC 6960 §2.3), never a successful response about some certificate, while the well-formed
/// request beside it is answered `successful` and good.
@Suite("The OCSP responder refuses corrupted CertIDs", .timeLimit(.minutes(2)))
struct OCSPCertIDTests {
    static let pki = try! CertificateSet<JWSRole>.bundled()
    static let leaf = pki.certificate(.leaf), intermediate = pki.certificate(.intermediate)
    static let service = try! OCSPService()

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] { ASN1Value.tlv(tag, content) }
    static func oid(_ dotted: String) -> [UInt8] { tlv(ASN1Tag.objectIdentifier, (try? OID.encodeContent(dotted)) ?? []) }

    /// The parts of a CertID for the bundled JWS leaf under `algorithm`, each editable.
    struct Parts {
        var algorithmIdentifier: [UInt8]
        var nameHash: [UInt8]
        var keyHash: [UInt8]
        var serial: [UInt8]
        /// Bytes after the serial, inside the CertID.
        var inside: [UInt8] = []

        init(_ algorithm: DigestAlgorithm = .sha256) throws {
            let identity = try #require(OCSPCertIDTests.intermediate.ocspIdentity)
            algorithmIdentifier = tlv(ASN1Tag.sequence, oid(algorithm.dottedOID) + [0x05, 0x00])
            nameHash = try algorithm.digest(identity.nameDER)
            keyHash = try algorithm.digest(identity.keyBits)
            let magnitude = OCSPCertIDTests.leaf.serialNumber
            serial = (magnitude.first ?? 0) >= 0x80 ? [0x00] + magnitude : magnitude
        }

        var certID: [UInt8] {
            tlv(ASN1Tag.sequence, algorithmIdentifier + tlv(ASN1Tag.octetString, nameHash) + tlv(ASN1Tag.octetString, keyHash) + tlv(ASN1Tag.integer, serial) + inside)
        }

        /// `OCSPRequest { TBSRequest { requestList { Request { certID } } } }`.
        var request: [UInt8] { OCSPCertIDTests.request(certIDs: [certID]) }
    }

    static func request(certIDs: [[UInt8]], afterRequestList: [UInt8] = [], afterTBS: [UInt8] = []) -> [UInt8] {
        let requestList = tlv(ASN1Tag.sequence, certIDs.flatMap { tlv(ASN1Tag.sequence, $0) })
        return tlv(ASN1Tag.sequence, tlv(ASN1Tag.sequence, requestList + afterRequestList) + afterTBS)
    }

    /// `OCSPResponse { responseStatus ENUMERATED, … }`: the status of a DER response.
    static func status(_ body: [UInt8]) -> UInt8? {
        guard body.count >= 5, body[0] == 0x30 else { return nil }
        let start = body[1] & 0x80 == 0 ? 2 : 2 + Int(body[1] & 0x7F)
        guard body.count > start + 2, body[start] == 0x0A, body[start + 1] == 0x01 else { return nil }
        return body[start + 2]
    }

    static let successful: UInt8 = 0, malformedRequest: UInt8 = 1

    static func answer(_ request: [UInt8]) -> (status: UInt8?, summary: String) {
        let reply = service.respond(path: "", request: request)
        return (reply.status == 200 ? status(reply.body) : nil, reply.summary)
    }

    @Test("Well-formed CertIDs of every digest forge computes are answered successful, with or without NULL parameters")
    func wellFormed() throws {
        for algorithm in DigestAlgorithm.allCases {
            var parts = try Parts(algorithm)
            #expect(Self.answer(parts.request).status == Self.successful, "\(algorithm)")
            parts.algorithmIdentifier = Self.tlv(ASN1Tag.sequence, Self.oid(algorithm.dottedOID))
            #expect(Self.answer(parts.request).status == Self.successful, "\(algorithm) without parameters")
        }
        // A serial whose first octet is ≥ 0x80 carries the 00 DER needs, and is read as its value.
        var high = try Parts()
        high.serial = [0x00, 0x80, 0x01]
        let answer = Self.answer(high.request)
        #expect(answer.status == Self.successful && answer.summary == "sha256:8001=good", "\(answer.summary)")
        // The version, explicit v1, and extensions after the request list are allowed.
        let parts = try Parts()
        let versioned = Self.tlv(
            ASN1Tag.sequence,
            Self.tlv(
                ASN1Tag.sequence,
                Self.tlv(0xA0, [0x02, 0x01, 0x00]) + Self.tlv(ASN1Tag.sequence, Self.tlv(ASN1Tag.sequence, parts.certID)) + Self.tlv(0xA2, Self.tlv(ASN1Tag.sequence, []))))
        #expect(Self.answer(versioned).status == Self.successful)
    }

    /// Each corruption of the CertID, by name.
    static func corruptions() throws -> [(String, [UInt8])] {
        var cases: [(String, [UInt8])] = []
        func add(_ name: String, _ edit: (inout Parts) -> Void) throws {
            var parts = try Parts()
            edit(&parts)
            cases.append((name, parts.request))
        }
        // Hashes of the wrong length for their algorithm.
        try add("name hash one byte short") { $0.nameHash.removeLast() }
        try add("key hash one byte long") { $0.keyHash.append(0) }
        try add("both hashes empty") {
            $0.nameHash = []; $0.keyHash = []
        }
        try add("SHA-1 hashes under the SHA-256 OID") {
            $0.nameHash = Array($0.nameHash.prefix(20)); $0.keyHash = Array($0.keyHash.prefix(20))
        }
        // Hash algorithms that are no digest, or no algorithm identifier.
        try add("unknown hash OID (sha3-256)") { $0.algorithmIdentifier = tlv(ASN1Tag.sequence, oid("2.16.840.1.101.3.4.2.8") + [0x05, 0x00]) }
        try add("a signature OID as hash (ecdsa-with-SHA256)") { $0.algorithmIdentifier = tlv(ASN1Tag.sequence, oid("1.2.840.10045.4.3.2")) }
        try add("OID content that is no OID") { $0.algorithmIdentifier = tlv(ASN1Tag.sequence, [0x06, 0x02, 0x80, 0x80, 0x05, 0x00]) }
        try add("parameters that are not NULL") { $0.algorithmIdentifier = tlv(ASN1Tag.sequence, oid(DigestAlgorithm.sha256.dottedOID) + [0x02, 0x01, 0x00]) }
        try add("a NULL with content") { $0.algorithmIdentifier = tlv(ASN1Tag.sequence, oid(DigestAlgorithm.sha256.dottedOID) + [0x05, 0x01, 0x00]) }
        try add("a third member in the AlgorithmIdentifier") {
            $0.algorithmIdentifier = tlv(ASN1Tag.sequence, oid(DigestAlgorithm.sha256.dottedOID) + [0x05, 0x00, 0x05, 0x00])
        }
        try add("an empty AlgorithmIdentifier") { $0.algorithmIdentifier = tlv(ASN1Tag.sequence, []) }
        // Serial numbers that are no positive DER INTEGER of at most 20 octets.
        try add("empty serial") { $0.serial = [] }
        try add("serial with a leading 00 it does not need") { $0.serial = [0x00] + $0.serial }
        try add("negative serial (first octet 0x80)") { $0.serial = [0x80] + $0.serial }
        try add("serial with a leading FF") { $0.serial = [0xFF, 0x80] }
        try add("serial zero") { $0.serial = [0x00] }
        try add("serial of 21 value octets") { $0.serial = [0x01] + Array(repeating: 0x22, count: 20) }
        try add("serial of 60,000 octets") { $0.serial = [0x01] + Array(repeating: 0x33, count: 59_999) }
        // Bytes after the last member, inside the CertID.
        try add("trailing NULL inside the CertID") { $0.inside = [0x05, 0x00] }
        try add("trailing zero bytes inside the CertID") { $0.inside = [0x00, 0x00] }
        // Lengths that are not DER's.
        let parts = try Parts()
        var longForm = parts.certID
        longForm.replaceSubrange(1..<2, with: [0x81, longForm[1]])
        cases.append(("CertID length in long form", request(certIDs: [longForm])))
        // Bytes after the CertID inside its Request, after the request list, after the tbsRequest.
        cases.append(
            ("trailing INTEGER after the reqCert", tlv(ASN1Tag.sequence, tlv(ASN1Tag.sequence, tlv(ASN1Tag.sequence, tlv(ASN1Tag.sequence, parts.certID + [0x02, 0x01, 0x01]))))))
        cases.append(("a second request list", request(certIDs: [parts.certID], afterRequestList: tlv(ASN1Tag.sequence, tlv(ASN1Tag.sequence, parts.certID)))))
        cases.append(("an OCTET STRING after the request list", request(certIDs: [parts.certID], afterRequestList: [0x04, 0x00])))
        cases.append(("an INTEGER after the tbsRequest", request(certIDs: [parts.certID], afterTBS: [0x02, 0x01, 0x00])))
        cases.append(("bytes after the OCSPRequest", parts.request + [0x00]))
        // A corrupted CertID second, after a good one: the whole request is refused, not answered in part.
        var short = parts
        short.keyHash.removeLast()
        cases.append(("a good CertID then a corrupted one", request(certIDs: [parts.certID, short.certID])))
        return cases
    }

    @Test("Each corrupted CertID or trailing member is answered malformedRequest (1), never successful")
    func corrupted() throws {
        let cases = try Self.corruptions()
        #expect(cases.count == 27)
        for (name, request) in cases {
            let answer = Self.answer(request)
            #expect(answer.status == Self.malformedRequest, "\(name): status \(answer.status.map(String.init) ?? "none"), \(answer.summary)")
            #expect(answer.summary.hasPrefix("malformed request: ") && answer.summary.utf8.count < 300, "\(name): \(answer.summary)")
        }
    }

    @Test("openssl reads the well-formed request as built here, and the responder's answer to it", .requires(.openssl))
    func opensslAgrees() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let request = directory.appendingPathComponent("request.der"), response = directory.appendingPathComponent("response.der")
        let bytes = try Parts(.sha1).request
        try Data(bytes).write(to: request)
        try Data(Self.service.respond(path: "", request: bytes).body).write(to: response)
        let read = try await openssl(["ocsp", "-reqin", request.path, "-req_text"])
        let text = read.text + read.stderr
        #expect(text.contains("Hash Algorithm: sha1") && text.contains("Serial Number: " + hexString(Self.leaf.serialNumber).uppercased()), "\(text)")
        let answered = try await openssl(["ocsp", "-respin", response.path, "-resp_text", "-noverify"])
        let answer = answered.text + answered.stderr
        #expect(answer.contains("OCSP Response Status: successful (0x0)") && answer.contains("Cert Status: good"), "\(answer)")
    }
}
