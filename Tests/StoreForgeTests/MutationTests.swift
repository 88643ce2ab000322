import ReceiptCorpus
import Foundation
import ForgeCrypto
import StoreForge
import ReceiptModel
import ReferenceValidation
import Testing
import _ForgeSupport
import StoreModel

/// Every mutation, applied to a valid receipt, gives the verdict and error class it is documented to expose.
@Suite("Mutations", .timeLimit(.minutes(2)))
struct MutationTests {
    static let pki = try! CertificateSet<CertificateRole>.bundled()
    static let scenario = Scenario(bundleID: "com.example.app", seed: 5, purchases: [Purchase(productID: "com.example.pro", renewals: 1)])

    struct Case: CustomTestStringConvertible, Sendable {
        let steps: [MutationStep]
        let preset: Preset
        let expected: ErrorClass?
        var testDescription: String {
            steps.map { "\($0.mutation)\($0.parameters.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined())" }.joined(separator: " + ") + " (\(preset.rawValue))"
        }
        init(_ steps: [MutationStep], _ expected: ErrorClass?, preset: Preset = .appstore) {
            self.steps = steps
            self.expected = expected
            self.preset = preset
        }
    }

    static let cases: [Case] = [
        Case([MutationStep("drop-attribute", ["type": "2"])], .payloadMissingField),
        Case([MutationStep("set-attribute", ["type": "2", "utf8": "com.example.other"])], .bindingBundleID),
        Case([MutationStep("add-attribute", ["type": "9999", "hex": "deadbeef"])], nil),
        Case([MutationStep("add-attribute", ["type": "2", "utf8": "com.example.other"])], .payloadInvalidField),
        Case([MutationStep("add-attribute", ["type": "1799", "utf8": "x", "version": "3"])], nil),
        Case([MutationStep("retag-attribute", ["type": "2", "tag": "16"])], .payloadInvalidField),
        Case([MutationStep("purchase-drop-attribute", ["type": "1702"])], nil),
        Case([MutationStep("embed-certificate", ["hex": hexString(pki[.foreignRoot].certificate.derRepresentation), "index": "2"])], nil),
        Case([MutationStep("reverse-order")], nil),
        Case([MutationStep("integer-leading-zero", ["type": "1"])], nil),
        Case([MutationStep("purchase-set-attribute", ["type": "1701", "integer": "-1"])], nil),
        Case([MutationStep("payload-trailing-bytes")], .payloadMalformed),
        Case([MutationStep("digest-oid", ["oid": KnownOID.sha1])], .signatureInvalid),
        Case([MutationStep("signer-digest-oid", ["oid": KnownOID.sha1])], .signatureAlgorithmMismatch),
        Case([MutationStep("hash-algorithm", ["algorithm": "sha1"])], .signatureInvalid),
        Case([MutationStep("consistent-digest", ["algorithm": "sha512"])], nil),
        Case([MutationStep("consistent-digest", ["algorithm": "md5"])], .signatureUnsupportedAlgorithm),
        Case([MutationStep("digest-oid", ["oid": "1.2.3.4"])], .signatureUnsupportedAlgorithm),
        Case([MutationStep("signature-algorithm-oid", ["oid": KnownOID.sha256WithRSAEncryption])], nil),
        Case([MutationStep("signature-algorithm-oid", ["oid": KnownOID.sha1WithRSAEncryption])], .signatureAlgorithmMismatch),
        Case([MutationStep("sign-with", ["role": "foreign-root"])], .signatureInvalid),
        Case([MutationStep("signed-attributes")], nil),
        Case([MutationStep("signed-attributes", ["message-digest": "wrong"])], .signatureMessageDigest),
        Case([MutationStep("flip-signature-bit", ["byte": "100"])], .signatureInvalid),
        Case([MutationStep("signer-count", ["count": "0"])], .containerSignerCount),
        Case([MutationStep("signer-count", ["count": "2"])], .containerSignerCount),
        Case([MutationStep("signer-serial")], .signatureSignerNotFound),
        Case([MutationStep("empty-signature")], .signatureInvalid),
        Case([MutationStep("certificate-order", ["order": "reverse"])], nil),
        Case([MutationStep("certificate-order", ["order": "1,0,2"])], nil),
        Case([MutationStep("drop-certificate", ["index": "2"])], nil),
        Case([MutationStep("drop-certificate", ["index": "1"])], .chainUntrusted),
        Case([MutationStep("add-certificate", ["role": "foreign-root"])], nil),
        Case([MutationStep("reissue-leaf", ["variant": "expired"])], .chainExpired),
        Case([MutationStep("reissue-leaf", ["variant": "not-yet-valid"])], .chainNotYetValid),
        Case([MutationStep("reissue-leaf", ["variant": "no-marker"])], .chainLeafMarker),
        Case([MutationStep("reissue-leaf", ["variant": "marker-critical"])], .chainInvalid),
        Case([MutationStep("reissue-leaf", ["variant": "no-digital-signature"])], nil),
        Case([MutationStep("reissue-leaf", ["variant": "self-signed"])], .chainUntrusted),
        Case([MutationStep("reissue-leaf", ["variant": "under-root"])], .chainLength),
        Case([MutationStep("reissue-intermediate", ["variant": "no-marker"])], .chainIntermediateMarker),
        Case([MutationStep("reissue-intermediate", ["variant": "expired"])], .chainExpired),
        Case([MutationStep("reissue-intermediate", ["variant": "not-ca"])], .chainInvalid),
        Case([MutationStep("reissue-intermediate", ["variant": "under-foreign-root"])], .chainUntrusted),
        Case([MutationStep("leaf-validity", ["not-before": "2024-01-01T00:00:00Z", "not-after": "2025-01-01T00:00:00Z"])], .chainExpired),
        Case([MutationStep("layout", ["wrapper": "indefinite", "econtent": "constructed-3"])], nil),
        Case([MutationStep("layout", ["wrapper": "long"])], nil),
        Case([MutationStep("layout", ["econtent": "detached"])], .containerNoContent),
        Case([MutationStep("trailing-bytes")], .containerTrailingBytes),
        Case([MutationStep("truncate", ["length": "-1"])], .containerMalformed),
        Case([MutationStep("flip-payload-bit")], .signatureInvalid),
        Case([MutationStep("transport", ["encoding": "base64-lines"])], nil),
        Case([MutationStep("transport", ["encoding": "base64url"])], nil),
        Case([MutationStep("transport", ["encoding": "double-base64"])], nil),
        Case([MutationStep("transport", ["encoding": "pem"])], nil),
        Case([MutationStep("jws-instead")], .inputEncoding),
        Case([MutationStep("nested-sequences", ["depth": "1000"])], .containerMalformed),
        Case([MutationStep("huge-declared-length")], .containerMalformed),
        Case([MutationStep("layout", ["wrapper": "minimal", "econtent": "primitive"])], nil, preset: .xcode2023),
        Case([MutationStep("reissue-intermediate", ["variant": "no-marker"])], .chainIntermediateMarker, preset: .appstoreSHA1),
    ]

