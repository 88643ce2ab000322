#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Receipt date strings: `YYYY-MM-DDThh:mm:ssZ` and the variants seen in the wild.
///
/// Real receipts also carry fractional seconds (App Store, from 2020), numeric offsets without a
/// colon (`+0100`, Xcode 2020–2021), the `4001-01-01` "never expires" sentinel and the empty string
/// meaning "absent". Parsing and formatting are done by hand, without a formatter or the wall
/// clock, so the forge writes the same bytes on every machine.
public enum ReceiptDate {
    /// How a date is written.
    public enum Style: Sendable, Hashable, Codable {
        /// `2024-02-23T17:27:16Z`
        case zulu
        /// `2020-09-21T05:35:19.686Z`
        case fractionalZulu
        /// Local time with a numeric offset and no colon: `2020-07-22T18:33:15+0100`.
        case offset(minutes: Int)
    }

    /// Foundation's `distantFuture` as receipts write it: the Xcode expiration sentinel.
    public static let sentinel = Date(timeIntervalSince1970: 64_092_211_200)  // 4001-01-01T00:00:00Z

    /// The instants a receipt or a JWS made by the forge may carry: from 1970-01-01T00:00:00Z up to (not including)
    /// 9999-12-31T00:00:00Z. A `Store` (StoreModel) holds no date outside it, so no artefact writes one.
    /// - From 1970: every date of a timeline is also written as milliseconds since 1970 (StoreKit 2's dates,
    ///   verifyReceipt's `*_ms`). Apple writes those as UNIX times of real events, after the App Store opened in
    ///   2008 (its one earlier instant, Xcode's year-1 AppTransaction `originalPurchaseDate`, is a fixed sentinel,
    ///   not a timeline date); a negative count reads as a sign bug, and some readers refuse it (Python's
    ///   `datetime.fromtimestamp` on Windows).
    /// - Before 9999-12-31: receipt dates are RFC 3339 strings with a four-digit year (as ``parse(_:)`` reads them;
    ///   Python's `datetime` ends with 9999 too), and the last day is kept free so that a rendering in local time
    ///   (Xcode 2020's `+0100`) still has one.
    /// Inside it ``format(_:style:)`` writes RFC 3339 in every style, and milliseconds stay below 2^53 (exact in
    /// every JSON reader).
    public static let writable: Range<Date> = Date(timeIntervalSince1970: 0)..<Date(timeIntervalSince1970: 253_402_214_400)
    /// ``writable`` in words, for messages.
    /// "outside the dates receipts and JWS carry (1970-… up to 9999-…)": how every message about ``writable`` ends.
    public static let outsideWritable = "outside the dates receipts and JWS carry (1970-01-01T00:00:00Z up to 9999-12-31T00:00:00Z)"

    /// The milliseconds since 1970 an instant read from input may name (a StoreKit 2 `signedDate`, a receipt date
    /// string, a date in a request): 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, the years RFC 3339 and ASN.1's
    /// GeneralizedTime write with four digits. It is the range of times a certificate chain can be checked at:
    /// OpenSSL's verifier compares certificates' dates with its time written as a GeneralizedTime, so at any instant
    /// outside it every certificate fails with "format error in certificate's notBefore field", a verdict about no
    /// certificate (a `signedDate` of -1e15, the year -29719). Outside it, or not finite (`1e400` parses as
    /// infinity), an instant from input is refused, never trapped on.
    public static let inputMilliseconds: ClosedRange<Double> = -62_167_219_200_000...253_402_300_799_999
    /// ``inputMilliseconds`` in words, for messages.
    public static let inputRangeText = "the years 0000 to 9999 (-62167219200000 to 253402300799999 ms since 1970)"

    /// The milliseconds since 1970 inside which every conversion below (milliseconds, seconds, `time_t`, calendar
    /// fields) is exact: ECMAScript's `Date` range, ±8.64e15 ms (±100,000,000 days, years −271821 to 275760). It
    /// holds every instant from input and every date computed from one (a renewal a year past 9999, named in a message).
    public static let representableMilliseconds: ClosedRange<Double> = -8.64e15...8.64e15

    /// The instant `milliseconds` after 1970 (a StoreKit 2 date: `signedDate`, `expiresDate`…); nil when
    /// it is not finite or outside ``inputMilliseconds``. The one way a number from input becomes a date.
    public static func instant(milliseconds: Double) -> Date? {
        guard inputMilliseconds.contains(milliseconds) else { return nil }
        return Date(timeIntervalSince1970: milliseconds / 1000)
    }

