import Testing
import ReceiptModel
import _ForgeSupport
import StoreModel

@Suite("BER reader and writer", .timeLimit(.minutes(2)))
struct BERTests {
    @Test("Length forms are written as asked and read back with their form")
    func lengthForms() throws {
        var writer = ASN1Writer()
        writer.appendPrimitive(ASN1Tag.octetString, [1, 2, 3], length: .longForm(octets: 2))
        #expect(writer.bytes == [0x04, 0x82, 0x00, 0x03, 1, 2, 3])
        let node = try BERReader(writer.bytes).node(at: 0)
        #expect(node.lengthForm == .definite(octets: 3, isMinimal: false))
        #expect(node.contentRange == 4..<7)

        var constructed = ASN1Writer()
        constructed.appendConstructed(ASN1Tag.sequence, length: .indefinite) { $0.appendInteger(5) }
        #expect(constructed.bytes == [0x30, 0x80, 0x02, 0x01, 0x05, 0x00, 0x00])
        let indefinite = try BERReader(constructed.bytes).node(at: 0)
        #expect(indefinite.isIndefinite && indefinite.endOffset == 7 && indefinite.contentRange == 2..<5)

        let long = [UInt8](repeating: 7, count: 300)
        var big = ASN1Writer()
        big.appendPrimitive(ASN1Tag.octetString, long)
        #expect(Array(big.bytes.prefix(4)) == [0x04, 0x82, 0x01, 0x2C])
        #expect(try BERReader(big.bytes).node(at: 0).lengthForm == .definite(octets: 3, isMinimal: true))
    }

    @Test("Constructed OCTET STRINGs join their segments, nested ones too")
    func segments() throws {
        var writer = ASN1Writer()
        writer.appendConstructed(ASN1Tag.constructedOctetString, length: .indefinite) { writer in
            writer.appendPrimitive(ASN1Tag.octetString, [1, 2])
            writer.appendConstructed(ASN1Tag.constructedOctetString) { $0.appendPrimitive(ASN1Tag.octetString, [3]) }
        }
        let reader = BERReader(writer.bytes)
        let joined = try reader.octetStringContent(try reader.node(at: 0))
        #expect(joined.bytes == [1, 2, 3])
        #expect(joined.segments == 2)
    }

    @Test(
        "Bad headers are reported at their byte with what was expected",
        arguments: [
            ([UInt8](), ReceiptDecodingError.Code.truncated, 0),
            ([0x30], .truncated, 1),
            ([0x30, 0x05, 0x02], .truncated, 2),
            ([0x04, 0x80, 0x00, 0x00], .invalidLength, 1),
            ([0x30, 0xFF], .invalidLength, 1),
            ([0x30, 0x85, 1, 1, 1, 1, 1], .invalidLength, 1),
            ([0x30, 0x80, 0x02, 0x01, 0x00], .truncated, 5),
            ([0x1F, 0x01, 0x00], .unsupportedTag, 0),
        ])
    func badHeaders(bytes: [UInt8], code: ReceiptDecodingError.Code, offset: Int) {
        do {
            _ = try BERReader(bytes).node(at: 0)
            Issue.record("expected \(code)")
        } catch {
            #expect(error.code == code)
            #expect(error.offset == offset)
        }
    }

    @Test("Deep indefinite nesting is cut off, not followed to a stack overflow")
    func depthBound() {
        let depth = 100_000
        let bytes = [UInt8](repeating: 0x30, count: 1).flatMap { _ in [UInt8]() } + Array([[UInt8]](repeating: [0x30, 0x80], count: depth).joined())
        #expect(throws: ReceiptDecodingError(.tooDeep, at: 0, "")) { try BERReader(bytes).node(at: 0) }
    }
}
