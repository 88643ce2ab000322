import ReceiptCorpus
import Foundation
import ForgeCrypto
import StoreForge
import ReceiptModel
import ReferenceValidation
import Testing
import _ForgeSupport
import ForgeTestSupport
import StoreModel
import AppStoreVocabulary

@Suite("The reference validator", .timeLimit(.minutes(2)))
struct ValidatorTests {
    let pki = try! CertificateSet<CertificateRole>.bundled()
    let validator = ReferenceValidator()

    func context(
        _ anchor: CertificateRole = .root, bundle: String? = nil, device: String? = nil, version: String? = nil,
        environment: String? = nil
    ) -> ValidationContext {
        ValidationContext(
            trustedRoots: [pki[anchor].certificate], bundleID: bundle, appVersion: version,
            deviceID: device.flatMap(DeviceID.init)?.bytes, environment: environment.flatMap(Environment.init(receiptType:)), now: pinnedNow)
    }

    @Test("Accepts every preset under its trust anchor with every binding checked", arguments: Preset.allCases)
    func acceptsPresets(preset: Preset) throws {
        let device = "956328D9-CC6A-47F4-BE40-6953FB0AB6C7"
        let forged = try sharedForge.make(
            Scenario(
                preset: preset, bundleID: "com.example.app", appVersion: "3.1", deviceID: device,
                purchases: [Purchase(productID: "p", renewals: 1)]), now: pinnedNow)
        let report = validator.validate(
            forged.bytes,
            context: context(
                preset.trustAnchor, bundle: "com.example.app", device: device,
                version: "3.1", environment: preset.receiptType.rawValue))
        #expect(report.verdict == .valid, "\(report.message)")
        #expect(report.checks.filter { $0.status == .passed }.map(\.name).contains(.deviceHash))
    }

    @Test("Rejects with the error class of the first failing step")
    func rejections() throws {
        let forged = try sharedForge.make(
            Scenario(
                bundleID: "com.example.app", deviceID: "f8:ff:c2:1e:91:82",
                purchases: [Purchase(productID: "p")]), now: pinnedNow)
        func errorClass(_ bytes: [UInt8], _ context: ValidationContext) -> ErrorClass? { validator.validate(bytes, context: context).errorClass }
        #expect(errorClass(forged.bytes, context(.foreignRoot)) == .chainUntrusted)
        #expect(errorClass(forged.bytes, context(bundle: "com.example.other")) == .bindingBundleID)
        #expect(errorClass(forged.bytes, context(version: "2")) == .bindingAppVersion)
        #expect(errorClass(forged.bytes, context(device: "f8:ff:c2:1e:91:83")) == .bindingDeviceHash)
        #expect(errorClass(forged.bytes, context(environment: "ProductionSandbox")) == .bindingEnvironment)
        var tampered = forged.bytes
        let container = try ReceiptContainer(berEncoded: forged.bytes)
        tampered[container.payloadOffset! + 40] ^= 0x01
        #expect(errorClass(tampered, context()) == .signatureInvalid)
        #expect(errorClass(Array(forged.bytes.prefix(100)), context()) == .containerMalformed)
        #expect(errorClass([], context()) == .inputEmpty)
        #expect(errorClass(Array("not a receipt".utf8), context()) == .inputEncoding)
        // An Xcode receipt is self-signed: the App Store root does not trust it, the StoreKit certificate does.
        let xcode = try sharedForge.make(Scenario(preset: .xcode2023), now: pinnedNow)
        #expect(errorClass(xcode.bytes, context()) == .chainUntrusted)
        #expect(errorClass(xcode.bytes, context(.storeKit)) == nil)
    }