    /// Whole milliseconds since 1970, rounded down; nil outside ``representableMilliseconds`` (so the result
    /// always fits an `Int64`, with room for a day's offset either way).
    public static func milliseconds(_ date: Date) -> Int64? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard representableMilliseconds.contains(milliseconds) else { return nil }
        return Int64(exactly: milliseconds)
    }

    /// Parses every known variant; nil for the empty string, for anything malformed and for an instant outside
    /// ``inputMilliseconds``.
    public static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        guard b.count >= 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A,
            let year = number(b, 0, 4), let month = number(b, 5, 2), let day = number(b, 8, 2),
            let hour = number(b, 11, 2), let minute = number(b, 14, 2), let second = number(b, 17, 2),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 61
        else { return nil }
        var cursor = 19
        var fraction = 0.0
        if b[cursor] == 0x2E {
            var scale = 0.1
            cursor += 1
            let start = cursor
            while cursor < b.count, (0x30...0x39).contains(b[cursor]) {
                fraction += Double(b[cursor] - 0x30) * scale
                scale /= 10
                cursor += 1
            }
            guard cursor > start else { return nil }
        }
        guard cursor < b.count else { return nil }
        var offsetSeconds = 0
        switch b[cursor] {
        case 0x5A:  // Z
            guard cursor + 1 == b.count else { return nil }
        case 0x2B, 0x2D:  // + or -
            let sign = b[cursor] == 0x2B ? 1 : -1
            let rest = Array(b[(cursor + 1)...])
            let digits: [UInt8]
            if rest.count == 4 { digits = rest } else if rest.count == 5, rest[2] == 0x3A { digits = Array(rest[0..<2] + rest[3..<5]) } else { return nil }
            guard let hours = number(digits, 0, 2), let minutes = number(digits, 2, 2), hours < 24, minutes < 60 else { return nil }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds) + fraction
        // An offset can carry a four-digit year out of the input range (9999-12-31T23:59:59-0100 is in the year 10000).
        guard inputMilliseconds.contains((seconds * 1000).rounded(.down)) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Writes a date in the given style (whole seconds; milliseconds for `.fractionalZulu`). Inside ``writable``
    /// (every date a `Store` holds, so every date an artefact writes) the result is RFC 3339 with a four-digit
    /// year in every style. Outside it, for messages and the inspection of foreign input only: years before 0
    /// with a minus sign, years past 9999 with every digit, and an instant outside ``representableMilliseconds``
    /// as its seconds since 1970 in angle brackets, so a message can still name it; never other bytes.
    /// Built byte by byte: the forge writes dozens of dates per receipt.
    public static func format(_ date: Date, style: Style = .zulu) -> String {
        var shift: Int64 = 0
        if case .offset(let minutes) = style { shift = Int64(minutes) * 60 }
        guard let milliseconds = milliseconds(date) else { return "<\(date.timeIntervalSince1970) s since 1970>" }
        let totalSeconds = floorDiv(milliseconds, 1000) + shift
        let days = floorDiv(totalSeconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        let secondOfDay = Int(totalSeconds - days * 86_400)
        var out: [UInt8] = []
        out.reserveCapacity(29)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            if rest < 0 {  // a year before 0 (proleptic Gregorian, ISO 8601's expanded form)
                out.append(0x2D)
                rest = -rest
            }
            if rest >= divisor * 10 {  // wider than asked (years past 9999): write every digit
                out.append(contentsOf: String(rest).utf8)
                return
            }
            while divisor > 0 {
                out.append(UInt8(0x30 + rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(year, 4); out.append(0x2D); digits(month, 2); out.append(0x2D); digits(day, 2)
        out.append(0x54); digits(secondOfDay / 3600, 2); out.append(0x3A); digits(secondOfDay / 60 % 60, 2)
        out.append(0x3A); digits(secondOfDay % 60, 2)
        switch style {
        case .zulu:
            out.append(0x5A)
        case .fractionalZulu:
            out.append(0x2E); digits(Int(milliseconds - floorDiv(milliseconds, 1000) * 1000), 3); out.append(0x5A)
        case .offset(let minutes):
            out.append(minutes < 0 ? 0x2D : 0x2B); digits(abs(minutes) / 60, 2); digits(abs(minutes) % 60, 2)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The instant of a UTC calendar date and time (proleptic Gregorian).
    public static func instant(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) -> Date {
        Date(timeIntervalSince1970: Double(daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// Days in a month of the proleptic Gregorian calendar.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Calendar fields of a UTC instant, for JSON renderings that need them; an instant outside
    /// ``representableMilliseconds`` is taken at the nearer end of the range.
    public static func civil(_ date: Date) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let bound = representableMilliseconds.upperBound / 1000
        let clamped = date.timeIntervalSince1970.isNaN ? 0 : max(-bound, min(bound, date.timeIntervalSince1970))
        let seconds = Int64(exactly: clamped.rounded(.down)) ?? 0
        let days = floorDiv(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        let rest = Int(seconds - days * 86_400)
        return (year, month, day, rest / 3600, rest / 60 % 60, rest % 60)
    }

    private static func number(_ b: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start + count <= b.count else { return nil }
        var value = 0
        for byte in b[start..<(start + count)] {
            guard (0x30...0x39).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    // Howard Hinnant's days_from_civil / civil_from_days: proleptic Gregorian, no calendar object.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
