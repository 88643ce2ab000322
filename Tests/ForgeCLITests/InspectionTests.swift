import Foundation
import ForgeTestSupport
import Testing

/// `inspect` and `validate --json` of both artefacts go through one inspection: `validate --json` is what
/// `inspect --json` says of the artefact, plus the checks and the verdict, for receipts and JWS alike.
@Suite("One inspection for receipts and JWS", .timeLimit(.minutes(2)))
struct InspectionTests {
    static let now = "2025-01-01T00:00:00Z"

    /// Every member `inspect --json` prints is in `validate --json`, with the same value; then the checks and verdict.
    static func expectValidateExtendsInspect(_ inspected: [String: Any], _ validated: [String: Any], _ artefact: String) {
        for (key, value) in inspected {
            #expect(validated[key].map { NSDictionary(dictionary: [key: $0]).isEqual(to: [key: value]) } == true, "\(artefact): validate --json lacks or differs in '\(key)'")
        }
        #expect(validated["checks"] is [Any], "\(artefact): no checks")
        for key in ["verdict", "errorClass", "message"] { #expect(validated.keys.contains(key), "\(artefact): no \(key)") }
    }

    @Test("validate --json of a receipt and of a JWS is the inspection of the artefact plus checks and verdict")
    func validateIsInspectionPlusChecks() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let receipt = directory.appendingPathComponent("receipt.der").path
        let madeReceipt = try await forge("make", "--product", "pro.monthly", "--now", Self.now, "-q", "-o", receipt)
        #expect(madeReceipt.status == 0, "\(madeReceipt.stderr)")
        Self.expectValidateExtendsInspect(
            try json(try await forge("inspect", receipt, "--json")), try json(try await forge("validate", receipt, "--json", "--at", Self.now)), "receipt")

        let jws = directory.appendingPathComponent("transaction.jws").path
        let madeJWS = try await forge("jws", "make", "transaction", "--product", "pro.monthly", "--now", Self.now, "-q", "-o", jws)
        #expect(madeJWS.status == 0, "\(madeJWS.stderr)")
        Self.expectValidateExtendsInspect(try json(try await forge("jws", "inspect", jws, "--json")), try json(try await forge("jws", "validate", jws, "--json")), "JWS")
    }

    @Test("Text: inspect of a receipt and of a JWS keeps its first lines; a JWS that is not one exits 65 with one message")
    func textUnchanged() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let jws = directory.appendingPathComponent("transaction.jws").path
        #expect(try await forge("jws", "make", "transaction", "--product", "pro.monthly", "--now", Self.now, "-q", "-o", jws).status == 0)
        let text = try await forge("jws", "inspect", jws).text
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "kind: transaction")
        #expect(lines.dropFirst().first?.hasPrefix("header: {") == true)
        #expect(lines.contains { $0.hasPrefix("x5c[0]: ") } && lines.contains { $0.hasPrefix("payload: {") })
        #expect(!text.contains("checks:"))
        let garbage = try await forge("jws", "inspect", "-", stdin: Data("not.a.jws".utf8))
        #expect(garbage.status == 65)
        #expect(garbage.stderr.contains("not a compact JWS"))
    }
}
