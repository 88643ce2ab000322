import Foundation
import ReceiptCorpus
import Testing
import _ForgeSupport

/// FIPS 180-2 / NIST known answers.
@Suite(.timeLimit(.minutes(2)))
struct CorpusDigestTests {
    @Test func emptyInput() {
        #expect(CorpusDigest.sha256Hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func abc() {
        #expect(CorpusDigest.sha256Hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// 56 bytes: the padding spills into a second block.
    @Test func twoBlockMessage() {
        let message = Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(CorpusDigest.sha256Hex(message) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func oneMillionA() {
        let message = Data(repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(CorpusDigest.sha256Hex(message) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func rawDigestIs32Bytes() {
        let digest = CorpusDigest.sha256(Data("abc".utf8))
        #expect(digest.count == 32)
        #expect(digest.prefix(4) == [0xBA, 0x78, 0x16, 0xBF])
    }
}
