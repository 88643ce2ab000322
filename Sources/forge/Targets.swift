import Foundation
import ReceiptConformance
import ReceiptConformanceHTTP
import ReceiptCorpus
import ReceiptValidation

/// How a `--target` URI becomes a validator: shared by `forge run` and `forge bench runner`.
struct TargetSettings {
    var timeout: Double?
    /// Features credited to targets without a hello of their own (exec, exit, mappings).
    var features: [String]
    var granularity: HarnessHello.Granularity
    var httpHeaders: [(String, String)]
    var sharedSecret: String?
    var connections: Int
    var checker: ProtocolViolationCheck?
    var mapping: ResponseMapping?
    /// `--http-ca`: the PEM roots an https:// target must chain to.
    var httpTrustRoots: String? = nil

    /// Builds the validator `target` names, runs `body` with it, and releases it (processes, connections) after.
    func withValidator<T>(_ target: Target, manifest: Manifest, directory: URL, _ body: (any ReceiptValidator) async throws -> T) async throws -> T {
        let limit = Duration.milliseconds(Int64((timeout ?? target.defaultTimeout) * 1000))
        switch target.kind {
        case .swift:
            guard target.address == "reference" else { throw fail("--target \(target): the only in-process validator is swift:reference", Exit.usage) }
            return try await body(try ReferenceHarness(vectorsDirectory: directory))
        case .stdio:
            let validator = StdioValidator(command: target.command, suite: manifest.suite.version, timeout: limit, checker: checker)
            return try await Self.run(body, with: validator) {
                await validator.stop()
                for line in await validator.strayLines() { note("protocol violation by \(target.command.joined(separator: " ")): \(line)") }
            }
        case .http:
            let validator = HTTPValidator(
                url: target.address, mode: mapping.map { .mapping($0) } ?? .protocol, timeout: limit, headers: httpHeaders,
                features: features, password: sharedSecret, connections: connections, checker: checker,
                trustRoots: httpTrustRoots)
            return try await Self.run(body, with: validator) { await validator.shutdown() }
        case .exec, .exit:
            let anchors = manifest.trustAnchors.mapValues { directory.appendingPathComponent($0.file).path }
            let validator = ExecValidator(
                command: target.command, mode: target.kind == .exec ? .protocol : .exitCode, timeout: limit,
                features: features, granularity: granularity, anchorFiles: anchors, checker: checker)
            return try await body(validator)
        }
    }

    /// Runs `body` with `validator`, then `release`s it (ends its process, closes its connections) however `body` ended.
    private static func run<T>(
        _ body: (any ReceiptValidator) async throws -> T, with validator: some ReceiptValidator,
        release: () async -> Void
    ) async throws -> T {
        do {
            let outcome = try await body(validator)
            await release()
            return outcome
        } catch {
            await release()
            throw error
        }
    }

    /// `Name: value` → (name, value).
    static func header(_ text: String) -> (String, String) {
        let name = text.prefix { $0 != ":" }
        return (String(name).trimmingCharacters(in: .whitespaces), String(text.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces))
    }

    /// `verifyreceipt` or a mapping file.
    static func loadMapping(_ name: String) throws -> ResponseMapping {
        if name == "verifyreceipt" { return .verifyReceipt }
        let data = Data(try readInput(name).bytes)
        do { return try ResponseMapping.load(data) } catch { throw fail("\(name): \(error.message)", Exit.dataError) }
    }
}
