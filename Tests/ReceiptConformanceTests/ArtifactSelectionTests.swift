import Foundation
import ReceiptConformance
import ReceiptCorpus
import Testing

/// Issue 21, item 1: how a run's artefacts are chosen, in the order the runner applies.
@Suite("Artifact selection", .timeLimit(.minutes(2)))
struct ArtifactSelectionTests {
    static func hello(features: [String] = [], artifacts: [ArtifactGroup]? = nil) -> HarnessHello {
        HarnessHello(implementation: "test", features: features, artifacts: artifacts, errorGranularity: .none)
    }

    @Test("--artifacts wins; then the hello's artifacts; then the `jws` feature (alias: JWS only); then receipts")
    func precedence() {
        #expect(ArtifactSelection.resolve(option: [.jws], hello: Self.hello(artifacts: [.receipt])) == ArtifactSelection(artifacts: [.jws], source: .option))
        #expect(ArtifactSelection.resolve(option: nil, hello: Self.hello(features: ["jws"], artifacts: [.jws, .receipt])).artifacts == [.receipt, .jws])
        #expect(ArtifactSelection.resolve(option: nil, hello: Self.hello(features: ["xcode", "jws"])) == ArtifactSelection(artifacts: [.jws], source: .featureAlias))
        #expect(ArtifactSelection.resolve(option: nil, hello: Self.hello(features: ["xcode"])) == ArtifactSelection(artifacts: [.receipt], source: .default))
        #expect(ArtifactSelection.resolve(option: nil, hello: Self.hello(artifacts: [])).source == .default, "an empty list declares nothing")
        #expect(ArtifactSelection.resolve(option: nil, hello: nil).artifacts == [.receipt], "no handshake: the default")
    }

    @Test("A hello naming an unknown artefact is refused with the known ones, not Codable's words")
    func unknownArtifact() {
        let json = #"{"type":"hello","protocol":1,"implementation":"x","features":[],"artifacts":["reciept"],"errorGranularity":"none","clockInjection":true,"maxConcurrency":1}"#
        #expect {
            try JSONDecoder().decode(HarnessHello.self, from: Data(json.utf8))
        } throws: { error in
            "\(error)".contains("'reciept' is not an artifact; known: receipt, jws")
        }
    }

    @Test("The summary says what was judged and why")
    func summary() {
        #expect(
            ArtifactSelection(artifacts: [.receipt], source: .default, excluded: 3).summary
                == "artifacts: receipt (default: the target declares none; pass --artifacts all to include StoreKit 2 JWS and iOS 6 transaction receipts); 3 vectors of other artefacts not run"
        )
        #expect(ArtifactSelection(artifacts: [.jws, .receipt], source: .option).summary == "artifacts: receipt, jws (--artifacts receipt,jws)")
        #expect(
            ArtifactSelection(artifacts: [.transactionReceipt, .jws, .receipt], source: .option).summary == "artifacts: receipt, jws, transaction-receipt (--artifacts all)")
    }
}
