import AppStoreVocabulary
import Foundation
import _ForgeSupport
import JWSModel
import ReceiptConformance
import ReceiptCorpus
import ReceiptValidationServer
import StoreForge
import ReferenceValidation
import StoreModel
import Testing
import ForgeTestSupport

/// Issue 40, item 1: RESCIND_CONSENT carries `appData {appAppleId, bundleId, environment, signedAppTransactionInfo}`
/// instead of `data`. The reference verifier binds it as Apple's SignedDataVerifier does and verifies the
/// AppTransaction in it; `appData` beside `data`, or without its AppTransaction, is not Apple's shape.
@Suite("RESCIND_CONSENT: appData forged, bound and verified", .timeLimit(.minutes(2)))
struct RescindConsentTests {
    static let pki = try! CertificateSet<JWSRole>.bundled()
    static let now = ReceiptDate.parse("2025-06-15T12:00:00Z") ?? Date()
    static let scenario = Scenario(bundleID: "com.example.app", appItemID: 1234, purchases: [Purchase(productID: "pro.monthly", purchaseDate: "2025-06-01T00:00:00Z")])

    static func context(bundleID: String = "com.example.app", environment: Environment = .production) -> ValidationContext {
        var context = ValidationContext(trustedRoots: [pki.certificate(.root)], bundleID: bundleID, environment: environment)
        context.appAppleID = 1234
        return context
    }

    /// A RESCIND_CONSENT of ``scenario``, edited by pointer.
    static func make(set overrides: [(String, JSONValue)] = [], unset removals: [String] = []) throws -> ForgedJWS {
        try Forge(receiptPKI: .bundled()).make(
            .notification, scenario: scenario, now: now,
            options: JWSOptions(notificationType: .known(.rescindConsent), overrides: overrides, removals: removals))
    }

    @Test("forge's RESCIND_CONSENT: appData, no data; its AppTransaction is forge's AppTransaction at that instant; the verifier binds appData and verifies it")
    func forgedAndVerified() throws {
        let forged = try Self.make()
        #expect(forged.payload["data"] == nil && forged.payload["notificationType"] == .string("RESCIND_CONSENT"))
        let appData = try #require(forged.payload["appData"])
        #expect(appData["appAppleId"] == .integer(1234) && appData["bundleId"] == .string("com.example.app") && appData["environment"] == .string("Production"))
        let appTransaction = try Forge(receiptPKI: .bundled()).make(.appTransaction, scenario: Self.scenario, now: Self.now)
        #expect(appData["signedAppTransactionInfo"] == .string(appTransaction.compact))
        let report = JWSVerifier(cache: nil).verify(forged.compact, as: .notification, context: Self.context())
        #expect(report.verdict == .valid, "\(report.message)")
        #expect(report.findings.nested.map(\.field) == ["signedAppTransactionInfo"] && report.findings.nested.first?.report.kind == .appTransaction)
    }

    /// (what, the context's bundle id and environment, the edit, the class the verifier names)
    static let defects: [(String, String, Environment, [(String, JSONValue)], [String], ErrorClass)] = [
        ("another app", "com.other.app", .production, [], [], .bindingBundleID),
        ("checked as Sandbox", "com.example.app", .sandbox, [], [], .bindingEnvironment),
        ("another app id", "com.example.app", .production, [("/appData/appAppleId", .integer(1))], [], .bindingAppAppleID),
        (
            "data beside appData", "com.example.app", .production,
            [("/data", .object([("appAppleId", .integer(1234)), ("bundleId", .string("com.example.app")), ("environment", .string("Production"))]))], [],
            .payloadInvalidField
        ),
        ("no AppTransaction", "com.example.app", .production, [], ["/appData/signedAppTransactionInfo"], .payloadMissingField),
        ("an AppTransaction that is not a JWS", "com.example.app", .production, [("/appData/signedAppTransactionInfo", .string("{}"))], [], .jwsNested),
    ]

    @Test("Each defect of appData is refused with its class: bundle id, environment, app id, data beside it, no AppTransaction, a forged one")
    func defectsRefused() throws {
        for (what, bundleID, environment, overrides, removals, expected) in Self.defects {
            let forged = try Self.make(set: overrides, unset: removals)
            let report = JWSVerifier(cache: nil).verify(forged.compact, as: .notification, context: Self.context(bundleID: bundleID, environment: environment))
            #expect(report.verdict != .valid && report.errorClass == expected, "\(what): \(report.errorClass?.rawValue ?? "valid"): \(report.message)")
        }
        // A tampered AppTransaction: its signature's first byte changed.
        let forged = try Self.make()
        let nested = try #require(forged.payload["appData"]?["signedAppTransactionInfo"]?.stringValue)
        let parts = nested.split(separator: ".").map(String.init)
        let signature = try #require(parts.last)
        let tampered = parts.dropLast().joined(separator: ".") + "." + (signature.hasPrefix("A") ? "B" : "A") + signature.dropFirst()
        let report = JWSVerifier(cache: nil).verify(
            try Self.make(set: [("/appData/signedAppTransactionInfo", .string(tampered))]).compact, as: .notification, context: Self.context())
        #expect(report.errorClass == .jwsNested && report.message.contains("signedAppTransactionInfo"), "\(report.message)")
    }

    /// The corpus's RESCIND_CONSENT vectors.
    static let vectorIDs: Set<String> = [
        "jws-valid::notification-rescind-consent", "jws-binding::rescind-consent-other-bundle", "jws-binding::rescind-consent-production-in-sandbox",
        "jws-binding::rescind-consent-app-data-beside-data", "jws-nested::app-transaction-tampered", "jws-nested::app-transaction-foreign-chain",
        "jws-nested::app-transaction-missing",
    ]

    @Test("The corpus's RESCIND_CONSENT vectors: the reference verifier passes each under strict (the two not Apple's shape rejected, with their class) and apple-compatible")
    func corpusVectors() async throws {
        let vectors = Repository.vectors
        let manifest = try ManifestIO.load(from: vectors)
        #expect(Set(manifest.vectors.map(\.id.text)).isSuperset(of: Self.vectorIDs))
        let reference = ModelVerifier(reference: try ReferenceHarness(vectorsDirectory: vectors), features: ReferenceHarness.features.map(\.rawValue).sorted())
        for profile in [ProfileID.strict, ProfileID.appleCompatible] {
            let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: vectors, profile: profile, parallelism: 2)
                .run(reference) { Self.vectorIDs.contains($0.id.text) || $0.canary }
            let ours = results.results.filter { Self.vectorIDs.contains($0.id) }
            #expect(ours.count == Self.vectorIDs.count && results.exitCode == 0, "\(profile): \(results.failureSummary)")
            let expected: Set<String> =
                profile == ProfileID.strict
                ? [] : ["jws-binding::rescind-consent-app-data-beside-data", "jws-nested::app-transaction-missing"]
            #expect(Set(ours.filter { $0.outcome == .acceptable }.map(\.id)) == expected, "\(profile): \(ours.map { "\($0.id) \($0.outcome)" })")
            #expect(ours.allSatisfy { [.pass, .acceptable].contains($0.outcome) }, "\(profile): \(ours.map { "\($0.id) \($0.outcome)" })")
        }
    }
}
