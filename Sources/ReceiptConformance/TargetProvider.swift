#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ReceiptCorpus
import _ForgeSupport

/// Everything a target needs besides its own text: the corpus and the options that shape its transport.
public struct TargetPlan: Sendable {
    public var manifest: Manifest
    public var vectorsDirectory: URL
    /// Seconds per vector before TIMEOUT; nil is the target kind's default.
    public var timeout: Double?
    /// Features credited to targets without a hello of their own (exec, exit, mappings). Default: all the corpus's
    /// but those off unless declared (`online`).
    public var features: [String]
    /// What an exec/exit target's error classes mean.
    public var granularity: HarnessHello.Granularity = .none
    public var httpHeaders: [(String, String)] = []
    /// The `{{password}}` of a mapping (verifyReceipt's shared secret).
    public var sharedSecret: String?
    /// HTTP connections kept open (one per vector in flight).
    public var connections: Int = 4
    /// Checks every harness message against the protocol schema when set.
    public var checker: ProtocolViolationCheck?
    /// For http(s) targets: a response mapping instead of the harness protocol.
    public var mapping: ResponseMapping?
    /// For https targets: PEM roots to trust instead of the system's.
    public var httpTrustRoots: String?

    public init(manifest: Manifest, vectorsDirectory: URL) {
        self.manifest = manifest
        self.vectorsDirectory = vectorsDirectory
        self.features = manifest.features.keys.filter { Feature(rawValue: $0)?.creditedByDefault ?? true }.sorted()
    }

    /// The per-vector time limit for `target`.
    public func timeLimit(for target: Target) -> Duration { HarnessLimits.timeout(seconds: timeout ?? target.defaultTimeout) }
}

/// Turns the targets it knows into validators for the length of a run, then releases them (ends processes,
/// closes connections) however the run ended. Each transport lives in the module that owns its dependencies
/// and contributes its provider: ``ProcessTargets`` here, `HTTPTargets` in ReceiptConformanceHTTP,
/// `ReferenceHarness.provider` in ReceiptValidationServer.
public protocol TargetProvider: Sendable {
    func serves(_ target: Target) -> Bool
    func withValidator<T>(_ target: Target, plan: TargetPlan, _ body: (any ReceiptValidator) async throws -> T) async throws -> T
}

extension Array where Element == any TargetProvider {
    /// Runs `body` with the validator the first provider serving `target` builds.
    public func withValidator<T>(_ target: Target, plan: TargetPlan, _ body: (any ReceiptValidator) async throws -> T) async throws -> T {
        guard let provider = first(where: { $0.serves(target) }) else {
            let known = target.kind == .swift ? " (this build knows: \(swiftNames.joined(separator: ", ")))" : ""
            throw ConformanceError(.invalidCommand, "\(RunOption.target) \(target): no transport for it is linked into this program\(known)")
        }
        return try await provider.withValidator(target, plan: plan, body)
    }

    private var swiftNames: [String] { compactMap { ($0 as? InProcessTargets)?.names }.flatMap { $0 }.sorted() }
}

/// `swift:NAME` targets: validators in the runner's own process, made from the corpus directory.
public struct InProcessTargets: TargetProvider {
    public typealias Make = @Sendable (_ vectorsDirectory: URL) throws -> any ReceiptValidator
    private let makers: [String: Make]

    public init(_ makers: [String: Make]) { self.makers = makers }

    public var names: [String] { makers.keys.sorted() }

    public func serves(_ target: Target) -> Bool { target.kind == .swift && makers[target.address] != nil }

    public func withValidator<T>(_ target: Target, plan: TargetPlan, _ body: (any ReceiptValidator) async throws -> T) async throws -> T {
        guard let make = makers[target.address] else { throw ConformanceError(.invalidCommand, "\(RunOption.target) \(target): unknown in-process validator") }
        return try await body(try make(plan.vectorsDirectory))
    }
}

/// `exec:`, `exit:` and `stdio:` targets: validators in other processes.
public struct ProcessTargets: TargetProvider {
    public init() {}

    public func serves(_ target: Target) -> Bool { [.exec, .exit, .stdio].contains(target.kind) }

    public func withValidator<T>(_ target: Target, plan: TargetPlan, _ body: (any ReceiptValidator) async throws -> T) async throws -> T {
        switch target.kind {
        case .stdio:
            let validator = StdioValidator(command: target.command, suite: plan.manifest.suite.version, timeout: plan.timeLimit(for: target), checker: plan.checker)
            return try await withRelease(body, validator) {
                await validator.stop()
                for line in await validator.strayLines() {
                    StandardStream.error.write("forge: protocol violation by \(target.command.joined(separator: " ")): \(line)\n")
                }
            }
        case .exec, .exit:
            let anchors = plan.manifest.trustAnchors.mapValues { plan.vectorsDirectory.appendingPathComponent($0.file).path }
            let validator = ExecValidator(
                command: target.command, mode: target.kind == .exec ? .protocol : .exitCode, timeout: plan.timeLimit(for: target),
                features: plan.features, granularity: plan.granularity, anchorFiles: anchors, checker: plan.checker)
            return try await body(validator)
        case .swift, .http:
            throw ConformanceError(.invalidCommand, "\(RunOption.target) \(target) is not a process target")
        }
    }
}

/// Runs `body` with `validator`, then `release`s it however `body` ended: for providers whose validators hold
/// processes or connections.
public func withRelease<T, V: ReceiptValidator>(
    _ body: (any ReceiptValidator) async throws -> T, _ validator: V, release: () async -> Void
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
