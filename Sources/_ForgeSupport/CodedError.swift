/// The package's one error pattern, after swift-asn1's `ASN1Error`: a struct with a stable `code` to match
/// on in `catch` and tests, and a `message` for people. Equality and hashing look at the code only, since
/// messages carry details (offsets, paths, OpenSSL's reason texts) that vary between runs and versions.
public protocol CodedError: Error, Hashable, CustomStringConvertible {
    associatedtype Code: Hashable & CustomStringConvertible
    var code: Code { get }
    var message: String { get }
}

extension CodedError {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    public var description: String { message }
}

/// Where an error was made: captured by the errors' initializers with `#fileID` and `#line` (as swift-asn1's
/// `ASN1Error` does), printed by `debugDescription`, never compared.
public struct CodeLocation: Sendable, CustomStringConvertible {
    public let fileID: StaticString
    public let line: UInt

    public init(fileID: StaticString = #fileID, line: UInt = #line) {
        self.fileID = fileID
        self.line = line
    }

    public var description: String { "\(fileID):\(line)" }
}
