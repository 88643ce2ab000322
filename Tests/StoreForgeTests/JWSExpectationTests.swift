import Foundation
import JWSModel
import ReceiptConformance
import ReceiptCorpus
import StoreForge
import ReceiptModel
import ReferenceValidation
import ReceiptValidationServer
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport
import AppStoreVocabulary

/// Issue 21 items 5–7: the JWS expectations real StoreKit 2 verifiers dispute. The committed corpus is run, as
/// `forge run --target swift:reference` runs it, against the reference verifier configured as three kinds of
/// real verifier would be: one that never accepts Xcode-signed data, one with a sane size bound, and one that
/// evaluates an AppTransaction's chain at its `signedDate` (Apple's Python library). Each must be conformant
/// under apple-compatible; the vectors must keep their feature gating and their either-verdicts.
@Suite("JWS expectations real verifiers dispute", .serialized, .timeLimit(.minutes(2)))
struct JWSExpectationTests {
    static let vectors = Repository.vectors
    static let manifest = try! ManifestIO.load(from: vectors)
    static let jws = manifest.vectors.filter { $0.context.artifact != nil }
    static let reference = try! ReferenceHarness(vectorsDirectory: vectors)
    /// Every feature the corpus defines; a verifier below declares all but those it lacks.
    /// Every feature the reference verifier can honour: all but `online` (it does not go online).
    static let allFeatures = ReferenceHarness.features.map(\.rawValue).sorted()
    /// The Xcode-shaped vectors a Production verifier must reject: judged for everyone, never behind `xcode`.
    static let xcodeAsProduction = [
        "jws-binding::environment-xcode-signed-production", "jws-binding::unsigned-xcode-in-production", "jws-header::xcode-kid-production",
        "jws-x5c::xcode-certificate-production",
    ]

    static func run(_ verifier: ModelVerifier, profile: String, ids: (Vector) -> Bool = { _ in true }) async throws -> RunResults {
        try await ConformanceRunner(manifest: manifest, vectorsDirectory: vectors, profile: profile, parallelism: 2)
            .run(verifier) { $0.context.artifact != nil && ids($0) }
    }

    @Test("Item 5: Xcode-signed JWS are behind the xcode feature; Xcode data presented as Production is judged for every verifier")
    func xcodeBehindFeature() async throws {
        // Accepting these needs an Xcode verifier (checked as environment Xcode).
        let xcode = Self.jws.filter { $0.context.environment == .xcode }
        #expect(xcode.count >= 3)
        #expect(xcode.filter { !$0.features.contains(Feature.xcode.rawValue) }.map(\.id) == [], "accepting these needs an Xcode verifier")
        for id in Self.xcodeAsProduction {
            let vector = try #require(Self.manifest.vectors.first { $0.id.text == id })
            #expect(!vector.features.contains(Feature.xcode.rawValue) && vector.expected.verdict == .invalid && vector.context.environment == .production, "\(id)")
        }
        // A Production/Sandbox verifier that never accepts Xcode data: it declares everything but xcode.
        let noXcode = ModelVerifier(reference: Self.reference, features: Self.allFeatures.filter { $0 != Feature.xcode.rawValue })
        let results = try await Self.run(noXcode, profile: ProfileID.appleCompatible)
        #expect(results.exitCode == 0, "\(results.failureSummary)")
        let online = Set(Self.manifest.vectors.filter { $0.features.contains(Feature.online.rawValue) }.map(\.id.text))
        let skipped = Set(results.results.filter { $0.outcome == .skip }.map(\.id)).subtracting(online)
        #expect(skipped == Set(xcode.map(\.id.text)))
        #expect(results.results.filter { Self.xcodeAsProduction.contains($0.id) }.allSatisfy { $0.outcome == .pass })
    }

