import Foundation
import ForgeCrypto
import ReceiptConformance
import ReceiptCorpus
import StoreForge
import ReceiptModel
import ReferenceValidation
import ReceiptValidationServer
import Synchronization
import Testing
import _ForgeSupport
import ForgeTestSupport

let manifest = try! ManifestIO.load(from: Repository.vectors)

/// Says the same thing to every receipt.
struct Constant: ReceiptValidator {
    let verdict: HarnessReply.Verdict
    let errorClass: String?
    var features: [String] = Array(manifest.features.keys)
    var clockInjection = true
    func hello() async -> HarnessHello {
        HarnessHello(
            implementation: "constant", features: features, artifacts: ArtifactGroup.allCases, errorGranularity: .coarse, clockInjection: clockInjection,
            maxConcurrency: 4)
    }
    func validate(_ request: ValidateRequest) async -> HarnessReply {
        .result(seq: request.seq, verdict: verdict, errorClass: errorClass, message: nil, decoded: nil)
    }
}

@Suite("Conformance runner", .timeLimit(.minutes(2)))
struct RunnerTests {
    @Test("The reference validator is conformant to the corpus: no false accepts, false rejects or wrong reasons")
    func reference() async throws {
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: Repository.vectors, profile: "apple-compatible").run(
            ReferenceHarness(vectorsDirectory: Repository.vectors))
        // It does not go online: the vectors that need `online` are SKIP, and only they.
        let online = Set(manifest.vectors.filter { $0.features.contains(Feature.online.rawValue) }.map(\.id.text))
        #expect(online.count >= 16 && Set(results.results.filter { $0.outcome == .skip }.map(\.id)) == online)
        let failures = results.results.filter { $0.outcome != .pass && $0.outcome != .acceptable && !online.contains($0.id) }
        #expect(failures.map { "\($0.id): \($0.outcome.rawValue) \($0.errorClass ?? "") \($0.message ?? "")" } == [])
        // ACCEPTABLE only where apple-compatible leaves the choice to the validator.
        #expect(results.results.filter { $0.outcome == .acceptable }.allSatisfy { $0.expected == .acceptable })
        #expect(results.exitCode == 0)
        #expect(results.results.count == manifest.vectors.count)
        #expect(results.canaryDiagnosis == nil)
    }

    @Test("A vector file missing from the corpus stops the run before the corpus is judged (only the canaries ran), naming the file")
    func missingVectorFile() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("Vectors")
        try FileManager.default.copyItem(at: Repository.vectors, to: copy)
        // One the reference validator judges (it SKIPs `online` vectors without reading them).
        let gone = try #require(manifest.vectors.last { $0.id.family != "valid" && !$0.features.contains(Feature.online.rawValue) })
        try FileManager.default.removeItem(at: copy.appendingPathComponent(gone.file))
        let judged = Mutex(0)
        let harness = try ReferenceHarness(vectorsDirectory: copy)
        do throws(CorpusError) {
            _ = try await ConformanceRunner(manifest: manifest, vectorsDirectory: copy).run(harness, progress: { _, _, _ in judged.withLock { $0 += 1 } })
            Issue.record("a run over a corpus with a missing file finished")
        } catch {
            #expect(error.code == .notFound && error.message.contains(gone.file), "\(error)")
        }
        #expect(judged.withLock { $0 } < 10, "only the canaries are judged before the corpus is known whole")
    }

    @Test("An accept-everything validator passes the canaries, then every invalid vector is a FALSE_ACCEPT (exit 1)")
    func acceptAll() async throws {
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: Repository.vectors).run(Constant(verdict: .accept, errorClass: nil))
        let invalid = manifest.vectors.filter { $0.expected.verdict == .invalid }.count
        #expect(results.counts["FALSE_ACCEPT"] == invalid)
        #expect(results.exitCode == 1)
    }

    @Test("The three profiles judge an accept-everything validator differently, as their descriptions say", arguments: ["strict", "apple-compatible", "lenient"])
    func profilesThroughTheRunner(profile: String) async throws {
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: Repository.vectors, profile: profile)
            .run(Constant(verdict: .accept, errorClass: nil))
        let acceptable = Set(manifest.vectors.filter { $0.expected.verdict == .acceptable }.map(\.id.text))
        let onAcceptable = Dictionary(grouping: results.results.filter { acceptable.contains($0.id) }, by: \.outcome).mapValues { Set($0.map(\.id)) }
        switch profile {
        case "strict": #expect(onAcceptable == [.falseAccept: acceptable])
        case "lenient": #expect(onAcceptable == [.acceptable: acceptable])
        default:
            #expect(onAcceptable[.falseAccept] == ["chain::leaf-marker-critical", "jws-chain::leaf-marker-critical"])
            #expect(onAcceptable[.pass] == ["encoding::long-form-lengths", "encoding::unsorted-payload-set", "signature::signed-attributes"])
            #expect(onAcceptable[.acceptable]?.count == acceptable.count - 5)
        }
    }

    @Test("Canaries rejected only where they need a feature: the diagnosis names the feature, not the trust anchor")
    func featureCanaryDiagnosis() async throws {
        /// Accepts everything but Xcode receipts, like a validator that never supports them, while declaring every feature.
        struct NoXcode: ReceiptValidator {
            func hello() async -> HarnessHello {
                HarnessHello(
                    implementation: "no-xcode", features: Array(manifest.features.keys), artifacts: ArtifactGroup.allCases, errorGranularity: .coarse,
                    maxConcurrency: 4)
            }
            func validate(_ request: ValidateRequest) async -> HarnessReply {
                let xcode = request.context.trustAnchor == "forge-storekit"
                return .result(seq: request.seq, verdict: xcode ? .reject : .accept, errorClass: xcode ? "chain.untrusted" : nil, message: nil, decoded: nil)
            }
        }
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: Repository.vectors).run(NoXcode())
        #expect(results.exitCode == 2)
        let diagnosis = try #require(results.canaryDiagnosis)
        #expect(diagnosis.contains("`xcode`") && diagnosis.contains("declare features without"), "\(diagnosis)")
        #expect(diagnosis.contains("--features device-hash,large,online,robustness,sha1,transport-decoding"), "\(diagnosis)")
        #expect(!diagnosis.contains("is the test root"))
    }

    @Test("A reject-everything validator fails the canaries: the run stops with exit 2 and a diagnosis")
    func rejectAll() async throws {
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: Repository.vectors)
            .run(Constant(verdict: .reject, errorClass: "chain.untrusted"))
        #expect(results.exitCode == 2)
        #expect(results.results.count == manifest.vectors.count)
        #expect(results.counts["SKIP"] == manifest.vectors.filter { !$0.canary }.count)
        #expect(results.canaryDiagnosis?.contains("trust anchor") == true)
    }

    @Test("Vectors needing an undeclared feature are SKIPs, never dropped")
    func featureSkips() async throws {
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: Repository.vectors)
            .run(Constant(verdict: .accept, errorClass: nil, features: []))
        #expect(results.results.count == manifest.vectors.count)
        #expect(results.counts["SKIP"] == manifest.vectors.filter { !$0.features.isEmpty }.count)
    }

    @Test("A harness that cannot set its clock has the time-dependent vectors skipped, with the reason")
    func noClock() async throws {
        let results = try await ConformanceRunner(manifest: manifest, vectorsDirectory: Repository.vectors)
            .run(Constant(verdict: .accept, errorClass: nil, clockInjection: false))
        let skipped = results.results.filter { $0.outcome == .skip }
        #expect(Set(skipped.map(\.id)) == Set(manifest.vectors.filter(ConformanceRunner.dependsOnClock).map(\.id.text)))
        #expect(skipped.map(\.id).contains("time::receipt-expired") && skipped.map(\.id).contains("chain::intermediate-expired"))
        #expect(skipped.allSatisfy { $0.message?.contains("clockInjection") == true })
        #expect(!skipped.contains { $0.id.hasPrefix("valid::") })
    }

    @Test("ConformanceRunner.check, as a user's test calls it: finds the corpus, applies the profile, and tolerates a baseline's known failures")
    func oneCall() async throws {
        // No `vectors:`: found from the working directory or this package, as for a user's package.
        let reference = try await ConformanceRunner.check(ReferenceHarness(vectorsDirectory: Repository.vectors), profile: "apple-compatible")
        #expect(reference.exitCode == 0, "\(reference.failureSummary)")
        #expect(reference.results.count == manifest.vectors.count && reference.failureSummary.isEmpty)

        let lax = Constant(verdict: .accept, errorClass: nil)
        let failing = try await ConformanceRunner.check(lax, vectors: Repository.vectors.path, profile: "apple-compatible")
        #expect(failing.exitCode == 1 && failing.failureSummary.contains("FALSE_ACCEPT chain::foreign-root"))

        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let directory = folder.appendingPathComponent("baseline.json")
        try JSONEncoder().encode(Baseline.written(from: failing, keeping: nil)).write(to: directory)
        let tolerated = try await ConformanceRunner.check(lax, vectors: Repository.vectors.path, profile: "apple-compatible", baseline: directory.path)
        #expect(tolerated.exitCode == 0, "\(tolerated.failureSummary)")
        #expect(tolerated.counts["XFAIL"] == failing.counts["FALSE_ACCEPT"])

        await #expect(throws: CorpusError.self) { try await ConformanceRunner.check(lax, vectors: Repository.vectors.path, profile: "nope") }
        await #expect(throws: ConformanceError.self) {
            try await ConformanceRunner.check(lax, vectors: Repository.vectors.path, baseline: "/nonexistent/baseline.json")
        }
    }
}
