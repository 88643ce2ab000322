import Foundation
import ReceiptConformance
import ReceiptCorpus
import StoreForge
import ReceiptModel
import StoreServer
import ReferenceValidation
import Testing
import StoreModel
import JWSModel
import _ForgeSupport
import ForgeTestSupport
import AppStoreVocabulary

/// Every input that ever crashed a fuzz target (`FuzzTesting/FailCases/<Target>-<kind>-<hash>`), replayed
/// through the same code the target runs, so CI guards the fixes without building sanitizers. A trap
/// here kills the test process: the run fails.
@Suite("Fuzz fail cases", .timeLimit(.minutes(2)))
struct FailCaseTests {
    static let directory = Repository.file("FuzzTesting/FailCases")
    static let cases: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    static let pki = try! CertificateSet<CertificateRole>.bundled()
    static let mutator = Mutator(forge: try! Forge(receiptPKI: pki))

    @Test("The fail cases are there, each named after a fuzz target")
    func named() {
        #expect(Self.cases.count >= 2)
        let targets = [
            "FuzzReceiptDecoder", "FuzzReferenceValidator", "FuzzInspect", "FuzzRecipeReplay", "FuzzDecoders", "FuzzVerifyReceipt", "FuzzJWSVerifier", "FuzzJWSRecipeReplay",
            "FuzzServerAPI", "FuzzOCSP", "FuzzStoreKitConfiguration", "FuzzRunMerge", "FuzzWebhookAnswer",
        ]
        #expect(Self.cases.filter { name in !targets.contains { name.hasPrefix($0 + "-") } } == [])
    }

    @Test("Each fail case goes through its target's code and is refused or judged, never a trap", arguments: cases)
    func replay(name: String) throws {
        let data = try Data(contentsOf: Self.directory.appendingPathComponent(name))
        let bytes = [UInt8](data)
        switch name.prefix(while: { $0 != "-" }) {
        case "FuzzReceiptDecoder":
            if let der = try? ReceiptInput.decode(bytes).der, let container = try? ReceiptContainer(berEncoded: der), let payload = container.payload {
                _ = try? AppReceipt(payloadBytes: payload)
            }
            _ = try? AppReceipt(payloadBytes: bytes)
        case "FuzzReferenceValidator", "FuzzInspect":
            let context = ValidationContext(
                trustedRoots: [Self.pki[.root].certificate, Self.pki[.storeKit].certificate], bundleID: "com.example.app",
                appVersion: "1", environment: .production, now: pinnedNow)
            let report = ReferenceValidator().validate(bytes, context: context)
            let inspection = Inspection(receipt: report, source: name, inputSize: bytes.count, includeChecks: true)
            #expect(!inspection.text().isEmpty)
            _ = inspection.json().serialized(pretty: false)
            if let transactionReceipt = TransactionReceiptInspection(bytes, source: name) {
                let checked = Inspection(transactionReceipt, report: TransactionReceiptValidator().validate(bytes, context: context))
                #expect(!checked.text().isEmpty)
                _ = checked.json().serialized(pretty: false)
            }
        case "FuzzRecipeReplay":
            let recipe = data.first == UInt8(ascii: "{") ? try JSONDecoder().decode(MutantRecipe.self, from: data) : MutantRecipe(choosingFrom: bytes)
            // Refused or rebuilt; either way the same on every replay.
            #expect((try? Self.mutator.replay(recipe)) == (try? Self.mutator.replay(recipe)))
        case "FuzzJWSRecipeReplay":
            // As the target reads it: a JSON recipe replayed as `forge mutate --replay` does, other bytes as JWS choices.
            let recipe = data.first == UInt8(ascii: "{") ? try JSONDecoder().decode(MutantRecipe.self, from: data) : MutantRecipe(choosingJWSFrom: bytes)
            #expect((try? Self.mutator.replay(recipe)) == (try? Self.mutator.replay(recipe)))
        case "FuzzJWSVerifier":
            // As the target reads it: the first byte picks raw text or header 0x00 payload, judged under the bundled root.
            let rest = Array(bytes.dropFirst())
            let text: String
            if (bytes.first ?? 0) % 2 == 0 {
                text = String(decoding: rest, as: UTF8.self)
            } else {
                let split = rest.firstIndex(of: 0) ?? rest.count
                let payload = split < rest.count ? Array(rest[(split + 1)...]) : []
                text = CompactJWS(header: Array(rest[..<split]), payload: payload, signature: Array(payload.suffix(64))).compact
            }
            let roots = [try CertificateSet<JWSRole>.bundled().certificate(.root)]
            let context = ValidationContext(trustedRoots: roots, bundleID: "com.example.app", appAppleID: 1, environment: .production)
            _ = Inspection(jws: text, report: JWSVerifier().verify(text, context: context))?.json().serialized(pretty: false)
            _ = Inspection(jws: text)?.text()
        case "FuzzVerifyReceipt":
            let service = VerifyReceiptService(configuration: .init(trustedRoots: [Self.pki[.root].certificate], sharedSecret: "s3cret", now: pinnedNow))
            let rest = Array(bytes.dropFirst())
            for endpoint in AppleEndpoint.allCases {
                _ = service.answer(endpoint: endpoint, body: rest)
                let body = #"{"receipt-data":""# + Data(rest).base64EncodedString() + #"","password":"s3cret"}"#
                _ = service.answer(endpoint: endpoint, body: Array(body.utf8))
            }
            _ = try? Fault(parsing: String(decoding: rest, as: UTF8.self))
            if let scenario = try? Scenario.decode(json: Data(rest)) { _ = try? Self.mutator.forge.make(scenario, now: pinnedNow, reissuedAt: pinnedNow) }
        case "FuzzServerAPI": FuzzTargetReplays.serverAPI(bytes)
        case "FuzzOCSP": FuzzTargetReplays.ocsp(bytes)
        case "FuzzStoreKitConfiguration": FuzzTargetReplays.storeKit(bytes)
        case "FuzzRunMerge": FuzzTargetReplays.runMerge(bytes)
        case "FuzzWebhookAnswer": break  // over a socket, through the HTTP client: WebhookAnswerFailCaseTests
        default:  // FuzzDecoders
            if let manifest = try? ManifestIO.decode(data) { _ = Linter.lint(manifest, vectorsDirectory: nil) }
            if let baseline = try? JSONDecoder().decode(Baseline.self, from: data) {
                var results = RunResults.exemplar
                _ = baseline.apply(to: &results, today: "2026-01-01")
            }
            if let mapping = try? ResponseMapping.load(data) { _ = mapping.reply(seq: 1, httpStatus: 200, body: data) }
            _ = ResponseMapping.verifyReceipt.reply(seq: 1, httpStatus: 200, body: data)
        }
    }
}
