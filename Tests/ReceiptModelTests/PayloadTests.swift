import Testing
import ReceiptModel
import _ForgeSupport
import StoreModel

@Suite("Payload encoding", .timeLimit(.minutes(2)))
struct PayloadTests {
    @Test("A payload matches bytes computed by hand")
    func handComputedBytes() {
        let payload = ReceiptPayload([.utf8(3, "1.0"), .utf8(2, "a"), .raw(4, [0xAA, 0xBB], version: 2)])
        // 30 0B 02 01 02 02 01 01 04 03 0C 01 61           bundle id "a"
        // 30 0D 02 01 03 02 01 01 04 05 0C 03 31 2E 30     app version "1.0"
        // 30 0A 02 01 04 02 01 02 04 02 AA BB              opaque value, version 2
        // DER order compares whole encodings, so the shortest SEQUENCE comes first: 30 0A < 30 0B < 30 0D.
        let expected = "3128" + "300a0201040201020402aabb" + "300b02010202010104030c0161" + "300d02010302010104050c03312e30"
        #expect(hexString(payload.encoded(ordering: .derSorted)) == expected)
    }

    @Test("asGiven keeps the order, derSorted sorts by encoding not by type")
    func ordering() {
        let payload = ReceiptPayload([.integer(1, 0), .utf8(19, "1.0"), .ia5(10, "4+"), .utf8(2, "com.example")])
        let given = try! DecodedPayload(berEncoded: payload.encoded(ordering: .asGiven))
        #expect(given.entries.map(\.attribute.type) == [1, 19, 10, 2])
        #expect(!given.isDERSorted)
        let sorted = try! DecodedPayload(berEncoded: payload.encoded(ordering: .derSorted))
        #expect(sorted.isDERSorted)
        // Shorter SEQUENCEs sort first whatever their type: 30 0A (type 1) < 30 0B (type 10) < 30 0C (19) < 30 14 (2).
        #expect(sorted.entries.map(\.attribute.type) == [1, 10, 19, 2])
    }

    @Test("Unknown types and versions round-trip untouched")
    func unknownTypesRoundTrip() throws {
        let odd = ReceiptAttribute(type: 9999, version: 7, value: [0xDE, 0xAD, 0xBE, 0xEF])
        let nested = ReceiptPayload([.utf8(1702, "p"), ReceiptAttribute(type: 1799, value: ASN1Value.integer(-5))])
        let payload = ReceiptPayload([odd, .utf8(2, "b"), ReceiptAttribute(type: 17, value: nested.encoded(ordering: .derSorted))])
        let bytes = payload.encoded(ordering: .asGiven)
        let decoded = try DecodedPayload(berEncoded: bytes)
        #expect(decoded.payload == payload)
        #expect(decoded.payload.encoded(ordering: .asGiven) == bytes)
        #expect(decoded.usesMinimalLengths)
        let receipt = try AppReceipt(payload: decoded)
        #expect(receipt.inAppPurchases.first?.payload.payload.first(1799)?.integerValue == -5)
        #expect(receipt.bundleIDValue == [0x0C, 0x01, 0x62])
    }

    @Test("Typed accessors read strings, numbers and dates leniently")
    func typedAccessors() throws {
        let payload = ReceiptPayload([
            .utf8(0, "Production"), .utf8(2, "com.example.app"), .utf8(3, "42"), .ia5(12, "2024-02-23T17:27:16Z"),
            .ia5(21, ""), .integer(1, 690_661_663), .raw(5, Array(repeating: 1, count: 20)),
            ReceiptAttribute(type: 17, value: ReceiptPayload([.integer(1701, 1), .ia5(1712, ""), .integer(1713, 1)]).encoded(ordering: .derSorted)),
        ])
        let receipt = try AppReceipt(payloadBytes: payload.encoded(ordering: .derSorted))
        #expect(receipt.receiptType == "Production")
        #expect(receipt.appItemID == 690_661_663)
        #expect(receipt.creationDate == ReceiptDate.parse("2024-02-23T17:27:16Z"))
        #expect(receipt.expirationDate == nil)  // empty string means absent
        #expect(receipt.inAppPurchases.count == 1)
        #expect(receipt.inAppPurchases[0].cancellationDate == nil)
        #expect(receipt.inAppPurchases[0].isTrialPeriod == true)
        #expect(receipt.originalAppVersion == nil)
    }

    @Test(
        "INTEGER contents are minimal two's complement",
        arguments: [
            (Int64(0), "00"), (127, "7f"), (128, "0080"), (-1, "ff"), (-128, "80"), (-129, "ff7f"), (256, "0100"), (0x5033_3032, "50333032"),
        ])
    func integerContent(value: Int64, hex: String) {
        #expect(hexString(ASN1Value.integerContent(value)) == hex)
        #expect(ASN1Value.integerValue(ASN1Value.integerContent(value)) == value)
    }

    @Test(
        "Object identifiers round-trip",
        arguments: [
            KnownOID.signedData, KnownOID.sha256, KnownOID.appleReceiptSigningMarker, "2.999.3",
        ])
    func oidRoundTrip(dotted: String) throws {
        #expect(OID.dotted(try OID.encodeContent(dotted)) == dotted)
    }

    @Test("Malformed payloads fail with the offset of the problem")
    func malformedPayloads() {
        // A SET whose single element is an INTEGER instead of a SEQUENCE.
        #expect(throws: ReceiptDecodingError.self) { try DecodedPayload(berEncoded: [0x31, 0x03, 0x02, 0x01, 0x00]) }
        do {
            _ = try DecodedPayload(berEncoded: [0x31, 0x03, 0x02, 0x01, 0x00])
        } catch {
            #expect(error.offset == 2)
            #expect(error.description == "at payload byte 2: expected ReceiptAttribute (SEQUENCE), found INTEGER")
        }
        // Attribute with two fields only.
        #expect(throws: ReceiptDecodingError.self) { try DecodedPayload(berEncoded: [0x31, 0x08, 0x30, 0x06, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01]) }
        // Trailing byte after the SET.
        #expect(throws: ReceiptDecodingError(.trailingBytes, at: 2, "")) { try DecodedPayload(berEncoded: [0x31, 0x00, 0x00]) }
    }
}
