import Foundation
import ReceiptConformance
import ReceiptCorpus
import Testing
import _ForgeSupport

@Suite("Outcome classification and protocol messages", .timeLimit(.minutes(2)))
struct ClassifierTests {
    static func vector(_ verdict: Verdict, classes: [String] = [], flags: [String] = [], decoded: DecodedReceipt? = nil) -> Vector {
        var vector = Vector.exemplar
        vector.expected = Expectation(verdict: verdict, errorClasses: classes.map(ErrorClass.init(rawValue:)), decoded: decoded)
        vector.flags = flags
        return vector
    }

    static func reply(_ verdict: HarnessReply.Verdict, _ errorClass: String? = nil, decoded: DecodedReceipt? = nil) -> HarnessReply {
        .result(seq: 1, verdict: verdict, errorClass: errorClass, message: nil, decoded: decoded)
    }

    @Test("Verdicts and reasons at each granularity")
    func table() {
        let fine = Classifier(profile: nil, granularity: .fine, decodes: false)
        let coarse = Classifier(profile: nil, granularity: .coarse, decodes: false)
        let none = Classifier(profile: nil, granularity: .none, decodes: false)
        let chain = Self.vector(.invalid, classes: ["chain.untrusted"])
        #expect(fine.classify(chain, Self.reply(.accept)) == .falseAccept)
        #expect(fine.classify(Self.vector(.valid), Self.reply(.reject, "chain")) == .falseReject)
        #expect(fine.classify(chain, Self.reply(.reject, "chain.untrusted")) == .pass)
        #expect(fine.classify(chain, Self.reply(.reject, "chain.untrusted.self-signed")) == .pass)
        #expect(fine.classify(chain, Self.reply(.reject, "chain.expired")) == .wrongReason)
        #expect(fine.classify(chain, Self.reply(.reject, nil)) == .wrongReason)
        #expect(coarse.classify(chain, Self.reply(.reject, "chain.expired")) == .pass)
        #expect(coarse.classify(chain, Self.reply(.reject, "signature.invalid")) == .wrongReason)
        #expect(none.classify(chain, Self.reply(.reject, "anything")) == .pass)
        #expect(fine.classify(chain, .skipped(seq: 1, reason: "no")) == .skip)
        #expect(fine.classify(chain, .errored(seq: 1, message: "boom")) == .error)
        #expect(fine.classify(Self.vector(.acceptable, flags: ["X"]), Self.reply(.reject)) == .acceptable)
    }

    @Test("Profiles resolve acceptable vectors: valid only if every flag is accepted")
    func profiles() {
        let profile = Profile(description: "", acceptable: ["A": .valid, "B": .invalid], otherwise: .valid)
        let classifier = Classifier(profile: profile, granularity: .fine, decodes: false)
        #expect(classifier.expectedVerdict(Self.vector(.acceptable, flags: ["A"])) == .valid)
        #expect(classifier.expectedVerdict(Self.vector(.acceptable, flags: ["A", "B"])) == .invalid)
        #expect(classifier.expectedVerdict(Self.vector(.acceptable, flags: ["C"])) == .valid)
        #expect(classifier.classify(Self.vector(.acceptable, flags: ["B"]), Self.reply(.accept)) == .falseAccept)
        #expect(classifier.classify(Self.vector(.acceptable, flags: ["B"]), Self.reply(.reject, "x.y")) == .pass)
    }

    @Test("A flag the profile leaves open lets either verdict pass, as ACCEPTABLE; an invalid flag beside it still decides")
    func eitherVerdict() {
        let profile = Profile(description: "", acceptable: ["A": .valid, "B": .invalid, "E": .acceptable], otherwise: .valid)
        let classifier = Classifier(profile: profile, granularity: .fine, decodes: false)
        #expect(classifier.classify(Self.vector(.acceptable, flags: ["E"]), Self.reply(.accept)) == .acceptable)
        #expect(classifier.classify(Self.vector(.acceptable, flags: ["E", "A"]), Self.reply(.reject, "x.y")) == .acceptable)
        #expect(classifier.classify(Self.vector(.acceptable, flags: ["E", "B"]), Self.reply(.accept)) == .falseAccept)
    }

    @Test("Decoded fields are compared only when the harness declares the decode feature")
    func decode() {
        var other = DecodedReceipt.exemplar
        other.bundleId = "com.other"
        let vector = Self.vector(.valid, decoded: .exemplar)
        #expect(Classifier(profile: nil, granularity: .fine, decodes: true).classify(vector, Self.reply(.accept, decoded: other)) == .wrongDecode)
        #expect(Classifier(profile: nil, granularity: .fine, decodes: true).classify(vector, Self.reply(.accept, decoded: .exemplar)) == .pass)
        #expect(Classifier(profile: nil, granularity: .fine, decodes: false).classify(vector, Self.reply(.accept, decoded: other)) == .pass)
    }

    @Test("Messages use a type discriminator and refuse unknown types")
    func messages() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let reply = HarnessReply.result(seq: 7, verdict: .reject, errorClass: "chain.untrusted", message: "m", decoded: nil)
        let text = String(decoding: try encoder.encode(reply), as: UTF8.self)
        #expect(text == #"{"errorClass":"chain.untrusted","message":"m","seq":7,"type":"result","verdict":"reject"}"#)
        #expect(try JSONDecoder().decode(HarnessReply.self, from: Data(text.utf8)) == reply)
        #expect(try JSONDecoder().decode(HarnessReply.self, from: Data(#"{"type":"skipped","seq":2,"reason":"xcode"}"#.utf8)) == .skipped(seq: 2, reason: "xcode"))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(HarnessReply.self, from: Data(#"{"type":"maybe","seq":2}"#.utf8)) }
        let request = ValidateRequest(seq: 3, id: "valid::x", base64: "MA==", context: Context.exemplar)
        let requestText = String(decoding: try encoder.encode(request), as: UTF8.self)
        #expect(requestText.contains(#""type":"validate""#) && !requestText.contains("expected"))
    }
}
