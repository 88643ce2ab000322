import ReceiptCorpus
import ForgeSupport

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
            #"<testsuites name="receipt-conformance" tests="\#(all.count)" failures="\#(failures)" errors="\#(errors)" time="\#(seconds(runs.map(\.durationMilliseconds).reduce(0, +) * 1000))">"#
            + "\n"
        for results in runs {
            out += suites(results, qualifier: runs.count > 1 ? " [\(escape(results.name))]" : "")
        }
        return out + "</testsuites>\n"
    }

    private static func suites(_ results: RunResults, qualifier: String) -> String {
        let families = Dictionary(grouping: results.results) { String($0.id.prefix { $0 != ":" }) }
        var out = ""
        for family in families.keys.sorted() {
            let cases = families[family]!
            out +=
                #"  <testsuite name="receipt-conformance.\#(family)\#(qualifier)" tests="\#(cases.count)" failures="\#(cases.filter { $0.outcome.isConformanceFailure }.count)" errors="\#(cases.filter { $0.outcome.isInfrastructureFailure }.count)" skipped="\#(cases.filter { $0.outcome == .skip || $0.outcome == .xfail }.count)">"#
                + "\n"
            for result in cases {
                out += #"    <testcase classname="receipt.\#(family)" name="\#(Self.escape(result.id))" time="\#(seconds(result.durationMicroseconds))">"#
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

    private static func seconds(_ microseconds: Int) -> String {
        let whole = microseconds / 1_000_000, fraction = microseconds % 1_000_000
        return "\(whole).\(String(repeating: "0", count: 6 - String(fraction).count))\(fraction)"
    }

    /// What is inert in HTML text and attributes is inert in XML too; control characters, which XML
    /// 1.0 forbids, become U+FFFD.
    static func escape(_ text: String) -> String { HTMLReport.escape(text) }
}
