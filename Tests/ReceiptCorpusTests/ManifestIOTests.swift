import Foundation
import ReceiptCorpus
import Testing
import _ForgeSupport

@Suite(.timeLimit(.minutes(2)))
struct ManifestIOTests {
    /// The error `decode` throws, or nil when it succeeds.
    private func decodeError(_ data: Data) -> CorpusError? {
        do {
            _ = try ManifestIO.decode(data)
            return nil
        } catch {
            return error
        }
    }

    /// The exemplar manifest as a mutable JSON object, for making broken variants.
    private func exemplarObject() throws -> [String: Any] {
        let data = try ManifestIO.encode(.exemplar)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func roundTripsEveryField() throws {
        let fixture = try CorpusFixture()
        for manifest in [Manifest.exemplar, fixture.manifest] {
            #expect(try ManifestIO.decode(ManifestIO.encode(manifest)) == manifest)
        }
    }

    @Test func encodingIsCanonical() throws {
        let first = try ManifestIO.encode(.exemplar)
        #expect(try ManifestIO.encode(.exemplar) == first)
        // Dictionaries built in another order are the same value, so the same bytes.
        var reordered = Manifest.exemplar
        reordered.errorTaxonomy = ["z.last": "z", "a.first": "a"]
        var sameValue = Manifest.exemplar
        sameValue.errorTaxonomy = ["a.first": "a", "z.last": "z"]
        #expect(try ManifestIO.encode(reordered) == ManifestIO.encode(sameValue))

        let text = try #require(String(data: first, encoding: .utf8))
        #expect(text.hasSuffix("}\n"))
        #expect(text.contains("\"file\" : \"valid/appstore.der\""), "slashes are not escaped")
        let topLevelKeys = text.split(separator: "\n")
            .filter { $0.hasPrefix("  \"") }
            .map { $0.dropFirst(3).prefix { $0 != "\"" } }
        #expect(topLevelKeys.count == 9)
        #expect(topLevelKeys == topLevelKeys.sorted())
    }

    @Test func garbageIsInvalidManifestAtRoot() throws {
        let error = try #require(decodeError(Data("not json {".utf8)))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("(root)"))
    }

    @Test func wrongTypeNamesTheKeyPath() throws {
        var object = try exemplarObject()
        var vectors = try #require(object["vectors"] as? [[String: Any]])
        vectors[0]["revision"] = "one"
        object["vectors"] = vectors
        let error = try #require(decodeError(try JSONSerialization.data(withJSONObject: object)))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("vectors[0].revision"), "\(error.message)")
    }

    @Test func missingKeyNamesTheKeyPath() throws {
        var object = try exemplarObject()
        var suite = try #require(object["suite"] as? [String: Any])
        suite["version"] = nil
        object["suite"] = suite
        let error = try #require(decodeError(try JSONSerialization.data(withJSONObject: object)))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("suite.version"), "\(error.message)")
    }

    @Test func unknownVerdictIsInvalid() throws {
        let text = try #require(String(data: ManifestIO.encode(.exemplar), encoding: .utf8))
        let broken = text.replacingOccurrences(of: "\"verdict\" : \"valid\"", with: "\"verdict\" : \"maybe\"")
        #expect(broken != text)
        let error = try #require(decodeError(Data(broken.utf8)))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("vectors[0].expected.verdict"), "\(error.message)")
    }

    /// Issue 39, item 7: `context.artifact` is an ``ArtifactKind``; a value that names none used to read as a receipt.
    @Test("An unknown artifact is an invalid manifest naming the vector, not a receipt", arguments: ["jws-receipt", "JWS-transaction", ""])
    func unknownArtifactIsInvalid(value: String) throws {
        var object = try exemplarObject()
        var vectors = try #require(object["vectors"] as? [[String: Any]])
        var context = try #require(vectors[0]["context"] as? [String: Any])
        context["artifact"] = value
        vectors[0]["context"] = context
        object["vectors"] = vectors
        let error = try #require(decodeError(try JSONSerialization.data(withJSONObject: object)))
        #expect(error.code == .invalidManifest)
        let id = try #require(vectors[0]["id"] as? String)
        #expect(error.message.contains("vector \(id) at vectors[0].context.artifact"), "\(error.message)")
        #expect(error.message.contains("jws-transaction"), "the known values are listed: \(error.message)")
    }

    @Test func knownArtifactsRoundTrip() throws {
        for kind in ArtifactKind.allCases {
            var manifest = Manifest.exemplar
            manifest.vectors[0].context.artifact = kind
            #expect(try ManifestIO.decode(ManifestIO.encode(manifest)).vectors[0].context.artifactKind == kind)
        }
    }

    @Test func loadsManifestFromVectorsDirectory() throws {
        let fixture = try CorpusFixture()
        try ManifestIO.encode(fixture.manifest).write(to: fixture.directory.appendingPathComponent("manifest.json"))
        #expect(try ManifestIO.load(from: fixture.directory) == fixture.manifest)
    }

    @Test func loadingWithoutManifestIsNotFound() throws {
        let fixture = try CorpusFixture()
        do {
            _ = try ManifestIO.load(from: fixture.directory)
            Issue.record("loaded a manifest that does not exist")
        } catch {
            #expect(error.code == .notFound)
        }
    }
}
