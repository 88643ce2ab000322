#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport

/// Vector id patterns as users write them on command lines and in baselines: `*` matches any run of
/// characters (`chain::*`, `*expired*`), anything else matches itself.
public enum IDPattern {
    public static func matches(_ id: String, _ pattern: String) -> Bool {
        let parts = pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1 else { return id == pattern }
        var rest = Substring(id)
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let range = rest.firstRange(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return parts.last!.isEmpty || rest.hasSuffix(parts.last!)
    }
}
