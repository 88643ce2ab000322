import Foundation
import ForgeTestSupport
import Testing

/// `forge validate` and `forge jws validate` say what they checked, what they skipped and why, and the
/// subscription's state, after a first line that stays the verdict; `forge inspect` documents its exit code
/// (issue 21, item 12).
@Suite("Validate report", .timeLimit(.minutes(2)))
struct ValidateReportTests {
    static let made = "2025-01-10T00:00:00Z"
    static let expires = "2025-01-14T00:00:00Z"
    static let at = "2025-01-15T00:00:00Z"

    @Test("A valid receipt of a subscription that expired yesterday: the verdict, then checked, skipped (with the flag) and the subscription's state")
    func receiptSaysWhatItChecked() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receipt = directory.appendingPathComponent("r.der").path
        let made = try await forge("make", "--product", "pro.monthly", "--type", "auto-renewable", "--now", Self.made, "--expires", Self.expires, "-q", "-o", receipt)
        #expect(made.status == 0, "\(made.stderr)")
        let result = try await forge("validate", receipt, "--at", Self.at, "--bundle-id", "com.example.app")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.text.split(separator: "\n").map(String.init)
        #expect(lines.first == "valid", "the first line stays the verdict: \(lines)")
        #expect(lines.contains { $0.hasPrefix("checked: ") && $0.contains("signature") && $0.contains("chain") && $0.contains("bundle id") }, "\(lines)")
        let skipped = try #require(lines.first { $0.hasPrefix("skipped: ") }, "\(lines)")
        #expect(skipped.contains("device hash") && skipped.contains("--device-id") && skipped.contains("app version") && skipped.contains("--app-version"), "\(skipped)")
        #expect(lines.contains("subscription pro.monthly: expired \(Self.expires) (evaluated at \(Self.at))"), "\(lines)")
        // Active the day before it expires.
        let earlier = try await forge("validate", receipt, "--at", "2025-01-12T00:00:00Z")
        #expect(earlier.text.contains("subscription pro.monthly: active, expires \(Self.expires)"), "\(earlier.text)")
        // --json carries the same state.
        let json = try json(try await forge("validate", receipt, "--at", Self.at, "--json"))
        let subscriptions = try #require(json["subscriptions"] as? [[String: Any]])
        #expect(subscriptions.count == 1 && subscriptions.first?["state"] as? String == "expired" && subscriptions.first?["productId"] as? String == "pro.monthly")
    }

    @Test("An invalid receipt: the verdict line first, then the failure")
    func invalidVerdictFirst() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receipt = directory.appendingPathComponent("r.der").path
        #expect(try await forge("make", "--product", "p", "--now", Self.made, "-q", "-o", receipt).status == 0)
        let result = try await forge("validate", receipt, "--bundle-id", "com.other.app", "--at", Self.at)
        #expect(result.status == 1)
        let lines = result.text.split(separator: "\n").map(String.init)
        #expect(lines.first == "invalid (binding.bundle-id)", "\(lines)")
        #expect(lines.dropFirst().first?.hasPrefix("FAIL bundle id:") == true, "\(lines)")
    }

    @Test("jws validate: what was not checked (no --bundle-id, no --environment) and the transaction's subscription state")
    func jwsSaysWhatItSkipped() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("t.jws").path
        #expect(
            try await forge("jws", "make", "transaction", "--product", "pro.monthly", "--type", "auto-renewable", "--now", Self.made, "--expires", Self.expires, "-q", "-o", file)
                .status == 0)
        let result = try await forge("jws", "validate", file, "--at", Self.at)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.text.split(separator: "\n").map(String.init)
        #expect(lines.first == "valid")
        let skipped = try #require(lines.first { $0.hasPrefix("skipped: ") }, "\(lines)")
        #expect(skipped.contains("--bundle-id") && skipped.contains("--environment"), "\(skipped)")
        #expect(lines.contains("subscription pro.monthly: expired \(Self.expires) (evaluated at \(Self.at))"), "\(lines)")
    }

    @Test("jws validate of a REFUND notification: its transaction's subscription is revoked, in the text and in --json (issue 39, item 2)")
    func jwsRevokedSubscription() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("n.jws").path
        let made = try await forge(
            "jws", "make", "notification", "--notification-type", "REFUND", "--product", "pro.monthly", "--type", "auto-renewable", "--now", Self.made, "-q", "-o", file)
        #expect(made.status == 0, "\(made.stderr)")
        let result = try await forge("jws", "validate", file, "--at", Self.at)
        let line = try #require(result.text.split(separator: "\n").map(String.init).first { $0.hasPrefix("subscription pro.monthly: ") }, "\(result.text)")
        #expect(line.hasPrefix("subscription pro.monthly: revoked ") && line.hasSuffix("; evaluated at \(Self.at))"), "\(line)")
        let subscriptions = try #require(try json(try await forge("jws", "validate", file, "--at", Self.at, "--json"))["subscriptions"] as? [[String: Any]])
        #expect(subscriptions.count == 1 && subscriptions.first?["state"] as? String == "revoked" && subscriptions.first?["revocationDate"] is String)
    }

    @Test("A step both validators run has one name (issue 39, item 7): a wrong bundle id fails `bundle id` for a receipt and a JWS alike")
    func oneCheckNameForBothArtefacts() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receipt = directory.appendingPathComponent("r.der").path
        let jws = directory.appendingPathComponent("t.jws").path
        #expect(try await forge("make", "--product", "p", "--now", Self.made, "-q", "-o", receipt).status == 0)
        #expect(try await forge("jws", "make", "transaction", "--product", "p", "--now", Self.made, "-q", "-o", jws).status == 0)
        for command in [["validate", receipt], ["jws", "validate", jws]] {
            let result = try await forge(arguments: command + ["--bundle-id", "com.other.app", "--at", Self.at])
            #expect(result.status == 1, "\(command): \(result.stderr)")
            let lines = result.text.split(separator: "\n").map(String.init)
            #expect(lines.dropFirst().first?.hasPrefix("FAIL bundle id:") == true, "\(command): \(lines)")
            let checks = try #require(try json(try await forge(arguments: command + ["--bundle-id", "com.other.app", "--at", Self.at, "--json"]))["checks"] as? [[String: Any]])
            #expect(checks.contains { $0["name"] as? String == "bundle id" && $0["status"] as? String == "failed" }, "\(command): \(checks)")
        }
    }

    @Test("inspect with failing checks exits 0 (a viewer) and shows the verdict; its --help says so")
    func inspectExitCodeDocumented() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receipt = directory.appendingPathComponent("r.der").path
        #expect(try await forge("make", "--product", "p", "--now", Self.made, "-q", "-o", receipt).status == 0)
        let result = try await forge("inspect", receipt, "--bundle-id", "com.other.app")
        #expect(result.status == 0 && result.text.contains("verdict: invalid (binding.bundle-id)"), "\(result.status) \(result.text)")
        let help = try await forge("inspect", "--help").text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("exits 0 whenever the input decodes, whatever its checks say"), "\(help)")
    }
}
