import Foundation
import ReceiptConformance
import Testing

/// `HarnessReply(json:)` reads plain replies without `JSONDecoder`; for every reply, plain or not, its answer
/// must be `JSONDecoder`'s: the same reply, or a refusal where it refuses.
@Suite("Harness replies: the plain-reply reader agrees with JSONDecoder", .timeLimit(.minutes(2)))
struct HarnessReplyParsingTests {
    static let members: [String] = [
        #""type":"result""#, #""type":"skipped""#, #""type":"errored""#, #""type":"other""#, #""type":1"#,
        #""seq":1"#, #""seq":0"#, #""seq":-3"#, #""seq":1.0"#, #""seq":1e2"#, #""seq":"1""#, #""seq":null"#, #""seq":9223372036854775807"#,
        #""verdict":"accept""#, #""verdict":"reject""#, #""verdict":"ACCEPT""#, #""verdict":true"#,
        #""errorClass":"chain""#, #""errorClass":null"#, #""errorClass":3"#,
        #""message":"why \"this\" \u00e9""#, #""message":null"#, #""message":[]"#,
        #""reason":"unsupported""#, #""reason":null"#, #""extra":{"a":[1,2]}"#,
        #""decoded":{}"#, #""decoded":null"#,
    ]

    static func decoderAnswer(_ data: Data) -> HarnessReply? { try? JSONDecoder().decode(HarnessReply.self, from: data) }

    @Test("Every combination of up to four members, in any order, and malformed texts: the same reply or the same refusal")
    func agreesWithJSONDecoder() {
        var generator = SeededGenerator(seed: 24)
        var texts: [String] = ["", "{", "[]", "null", #"{"type":"result","seq":1,"verdict":"accept"} x"#, "{\"type\":\"result\",\"seq\":1,\"verdict\":\"accept\",}"]
        let types = Self.members.filter { $0.hasPrefix(#""type""#) }, seqs = Self.members.filter { $0.hasPrefix(#""seq""#) }
        for round in 0..<4000 {
            // Half start from a type and a seq, so that many are replies; the rest are any members at all.
            var chosen = round % 2 == 0 ? [types.randomElement(using: &generator) ?? "", seqs.randomElement(using: &generator) ?? ""] : []
            chosen += (0..<Int.random(in: 0...3, using: &generator)).map { _ in Self.members.randomElement(using: &generator) ?? "" }
            texts.append("{" + chosen.shuffled(using: &generator).joined(separator: ",") + "}")
        }
        var plain = 0
        for text in texts {
            let data = Data(text.utf8)
            let expected = Self.decoderAnswer(data)
            let got = try? HarnessReply(json: data)
            #expect(got == expected, "\(text)")
            if got != nil { plain += 1 }
        }
        #expect(plain >= 40, "the generator makes valid replies too (\(plain))")
    }
}

/// SplitMix64: the test's own reproducible randomness.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
