#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ReceiptCorpus
import _ForgeSupport

/// `--validate-protocol`: checks each raw message a harness sends (its `hello` and every reply) against
/// `harness-v1.schema.json`, before decoding, so a harness author sees which key is wrong and why —
/// decoding alone would only say "ERROR" or, worse, quietly accept what the schema forbids.
public struct ProtocolChecker: Sendable {
    private let harnessToRunner: JSONSchemaValidator
    private let runnerToHarness: JSONSchemaValidator

    /// Throws only if the generated schema is broken (a bug here, not in the harness).
    public init() throws {
        harnessToRunner = try ConformanceSchemas.harnessToRunner
        runnerToHarness = try ConformanceSchemas.runnerToHarness
    }

    /// Violations of a message the harness sent; empty when it conforms. Runner messages (`validate`,
    /// `stop`, the runner's `hello`) coming from a harness are violations too.
    public func check(harnessMessage: Data) -> [SchemaViolation] {
        harnessToRunner.violations(harnessMessage)
    }

    /// Violations of a message the runner (or a harness's test double of it) sends.
    public func check(runnerMessage: Data) -> [SchemaViolation] {
        runnerToHarness.violations(runnerMessage)
    }

    /// How many violations one line lists before "… and N more".
    public static let listedViolations = 5

    /// One line for a report: `protocol violation: /verdict: expected one of accept, reject, got "yes"; …`.
    /// Control characters (a hostile key may hold a newline) are shown escaped so it stays one line.
    public static func describe(_ violations: [SchemaViolation]) -> String {
        guard !violations.isEmpty else { return "no protocol violation" }
        var parts = violations.prefix(listedViolations).map(\.description)
        if violations.count > listedViolations { parts.append("… and \(violations.count - listedViolations) more") }
        let line = "protocol violation: " + parts.joined(separator: "; ")
        var result = ""
        for scalar in line.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
