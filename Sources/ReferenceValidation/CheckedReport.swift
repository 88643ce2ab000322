package import _ForgeSupport
package import ReceiptCorpus

/// What a reference validator reads besides its checks, which only it can read: a receipt's container and payload
/// (``ReceiptFindings``), a JWS's header, payload and nested JWS (``JWSFindings``).
package protocol ArtefactFindings: Sendable {
    /// The message when nothing failed ("receipt is valid").
    static var validMessage: String { get }
    /// Whether a report whose first failure has this class says the input is not this artefact at all (exit 65),
    /// rather than one that fails a check (exit 1).
    static func isUnreadable(_ errorClass: ErrorClass?) -> Bool
}

/// The one report of the reference validators, as swift-certificates' policies return one result: the steps in
/// order (the verdict, first failure, error class and message follow from them) and the artefact's own findings,
/// read through the report (`report.receipt`, `report.payload`). ``ValidationReport`` and ``JWSReport`` name its
/// two kinds.
@dynamicMemberLookup
package struct VerificationReport<Findings: ArtefactFindings>: CheckedReport {
    /// Every step, in order.
    package let checks: [Check]
    package let findings: Findings

    package init(checks: [Check], findings: Findings) {
        self.checks = checks
        self.findings = findings
    }

    package subscript<Value>(dynamicMember path: KeyPath<Findings, Value>) -> Value { findings[keyPath: path] }

    package var isUnreadable: Bool { Findings.isUnreadable(errorClass) }
    package static var validMessage: String { Findings.validMessage }
}

/// A report's verdict: valid when no check failed.
package enum ReportVerdict: String, Sendable, Hashable, Codable { case valid, invalid }

extension VerificationReport {
    package typealias Verdict = ReportVerdict
}

/// A report of either kind, for callers that judge whatever artefact they are given (the CLI, the harness, the
/// servers): ``VerificationReport`` is the one type that conforms.
package protocol CheckedReport: Sendable {
    /// Every step, in order.
    var checks: [Check] { get }
    /// Whether the input is not this artefact at all (exit 65), rather than one that fails a check (exit 1).
    var isUnreadable: Bool { get }
    /// The message when nothing failed ("receipt is valid").
    static var validMessage: String { get }
}

extension CheckedReport {
    package var verdict: ReportVerdict { firstFailure == nil ? .valid : .invalid }
    /// The failure that decides the verdict: the first in order.
    package var firstFailure: Check? { checks.first { $0.status == .failed } }
    package var errorClass: ErrorClass? { firstFailure?.errorClass }
    package var message: String { firstFailure.map { "\($0.name): \($0.detail)" } ?? Self.validMessage }

    /// The verdict's members of a JSON report: `verdict`, `errorClass`, `message`.
    package var verdictMembers: JSONObject {
        [("verdict", .string(verdict.rawValue)), ("errorClass", errorClass.map { .string($0.rawValue) } ?? .null), ("message", .string(message))]
    }

    /// The `checks` array of a JSON report.
    package var checksJSON: JSONValue {
        .array(
            checks.map { check in
                .object([
                    ("name", .string(check.name.rawValue)), ("status", .string(check.status.rawValue)), ("detail", .string(check.detail)),
                    ("errorClass", check.errorClass.map { .string($0.rawValue) } ?? .null),
                ])
            })
    }
}

/// A reference validator of one artefact kind. ``ArtifactKind/referenceValidator`` picks the one for an artefact, so
/// callers never branch on the kind themselves.
package protocol ArtefactValidator: Sendable {
    /// `input` judged as the artefact `kind` names.
    func check(_ input: [UInt8], as kind: ArtifactKind, context: ValidationContext) -> any CheckedReport
}

extension ArtifactKind {
    /// The reference validator that judges this kind of artefact: the one place a kind meets its validator.
    package var referenceValidator: any ArtefactValidator {
        switch self {
        case .receipt: ReferenceValidator()
        case .jwsTransaction, .jwsRenewal, .jwsAppTransaction, .jwsNotification, .jwsRealtime: JWSVerifier()
        case .transactionReceipt: TransactionReceiptValidator()
        }
    }
}