    @Test("Item 6: a JWS over 256 KiB is behind large and either verdict (JWS_OVERSIZE) under apple-compatible; strict refuses it")
    func oversizeEither() async throws {
        let bound = VectorCatalogue.jwsSizeBound
        #expect(bound == 256 << 10)  // a sane DoS bound: real JWS are a few KiB
        var oversize: [Vector] = []
        for vector in Self.jws {
            let size = try FileManager.default.attributesOfItem(atPath: Self.vectors.appendingPathComponent(vector.file).path)[.size] as? Int ?? 0
            if size > bound { oversize.append(vector) }
        }
        #expect(Set(oversize.map(\.id)).isSuperset(of: ["jws-resource::header-1mib", "jws-resource::payload-1mib"]))
        let apple = try #require(Self.manifest.profiles[ProfileID.appleCompatible]), strict = try #require(Self.manifest.profiles[ProfileID.strict])
        for vector in oversize {
            #expect(vector.features.contains(Feature.large.rawValue), "\(vector.id)")
            #expect(vector.expected.verdict == .acceptable && vector.flags == ["JWS_OVERSIZE"], "\(vector.id)")
            #expect(apple.resolve(vector.flags) == .acceptable && strict.resolve(vector.flags) == .invalid, "\(vector.id)")
        }
        // A verifier that refuses anything over the bound, and the reference that reads it all: both conformant.
        for verifier in [
            ModelVerifier(reference: Self.reference, features: Self.allFeatures, sizeBound: bound), ModelVerifier(reference: Self.reference, features: Self.allFeatures),
        ] {
            let results = try await Self.run(verifier, profile: ProfileID.appleCompatible)
            #expect(results.exitCode == 0, "\(results.failureSummary)")
            #expect(results.results.filter { oversize.map(\.id.text).contains($0.id) }.allSatisfy { $0.outcome == .acceptable })
        }
        // Without large, they are not sent.
        let small = try await Self.run(
            ModelVerifier(reference: Self.reference, features: Self.allFeatures.filter { $0 != Feature.large.rawValue }), profile: ProfileID.appleCompatible)
        #expect(Set(small.results.filter { $0.outcome == .skip }.map(\.id)).isSuperset(of: oversize.map(\.id.text)))
    }

    @Test("Item 7: the AppTransaction instant takes either verdict under apple-compatible; strict judges it at signedDate")
    func instantEither() async throws {
        let id = "jws-time::app-transaction-creation-date-wins"
        let vector = try #require(Self.manifest.vectors.first { $0.id.text == id })
        #expect(vector.expected.verdict == .acceptable && vector.flags == ["JWS_VALIDITY_INSTANT"])
        let apple = try #require(Self.manifest.profiles[ProfileID.appleCompatible]), strict = try #require(Self.manifest.profiles[ProfileID.strict])
        #expect(apple.resolve(vector.flags) == .acceptable && strict.resolve(vector.flags) == .invalid)
        #expect(strict.description.contains("signedDate"), "strict says which instant it picks")
        // Swift, Java and Node (receiptCreationDate: the reference) and Python (signedDate first): both conformant.
        let creationDate = ModelVerifier(reference: Self.reference, features: Self.allFeatures)
        let signedDate = ModelVerifier(reference: Self.reference, features: Self.allFeatures, signedDateFirst: true)
        for verifier in [creationDate, signedDate] {
            let results = try await Self.run(verifier, profile: ProfileID.appleCompatible) { ["jws-time", "jws-valid"].contains($0.id.family) }
            #expect(results.exitCode == 0, "\(results.failureSummary)")
            #expect(results.results.first { $0.id == id }?.outcome == .acceptable)
        }
        let strictRun = try await Self.run(signedDate, profile: ProfileID.strict) { $0.id.text == id || $0.canary }
        #expect(strictRun.results.first { $0.id == id }?.outcome == .pass, "\(strictRun.failureSummary)")
    }

    @Test("Every acceptable JWS vector says in its description which verdict each side gives and what strict picks")
    func acceptableDescriptionsSayWhy() {
        let acceptable = Self.jws.filter { $0.expected.verdict == .acceptable }
        #expect(acceptable.count >= 9)
        #expect(acceptable.filter { !$0.description.contains("strict") }.map(\.id) == [])
    }
}

/// The reference verifier dressed as a third-party StoreKit 2 verifier: it declares only `features`, refuses
/// input over `sizeBound` bytes (a DoS bound), and with `signedDateFirst` evaluates an AppTransaction's chain
/// at its `signedDate` when it has one, as Apple's Python library does.
struct ModelVerifier: ReceiptValidator {
    let reference: ReferenceHarness
    var features: [String]
    var sizeBound: Int?
    var signedDateFirst = false

    func hello() async -> HarnessHello {
        var hello = reference.helloMessage()
        hello.features = features
        return hello
    }

    func validate(_ request: ValidateRequest) async -> HarnessReply {
        guard let bytes = Data(base64Encoded: request.input.data) else { return reference.reply(to: request) }
        if let sizeBound, bytes.count > sizeBound {
            return .result(seq: request.seq, verdict: .reject, errorClass: ErrorClass.resource.rawValue, message: "over \(sizeBound) bytes", decoded: nil)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard signedDateFirst, request.context.artifact == .jwsAppTransaction,
            let payload = try? JSONValue(parsing: CompactJWS(parsing: text).payload), let milliseconds = payload["signedDate"]?.numericValue,
            let instant = ReceiptDate.instant(milliseconds: milliseconds), let now = ReceiptDate.parse(request.context.now)
        else { return reference.reply(to: request) }
        let context = ValidationContext(
            trustedRoots: reference.anchors[request.context.trustAnchor].map { [$0] } ?? [], bundleID: request.context.bundleId,
            appAppleID: request.context.appAppleId, environment: request.context.environment, chainTime: instant, now: now)
        return JWSVerifier().verify(text, context: context).harnessReply(seq: request.seq)
    }
}
