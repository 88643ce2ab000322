import AppStoreVocabulary
import Foundation
import ForgeTestSupport
import StoreForge
import StoreModel
import Testing
import _ForgeSupport

/// Issue 40, item 5: Apple keeps adding fields and enum values; forge must know each one its own library decodes.
/// `scripts/apple-models.py` reads the pinned app-store-server-library (every member of the decoded payloads, every
/// value of their enums); what forge does not know is listed. `Fixtures/apple-model-drift.txt` holds the drift
/// known today, each line a piece of work: the test fails on a line that appears (Apple's next change, seen at the
/// next bump of the pin) and on one that is no longer drift (done: delete the line).
@Suite("Apple's models against forge's: fields and enum values", .timeLimit(.minutes(2)))
struct AppleModelDriftTests {
    /// Apple's decoded payload models, and where each sits in forge's schema (``PayloadSchema``).
    static let payloads: [(model: String, kind: JWSKind, path: [String])] = [
        ("JWSTransactionDecodedPayload", .transaction, []), ("JWSRenewalInfoDecodedPayload", .renewal, []), ("AppTransaction", .appTransaction, []),
        ("DecodedRealtimeRequestBody", .realtime, []), ("ResponseBodyV2DecodedPayload", .notification, []), ("Data", .notification, ["data"]),
        ("Summary", .notification, ["summary"]), ("ExternalPurchaseToken", .notification, ["externalPurchaseToken"]),
        ("AppData", .notification, ["appData"]), ("TransactionCommitmentInfo", .transaction, ["commitmentInfo"]),
        ("RenewalCommitmentInfo", .renewal, ["commitmentInfo"]),
    ]

    /// The enums of those payloads' members, and the values forge names with a type (nil: forge has no type yet).
    static let enums: [(apple: String, forge: [String]?)] = [
        ("NotificationTypeV2", NotificationType.allCases.map(\.rawValue)), ("Subtype", NotificationSubtype.allCases.map(\.rawValue)),
        ("Environment", Environment.allCases.map(\.rawValue)), ("InAppOwnershipType", OwnershipType.allCases.map(\.rawValue)),
        ("ExpirationIntent", ExpirationIntent.allCases.map { String($0.rawValue) }),
        ("PriceIncreaseStatus", PriceConsentStatus.allCases.map { String($0.rawValue) }), ("Status", SubscriptionStatus.allCases.map { String($0.rawValue) }),
        ("Type", ProductType.allCases.map(\.transactionType)), ("OfferType", OfferType.allCases.map { String($0.rawValue) }),
        ("OfferDiscountType", OfferDiscountType.allCases.map(\.rawValue)), ("RevocationReason", RevocationReason.allCases.map { String($0.rawValue) }),
        ("RevocationType", RevocationType.allCases.map(\.rawValue)), ("TransactionReason", TransactionReason.allCases.map(\.rawValue)),
        ("AutoRenewStatus", AutoRenewStatus.allCases.map { String($0.rawValue) }), ("BillingPlanType", BillingPlanType.allCases.map(\.rawValue)),
        ("RenewalBillingPlanType", RenewalBillingPlanType.allCases.map(\.rawValue)),
        ("ConsumptionRequestReason", ConsumptionRequestReason.allCases.map(\.rawValue)), ("PurchasePlatform", PurchasePlatform.allCases.map(\.rawValue)),
    ]

    static let baseline = Repository.file("Tests/StoreForgeTests/Fixtures/apple-model-drift.txt")

    /// Members Apple's changelog documents before its libraries model them (apple-2026-facts.md §1), so the drift
    /// check cannot find them: `--set` must take them without `--allow-unknown-keys`.
    static let documentedAhead: [(kind: JWSKind, pointer: String)] = [
        (.transaction, "/previousOriginalTransactionId"), (.notification, "/externalPurchaseToken/tokenType"),
        (.notification, "/externalPurchaseToken/tokenExpirationDate"),
    ]

