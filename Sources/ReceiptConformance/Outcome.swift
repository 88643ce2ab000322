public import ReceiptCorpus
import _ForgeSupport

/// What happened to one vector, decided by the runner alone (never by the harness).
public enum Outcome: String, Codable, Sendable, Hashable, CaseIterable {
    case pass = "PASS"
    case falseAccept = "FALSE_ACCEPT"
    case falseReject = "FALSE_REJECT"
    case wrongReason = "WRONG_REASON"
    case wrongDecode = "WRONG_DECODE"
    case acceptable = "ACCEPTABLE"
    case xfail = "XFAIL"
    case xpass = "XPASS"
    case changedFailure = "CHANGED_FAILURE"
    case skip = "SKIP"
    case error = "ERROR"
    case timeout = "TIMEOUT"
    case crash = "CRASH"

    /// Outcomes that fail a conformance run (exit 1) unless a baseline tolerates them.
    public var isConformanceFailure: Bool {
        [.falseAccept, .falseReject, .wrongReason, .wrongDecode, .xpass, .changedFailure].contains(self)
    }

    /// Outcomes that mean the harness, not the validator's judgement, failed (exit 2).
    public var isInfrastructureFailure: Bool { [.error, .timeout, .crash].contains(self) }
}

/// Classifies a harness reply against a vector's expectation.
public struct Classifier: Sendable {
    public let profile: Profile?
    public let granularity: HarnessHello.Granularity
    /// Whether the harness declared the `decode` feature (then decoded fields are compared).
    public let decodes: Bool

    public init(profile: Profile?, granularity: HarnessHello.Granularity, decodes: Bool) {
        self.profile = profile
        self.granularity = granularity
        self.decodes = decodes
    }

    /// The verdict a vector demands under the profile (`Profile.resolve`); without a profile, and where
    /// the profile leaves the choice to the validator, it stays `acceptable` and either verdict passes.
    public func expectedVerdict(_ vector: Vector) -> Verdict {
        guard vector.expected.verdict == .acceptable, let profile else { return vector.expected.verdict }
        return profile.resolve(vector.flags)
    }

    public func classify(_ vector: Vector, _ reply: HarnessReply) -> Outcome {
        switch reply {
        case .skipped: return .skip
        case .errored: return .error
        case .failed(_, .timeout, _): return .timeout
        case .failed(_, .crash, _): return .crash
        case .result(_, let verdict, let errorClass, _, let decoded):
            switch (expectedVerdict(vector), verdict) {
            case (.acceptable, _): return .acceptable
            case (.invalid, .accept): return .falseAccept
            case (.valid, .reject): return .falseReject
            case (.invalid, .reject): return reasonMatches(errorClass, vector.expected.errorClasses) ? .pass : .wrongReason
            case (.valid, .accept):
                if decodes, let expected = vector.expected.decoded, let decoded, decoded != expected { return .wrongDecode }
                return .pass
            }
        }
    }

    /// Prefix matching at the harness's declared granularity. An acceptable vector resolved to invalid
    /// by a profile carries no error classes: any reason is right.
    func reasonMatches(_ actual: String?, _ expected: [ErrorClass]) -> Bool {
        guard !expected.isEmpty else { return true }
        switch granularity {
        case .none:
            return true
        case .coarse:
            guard let actual else { return false }
            return expected.contains { $0.family == ErrorClass(rawValue: actual).family }
        case .fine:
            guard let actual else { return false }
            return expected.contains { ErrorClass(rawValue: actual).isWithin($0) }
        }
    }
}
