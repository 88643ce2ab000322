#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport

/// A request's query string as Apple's clients send it: `name=value` pairs joined by `&`, percent-encoded,
/// `+` for a space, a list as the name repeated (`productId=a&productId=b`). Parsed in one linear pass.
package struct ServerAPIQuery: Sendable {
    package private(set) var pairs: [(name: String, value: String)] = []

    package init(_ raw: String) {
        for part in raw.split(separator: "&", omittingEmptySubsequences: true) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            pairs.append((Self.decode(pieces[0]), pieces.count > 1 ? Self.decode(pieces[1]) : ""))
        }
    }

    /// Every value of `name`, in order.
    package func values(_ name: String) -> [String] { pairs.filter { $0.name == name }.map(\.value) }

    /// The first value of `name`.
    package func value(_ name: String) -> String? { pairs.first { $0.name == name }?.value }

    /// Undecodable escapes are kept as sent (they then fail the parameter's own rule).
    private static func decode(_ text: Substring) -> String {
        let spaced = String(text).replacing("+", with: " ")
        return spaced.percentDecoded ?? spaced
    }
}
