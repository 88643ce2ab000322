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

    /// Builds the validator `uri` names, runs `body` with it, and releases it (processes, connections) after.
    func withValidator<T>(_ uri: String, manifest: Manifest, directory: URL, _ body: (any ReceiptValidator) async throws -> T) async throws -> T {
        let seconds = timeout ?? (uri.hasPrefix("exec:") || uri.hasPrefix("exit:") ? 5 : 2)
        let limit = Duration.milliseconds(Int64(seconds * 1000))
        if uri == "swift:reference" {
            return try await body(try ReferenceHarness(vectorsDirectory: directory))
        } else if uri.hasPrefix("stdio:") {
            let validator = StdioValidator(command: try Self.words(uri.dropFirst(6)), suite: manifest.suite.version, timeout: limit, checker: checker)
            return try await Self.run(body, with: validator) {
                await validator.stop()
                for line in await validator.strayLines() { note("protocol violation by \(uri.dropFirst(6)): \(line)") }
            }
        } else if uri.hasPrefix("http://") || uri.hasPrefix("https://") {
            let validator = HTTPValidator(url: uri, mode: mapping.map { .mapping($0) } ?? .protocol, timeout: limit, headers: httpHeaders,
                                          features: features, password: sharedSecret, connections: connections, checker: checker,
                                          trustRoots: httpTrustRoots)
            return try await Self.run(body, with: validator) { await validator.shutdown() }
        } else {
            let anchors = manifest.trustAnchors.mapValues { directory.appendingPathComponent($0.file).path }
            let validator = ExecValidator(command: try Self.words(uri.dropFirst(5)), mode: uri.hasPrefix("exec:") ? .protocol : .exitCode, timeout: limit,
                                          features: features, granularity: granularity, anchorFiles: anchors, checker: checker)
            return try await body(validator)
        }
    }

    /// Runs `body` with `validator`, then `release`s it (ends its process, closes its connections) however `body` ended.
    private static func run<T>(_ body: (any ReceiptValidator) async throws -> T, with validator: some ReceiptValidator,
                               release: () async -> Void) async throws -> T {
        do {
            let outcome = try await body(validator)
            await release()
            return outcome
        } catch {
            await release()
            throw error
        }
    }

    /// The command of an exec/exit/stdio target, split as a shell would split it (quotes, backslashes; no expansion).
    static func words(_ command: Substring) throws -> [String] {
        do { return try CommandWords.split(String(command)) } catch { throw fail("--target: \(error.message)", Exit.usage) }
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
