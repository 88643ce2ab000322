import Foundation
import Testing
import ReceiptModel
import _ForgeSupport
import StoreModel

@Suite("Receipt dates", .timeLimit(.minutes(2)))
struct DateTests {
    @Test(
        "Every variant seen in real receipts parses to the same instant",
        arguments: [
            "2020-07-22T17:33:15Z", "2020-07-22T17:33:15.000Z", "2020-07-22T18:33:15+0100", "2020-07-22T20:33:15+03:00",
            "2020-07-22T09:33:15-0800",
        ])
    func variants(text: String) {
        #expect(ReceiptDate.parse(text) == Date(timeIntervalSince1970: 1_595_439_195))
    }

    @Test(
        "Empty and malformed strings are absent", arguments: ["", "2020-07-22", "2020-13-01T00:00:00Z", "2020-02-30T00:00:00Z", "2020-07-22T17:33:15", "2020-07-22T17:33:15Zjunk"])
    func absent(text: String) {
        #expect(ReceiptDate.parse(text) == nil)
    }

    @Test("Formatting reproduces the App Store, fractional and Xcode 2020 styles")
    func formatting() {
        let instant = Date(timeIntervalSince1970: 1_595_439_195.686)
        #expect(ReceiptDate.format(instant) == "2020-07-22T17:33:15Z")
        #expect(ReceiptDate.format(instant, style: .fractionalZulu) == "2020-07-22T17:33:15.686Z")
        #expect(ReceiptDate.format(instant, style: .offset(minutes: 60)) == "2020-07-22T18:33:15+0100")
        #expect(ReceiptDate.format(ReceiptDate.sentinel, style: .offset(minutes: 180)) == "4001-01-01T03:00:00+0300")
        #expect(ReceiptDate.parse("4001-01-01T00:00:00Z") == ReceiptDate.sentinel)
        #expect(ReceiptDate.format(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
    }
}
