internal import COpenSSL

/// An X.509 name as an ordered list of attribute/value pairs, in encoding order (most significant first, e.g. `C` before `CN`).
///
/// ``X509Certificate/subject`` prints names in RFC 2253 order, which is the reverse of this order.
public struct DistinguishedName: Sendable, Hashable {
    /// The RDNs in encoding order. `attribute` is an OpenSSL short name (`"CN"`, `"O"`, `"OU"`, `"C"`, `"emailAddress"`, …);
    /// `value` is encoded as UTF8String, or PrintableString where the attribute requires it (`C`).
    public var components: [(attribute: String, value: String)]

    /// Creates a name from `(attribute, value)` pairs in encoding order.
    public init(_ components: [(String, String)]) {
        self.components = components.map { (attribute: $0.0, value: $0.1) }
    }

    /// Names are equal when they have the same attributes and values in the same order.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.components.elementsEqual(rhs.components) { $0.attribute == $1.attribute && $0.value == $1.value }
    }

    /// Hashes attributes and values in order, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(components.count)
        for component in components {
            hasher.combine(component.attribute)
            hasher.combine(component.value)
        }
    }

    /// Runs `body` with a temporary `X509_NAME` holding these components, freed afterwards.
    func withX509Name<Result>(_ body: (OpaquePointer) throws -> Result) throws -> Result {
        guard let name = X509_NAME_new() else {
            throw ForgeCryptoError(.certificateIssuanceFailed, "X509_NAME_new")
        }
        defer { X509_NAME_free(name) }
        for (attribute, value) in components {
            let bytes = Array(value.utf8)
            guard let length = Int32(exactly: bytes.count),
                X509_NAME_add_entry_by_txt(name, attribute, MBSTRING_UTF8, bytes, length, -1, 0) == 1
            else {
                throw ForgeCryptoError(.certificateIssuanceFailed, "X509_NAME_add_entry_by_txt(\(attribute)=\(value))")
            }
        }
        return try body(name)
    }
}
