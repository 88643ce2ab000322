/// A vector's id, `family::name` (`chain::expired-leaf`): the one place an id is cut into its parts. The family is
/// the vector's folder under `Vectors/` and its group in every report. Ids also arrive in results and baselines,
/// which lint never saw, so a malformed one still has parts: before the first `::` (all of it when there is none)
/// and after it.
public struct VectorID: Sendable, Hashable, Comparable, CustomStringConvertible, Codable, ExpressibleByStringLiteral {
    public let text: String

    public init(_ text: String) { self.text = text }

    public init(stringLiteral text: String) { self.text = text }

    /// A JSON string, as the manifest, results and baselines write ids; any text reads (lint judges its form).
    public init(from decoder: any Decoder) throws { text = try decoder.singleValueContainer().decode(String.self) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    /// The text before the first `::`; the whole id when it has none.
    public var family: String { text.firstRange(of: "::").map { String(text[..<$0.lowerBound]) } ?? text }

    /// The text after the first `::`; empty when there is none.
    public var name: String { text.firstRange(of: "::").map { String(text[$0.upperBound...]) } ?? "" }

    /// `^[a-z0-9][a-z0-9-]*(::[a-z0-9][a-z0-9-]*)+$`, what lint requires of a manifest's ids.
    public var isWellFormed: Bool {
        let segments = text.split(separator: "::", omittingEmptySubsequences: false)
        return segments.count >= 2
            && segments.allSatisfy { segment in
                guard let first = segment.unicodeScalars.first, Self.isLowerAlphanumeric(first) else { return false }
                return segment.unicodeScalars.allSatisfy { Self.isLowerAlphanumeric($0) || $0 == "-" }
            }
    }

    public var description: String { text }

    public static func < (lhs: VectorID, rhs: VectorID) -> Bool { lhs.text < rhs.text }

    private static func isLowerAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}
