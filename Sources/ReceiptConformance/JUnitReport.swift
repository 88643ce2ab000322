import ReceiptCorpus
import _ForgeSupport

/// JUnit XML from a run, in the shape CI dashboards read (Maven Surefire): one `<testsuite>` per
/// family, one `<testcase>` per vector named by its id, failures saying expected versus got. XFAIL is
/// `<skipped message="known failure: …">` (the pytest convention), so dashboards stay green but show it.
/// Several runs (differential mode) give one set of suites each, named after the implementation.
public enum JUnitReport {
    public static func xml(_ results: RunResults) -> String { xml([results]) }

    public static func xml(_ runs: [RunResults]) -> String {
        let all = runs.flatMap(\.results)
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let failures = all.filter { $0.outcome.isConformanceFailure }.count
        let errors = all.filter { $0.outcome.isInfrastructureFailure }.count
        out +=
            #"<testsuites name="receipt-conformance" tests="\#(all.count)" failures="\#(failures)" errors="\#(errors)" time="\#(seconds(totalMilliseconds(runs), perSecond: 1000))">"#
            + "\n"
        for results in runs {
            out += suites(results, qualifier: runs.count > 1 ? " [\(escape(results.name))]" : "")
        }
        return out + "</testsuites>\n"
    }

    private static func suites(_ results: RunResults, qualifier: String) -> String {
        let families = Dictionary(grouping: results.results) { VectorID($0.id).family }
        var out = ""
        for family in families.keys.sorted() {
            let cases = families[family]!
            out +=
                #"  <testsuite name="receipt-conformance.\#(family)\#(qualifier)" tests="\#(cases.count)" failures="\#(cases.filter { $0.outcome.isConformanceFailure }.count)" errors="\#(cases.filter { $0.outcome.isInfrastructureFailure }.count)" skipped="\#(cases.filter { $0.outcome == .skip || $0.outcome == .xfail }.count)">"#
                + "\n"
            for result in cases {
                out += #"    <testcase classname="receipt.\#(family)" name="\#(Self.escape(result.id))" time="\#(seconds(result.durationMicroseconds, perSecond: 1_000_000))">"#
                let got = result.verdict.map { "\($0.rawValue)\(result.errorClass.map { " \($0)" } ?? "")" } ?? "no verdict"
                let expected = "\(result.expected.rawValue)\(result.expectedErrorClasses.isEmpty ? "" : " [\(result.expectedErrorClasses.joined(separator: "|"))]")"
                if result.outcome.isConformanceFailure {
                    out +=
                        #"<failure type="\#(result.outcome.rawValue)" message="\#(Self.escape("expected \(expected), got \(got)"))">\#(Self.escape(result.message ?? ""))</failure>"#
                } else if result.outcome.isInfrastructureFailure {
                    out += #"<error type="\#(result.outcome.rawValue)" message="\#(Self.escape(result.message ?? result.outcome.rawValue))"/>"#
                } else if result.outcome == .skip || result.outcome == .xfail {
                    out += #"<skipped message="\#(Self.escape(result.message ?? "skipped"))"/>"#
                }
                out += "</testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        return out
    }

    /// JUnit's `time`, seconds with six decimals, from a count of units `perSecond` (1,000 or 1,000,000). Any count:
    /// a results.json is checked against its schema when read, but a run built in code is not.
    static func seconds(_ count: Int, perSecond: Int) -> String {
        let magnitude = count.magnitude, unit = UInt(perSecond)
        let fraction = String((magnitude % unit) * (1_000_000 / unit))
        return "\(count < 0 ? "-" : "")\(magnitude / unit).\(String(repeating: "0", count: max(0, 6 - fraction.count)))\(fraction)"
    }

    /// The runs' durations added up, saturating rather than overflowing.
    private static func totalMilliseconds(_ runs: [RunResults]) -> Int {
        runs.reduce(0) { total, run in
            let (sum, overflow) = total.addingReportingOverflow(run.durationMilliseconds)
            return overflow ? (run.durationMilliseconds < 0 ? .min : .max) : sum
        }
    }

    /// What is inert in HTML text and attributes is inert in XML too; every character XML 1.0 forbids (and HTML:
    /// controls, U+FFFE, U+FFFF, the other noncharacters) becomes U+FFFD.
    static func escape(_ text: String) -> String { HTMLReport.escape(text) }
}
