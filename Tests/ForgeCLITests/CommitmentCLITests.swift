import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport

/// Issue 40, item 3: `examples/commitment.json`, a yearly subscription billed MONTHLY over a 12-month commitment,
/// forged as a transaction, renewal info and a DID_RENEW notification, and decoded by Apple's Python library into
/// its own models (`TransactionCommitmentInfo`, `RenewalCommitmentInfo`, `BillingPlanType`, `RenewalBillingPlanType`).
@Suite("Monthly billing with a 12-month commitment: Apple's library decodes it", .timeLimit(.minutes(2)))
struct CommitmentCLITests {
    static let example = Repository.file("examples/commitment.json").path

    /// Verifies the three JWS with `SignedDataVerifier` (Sandbox, online checks off) and prints the commitment
    /// members as Apple's models hold them: each value with its Python type's name.
    static let decode = """
        import json, sys
        from appstoreserverlibrary.models.Environment import Environment
        from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
        from cryptography import x509
        from cryptography.hazmat.primitives.serialization import Encoding
        root = x509.load_pem_x509_certificate(open(sys.argv[1], "rb").read()).public_bytes(Encoding.DER)
        verifier = SignedDataVerifier([root], False, Environment.SANDBOX, "com.example.app", None)
        read = lambda path: open(path).read().strip()
        def typed(model, names):
            return {name: [getattr(model, name), type(getattr(model, name)).__name__] for name in names}
        transaction = verifier.verify_and_decode_signed_transaction(read(sys.argv[2]))
        renewal = verifier.verify_and_decode_renewal_info(read(sys.argv[3]))
        notification = verifier.verify_and_decode_notification(read(sys.argv[4]))
        nested = verifier.verify_and_decode_signed_transaction(notification.data.signedTransactionInfo)
        print(json.dumps({
            "transaction": typed(transaction, ["billingPlanType", "commitmentInfo"]),
            "commitment": typed(transaction.commitmentInfo, ["billingPeriodNumber", "commitmentExpiresDate", "commitmentPrice", "totalBillingPeriods"]),
            "renewal": typed(renewal, ["renewalBillingPlanType", "commitmentInfo"]),
            "renewalCommitment": typed(renewal.commitmentInfo, ["commitmentAutoRenewProductId", "commitmentAutoRenewStatus",
                "commitmentRenewalBillingPlanType", "commitmentRenewalDate", "commitmentRenewalPrice"]),
            "notification": typed(nested.commitmentInfo, ["billingPeriodNumber"]),
        }, default=str))
        """

    @Test("Apple's SignedDataVerifier decodes the commitment of a forged transaction, renewal info and notification into its models", .requires(.appleLibrary))
    func appleDecodes() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var paths: [String] = []
        for (kind, extra) in [("transaction", []), ("renewal", []), ("notification", ["--notification-type", "DID_RENEW"])] {
            let path = directory.appendingPathComponent("\(kind).jws").path
            let made = try await forge(arguments: ["jws", "make", kind, "--spec", Self.example, "--environment", "Sandbox", "-q", "-o", path] + extra)
            try #require(made.status == 0, "\(kind): \(made.stderr)")
            paths.append(path)
        }
        let result = try await run(try Oracle.appleLibrary.required(), ["-c", Self.decode, JWSCLITests.root] + paths)
        try #require(result.status == 0, "\(result.stderr)")
        let decoded = try json(result)
        func field(_ model: String, _ name: String) -> [String]? {
            ((decoded[model] as? [String: Any])?[name] as? [Any])?.map { "\($0)" }
        }
        #expect(field("transaction", "billingPlanType") == ["MONTHLY", "BillingPlanType"])
        #expect(field("transaction", "commitmentInfo")?.last == "TransactionCommitmentInfo")
        // The 14th monthly period: the second of the commitment's renewal, which ends 2027-01-31T10:00:00Z.
        #expect(field("commitment", "billingPeriodNumber") == ["2", "int"] && field("commitment", "totalBillingPeriods") == ["12", "int"])
        #expect(field("commitment", "commitmentExpiresDate") == ["1801389600000", "int"] && field("commitment", "commitmentPrice") == ["119880", "int"])
        #expect(field("renewal", "renewalBillingPlanType") == ["MONTHLY", "RenewalBillingPlanType"])
        #expect(field("renewal", "commitmentInfo")?.last == "RenewalCommitmentInfo")
        #expect(field("renewalCommitment", "commitmentAutoRenewProductId") == ["com.example.pro.yearly", "str"])
        #expect(field("renewalCommitment", "commitmentAutoRenewStatus") == ["1", "AutoRenewStatus"])
        #expect(field("renewalCommitment", "commitmentRenewalBillingPlanType") == ["MONTHLY", "RenewalBillingPlanType"])
        #expect(field("renewalCommitment", "commitmentRenewalDate") == ["1801389600000", "int"])
        #expect(field("renewalCommitment", "commitmentRenewalPrice") == ["119880", "int"])
        #expect(field("notification", "billingPeriodNumber") == ["2", "int"])
    }

    @Test("--billing-plan MONTHLY makes the commitment from flags; on a monthly period it exits 64 naming --billing-plan and --period; a miscased value exits 64 listing Apple's")
    func flag() async throws {
        let base = ["jws", "make", "transaction", "--product", "pro.yearly", "--now", "2026-03-15T00:00:00Z", "-q", "--format", "json"]
        let made = try await forge(arguments: base + ["--billing-plan", "MONTHLY", "--renewals", "13", "--purchase-date", "2025-01-31T10:00:00Z"])
        try #require(made.status == 0, "\(made.stderr)")
        let payload = try #require(try json(made)["payload"] as? [String: Any])
        #expect(payload["billingPlanType"] as? String == "MONTHLY")
        #expect((payload["commitmentInfo"] as? [String: Any])?["billingPeriodNumber"] as? Int == 2)
        let monthly = try await forge(arguments: base + ["--billing-plan", "MONTHLY", "--period", "P1M"])
        #expect(monthly.status == 64 && monthly.stderr.contains("--billing-plan MONTHLY") && monthly.stderr.contains("--period must be P1Y"), "\(monthly.stderr)")
        let miscased = try await forge(arguments: base + ["--billing-plan", "monthly"])
        #expect(miscased.status == 64 && miscased.stderr.contains("BILLED_UPFRONT") && miscased.stderr.contains("MONTHLY"), "\(miscased.stderr)")
    }
}
