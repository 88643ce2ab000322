import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

@Suite("forge make, through the binary, checked by openssl", .timeLimit(.minutes(2)))
struct MakeTests {
    @Test("The README's first command works from any directory, and openssl verifies the result", .requires(.openssl))
    func readmeCommand() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await forge("make", "--product", "com.example.pro", "--expired", "-o", "receipt.der", in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("seed") && result.stderr.contains("now "))
        let file = directory.appendingPathComponent("receipt.der").path
        let verify = try await openssl([
            "cms", "-verify", "-binary", "-inform", "DER", "-in", file, "-CAfile", certificate("root.pem"),
            "-purpose", "any", "-out", directory.appendingPathComponent("payload.bin").path,
        ])
        #expect(verify.status == 0, "\(verify.stderr)")
        let validate = try await forge("validate", file, "--bundle-id", "com.example.app", "--json")
        #expect(validate.status == 0, "\(validate.text)")
        let report = try json(validate)
        #expect(report["verdict"] as? String == "valid")
        let decoded = try #require(report["decoded"] as? [String: Any])
        let inApp = try #require(decoded["in_app"] as? [[String: Any]])
        #expect(inApp.first?["product_id"] as? String == "com.example.pro")
        let expires = try #require(Double(inApp.first?["expires_date_ms"] as? String ?? ""))
        #expect(expires < Date().timeIntervalSince1970 * 1000)
    }

    @Test(
        "Every preset passes openssl cms -verify with its anchor, parses with asn1parse, and fails after a one-byte tamper",
        .requires(.openssl), arguments: ["appstore", "appstore-sha1", "sandbox", "xcode-2020", "xcode-2023"])
    func opensslOracle(preset: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("r.der")
        let made = try await forge(
            "make", "--preset", preset, "--product", "com.example.pro", "--renewals", "2", "--now", "2025-03-01T10:00:00Z",
            "--seed", "1", "-q", "-o", file.path)
        #expect(made.status == 0, "\(made.stderr)")
        let anchor = certificate(preset.hasPrefix("xcode") ? "storekit.pem" : "root.pem")
        let payload = directory.appendingPathComponent("payload.bin")
        let verify = try await openssl([
            "cms", "-verify", "-binary", "-inform", "DER", "-in", file.path, "-CAfile", anchor, "-purpose", "any",
            "-out", payload.path,
        ])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(try await openssl(["asn1parse", "-inform", "DER", "-in", file.path]).status == 0)
        // The signed content OpenSSL extracted is a SET OF ReceiptAttribute.
        #expect(try Data(contentsOf: payload).first == 0x31)

        var bytes = try [UInt8](Data(contentsOf: file))
        let inspect = try json(try await forge("inspect", file.path, "--json"))
        let container = try #require(inspect["container"] as? [String: Any])
        #expect(container["certificateOrder"] as? String == (preset.hasPrefix("xcode") ? "single" : "leaf-first"))
        // Flip one byte inside the product id, which sits in the signed payload.
        let index = try #require(findSubsequence(Array("com.example.pro".utf8), in: bytes))
        bytes[index] ^= 0x20
        let tampered = directory.appendingPathComponent("tampered.der")
        try Data(bytes).write(to: tampered)
        let rejected = try await openssl([
            "cms", "-verify", "-binary", "-inform", "DER", "-in", tampered.path, "-CAfile", anchor,
            "-purpose", "any", "-out", directory.appendingPathComponent("tampered-payload.bin").path,
        ])
        #expect(rejected.status != 0)
        let validate = try await forge("validate", tampered.path, "--root", anchor)
        #expect(validate.status == 1)
        #expect(validate.text.contains("signature.invalid"))
    }

    @Test("Same arguments with --seed and --now give identical bytes; formats agree")
    func determinismAndFormats() async throws {
        let arguments = [
            "make", "--product", "a", "--product", "b", "--type", "auto-renewable", "--renewals", "3", "--trial",
            "--now", "2025-05-05T05:05:05Z", "--seed", "99", "-q",
        ]
        let first = try await forge(arguments: arguments + ["--format", "base64"])
        let second = try await forge(arguments: arguments + ["--format", "base64"])
        #expect(first.status == 0 && first.stdout == second.stdout)
        let der = try #require(Data(base64Encoded: first.text.trimmingCharacters(in: .whitespacesAndNewlines)))
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("r.der")
        #expect(try await forge(arguments: arguments + ["-o", file.path]).status == 0)
        #expect(try Data(contentsOf: file) == der)

        let response = try json(try await forge(arguments: arguments + ["--format", "json"]))
        #expect(response["status"] as? Int == 0)
        #expect(response["environment"] as? String == "Production")
        let receipt = try #require(response["receipt"] as? [String: Any])
        #expect(receipt["receipt_creation_date"] as? String == "2025-05-05 05:05:05 Etc/GMT")
        #expect(receipt["receipt_creation_date_ms"] as? String == "1746421505000")
        #expect(receipt["receipt_creation_date_pst"] as? String == "2025-05-04 22:05:05 America/Los_Angeles")
        #expect(receipt["adam_id"] is Int)
        let inApp = try #require(receipt["in_app"] as? [[String: Any]])
        #expect(inApp.count == 8)
        #expect(inApp.allSatisfy { $0["quantity"] as? String == "1" })
        #expect(inApp.filter { $0["is_trial_period"] as? String == "true" }.count == 2)
        #expect((response["latest_receipt_info"] as? [Any])?.count == 8)
        #expect((response["pending_renewal_info"] as? [Any])?.count == 2)
        #expect(response["latest_receipt"] as? String == der.base64EncodedString())
    }

    @Test("A spec file drives make; flags override it; its errors name the key")
    func specFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = directory.appendingPathComponent("scenario.json")
        try Data(#"{"preset":"sandbox","bundleId":"com.spec.app","now":"2024-01-01T00:00:00Z","purchases":[{"productId":"coins","type":"consumable","quantity":5}]}"#.utf8).write(
            to: spec)
        let made = try json(try await forge("make", "--spec", spec.path, "--app-version", "9", "--format", "json", "-q"))
        let receipt = try #require(made["receipt"] as? [String: Any])
        #expect(receipt["bundle_id"] as? String == "com.spec.app")
        #expect(receipt["application_version"] as? String == "9")
        #expect(receipt["receipt_type"] as? String == "ProductionSandbox")
        #expect((receipt["in_app"] as? [[String: Any]])?.first?["quantity"] as? String == "5")
        try Data(#"{"purchases":[{"productId":"x","type":"consumable","expired":true}]}"#.utf8).write(to: spec)
        let conflict = try await forge("make", "--spec", spec.path, "--format", "base64")
        #expect(conflict.status == 65, "the spec's data: \(conflict.stderr)")
        #expect(conflict.stderr.contains("'purchases[0].expired' conflicts with 'purchases[0].type' consumable"))
    }

    @Test("examples/scenario.json makes a receipt valid for its bundle id, version and device")
    func exampleScenario() async throws {
        let response = try json(
            try await forge(
                "make", "--spec", Repository.file("examples/scenario.json").path,
                "--format", "json", "-q"))
        let inApp = try #require((response["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])
        #expect(inApp.count == 5)
        let made = try await forge("make", "--spec", Repository.file("examples/scenario.json").path, "--format", "base64", "-q")
        let validated = try await forge(
            "validate", "-", "--bundle-id", "com.example.app", "--app-version", "2.4",
            "--device-id", "956328D9-CC6A-47F4-BE40-6953FB0AB6C7", stdin: made.stdout)
        #expect(validated.status == 0, "\(validated.text)")
    }

    @Test(
        "Contradictory flags exit 64 naming both flags, and leave no output file",
        arguments: [
            (["--expired", "--expires", "2025-01-01T00:00:00Z"], "--expired conflicts with --expires"),
            (["--type", "consumable", "--expired"], "--expired conflicts with --type consumable"),
            (["--trial", "--intro"], "--trial conflicts with --intro"),
            (["--cancelled=sometimes"], "--cancelled takes other (0) or app-issue (1)"),
            (["--device-id", "not-a-device"], "--device-id 'not-a-device'"),
            (["--now", "tomorrow"], "--now 'tomorrow'"),
        ])
    func conflicts(flags: [String], message: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("out.der")
        let result = try await forge(arguments: ["make", "--product", "p"] + flags + ["-o", file.path])
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("--cancelled with and without a reason")
    func cancelled() async throws {
        for (flag, reason) in [("--cancelled", "0"), ("--cancelled=app-issue", "1")] {
            let response = try json(try await forge("make", "--product", "p", "--renewals", "1", flag, "--format", "json", "-q"))
            let inApp = try #require((response["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])
            #expect(inApp.compactMap { $0["cancellation_reason"] as? String } == [reason])
        }
    }

    @Test("At a terminal, make writes base64 instead of binary, and says so", .requires(.script))
    func terminal() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // script(1) gives the command a pseudo-terminal as stdout; its typescript goes to the test's own folder.
        let result = try await run(
            try Oracle.script.required(),
            ["-qec", "\(Binaries.forge.path) make --product com.example.pro --expired", directory.appendingPathComponent("typescript").path])
        #expect(result.status == 0, "\(result.text)")
        #expect(result.text.contains("writing base64"))
        let base64 = try #require(result.text.split(whereSeparator: \.isNewline).map(String.init).first { $0.hasPrefix("MII") })
        #expect(Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines))?.first == 0x30)
    }

    @Test("An unwritable output path exits 73 and leaves nothing behind")
    func unwritable() async throws {
        let result = try await forge("make", "--product", "p", "-o", "/nonexistent-dir/receipt.der")
        #expect(result.status == 73)
        #expect(result.stderr.contains("cannot write"))
    }

    @Test("--help teaches: examples and exit codes")
    func help() async throws {
        let make = try await forge("make", "--help")
        #expect(make.text.contains("forge make --product com.example.pro --expired -o expired.der"))
        #expect(make.text.contains("--cancelled"))
        let top = try await forge("--help")
        #expect(top.text.contains("65 unreadable input"))
    }
}

func findSubsequence(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard needle.count <= haystack.count else { return nil }
    for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
    return nil
}
