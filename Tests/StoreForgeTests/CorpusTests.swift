import Foundation
import ForgeCrypto
import ReceiptConformance
import ReceiptCorpus
import StoreForge
import ReceiptModel
import ReferenceValidation
import Testing
import _ForgeSupport
import ForgeTestSupport
import StoreModel

/// The committed corpus: reproducible, lint-clean, and its expectations confirmed by two oracles.
@Suite("The committed corpus", .timeLimit(.minutes(2)))
struct CorpusTests {
    static let vectors = Repository.vectors
    /// Generated as `forge vectors generate` does: with the conformance runner's schemas.
    static let forge = try! Forge.bundled()
    static let generated = try! CorpusGenerator(
        forge: forge, additionalSchemas: ConformanceSchemas.all()
    ).build()

    @Test("Regenerating gives the committed Vectors/ byte for byte (run `swift run forge vectors generate` after changing the forge)")
    func reproducible() throws {
        for (path, data) in Self.generated.files.sorted(by: { $0.key < $1.key }) {
            let committed = try? Data(contentsOf: Self.vectors.appendingPathComponent(path))
            #expect(committed == data, "Vectors/\(path) differs from a fresh generation")
        }
        let manifest = try ManifestIO.load(from: Self.vectors)
        #expect(manifest.vectors.count == Self.generated.manifest.vectors.count)
    }

    @Test("The committed corpus is lint-clean")
    func lint() throws {
        let findings = Linter.lint(try ManifestIO.load(from: Self.vectors), vectorsDirectory: Self.vectors)
        #expect(findings.map(\.description) == [])
    }

    @Test("Acceptable vectors: the reference validator answers what the apple-compatible profile says")
    func acceptableResolution() throws {
        let manifest = Self.generated.manifest
        let profile = try #require(manifest.profiles["apple-compatible"])
        let pki = try CertificateSet<CertificateRole>.bundled()
        for vector in manifest.vectors where vector.expected.verdict == .acceptable {
            let resolved = profile.resolve(vector.flags)
            guard resolved != .acceptable else { continue }  // the profile leaves it to the validator
            let bytes = try #require(Self.generated.files[vector.file])
            let context = ValidationContext(
                trustedRoots: [pki[vector.context.trustAnchor == "forge-storekit" ? .storeKit : .root].certificate],
                bundleID: vector.context.bundleId, appVersion: vector.context.appVersion,
                deviceID: vector.context.deviceId.flatMap(DeviceID.init)?.bytes, environment: vector.context.environment,
                now: ReceiptDate.parse(vector.context.now)!)
            let report = ReferenceValidator().validate([UInt8](bytes), context: context)
            #expect(report.verdict.rawValue == resolved.rawValue, "\(vector.id): \(report.message)")
        }
    }

