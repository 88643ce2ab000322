/// One of Apple's enum values as it travels: a value the store model names, or one Apple has not documented (yet),
/// kept as written. Apple's libraries do the same with `rawNotificationType` beside `notificationType`; the corpus
/// forges such values on purpose, to check that a verifier keeps them instead of refusing the payload.
public enum WireValue<Known: RawRepresentable & Sendable & Hashable>: Sendable, Hashable where Known.RawValue == String {
    case known(Known)
    case unknown(String)

    /// `raw` as the store model names it, or as written when it names nothing.
    public init(_ raw: String) { self = Known(rawValue: raw).map(Self.known) ?? .unknown(raw) }

    /// The value on the wire.
    public var rawValue: String {
        switch self {
        case .known(let value): value.rawValue
        case .unknown(let raw): raw
        }
    }

    /// The value the store model names; nil for one it does not.
    public var known: Known? {
        if case .known(let value) = self { value } else { nil }
    }
}
