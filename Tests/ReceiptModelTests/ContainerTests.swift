import Testing
import ReceiptModel
import StoreModel
import _ForgeSupport

@Suite("PKCS#7 container", .timeLimit(.minutes(2)))
struct ContainerTests {
    /// A minimal self-issued certificate skeleton: enough structure for CertificateIdentity.
    static func fakeCertificate(subject: String, issuer: String, serial: UInt8) -> [UInt8] {
        func name(_ text: String) -> [UInt8] { ASN1Value.tlv(ASN1Tag.sequence, ASN1Value.utf8String(text)) }
        var writer = ASN1Writer()
        writer.appendConstructed(ASN1Tag.sequence) { cert in
            cert.appendConstructed(ASN1Tag.sequence) { tbs in
                tbs.appendConstructed(ASN1Tag.contextConstructed(0)) { $0.appendInteger(2) }
                tbs.appendInteger(Int64(serial))
                tbs.appendConstructed(ASN1Tag.sequence) { _ in }
                tbs.appendEncoded(name(issuer))
                tbs.appendConstructed(ASN1Tag.sequence) { _ in }
                tbs.appendEncoded(name(subject))
            }
        }
        return writer.bytes
    }

    static let leaf = fakeCertificate(subject: "leaf", issuer: "inter", serial: 3)
    static let inter = fakeCertificate(subject: "inter", issuer: "root", serial: 2)
    static let root = fakeCertificate(subject: "root", issuer: "root", serial: 1)
    static let payload = ReceiptPayload([.utf8(2, "com.example"), .utf8(3, "1")]).encoded(ordering: .derSorted)

    static func draft(_ layout: ContainerLayout, certificates: [[UInt8]] = [leaf, inter, root]) throws -> SignedDataDraft {
        let signer = SignerInfoDraft(
            identity: try CertificateIdentity(derEncoded: leaf), digestAlgorithmOID: KnownOID.sha256,
            signatureAlgorithmOID: KnownOID.rsaEncryption, signature: [UInt8](repeating: 0x5A, count: 256))
        return SignedDataDraft(
            digestAlgorithmOIDs: [KnownOID.sha256], payload: payload, certificates: certificates,
            signers: [signer], layout: layout)
    }

    @Test("The App Store layout is definite DER with a primitive eContent and leaf-first certificates")
    func appStoreLayout() throws {
        let bytes = try Self.draft(.appStore).encoded()
        let container = try ReceiptContainer(berEncoded: bytes)
        #expect(container.shape.lengths == .definiteMinimal)
        #expect(container.shape.eContent == .primitive)
        #expect(container.payload == Self.payload)
        #expect(container.certificates == [Self.leaf, Self.inter, Self.root])
        let identities = try container.certificates.map { try CertificateIdentity(derEncoded: $0) }
        #expect(CertificateIdentity.order(of: identities) == .leafFirst)
        #expect(identities[0].matches(container.signers[0]))
        #expect(container.signers[0].signature.count == 256)
        #expect(container.signers[0].signedAttributes == nil)
        #expect(container.shape.signatureAlgorithmOIDs == [KnownOID.rsaEncryption])
        #expect(container.payloadOffset.map { Array(bytes[$0..<($0 + Self.payload.count)]) } == Self.payload)
    }

    @Test("The Xcode layout is indefinite with a one-segment constructed eContent")
    func xcodeLayout() throws {
        let bytes = try Self.draft(.xcode, certificates: [Self.root]).encoded()
        #expect(Array(bytes.prefix(2)) == [0x30, 0x80])
        let container = try ReceiptContainer(berEncoded: bytes)
        #expect(container.shape.lengths == .indefinite)
        #expect(container.shape.eContent == .constructed(segments: 1))
        #expect(container.payload == Self.payload)
        #expect(container.shape.trailingByteCount == 0)
    }

    @Test("Segments, detached content, signed attributes and reordering are all reachable")
    func variants() throws {
        var draft = try Self.draft(ContainerLayout(wrapperLength: .minimal, eContent: .constructed(segments: 3)))
        var container = try ReceiptContainer(berEncoded: try draft.encoded())
        #expect(container.shape.eContent == .constructed(segments: 3))
        #expect(container.payload == Self.payload)

        draft.layout = ContainerLayout(eContent: .detached)
        container = try ReceiptContainer(berEncoded: try draft.encoded())
        #expect(container.payload == nil && container.shape.eContent == .absent)

        draft.layout = .appStore
        draft.certificates = [Self.root, Self.inter, Self.leaf]
        let attributes = try SignedAttributes.encode(messageDigest: [UInt8](repeating: 1, count: 32), signingTime: "250101000000Z")
        draft.signers[0].signedAttributes = attributes
        container = try ReceiptContainer(berEncoded: try draft.encoded())
        #expect(container.signers[0].signedAttributes == attributes)
        #expect(container.signers[0].messageDigest == [UInt8](repeating: 1, count: 32))
        #expect(CertificateIdentity.order(of: try container.certificates.map { try CertificateIdentity(derEncoded: $0) }) == .rootFirst)

        draft.layout = ContainerLayout(wrapperLength: .longForm(octets: 4))
        container = try ReceiptContainer(berEncoded: try draft.encoded())
        #expect(container.shape.lengths == .definiteNonMinimal)
    }

    @Test("Trailing bytes are counted, not hidden")
    func trailing() throws {
        let bytes = try Self.draft(.appStore).encoded() + [0, 0, 0]
        #expect(try ReceiptContainer(berEncoded: bytes).shape.trailingByteCount == 3)
    }

    @Test("Truncation at any byte is an error naming an offset inside the input, never a crash")
    func truncationEverywhere() throws {
        let bytes = try Self.draft(.xcode).encoded()
        for length in 0..<bytes.count {
            do {
                _ = try ReceiptContainer(berEncoded: Array(bytes.prefix(length)))
                Issue.record("truncated to \(length) bytes still decoded")
            } catch {
                #expect(error.offset <= length)
            }
        }
    }
}
