import Foundation
import ReceiptCorpus
import Testing
import ForgeTestSupport
import AppStoreVocabulary

/// The manifest's `context.environment` is StoreModel's `Environment`, written in the artefact's own vocabulary.
@Suite("Context.environment: typed, written as Apple's raw values", .timeLimit(.minutes(2)))
struct ContextEnvironmentTests {
    static let vectors = Repository.vectors

    @Test("Vectors/manifest.json decodes and encodes again byte for byte")
    func manifestRoundTrip() throws {
        let bytes = try Data(contentsOf: Self.vectors.appendingPathComponent(ManifestIO.fileName))
        let manifest = try ManifestIO.load(from: Self.vectors)
        #expect(try ManifestIO.encode(manifest) == bytes)
        let environments = Set(manifest.vectors.compactMap(\.context.environment))
        #expect(environments == [.production, .sandbox, .xcode])
    }

    @Test("A receipt context writes the receipt type (ProductionSandbox), a JWS context Apple's environment (Sandbox); both read back")
    func wireValues() throws {
        let receipt = Context(now: "2025-01-01T00:00:00Z", trustAnchor: "forge-root", environment: .sandbox)
        let jws = Context(now: "2025-01-01T00:00:00Z", trustAnchor: "forge-jws-root", environment: .sandbox, artifact: .jwsTransaction)
        #expect(receipt.wireEnvironment == "ProductionSandbox")
        #expect(jws.wireEnvironment == "Sandbox")
        for context in [receipt, jws] {
            #expect(try JSONDecoder().decode(Context.self, from: JSONEncoder().encode(context)) == context)
        }
    }

    @Test("An environment in neither vocabulary, or miscased, is refused when the manifest is read", arguments: ["sandbox", "PRODUCTION", "Banana"])
    func unknownRefused(value: String) {
        let json = #"{"now":"2025-01-01T00:00:00Z","trustAnchor":"a","environment":"\#(value)"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Context.self, from: Data(json.utf8)) }
    }
}
