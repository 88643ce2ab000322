package import _ForgeSupport

/// An artefact as `inspect` describes it, without the checks: lines for people, JSON members for machines.
/// ``ReceiptInspection`` and ``JWSInspection`` say what only they can read; ``Inspection`` renders both.
package protocol InspectedArtefact: Sendable {
    /// The text form, one line per fact.
    var lines: [String] { get }
    /// The JSON form: the members of one object.
    var members: JSONObject { get }
}

/// What `forge inspect`, `forge jws inspect`, `forge validate --json` and `forge jws validate --json` print:
/// the artefact, then its checks and the verdict when there is a report to show. The one renderer for
/// receipts and JWS, so the two artefacts' inspectors and validators print alike.
package struct Inspection: Sendable {
    package let artefact: any InspectedArtefact
    /// The checks shown after the artefact; nil shows none.
    package let report: (any CheckedReport)?

    package init(_ artefact: any InspectedArtefact, report: (any CheckedReport)?) {
        self.artefact = artefact
        self.report = report
    }

    /// A receipt: the checks when asked for (inspect shows them only when given a root, bundle id, device…),
    /// and always when there is no payload to show.
    package init(receipt report: ValidationReport, source: String, inputSize: Int, includeChecks: Bool) {
        self.init(ReceiptInspection(report: report, source: source, inputSize: inputSize), report: includeChecks || report.receipt == nil ? report : nil)
    }

    /// A JWS and, when given, its verifier's report; nil when the text is not a compact JWS and there is no
    /// report (with one, the artefact is only `kind: null`, and the checks say why).
    package init?(jws text: String, report: JWSReport? = nil) {
        if let described = JWSInspection(text) {
            self.init(described, report: report)
        } else if let report {
            self.init(JWSInspection.unreadable, report: report)
        } else {
            return nil
        }
    }

    package func text() -> String {
        var lines = artefact.lines
        if let report {
            lines.append("checks:")
            for check in report.checks {
                let mark =
                    switch check.status {
                    case .passed: "ok  "
                    case .failed: "FAIL"
                    case .skipped: "skip"
                    }
                lines.append("  \(mark) \(Self.pad(check.name.rawValue, 12)) \(check.detail)\(check.errorClass.map { " [\($0)]" } ?? "")")
            }
            lines.append("verdict: \(report.verdict.rawValue)\(report.errorClass.map { " (\($0))" } ?? "")")
        }
        return lines.joined(separator: "\n")
    }

    package func json() -> JSONValue {
        var members = artefact.members
        if let report {
            members.append(("checks", report.checksJSON))
            members += report.verdictMembers
        }
        return .object(members)
    }

    static func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
}