    @Test("Members Apple documents ahead of its libraries are in forge's schema", arguments: documentedAhead.map { "\($0.kind.rawValue) \($0.pointer)" })
    func documentedAheadOfTheLibraries(_ entry: String) throws {
        let (kind, pointer) = try #require(Self.documentedAhead.first { "\($0.kind.rawValue) \($0.pointer)" == entry })
        #expect(throws: Never.self) { try PayloadSchema.check(pointer, in: kind, allowUnknownKeys: false) }
    }

    @Test("Every field and enum value of Apple's decoded payloads is known to forge, or listed as known drift", .requires(.appleLibrary))
    func drift() async throws {
        let python = try Oracle.appleLibrary.required()
        let dump = try await run(python, [Repository.file("scripts/apple-models.py").path])
        try #require(dump.status == 0, "\(dump.stderr)")
        let apple = try JSONValue(parsing: dump.stdout)
        let found = try Self.drift(apple)
        let known = Set(
            try String(contentsOf: Self.baseline, encoding: .utf8).split(separator: "\n").map(String.init).filter { !$0.isEmpty && !$0.hasPrefix("#") })
        let version = apple["version"]?.stringValue ?? "?"
        for line in found.subtracting(known).sorted() { Issue.record("app-store-server-library \(version): new drift: \(line)") }
        for line in known.subtracting(found).sorted() { Issue.record("no longer drift (delete its line from apple-model-drift.txt): \(line)") }
    }

    @Test("A field or enum value Apple adds is a line of drift; a model or enum Apple drops is an error")
    func driftListsWhatForgeDoesNotKnow() throws {
        var models: JSONObject = JSONObject(Self.payloads.map { ($0.model, JSONValue.array([])) })
        models["JWSTransactionDecodedPayload"] = .array([.string("transactionId"), .string("commitmentRenewalHint")])
        var values: JSONObject = JSONObject(Self.enums.map { ($0.apple, JSONValue.array([])) })
        values["NotificationTypeV2"] = .array([.string("DID_RENEW"), .string("RETENTION_OFFER_ACCEPTED")])
        let apple = JSONValue.object([("models", .object(models)), ("enums", .object(values))])
        let lines = try Self.drift(apple)
        #expect(lines.contains("JWSTransactionDecodedPayload.commitmentRenewalHint: a member forge's schema does not have"))
        #expect(lines.contains("NotificationTypeV2.RETENTION_OFFER_ACCEPTED: a value forge does not name"))
        #expect(!lines.contains { $0.hasPrefix("JWSTransactionDecodedPayload.transactionId") || $0.hasPrefix("NotificationTypeV2.DID_RENEW") })
        models["Summary"] = nil
        #expect(throws: Missing.self) { try Self.drift(.object([("models", .object(models)), ("enums", .object(values))])) }
    }

    /// One line per field or value of Apple's that forge does not know.
    static func drift(_ apple: JSONValue) throws -> Set<String> {
        var lines = Set<String>()
        for (model, kind, path) in payloads {
            guard let fields = apple["models"]?[model]?.arrayValue?.compactMap(\.stringValue) else { throw Missing(what: "model \(model)") }
            guard let known = PayloadSchema.members(of: kind, at: path) else {
                lines.insert("\(model): not in forge's schema (\(fields.joined(separator: ", ")))")
                continue
            }
            for field in fields where !known.contains(field) { lines.insert("\(model).\(field): a member forge's schema does not have") }
        }
        for (name, forge) in enums {
            guard let values = apple["enums"]?[name]?.arrayValue?.compactMap(\.stringValue) else { throw Missing(what: "enum \(name)") }
            guard let forge else {
                lines.insert("\(name): forge has no type for it (\(values.joined(separator: ", ")))")
                continue
            }
            for value in values where !forge.contains(value) { lines.insert("\(name).\(value): a value forge does not name") }
        }
        return lines
    }

    /// Apple's library no longer has a model or enum the check reads: renamed or gone, a drift of its own.
    struct Missing: Error, CustomStringConvertible {
        let what: String
        var description: String { "Apple's library has no \(what)" }
    }
}
