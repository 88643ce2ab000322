import Foundation
import ReceiptCorpus
import Testing
import _ForgeSupport

typealias Rule = Linter.Rule

@Suite(.timeLimit(.minutes(2)))
struct LinterTests {
    private let fixture: CorpusFixture
    private let validID = CorpusFixture.validID
    private let invalidID = CorpusFixture.invalidID

    init() throws {
        fixture = try CorpusFixture()
    }

    /// Asserts that `change` produces exactly one finding, with this rule and vector.
    private func expectOnly(_ rule: String, for vectorID: VectorID?, after change: (inout Manifest) -> Void) {
        let findings = fixture.lint(after: change)
        #expect(findings.map(\.rule) == [rule], "\(findings)")
        #expect(findings.first?.vectorID == vectorID)
    }

    @Test func validCorpusHasNoFindings() {
        #expect(Linter.lint(fixture.manifest, vectorsDirectory: fixture.directory) == [])
        #expect(Linter.lint(fixture.manifest, vectorsDirectory: nil) == [])
    }

    @Test func schemaVersionMustBeOne() {
        expectOnly(Rule.schemaVersion, for: nil) { $0.schemaVersion = 2 }
    }

    @Test func duplicateID() {
        expectOnly(Rule.idDuplicate, for: validID) { $0.vectors.append($0.vectors[0]) }
    }

    @Test(arguments: ["Chain::foreign-root", "chain", "chain::", "chain::-foreign", "chain:::foreign", "chain::foreign_root"])
    func malformedID(id: String) {
        expectOnly(Rule.idFormat, for: VectorID(id)) { $0.vectors[1].id = VectorID(id) }
    }

    @Test func deeperIDIsWellFormed() {
        #expect(fixture.lint { $0.vectors[1].id = "chain::foreign-root::v2" } == [])
    }

    @Test func familyMustMatchDirectory() {
        expectOnly(Rule.idFamily, for: "time::foreign-root") { $0.vectors[1].id = "time::foreign-root" }
    }

    @Test func revisionStartsAtOne() {
        expectOnly(Rule.revision, for: invalidID) { $0.vectors[1].revision = 0 }
    }

    @Test func digestMismatch() {
        expectOnly(Rule.fileDigest, for: invalidID) { $0.vectors[1].sha256 = $0.vectors[0].sha256 }
    }

    @Test func malformedDigestIsReportedWithoutFiles() {
        var manifest = fixture.manifest
        manifest.vectors[1].sha256 = manifest.vectors[1].sha256.uppercased()
        #expect(Linter.lint(manifest, vectorsDirectory: nil).map(\.rule) == [Rule.fileDigest])
    }

    @Test func missingFile() {
        expectOnly(Rule.fileMissing, for: invalidID) { $0.vectors[1].file = "chain/absent.der" }
    }

    @Test func fileChecksNeedADirectory() {
        var manifest = fixture.manifest
        manifest.vectors[1].file = "chain/absent.der"
        manifest.trustAnchors["test-root"]?.sha256 = String(repeating: "0", count: 64)
        #expect(Linter.lint(manifest, vectorsDirectory: nil) == [])
    }

    @Test func fileMustStayInsideVectors() {
        expectOnly(Rule.filePath, for: invalidID) { $0.vectors[1].file = "chain/../../etc/passwd" }
    }

    @Test func trustAnchorFileIsChecked() {
        expectOnly(Rule.fileDigest, for: nil) { $0.trustAnchors["test-root"]?.sha256 = $0.vectors[0].sha256 }
        expectOnly(Rule.fileMissing, for: nil) { $0.trustAnchors["test-root"]?.file = "anchors/absent.der" }
    }

    @Test func flagWithoutNote() {
        expectOnly(Rule.flagUnknown, for: invalidID) { $0.vectors[1].flags = ["unexplained"] }
    }

    @Test func acceptableWithoutFlag() {
        expectOnly(Rule.acceptableWithoutFlag, for: invalidID) { $0.vectors[1].expected.verdict = .acceptable }
    }

    @Test func acceptableWithNotedFlagIsClean() {
        let findings = fixture.lint {
            $0.vectors[1].expected.verdict = .acceptable
            $0.vectors[1].flags = ["ber-lengths"]
        }
        #expect(findings == [])
    }

    @Test func invalidWithoutErrorClass() {
        expectOnly(Rule.invalidWithoutErrorClass, for: invalidID) { $0.vectors[1].expected.errorClasses = [] }
    }

