import ReceiptCorpus

/// JUnit XML from a run, in the shape CI dashboards read (Maven Surefire): one `<testsuite>` per
/// family, one `<testcase>` per vector named by its id, failures saying expected versus got.
public enum JUnitReport {
    public static func xml(_ results: RunResults) -> String {
        let families = Dictionary(grouping: results.results) { String($0.id.prefix { $0 != ":" }) }
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let failures = results.results.filter { $0.outcome.isConformanceFailure }.count
        let errors = results.results.filter { $0.outcome.isInfrastructureFailure }.count
        out += #"<testsuites name="receipt-conformance" tests="\#(results.results.count)" failures="\#(failures)" errors="\#(errors)" time="\#(seconds(results.durationMilliseconds * 1000))">"# + "\n"
        for family in families.keys.sorted() {
            let cases = families[family]!
            out += #"  <testsuite name="receipt-conformance.\#(family)" tests="\#(cases.count)" failures="\#(cases.filter { $0.outcome.isConformanceFailure }.count)" errors="\#(cases.filter { $0.outcome.isInfrastructureFailure }.count)" skipped="\#(cases.filter { $0.outcome == .skip || $0.outcome == .xfail }.count)">"# + "\n"
            for result in cases {
                out += #"    <testcase classname="receipt.\#(family)" name="\#(escape(result.id))" time="\#(seconds(result.durationMicroseconds))">"#
                let got = result.verdict.map { "\($0.rawValue)\(result.errorClass.map { " \($0)" } ?? "")" } ?? "no verdict"
                let expected = "\(result.expected.rawValue)\(result.expectedErrorClasses.isEmpty ? "" : " [\(result.expectedErrorClasses.joined(separator: "|"))]")"
                if result.outcome.isConformanceFailure {
                    out += #"<failure type="\#(result.outcome.rawValue)" message="\#(escape("expected \(expected), got \(got)"))">\#(escape(result.message ?? ""))</failure>"#
                } else if result.outcome.isInfrastructureFailure {
                    out += #"<error type="\#(result.outcome.rawValue)" message="\#(escape(result.message ?? result.outcome.rawValue))"/>"#
                } else if result.outcome == .skip {
                    out += #"<skipped message="\#(escape(result.message ?? "skipped"))"/>"#
                }
                out += "</testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        return out + "</testsuites>\n"
    }

    private static func seconds(_ microseconds: Int) -> String {
        let whole = microseconds / 1_000_000, fraction = microseconds % 1_000_000
        return "\(whole).\(String(repeating: "0", count: 6 - String(fraction).count))\(fraction)"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case _ where scalar.value < 0x20 && scalar != "\n" && scalar != "\t": out += "?"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
