/// The ranges of a scenario's numbers, in one place: the spec reader, the checks of the flags' values and the
/// messages all read them. The dates a scenario may reach are ``ReceiptDate/writable``.
public enum ScenarioLimits {
    /// Renewals after a subscription's first period (`renewals`, `--renewals`).
    public static let renewals = 0...10_000
    /// Units of one purchase (`quantity`, `--quantity`): Apple's quantity is at least 1.
    public static let quantity = 1...1_000_000
    /// Periods one timeline `renew` event adds (`count`).
    public static let renewCount = 1...1_000
    /// Days of a timeline `grace-period` (`days`): Apple offers 3, 16 or 28.
    public static let graceDays = 1...90
    /// A subscription's rank in its group (`groupLevel`, Xcode's `groupNumber`), 1 the highest.
    public static let groupLevel = 1...1_000
    /// Periods of one subscription offer (`periods`, Xcode's `numberOfPeriods`).
    public static let offerPeriods = 1...100
    /// A prorated refund's share (a timeline refund's `percentage`), in milli-percent as Apple's `revocationPercentage`:
    /// more than nothing, less than everything (a full refund has none).
    public static let refundPercentage = 1...99_999
    /// The number in a subscription period (`P1000Y`).
    public static let periodCount = 1...1_000
    /// A number Apple writes as an unsigned JSON integer (`appAppleId`, a JWS `price` in milliunits): never
    /// negative, and at most 2^53 − 1 so that every JSON reader holds it exactly (I-JSON, RFC 7493 §2.2;
    /// JavaScript's `Number`, which Apple's Node library reads it into).
    public static let unsignedJSONInteger: ClosedRange<Int64> = 0...((1 << 53) - 1)
}
