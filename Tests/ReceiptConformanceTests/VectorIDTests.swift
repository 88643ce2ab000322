import _ForgeSupport
@testable import ReceiptConformance
import ReceiptCorpus
import Testing

/// Issue 39, item 7: a vector id is cut into family and name in one place (``VectorID``), so the reports, the linter
/// and the generator agree on an id's family, even an id no manifest would hold.
@Suite("VectorID: one way to cut an id", .timeLimit(.minutes(1)))
struct VectorIDTests {
    @Test(
        "Family before the first ::, name after it; an id without :: is all family",
        arguments: [
            ("chain::expired-leaf", "chain", "expired-leaf", true), ("a::b::c", "a", "b::c", true), ("odd:id", "odd:id", "", false),
            ("Chain::x", "Chain", "x", false), ("chain::", "chain", "", false), ("", "", "", false),
        ])
    func parts(_ text: String, family: String, name: String, wellFormed: Bool) {
        let id = VectorID(text)
        #expect(id.family == family && id.name == name && id.isWellFormed == wellFormed, "\(text)")
    }

    @Test("JUnit groups an id under the family the console's family table gives it")
    func junitAgreesWithTheFamilyTable() {
        let results = ReportFixtures.run("x", [ReportFixtures.result("odd:id", .pass), ReportFixtures.result("chain::expired-leaf", .pass)])
        let families = ReportText.familyRows(results).map(\.family)
        #expect(families == ["chain", "odd:id"])
        let xml = JUnitReport.xml(results)
        for family in families { #expect(xml.contains(#"<testsuite name="receipt-conformance.\#(family)""#), "\(family): \(xml)") }
    }
}