    @Test("Each mutation gives its documented verdict", arguments: cases)
    func verdict(_ testCase: Case) throws {
        var scenario = Self.scenario
        scenario.preset = testCase.preset
        let forge = try Forge(receiptPKI: Self.pki)
        let clean = try forge.make(scenario, now: pinnedNow)
        let mutated = try forge.make(scenario, now: pinnedNow, mutations: testCase.steps)
        #expect(mutated.bytes != clean.bytes, "the mutation changed nothing")
        #expect(try forge.make(scenario, now: pinnedNow, mutations: testCase.steps).bytes == mutated.bytes, "replays byte for byte")
        let context = ValidationContext(trustedRoots: [Self.pki[testCase.preset.trustAnchor].certificate], bundleID: "com.example.app", now: pinnedNow)
        let report = ReferenceValidator().validate(mutated.bytes, context: context)
        #expect(report.errorClass == testCase.expected, "\(report.message)")
    }

    @Test("Every catalogued mutation is exercised by a case, and ids are unique")
    func coverage() {
        let used = Set(Self.cases.flatMap { $0.steps.map(\.mutation) })
        let all = Mutation.catalogue.filter { $0.stage.artefact == .receipt }.map(\.id)
        #expect(Set(all).count == all.count)
        #expect(Set(all).subtracting(used).sorted() == [])
        #expect(Mutation.catalogue.allSatisfy { !$0.summary.isEmpty && !$0.bugClass.isEmpty })
    }

