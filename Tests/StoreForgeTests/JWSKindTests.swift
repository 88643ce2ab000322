import AppStoreVocabulary
import Foundation
import _ForgeSupport
import JWSModel
import ReceiptCorpus
import StoreForge
import ReferenceValidation
import StoreModel
import Testing

/// The JWS verifier's per-kind entry points (issue 39, item 8), as Apple's `SignedDataVerifier` has one per kind:
/// the kind given decides what is checked, never a guess from the payload's fields; only the front door guesses.
@Suite("JWS verified as the kind given", .timeLimit(.minutes(1)))
struct JWSKindTests {
    static let pki = try! CertificateSet<JWSRole>.bundled()
    static let context = ValidationContext(trustedRoots: [pki.certificate(.root)], bundleID: "com.example.app", environment: .production)
    static let now = ReceiptDate.parse("2025-01-01T00:00:00Z") ?? Date()

    static func make(_ kind: JWSKind) throws -> String {
        try Forge(receiptPKI: .bundled()).make(kind, scenario: Scenario(purchases: [Purchase(productID: "pro.monthly")]), now: now).compact
    }

    @Test("A transaction verified as a notification is judged as one (its claims under data, absent); the front door reads it as the transaction it is")
    func kindGivenDecides() throws {
        let transaction = try Self.make(.transaction)
        let sniffed = JWSVerifier().verify(transaction, context: Self.context)
        #expect(sniffed.kind == .transaction && sniffed.verdict == .valid, "\(sniffed.message)")
        #expect(JWSVerifier().verify(transaction, as: .transaction, context: Self.context).checks == sniffed.checks)
        let asNotification = JWSVerifier().verify(transaction, as: .notification, context: Self.context)
        #expect(asNotification.kind == .notification && asNotification.errorClass == .bindingBundleID, "\(asNotification.message)")
    }

    @Test("A vector's artefact kind picks the entry point: the harness's check verifies a jws-renewal as a renewal")
    func artefactKindPicksTheEntryPoint() throws {
        let transaction = try Self.make(.transaction)
        let report = try #require(JWSVerifier().check(Array(transaction.utf8), as: .jwsRenewal, context: Self.context) as? JWSReport)
        #expect(report.kind == .renewal)
        #expect(ArtifactKind.receipt.jwsKind == nil)
        for kind in JWSKind.allCases { #expect(kind.artifact.jwsKind == kind) }
    }
}
