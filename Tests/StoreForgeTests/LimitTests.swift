import ReceiptCorpus
import Foundation
import StoreForge
import ReceiptModel
import ReferenceValidation
import Testing
import _ForgeSupport
import StoreModel

/// Each bound of `ReceiptLimits` and `MutationBounds`, at the bound and one past it.
@Suite("Resource bounds", .timeLimit(.minutes(2)))
struct LimitTests {
    static func make(_ steps: [MutationStep]) throws -> [UInt8] {
        try sharedForge.make(Scenario(bundleID: "com.example.app", appVersion: "1", purchases: []), now: pinnedNow, mutations: steps).bytes
    }

    static func decodingError(_ bytes: [UInt8]) -> ReceiptDecodingError? {
        do { _ = try ReceiptContainer(berEncoded: bytes); return nil } catch { return error }
    }

    @Test("Certificates: 16 embedded are read, 17 are refused as tooLarge, naming the bound")
    func certificates() throws {
        let at = try Self.make(Array(repeating: MutationStep("add-certificate", ["role": "foreign-root"]), count: ReceiptLimits.maximumCertificates - 3))
        #expect(try ReceiptContainer(berEncoded: at).certificates.count == ReceiptLimits.maximumCertificates)
        let past = try Self.make(Array(repeating: MutationStep("add-certificate", ["role": "foreign-root"]), count: ReceiptLimits.maximumCertificates - 2))
        let error = try #require(Self.decodingError(past))
        #expect(error.code == .tooLarge && error.message.contains("more than 16 certificates"), "\(error)")
        // The validator refuses it as a malformed container, with the reason, and does not trap.
        let report = ReferenceValidator().validate(past, context: ValidationContext(trustedRoots: [], now: pinnedNow))
        #expect(report.errorClass == .containerMalformed && report.message.contains("more than 16 certificates"))
    }

    @Test("SignerInfos: 16 are read; the forge refuses to write 17")
    func signerInfos() throws {
        let at = try Self.make([MutationStep("signer-count", ["count": String(ReceiptLimits.maximumSignerInfos)])])
        #expect(try ReceiptContainer(berEncoded: at).signers.count == ReceiptLimits.maximumSignerInfos)
        #expect(throws: ForgeError(.invalidRecipe, "")) { try Self.make([MutationStep("signer-count", ["count": "17"])]) }
    }

    @Test("Payload attributes: more than 100,000 in one SET are refused before they are collected")
    func attributes() throws {
        var set: [UInt8] = []
        let attribute: [UInt8] = [0x30, 0x09, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x04, 0x01, 0x00]
        for _ in 0...ReceiptLimits.maximumChildren { set += attribute }
        var writer = ASN1Writer(reservingCapacity: set.count + 8)
        writer.appendPrimitive(0x31, set)  // a SET: the tag says constructed, the writer only frames it
        do {
            _ = try DecodedPayload(berEncoded: writer.bytes)
            Issue.record("100,001 attributes were read")
        } catch {
            #expect(error.code == .tooLarge && error.message.contains("more than 100000 attributes"), "\(error)")
        }
    }

    @Test("Input: 16 MiB is the most any decoder reads")
    func inputSize() {
        #expect(throws: ReceiptDecodingError(.tooLarge, at: 0, "")) { try ReceiptInput.decode([UInt8](repeating: 0x30, count: ReceiptLimits.maximumInputSize + 1)) }
    }

    @Test("Recipes: 256 steps at most; nesting depth, added bytes and segments have ranges")
    func recipes() throws {
        #expect(throws: ForgeError(.invalidRecipe, "")) { try Self.make(Array(repeating: MutationStep("trailing-bytes", ["count": "0"]), count: MutationBounds.maxSteps + 1)) }
        _ = try Self.make(Array(repeating: MutationStep("trailing-bytes", ["count": "0"]), count: MutationBounds.maxSteps))
        #expect(throws: ForgeError(.invalidRecipe, "")) { try Self.make([MutationStep("nested-sequences", ["depth": String(MutationBounds.maxNestingDepth + 1)])]) }
        #expect(throws: ForgeError(.invalidRecipe, "")) { try Self.make([MutationStep("trailing-bytes", ["count": String(MutationBounds.maxAddedBytes + 1)])]) }
        #expect(throws: ForgeError(.invalidRecipe, "")) { try Self.make([MutationStep("layout", ["econtent": "constructed-\(MutationBounds.maxSegments + 1)"])]) }
        #expect(try Self.make([MutationStep("layout", ["econtent": "constructed-\(MutationBounds.maxSegments)"])]).count > 0)
    }
}
