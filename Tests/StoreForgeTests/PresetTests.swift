import Foundation
import ForgeCrypto
import StoreForge
import ReceiptModel
import Testing
import _ForgeSupport
import StoreModel

/// Each preset reproduces the shape observed in real receipts of its kind (receipt-facts §b.1, §b.4;
/// interop/README.md). If a preset loses one of these properties, a test here fails.
@Suite("Presets reproduce real shapes", .timeLimit(.minutes(2)))
struct PresetTests {
    static let subscription = Purchase(productID: "com.example.pro.monthly", renewals: 1)
    static let lifetime = Purchase(productID: "com.example.lifetime", type: .nonConsumable)

    @Test(
        "App Store presets: DER, primitive eContent, rsaEncryption, 3 certificates leaf first, DER-sorted SETs",
        arguments: [Preset.appstore, .appstoreSHA1, .sandbox])
    func appStoreContainer(preset: Preset) throws {
        let decoded = try Decoded(Scenario(preset: preset, purchases: [Self.subscription, Self.lifetime]))
        let shape = decoded.container.shape
        #expect(shape.lengths == .definiteMinimal)
        #expect(shape.eContent == .primitive)
        #expect(shape.signedDataVersion == 1)
        let digest = preset == .appstoreSHA1 ? KnownOID.sha1 : KnownOID.sha256
        #expect(shape.digestAlgorithmOIDs == [digest])
        #expect(decoded.container.signers.map(\.digestAlgorithmOID) == [digest])
        #expect(shape.signatureAlgorithmOIDs == [KnownOID.rsaEncryption])
        #expect(shape.certificateCount == 3)
        #expect(!shape.hasSignedAttributes && !shape.hasUnsignedAttributes && !shape.hasCRLs)
        let identities = try decoded.container.certificates.map { try CertificateIdentity(derEncoded: $0) }
        #expect(CertificateIdentity.order(of: identities) == .leafFirst)
        #expect(identities[0].matches(decoded.container.signers[0]))
        #expect(decoded.container.signers[0].signature.count == 256)
        let leaf = try X509Certificate(derEncoded: decoded.container.certificates[0])
        #expect(leaf.signatureAlgorithmOID == (preset == .appstoreSHA1 ? KnownOID.sha1WithRSAEncryption : KnownOID.sha256WithRSAEncryption))
        #expect(decoded.receipt.payload.isDERSorted)
        #expect(decoded.receipt.inAppPurchases.allSatisfy { $0.payload.isDERSorted })
        #expect(decoded.receipt.payload.usesMinimalLengths)
    }

    @Test(
        "App Store payloads: opaque 16 bytes at version 2, every other attribute at version 1, observed fields present",
        arguments: [Preset.appstore, .appstoreSHA1, .sandbox])
    func appStorePayload(preset: Preset) throws {
        let decoded = try Decoded(Scenario(preset: preset, purchases: [Self.subscription, Self.lifetime]))
        #expect(decoded.attribute(4)?.value.count == 16)
        #expect(decoded.attribute(4)?.version == 2)
        #expect(decoded.receipt.payload.entries.filter { $0.attribute.type != 4 }.allSatisfy { $0.attribute.version == 1 })
        #expect(decoded.attribute(5)?.value.count == 20)
        #expect(Set(decoded.types) == Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 25]))
        #expect(decoded.attribute(21) == nil)  // App Store receipts carry no expiration date
        #expect(decoded.attribute(9)?.value == [0x02, 0x04] + Array("P305".utf8))
        #expect(decoded.attribute(10)?.value == ASN1Value.ia5String("4+"))
        #expect(decoded.attribute(20)?.value == ASN1Value.utf8String(""))
        #expect(decoded.receipt.creationDateText == "2025-06-15T12:00:00Z")
        // Subscriptions carry 1719; other products do not. 1722 appears from 2023 on, so not in SHA-1-era receipts.
        var subscriptionTypes = Set(1701...1719).subtracting([1720])
        var otherTypes = Set(1701...1718)
        if preset != .appstoreSHA1 {
            subscriptionTypes.insert(1722)
            otherTypes.insert(1722)
        }
        let subscriptions = decoded.receipt.inAppPurchases.filter { $0.productType == 3 }
        let others = decoded.receipt.inAppPurchases.filter { $0.productType == 0 }
        #expect(subscriptions.count == 2 && others.count == 1)
        #expect(subscriptions.allSatisfy { Set($0.payload.entries.map(\.attribute.type)) == subscriptionTypes })
        #expect(others.allSatisfy { Set($0.payload.entries.map(\.attribute.type)) == otherTypes })
        // Not cancelled: 1712 is an empty IA5String, as Apple writes it.
        #expect(decoded.receipt.inAppPurchases.allSatisfy { $0.payload.payload.first(1712)?.value == [0x16, 0x00] })
    }

