import Foundation
import ForgeTestSupport
import Testing

/// `forge validate`, `forge inspect` and `forge jws validate` share one option group (`CheckOptions`) and one
/// error → exit code mapping: the same mistake exits alike in every check command.
@Suite("Check commands: shared options and exit codes", .timeLimit(.minutes(2)))
struct CheckOptionsTests {
    static let vectors = Repository.vectors
    /// A sandbox receipt (attribute 0 `ProductionSandbox`), valid at its vector's pinned time.
    static let sandboxReceipt = vectors.appendingPathComponent("binding/sandbox-in-production.der").path
    static let receiptTime = "2025-06-15T12:00:00Z"
    static let environments = ["Production", "Sandbox", "Xcode", "LocalTesting", "ProductionSandbox", "ProductionVPP", "ProductionVPPSandbox"]

    /// A Sandbox transaction JWS in `directory`.
    static func sandboxJWS(_ directory: URL) async throws -> String {
        let path = directory.appendingPathComponent("sandbox.jws").path
        let made = try await forge("jws", "make", "transaction", "--product", "p", "--preset", "sandbox", "--now", "2025-01-01T00:00:00Z", "-q", "-o", path)
        #expect(made.status == 0, "\(made.stderr)")
        return path
    }

    @Test("--environment is an enum: an unknown or miscased value exits 64 and lists Apple's values, in validate, inspect and jws validate")
    func environmentIsTyped() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let jws = try await Self.sandboxJWS(directory)
        for wrong in ["sandbox", "SANDBOX", "production", "Banana"] {
            for arguments in [
                ["validate", Self.sandboxReceipt, "--environment", wrong], ["inspect", Self.sandboxReceipt, "--environment", wrong],
                ["jws", "validate", jws, "--environment", wrong],
            ] {
                let result = try await forge(arguments: arguments)
                #expect(result.status == 64, "\(arguments.joined(separator: " ")): exit \(result.status), \(result.stderr)")
                for value in Self.environments { #expect(result.stderr.contains(value), "\(arguments.joined(separator: " ")): \(result.stderr) lacks \(value)") }
            }
        }
    }

    @Test("--help of validate, inspect and jws validate lists the environments")
    func helpListsEnvironments() async throws {
        for command in [["validate"], ["inspect"], ["jws", "validate"]] {
            let help = try await forge(arguments: command + ["--help"])
            #expect(help.status == 0)
            let flattened = help.text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(flattened.contains("values: Production, Sandbox, Xcode, LocalTesting, ProductionSandbox"), "\(command): \(help.text)")
        }
    }

    @Test("A receipt is judged by the environment its type names: Sandbox and ProductionSandbox accept a sandbox receipt, Production refuses it")
    func receiptEnvironmentByType() async throws {
        func validate(_ environment: String) async throws -> (Int32, String) {
            let result = try await forge("validate", Self.sandboxReceipt, "--at", Self.receiptTime, "--environment", environment, "--json")
            return (result.status, (try json(result))["errorClass"] as? String ?? "")
        }
        #expect(try await validate("Sandbox") == (0, ""))
        #expect(try await validate("ProductionSandbox") == (0, ""))
        #expect(try await validate("Production") == (1, "binding.environment"))
        #expect(try await validate("Xcode") == (1, "binding.environment"))
    }

    @Test(
        "validate and jws validate exit alike for the same kind of failure: missing file 66, directory 66, bad option 64, bad date 64, unreadable input 65, unreadable root 65, invalid 1, valid 0"
    )
    func sameFailureSameExit() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let jws = try await Self.sandboxJWS(directory)
        let garbage = directory.appendingPathComponent("garbage").path
        try Data("not a receipt, not a JWS".utf8).write(to: URL(fileURLWithPath: garbage))
        let missing = directory.appendingPathComponent("absent").path
        let notACertificate = garbage
        // (what, receipt arguments, JWS arguments, expected exit)
        let cases: [(String, [String], [String], Int32)] = [
            ("valid", [Self.sandboxReceipt, "--at", Self.receiptTime, "--environment", "Sandbox"], [jws, "--environment", "Sandbox"], 0),
            ("invalid", [Self.sandboxReceipt, "--at", Self.receiptTime, "--environment", "Production"], [jws, "--environment", "Production"], 1),
            ("missing file", [missing], [missing], 66),
            ("directory", [directory.path], [directory.path], 66),
            ("miscased environment", [Self.sandboxReceipt, "--environment", "sandbox"], [jws, "--environment", "sandbox"], 64),
            ("bad --at", [Self.sandboxReceipt, "--at", "yesterday"], [jws, "--at", "yesterday"], 64),
            ("unknown option", [Self.sandboxReceipt, "--no-such-option"], [jws, "--no-such-option"], 64),
            ("unreadable input", [garbage], [garbage], 65),
            ("unreadable --root", [Self.sandboxReceipt, "--root", notACertificate], [jws, "--root", notACertificate], 65),
        ]
        for (what, receiptArguments, jwsArguments, expected) in cases {
            let receipt = try await forge(arguments: ["validate"] + receiptArguments)
            let signed = try await forge(arguments: ["jws", "validate"] + jwsArguments)
            #expect(receipt.status == expected, "validate, \(what): exit \(receipt.status), \(receipt.stderr)")
            #expect(signed.status == expected, "jws validate, \(what): exit \(signed.status), \(signed.stderr)")
        }
    }
}