    @Test("Profiles differ where they say they do: strict rejects every quirk, lenient takes either verdict, apple-compatible decides only Apple's cases")
    func profileResolutions() throws {
        let manifest = Self.generated.manifest
        let acceptable = manifest.vectors.filter { $0.expected.verdict == .acceptable }
        let strict = try #require(manifest.profiles["strict"]), lenient = try #require(manifest.profiles["lenient"])
        let apple = try #require(manifest.profiles["apple-compatible"])
        #expect(acceptable.count >= 15)
        #expect(acceptable.filter { strict.resolve($0.flags) != .invalid }.map(\.id) == [])
        #expect(acceptable.filter { lenient.resolve($0.flags) != .acceptable }.map(\.id) == [])
        let byVerdict = Dictionary(grouping: acceptable, by: { apple.resolve($0.flags) }).mapValues { Set($0.map(\.id)) }
        #expect(byVerdict[.invalid] == ["chain::leaf-marker-critical", "jws-chain::leaf-marker-critical"])
        #expect(byVerdict[.valid] == ["encoding::long-form-lengths", "encoding::unsorted-payload-set", "signature::signed-attributes"])
        #expect(
            byVerdict[.acceptable, default: []].isSuperset(of: [
                "chain::leaf-without-digital-signature", "encoding::bundle-id-ia5", "encoding::creation-date-utf8",
                "transport::pem", "chain::root-not-embedded", "signature::sha512",
            ]))
        // Every inner-tag vector follows the one rule: acceptable, flagged, no error class of its own.
        let innerTag = manifest.vectors.filter { $0.flags.contains("WRONG_INNER_TAG") }
        #expect(innerTag.count >= 5 && innerTag.allSatisfy { $0.expected.verdict == .acceptable && $0.expected.errorClasses.isEmpty })
        // Transport variants are for harnesses that decode text, and only they see them.
        #expect(
            manifest.vectors.filter { $0.id.family == "transport" && $0.flags.contains("TRANSPORT_ENCODING") }
                .allSatisfy { $0.features == [Feature.transportDecoding.rawValue] })
    }

    @Test("The manifest's error taxonomy is ErrorClass.all, both ways; every expected class is one of them and has its family")
    func taxonomyIsTheType() throws {
        let manifest = try ManifestIO.load(from: Self.vectors)
        #expect(manifest.errorTaxonomy == ErrorClass.taxonomy)
        let known = Set(ErrorClass.all.map(\.key))
        #expect(known.count == ErrorClass.all.count, "a class is listed twice")
        #expect(known.allSatisfy { known.contains(ErrorClass(rawValue: $0.family)) })
        let expected = Set(manifest.vectors.flatMap(\.expected.errorClasses))
        #expect(expected.subtracting(known).isEmpty, "\(expected.subtracting(known))")
    }

    @Test("Unpadded transport variants really drop padding: the receipt's length is not a multiple of 3")
    func unpaddedIsUnpadded() throws {
        for id in ["transport::base64-unpadded", "transport::base64url"] {
            let vector = try #require(Self.generated.manifest.vectors.first { $0.id.text == id })
            let text = try #require(Self.generated.files[vector.file])
            #expect(!text.contains(UInt8(ascii: "=")) && text.count % 4 != 0, "\(id) has nothing to unpad")
        }
    }

    @Test("openssl cms -verify agrees on every DER vector of the signature and chain families that it can judge", .requires(.openssl))
    func opensslOracle() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let anchors = ["forge-root": "Certificates/root.pem", "forge-storekit": "Certificates/storekit.pem"]
        // OpenSSL checks the signature and the path, not Apple's policy (markers, chain length) nor the
        // receipt's bindings: those vectors are judged by the reference validator only.
        let policyOnly: [ErrorClass] = [.chainLeafMarker, .chainIntermediateMarker, .chainLength]
        let file = directory.appendingPathComponent("v.der"), content = directory.appendingPathComponent("content.bin")
        var judged = 0
        for vector in Self.generated.manifest.vectors where ["signature", "chain"].contains(vector.id.family) && vector.file.hasSuffix(".der") {
            if vector.expected.verdict == .acceptable || vector.expected.errorClasses.contains(where: policyOnly.contains) { continue }
            // OpenSSL has no "at creation date" mode here; every vector is made and judged inside the leaf's window anyway.
            try #require(Self.generated.files[vector.file], "\(vector.file) was generated").write(to: file)
            let anchor = try #require(anchors[vector.context.trustAnchor], "\(vector.id)'s anchor")
            let verified = try await openssl([
                "cms", "-verify", "-binary", "-inform", "DER", "-in", file.path, "-CAfile", Repository.file(anchor).path, "-purpose", "any",
                "-attime", String(Int(pinnedNow.timeIntervalSince1970)), "-out", content.path,
            ])
            let accepted = verified.status == 0
            // Where OpenSSL is more tolerant than Apple's rules the vector says so (OPENSSL_DISAGREES), and that must stay true.
            let expected = vector.expected.verdict == .valid || vector.flags.contains("OPENSSL_DISAGREES")
            #expect(accepted == expected, "openssl \(accepted ? "accepts" : "rejects") \(vector.id)")
            judged += 1
        }
        #expect(judged >= 30)
    }
}
