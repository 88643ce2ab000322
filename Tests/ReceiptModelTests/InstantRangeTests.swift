import Foundation
import ReceiptModel
import Testing
import _ForgeSupport
import JWSModel
import StoreModel

/// Issue 19, item 4: a date read from input (a StoreKit 2 `signedDate` in milliseconds) may be any JSON
/// number. Inside the years 0000 to 9999 it is an instant (issue 36: what a chain can be checked at); outside it is
/// refused. Inside ECMAScript's ±8.64e15 ms every conversion is exact, and formatting any `Date` at all never traps.
@Suite("Instants from input: checked, never trapped on", .timeLimit(.minutes(2)))
struct InstantRangeTests {
    @Test(
        "Milliseconds outside the years 0000 to 9999, or not finite, are no instant",
        arguments: [1e300, .infinity, -.infinity, .nan, 9.3e18, Double(Int64.max), Double(Int64.min), 18_446_744_073_709_551_616, -1e16, 8.64e15 + 1, -1e15, 8.64e15]
    )
    func refused(milliseconds: Double) {
        #expect(ReceiptDate.instant(milliseconds: milliseconds) == nil)
    }

    @Test("The ends of the input range and the small extremes are instants; dates out to ±8.64e15 ms are written with every digit of their year")
    func accepted() throws {
        let last = try #require(ReceiptDate.instant(milliseconds: 253_402_300_799_999))
        let first = try #require(ReceiptDate.instant(milliseconds: -62_167_219_200_000))
        #expect(ReceiptDate.format(last) == "9999-12-31T23:59:59Z")
        #expect(ReceiptDate.format(first, style: .fractionalZulu) == "0000-01-01T00:00:00.000Z")
        #expect(ReceiptDate.milliseconds(first) == -62_167_219_200_000)
        #expect(ReceiptDate.format(Date(timeIntervalSince1970: 8.64e12)) == "275760-09-13T00:00:00Z")
        #expect(ReceiptDate.format(Date(timeIntervalSince1970: -8.64e12), style: .fractionalZulu) == "-271821-04-20T00:00:00.000Z")
        #expect(ReceiptDate.milliseconds(Date(timeIntervalSince1970: -8.64e12)) == -8_640_000_000_000_000)
        #expect(ReceiptDate.instant(milliseconds: -0.0) == Date(timeIntervalSince1970: 0))
        #expect(ReceiptDate.instant(milliseconds: try #require(Double("1e-400"))) == Date(timeIntervalSince1970: 0))
        #expect(ReceiptDate.format(try #require(ReceiptDate.instant(milliseconds: 1_750_000_000_123.5)), style: .fractionalZulu) == "2025-06-15T15:06:40.123Z")
    }

    @Test(
        "Formatting a Date from anywhere never traps: far instants are named by their seconds",
        arguments: [1e297, -1e297, 9.3e15, -1e13, 9_223_372_036_854_775.0, .infinity, .nan])
    func formatting(seconds: Double) {
        let text = ReceiptDate.format(Date(timeIntervalSince1970: seconds))
        #expect(text.hasPrefix("<") && text.hasSuffix(" s since 1970>"), "\(text)")
        _ = ReceiptDate.format(Date(timeIntervalSince1970: seconds), style: .fractionalZulu)
        _ = ReceiptDate.civil(Date(timeIntervalSince1970: seconds))
    }

    @Test("Years before 0 are written with a minus sign, not bytes below '0'")
    func negativeYears() {
        // -1e15 ms: the year -29719, whose digits used to be written as control characters.
        #expect(ReceiptDate.format(Date(timeIntervalSince1970: -1e12)) == "-29719-04-05T22:13:20Z")
        #expect(ReceiptDate.format(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00Z")
        #expect(ReceiptDate.format(Date(timeIntervalSince1970: -62_167_219_200)) == "0000-01-01T00:00:00Z")
    }

    @Test("A compact JWS over 16 MiB is refused for its size before it is split or decoded")
    func jwsSize() {
        let text = String(repeating: "A", count: JWSLimits.maximumSize + 1)
        #expect(throws: JWSFormatError.self) { try CompactJWS(parsing: text) }
        do {
            _ = try CompactJWS(parsing: text)
        } catch {
            #expect(error.description == "the JWS is 16777217 bytes; a JWS is at most 16777216 bytes")
        }
    }
}