    @Test("Checks the receipt's own expiration date (type 21) against now")
    func receiptExpiration() throws {
        // A receipt with a type-21 date in the past, signed by hand with the test leaf.
        let leaf = pki[.leaf]
        let payload = ReceiptPayload([
            .utf8(2, "com.example.app"), .utf8(3, "1"), .ia5(12, "2025-01-01T00:00:00Z"),
            .ia5(21, "2025-02-01T00:00:00Z"),
        ]).encoded(ordering: .derSorted)
        let signature = try leaf.privateKey.signature(for: payload, algorithm: .sha256)
        let draft = SignedDataDraft(
            digestAlgorithmOIDs: [KnownOID.sha256], payload: payload,
            certificates: [leaf.certificate, pki[.intermediate].certificate, pki[.root].certificate].map(\.derRepresentation),
            signers: [
                SignerInfoDraft(
                    identity: try CertificateIdentity(derEncoded: leaf.certificate.derRepresentation),
                    digestAlgorithmOID: KnownOID.sha256, signatureAlgorithmOID: KnownOID.rsaEncryption, signature: signature)
            ],
            layout: .appStore)
        let bytes = try draft.encoded()
        #expect(validator.validate(bytes, context: context()).errorClass == .policyExpired)
        var early = context()
        early.now = ReceiptDate.parse("2025-01-15T00:00:00Z")!
        #expect(validator.validate(bytes, context: early).verdict == .valid)
    }

    /// Signs `payload` as `openssl cms -sign` would: with contentType, signingTime and messageDigest attributes.
    func signedWithAttributes(_ payload: [UInt8], messageDigest: [UInt8]? = nil) throws -> [UInt8] {
        let leaf = pki[.leaf]
        let attributes = try SignedAttributes.encode(
            messageDigest: messageDigest ?? DigestAlgorithm.sha256.digest(payload),
            signingTime: "250101000000Z")
        let draft = SignedDataDraft(
            digestAlgorithmOIDs: [KnownOID.sha256], payload: payload,
            certificates: [leaf.certificate, pki[.intermediate].certificate, pki[.root].certificate].map(\.derRepresentation),
            signers: [
                SignerInfoDraft(
                    identity: try CertificateIdentity(derEncoded: leaf.certificate.derRepresentation),
                    digestAlgorithmOID: KnownOID.sha256, signatureAlgorithmOID: KnownOID.rsaEncryption,
                    signedAttributes: attributes, signature: try leaf.privateKey.signature(for: attributes, algorithm: .sha256))
            ],
            layout: .appStore)
        return try draft.encoded()
    }

    @Test("Signed attributes: the signature covers them and messageDigest must match the content; openssl agrees", .requires(.openssl))
    func signedAttributes() async throws {
        let payload = try sharedForge.make(Scenario(), now: pinnedNow).payload
        let good = try signedWithAttributes(payload)
        #expect(validator.validate(good, context: context()).verdict == .valid)
        let bad = try signedWithAttributes(payload, messageDigest: [UInt8](repeating: 0, count: 32))
        #expect(validator.validate(bad, context: context()).errorClass == .signatureMessageDigest)

        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, bytes, expected) in [("good", good, Int32(0)), ("bad", bad, Int32(4))] {
            let file = directory.appendingPathComponent("\(name).der")
            try Data(bytes).write(to: file)
            let verified = try await openssl([
                "cms", "-verify", "-binary", "-inform", "DER", "-in", file.path, "-CAfile", Repository.certificate("root.pem"), "-purpose", "any",
                "-out", directory.appendingPathComponent("\(name).content").path,
            ])
            #expect(verified.status == expected, "openssl on the \(name) signed-attributes receipt: \(verified.stderr)")
        }
    }

    @Test("The chain is judged at the creation date unless a time is pinned")
    func chainTime() throws {
        let forged = try sharedForge.make(Scenario(), now: pinnedNow)
        var pinned = context()
        pinned.chainTime = ReceiptDate.parse("2099-06-01T00:00:00Z")!  // after the leaf's notAfter (2097)
        #expect(validator.validate(forged.bytes, context: pinned).errorClass == .chainExpired)
        pinned.chainTime = ReceiptDate.parse("1999-06-01T00:00:00Z")!
        #expect(validator.validate(forged.bytes, context: pinned).errorClass == .chainNotYetValid)
    }
}
