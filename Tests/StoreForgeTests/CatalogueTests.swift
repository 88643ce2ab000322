import Foundation
import ForgeCrypto
import ReceiptCorpus
import StoreForge
import ReceiptModel
import ReferenceValidation
import Testing
import _ForgeSupport
import StoreModel

/// The vector catalogue, judged by the reference validator: each vector's verdict and error class
/// must be what the catalogue says a correct validator answers.
@Suite("Vector catalogue", .timeLimit(.minutes(2)))
struct CatalogueTests {
    static let pki = try! CertificateSet<CertificateRole>.bundled()
    static let forge = try! Forge(receiptPKI: pki)
    /// The receipt vectors: the reference validator judges receipts (the JWS verifier's tests and TransactionReceiptTests judge the rest).
    static let receipts = VectorCatalogue.all.filter { $0.artifact == .receipt }

    @Test("At least 150 vectors with unique, well-formed ids, canaries that are valid, flags where needed")
    func shape() {
        let ids = VectorCatalogue.all.map(\.id)
        #expect(ids.count >= 150)
        #expect(Set(ids).count == ids.count)
        #expect(ids.filter { $0.wholeMatch(of: #/[a-z0-9][a-z0-9-]*(::[a-z0-9][a-z0-9-]*)+/#) == nil } == [])
        #expect(VectorCatalogue.all.filter(\.canary).allSatisfy { $0.verdict == .valid })
        #expect(VectorCatalogue.all.filter(\.canary).count >= 3)
        #expect(VectorCatalogue.all.filter { $0.verdict == .acceptable }.allSatisfy { !$0.flags.isEmpty })
        #expect(VectorCatalogue.all.filter { $0.verdict == .invalid }.allSatisfy { !$0.errorClasses.isEmpty })
    }

    @Test("The reference validator gives every vector its expected verdict and error class", arguments: receipts.map(\.id))
    func oracle(id: String) throws {
        let spec = try #require(Self.receipts.first { $0.id == id })
        let bytes = try spec.bytes(forge: Self.forge)
        let anchor: CertificateRole = spec.trustAnchor == "forge-storekit" ? .storeKit : .root
        let context = ValidationContext(
            trustedRoots: [Self.pki[anchor].certificate], bundleID: spec.bundleID, appVersion: spec.appVersion,
            deviceID: spec.deviceID.flatMap(DeviceID.init)?.bytes, environment: spec.environment,
            now: ReceiptDate.parse(spec.now)!)
        let report = ReferenceValidator().validate(bytes, context: context)
        switch spec.verdict {
        case .valid:
            #expect(report.verdict == .valid, "\(report.message)")
        case .invalid:
            #expect(report.verdict == .invalid)
            let got = try #require(report.errorClass, "\(report.message)")
            #expect(spec.errorClasses.contains { got.isWithin($0) }, "got \(got): \(report.message)")
        case .acceptable:
            break  // resolved by profiles; the reference validator's answer is recorded, not required
        }
    }

    @Test("Bytes are deterministic: made twice, identical")
    func determinism() throws {
        for spec in VectorCatalogue.all.prefix(40) {
            #expect(try spec.bytes(forge: Self.forge) == spec.bytes(forge: Self.forge), "\(spec.id)")
        }
    }
}
