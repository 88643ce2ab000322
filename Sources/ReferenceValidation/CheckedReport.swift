package import _ForgeSupport
package import ReceiptCorpus

/// What every reference validator returns, whatever the artefact: the steps in order, and the verdict, first
/// failure, error class and message they decide. Receipts (``ValidationReport``) and StoreKit 2 JWS
/// (``JWSReport``) keep what only they can read beside it; callers (the CLI, the harness, the servers) use this.
package protocol CheckedReport: Sendable {
    /// Every step, in order.
    var checks: [Check] { get }
    /// Whether the input is not this artefact at all (exit 65), rather than one that fails a check (exit 1).
    var isUnreadable: Bool { get }
    /// The message when nothing failed ("receipt is valid").
    static var validMessage: String { get }
}

extension CheckedReport {
    package var verdict: ValidationReport.Verdict { firstFailure == nil ? .valid : .invalid }
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
        }
    }
}
