import _ForgeSupport
import Foundation
import Testing

/// The byte-level base64 codec the JWS verifier and parser use, against Foundation's as the oracle: the same
/// bytes for every well-formed input, and nil for every character outside the alphabet or a length no encoder
/// makes.
@Suite("Base64", .timeLimit(.minutes(2)))
struct Base64Tests {
    @Test("Standard base64 and base64url of 0–300 random bytes: encoded as Foundation encodes, decoded to those bytes as Foundation decodes")
    func decodesWhatFoundationDecodes() {
        var random = SeededGenerator(seed: 23)
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let standard = Data(bytes).base64EncodedString()
            #expect(Base64.decodeStandard(standard) == bytes)
            #expect(Data(base64Encoded: standard).map(Array.init) == bytes)
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
            #expect(Base64.encode(bytes) == standard, "the runner's encoder writes what Foundation writes")
        }
    }

    @Test("Refused: white space, the other alphabet, padding in base64url or in the middle, impossible lengths")
    func refusals() {
        for text in ["QUJD RA==", "QUJD\nRA==", "QQ=", "QQ", "Q===", "QQ==QQ==", "QUJDRA=A", "QUJ-", "QUJ_"] {
            #expect(Base64.decodeStandard(text) == nil, "\(text.debugDescription)")
        }
        for text in ["QQ==", "Q", "QUJD+A", "QUJD/A", "QUJ D", "QUJD\n"] {
            #expect(Base64URL.decode(text) == nil, "\(text.debugDescription)")
        }
        // Bits past the last whole byte are ignored, as Foundation ignores them.
        #expect(Base64.decodeStandard("QR==") == [0x41] && Data(base64Encoded: "QR==").map(Array.init) == [0x41])
        #expect(Base64URL.decode("QR") == [0x41] && Base64URL.decode("") == [])
    }

    @Test("Every byte value at every place of every quantum: decoded only when it is in the alphabet")
    func everyByteEveryPlace() {
        let url = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let standard = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        // 12 characters: two quanta in the paired loop, one alone; 11 adds a tail of 3.
        for length in [11, 12] {
            for place in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var text = [UInt8](repeating: 0x41, count: length)
                    text[place] = byte
                    let decodedURL = text.withUnsafeBufferPointer { Base64.decode($0, url: true) }
                    #expect((decodedURL != nil) == url.contains(byte), "url \(length) \(place) \(byte)")
                    if length % 4 == 0 {
                        let decoded = text.withUnsafeBufferPointer { Base64.decode($0, url: false) }
                        #expect((decoded != nil) == (standard.contains(byte) || (byte == 0x3D && place == length - 1)), "standard \(place) \(byte)")
                    }
                }
            }
        }
    }
}