    @Test("MutationID and the catalogue name the same mutations, once each")
    func idsOwnedOnce() {
        #expect(Mutation.catalogue.map(\.id) == MutationID.allCases.map(\.rawValue))
    }

    @Test("Bad recipes are refused with a message naming the mutation and parameter")
    func badRecipes() throws {
        let forge = try Forge(receiptPKI: Self.pki)
        #expect(throws: ForgeError(.invalidRecipe, "")) { try forge.make(Self.scenario, now: pinnedNow, mutations: [MutationStep("no-such-thing")]) }
        do {
            _ = try forge.make(Self.scenario, now: pinnedNow, mutations: [MutationStep("drop-attribute", ["type": "two"])])
        } catch {
            #expect(error.message.contains("drop-attribute") && error.message.contains("'type'"))
        }
        #expect(throws: ForgeError(.invalidRecipe, "")) {
            try forge.make(Self.scenario, now: pinnedNow, mutations: [MutationStep("reissue-leaf", ["variant": "purple"])])
        }
    }

    /// Values a hand-written recipe may hold where a number belongs.
    static let hostileNumbers = [
        "-1", "0", "1", "-9223372036854775808", "9223372036854775807", "2147483648", "1073741825", "-1073741825",
        "99999999", "", "x", "0x10", "1e3", " 1",
    ]

    @Test(
        "No parameter value traps: every mutation, every hostile number, alone and after every SignerInfo is gone",
        arguments: Mutation.catalogue.filter { $0.stage.artefact == .receipt }.map(\.id))
    func hostileParameters(id: String) throws {
        let forge = try Forge(receiptPKI: Self.pki)
        let mutation = try Mutation.named(id)
        let names = mutation.parameters.flatMap { $0.name.split(separator: "|").map(String.init) }
        for name in names.isEmpty ? [""] : names {
            for value in Self.hostileNumbers {
                let parameters = name.isEmpty ? [:] : [name: value]
                for prefix in [[], [MutationStep("signer-count", ["count": "0"])], [MutationStep("drop-attribute", ["type": "17"])]] {
                    do {
                        _ = try forge.make(Self.scenario, now: pinnedNow, mutations: prefix + [MutationStep(id, parameters)])
                    } catch {
                        // An error is fine; it must say which step, and a recipe error must name the parameter.
                        #expect(error.step != nil, "\(id) \(name)=\(value): \(error.message)")
                        if error.code == .invalidRecipe, !name.isEmpty, !value.isEmpty, Int(value) == nil || value.hasPrefix(" ") {
                            #expect(error.message.contains(id), "\(error.message)")
                        }
                    }
                }
            }
        }
    }

    @Test("Numbers are range-checked before they size anything: the error names the range")
    func rangeChecked() throws {
        let forge = try Forge(receiptPKI: Self.pki)
        for (id, name, value) in [
            ("trailing-bytes", "count", "-5"), ("payload-trailing-bytes", "count", "2000000"), ("truncate", "length", "-9223372036854775808"),
            ("nested-sequences", "depth", "0"), ("signer-count", "count", "17"), ("flip-signature-bit", "signer", "-1"),
        ] {
            do {
                _ = try forge.make(Self.scenario, now: pinnedNow, mutations: [MutationStep(id, [name: value])])
                Issue.record("\(id) \(name)=\(value) was accepted")
            } catch {
                #expect(error.code == .invalidRecipe && error.step == 1)
                #expect(error.message.contains("'\(name)' must be between"), "\(error.message)")
            }
        }
        #expect(throws: ForgeError(.invalidRecipe, "")) {
            try forge.make(Self.scenario, now: pinnedNow, mutations: Array(repeating: MutationStep("trailing-bytes"), count: MutationBounds.maxSteps + 1))
        }
    }
}
