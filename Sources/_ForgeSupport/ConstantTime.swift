/// Comparisons whose time does not tell where two secrets differ.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes, in time that depends on their lengths only.
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
