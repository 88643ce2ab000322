import Foundation
import ReceiptCorpus
import _ForgeSupport

/// A fresh directory under the system temporary directory, removed when the last reference goes.
final class TemporaryDirectory {
    let url: URL

    init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("receipt-corpus-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A small, lint-clean corpus on disk: two vectors and a trust anchor in a temporary directory.
struct CorpusFixture {
    let manifest: Manifest
    private let temporary: TemporaryDirectory
    var directory: URL { temporary.url }

    static let validID: VectorID = "valid::appstore"
    static let invalidID: VectorID = "chain::foreign-root"

    init() throws {
        temporary = try TemporaryDirectory("fixture")
        let files: [String: Data] = [
            "valid/appstore.der": Data([0x30, 0x03, 0x02, 0x01, 0x01]),
            "chain/foreign-root.der": Data([0x30, 0x03, 0x02, 0x01, 0x02]),
            "anchors/test-root.der": Data([0x30, 0x03, 0x02, 0x01, 0x03]),
        ]
        for (path, bytes) in files {
            let url = temporary.url.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try bytes.write(to: url)
        }
        func digest(_ path: String) -> String { CorpusDigest.sha256Hex(files[path] ?? Data()) }

        let context = Context(now: "2024-02-29T12:00:00Z", trustAnchor: "test-root", bundleId: "com.example.app")
        manifest = Manifest(
            schemaVersion: 1,
            suite: Suite(name: "receipt-forge", version: "1.0.0"),
            generator: Generator(name: "forge", version: "1.0.0", seed: "42"),
            trustAnchors: [
                "test-root": TrustAnchor(
                    file: "anchors/test-root.der", sha256: digest("anchors/test-root.der"), testOnly: true,
                    description: "TEST root")
            ],
            notes: ["ber-lengths": Note(bugClass: "lenient-ber", description: "BER lengths.", links: [])],
            features: ["device-hash": "Device hash check."],
            errorTaxonomy: ["chain": "Chain problems.", "chain.untrusted": "Untrusted root."],
            profiles: [
                "strict": Profile(description: "Strict.", acceptable: [:], otherwise: .invalid),
                "lenient": Profile(description: "Lenient.", acceptable: ["ber-lengths": .valid], otherwise: .valid),
            ],
            vectors: [
                Vector(
                    id: Self.validID, revision: 1, description: "Valid.", file: "valid/appstore.der",
                    sha256: digest("valid/appstore.der"), flags: [], severity: .critical, features: ["device-hash"],
                    canary: true, context: context,
                    expected: Expectation(
                        verdict: .valid, errorClasses: [],
                        decoded: DecodedReceipt(
                            bundleId: "com.example.app", appVersion: "1.0", creationDate: "2024-02-29T12:00:00Z",
                            inApp: [])),
                    provenance: Provenance(preset: "appstore", recipe: [])),
                Vector(
                    id: Self.invalidID, revision: 2, description: "Foreign root.", file: "chain/foreign-root.der",
                    sha256: digest("chain/foreign-root.der"), flags: [], severity: .critical, features: [],
                    canary: false, context: context,
                    expected: Expectation(verdict: .invalid, errorClasses: [.chainUntrusted]),
                    provenance: Provenance(
                        preset: "appstore", recipe: [RecipeStep(mutation: "foreign-root", parameters: ["root": "other"])])),
            ])
    }

    /// Lints the fixture's manifest after `change`, against the fixture's files.
    func lint(after change: (inout Manifest) -> Void) -> [LintFinding] {
        var changed = manifest
        change(&changed)
        return Linter.lint(changed, vectorsDirectory: directory)
    }
}