    /// Taxonomy keys match exactly: neither a deeper class nor a near miss counts.
    @Test(arguments: ["chain.unknown", "chain.untrusted.root", "Chain.untrusted"])
    func unknownErrorClass(errorClass: String) {
        expectOnly(Rule.errorClassUnknown, for: invalidID) { $0.vectors[1].expected.errorClasses = [ErrorClass(rawValue: errorClass)] }
    }

    /// A manifest is read before it is linted: a class the taxonomy lacks decodes as itself (typed, not refused and
    /// not dropped), so lint can name it, and it is written back as it was.
    @Test func unknownErrorClassInTheFileIsLinted() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(fixture.manifest), as: UTF8.self)
        let edited = text.replacingOccurrences(of: "\"errorClasses\":[\"chain.untrusted\"]", with: "\"errorClasses\":[\"chain.novel\"]")
        #expect(edited != text)
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(edited.utf8))
        #expect(manifest.vectors[1].expected.errorClasses == [ErrorClass(rawValue: "chain.novel")])
        let findings = Linter.lint(manifest, vectorsDirectory: fixture.directory)
        #expect(findings.map(\.rule) == [Rule.errorClassUnknown] && findings.first?.vectorID == invalidID, "\(findings)")
        #expect(String(decoding: try encoder.encode(manifest), as: UTF8.self) == edited)
    }

    @Test func familyErrorClassIsKnown() {
        #expect(fixture.lint { $0.vectors[1].expected.errorClasses = [.chain] } == [])
    }

    @Test func validWithErrorClass() {
        expectOnly(Rule.validWithErrorClass, for: validID) { $0.vectors[0].expected.errorClasses = [.chainUntrusted] }
    }

    @Test(arguments: [
        "2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01T24:00:00Z",
        "2024-01-01T00:60:00Z", "2024-01-01T00:00:60Z", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00+00:00",
        "2024-01-01T00:00:00.000Z", "2024-01-01", "", "2024-01-00T00:00:00Z",
    ])
    func malformedNow(now: String) {
        expectOnly(Rule.nowFormat, for: invalidID) { $0.vectors[1].context.now = now }
    }

    @Test func unknownTrustAnchor() {
        expectOnly(Rule.trustAnchorUnknown, for: invalidID) { $0.vectors[1].context.trustAnchor = "apple-root" }
    }

    @Test func unknownFeature() {
        expectOnly(Rule.featureUnknown, for: invalidID) { $0.vectors[1].features = ["xcode"] }
    }

    @Test("A profile may leave a flag to the validator (acceptable: either verdict passes)")
    func profileLeavingTheChoice() {
        let findings = fixture.lint(after: {
            $0.profiles["lenient"]?.acceptable["ber-lengths"] = .acceptable
            $0.profiles["strict"]?.otherwise = .acceptable
        })
        #expect(findings == [])
    }

    @Test("Profiles resolve flags: any invalid wins, all valid is valid, anything else leaves the choice")
    func profileResolution() {
        let profile = Profile(description: "", acceptable: ["A": .valid, "B": .invalid, "C": .acceptable], otherwise: .valid)
        #expect(profile.resolve(["A"]) == .valid)
        #expect(profile.resolve(["A", "B"]) == .invalid)
        #expect(profile.resolve(["B", "C"]) == .invalid)
        #expect(profile.resolve(["A", "C"]) == .acceptable)
        #expect(profile.resolve(["unlisted"]) == .valid)
        #expect(Profile(description: "", acceptable: [:], otherwise: .acceptable).resolve(["X"]) == .acceptable)
    }

    @Test func profileNamingUnknownFlag() {
        expectOnly(Rule.flagUnknown, for: nil) { $0.profiles["strict"]?.acceptable["unexplained"] = .invalid }
    }

    @Test func noCanary() {
        expectOnly(Rule.canaryMissing, for: nil) { $0.vectors[0].canary = false }
    }

    @Test func canaryMustBeValid() {
        expectOnly(Rule.canaryNotValid, for: invalidID) { $0.vectors[1].canary = true }
    }

    @Test func findingsAreSortedByVectorThenRule() {
        let findings = fixture.lint {
            $0.vectors[1].features = ["xcode"]
            $0.vectors[1].context.trustAnchor = "apple-root"
            $0.vectors[1].revision = 0
            $0.vectors[0].canary = false
            $0.schemaVersion = 3
        }
        #expect(findings.map(\.vectorID) == [nil, nil, invalidID, invalidID, invalidID])
        #expect(
            findings.map(\.rule) == [
                Rule.canaryMissing, Rule.schemaVersion, Rule.featureUnknown, Rule.revision, Rule.trustAnchorUnknown,
            ])
    }
}