    @Test("Sandbox constants: ProductionSandbox, 18 = 2013-08-01T07:00:00Z, 19 = 1.0, ids 1/11/15/16 and 1710 zero, 8 empty")
    func sandboxConstants() throws {
        let decoded = try Decoded(Scenario(preset: .sandbox, purchases: [Self.subscription]))
        #expect(decoded.receipt.receiptType == "ProductionSandbox")
        #expect(decoded.receipt.originalPurchaseDateText == "2013-08-01T07:00:00Z")
        #expect(decoded.receipt.originalAppVersion == "1.0")
        for type in [1, 11, 15, 16] { #expect(decoded.attribute(type)?.integerValue == 0) }
        #expect(decoded.attribute(8)?.value == [0x16, 0x00])
        #expect(decoded.receipt.inAppPurchases.allSatisfy { $0.payload.payload.first(1710)?.integerValue == 0 })
        let production = try Decoded(Scenario(preset: .appstore, purchases: [Self.subscription]))
        #expect(production.receipt.receiptType == "Production")
        #expect(production.receipt.appItemID != 0)
    }

    @Test(
        "Xcode presets: BER indefinite, one-segment constructed eContent, one self-signed StoreKit certificate",
        arguments: [Preset.xcode2020, .xcode2023])
    func xcodeContainer(preset: Preset) throws {
        let decoded = try Decoded(Scenario(preset: preset, purchases: [Self.subscription]))
        #expect(Array(decoded.forged.bytes.prefix(2)) == [0x30, 0x80])
        let shape = decoded.container.shape
        #expect(shape.lengths == .indefinite)
        #expect(shape.eContent == .constructed(segments: 1))
        #expect(shape.digestAlgorithmOIDs == [KnownOID.sha256])
        #expect(shape.signatureAlgorithmOIDs == [preset == .xcode2020 ? KnownOID.rsaEncryption : KnownOID.sha256WithRSAEncryption])
        #expect(shape.certificateCount == 1 && !shape.hasSignedAttributes)
        let certificate = try X509Certificate(derEncoded: decoded.container.certificates[0])
        #expect(certificate.isSelfIssued && certificate.isCA)
        #expect(certificate.isCritical(oid: "2.5.29.37") == true)  // EKU codeSigning, critical
    }

    @Test(
        "Xcode payloads: ascending type order, 8-byte opaque at version 1, no 18/19, minimal purchases, 4001 sentinel",
        arguments: [Preset.xcode2020, .xcode2023])
    func xcodePayload(preset: Preset) throws {
        let decoded = try Decoded(Scenario(preset: preset, purchases: [Self.subscription]))
        #expect(decoded.types == [0, 1, 2, 3, 4, 5, 8, 12, 17, 17, 21])
        #expect(!decoded.receipt.payload.isDERSorted)
        #expect(decoded.receipt.receiptType == "Xcode")
        #expect(decoded.attribute(1)?.integerValue == 0)
        #expect(decoded.attribute(4)?.value.count == 8 && decoded.attribute(4)?.version == 1)
        #expect(decoded.attribute(8)?.value == [0x16, 0x00])
        #expect(decoded.purchaseTypes() == [1701, 1702, 1703, 1704, 1708, 1719])
        #expect(decoded.receipt.inAppPurchases.allSatisfy { $0.transactionID == "0" })
        #expect(decoded.receipt.expirationDate == ReceiptDate.sentinel)
        if preset == .xcode2020 {
            #expect(decoded.receipt.creationDateText == "2025-06-15T13:00:00+0100")
            #expect(decoded.receipt.expirationDateText == "4001-01-01T01:00:00+0100")
        } else {
            #expect(decoded.receipt.creationDateText == "2025-06-15T12:00:00Z")
            #expect(decoded.receipt.expirationDateText == "4001-01-01T00:00:00Z")
        }
        // The first two attributes are byte for byte those of real Xcode receipts: 0 = "Xcode", 1 = 0.
        let set = try BERReader(decoded.forged.payload).node(at: 0)
        #expect(hexString(decoded.forged.payload[set.contentRange].prefix(30)) == "300f02010002010104070c0558636f6465" + "300b0201010201010403020100")
    }
}
