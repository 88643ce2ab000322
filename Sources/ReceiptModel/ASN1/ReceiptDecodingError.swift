public import _ForgeSupport
/// Why bytes could not be read as a receipt, and where.
///
/// Every decoding failure names the byte offset and what was expected there, so that `forge inspect`
/// can print one line a person can act on. Compared by code only, like swift-asn1's `ASN1Error`.
public struct ReceiptDecodingError: CodedError, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Storage: String, Hashable, Sendable {
            case truncated, invalidLength, unexpectedTag, tooDeep, trailingBytes, invalidValue, tooLarge, empty
            case unsupportedTag
        }
        private let storage: Storage
        /// The input ends before a header or its content does.
        public static var truncated: Code { .init(storage: .truncated) }
        /// A length field is malformed (reserved 0xFF, too many octets, indefinite on a primitive).
        public static var invalidLength: Code { .init(storage: .invalidLength) }
        /// A different tag stands where the structure needs another.
        public static var unexpectedTag: Code { .init(storage: .unexpectedTag) }
        /// Nesting deeper than the decoder's bound.
        public static var tooDeep: Code { .init(storage: .tooDeep) }
        /// Bytes follow the end of the outermost structure.
        public static var trailingBytes: Code { .init(storage: .trailingBytes) }
        /// A value is syntactically present but unusable (empty INTEGER, bad OID, bad base64).
        public static var invalidValue: Code { .init(storage: .invalidValue) }
        /// The input is larger than any receipt this decoder accepts.
        public static var tooLarge: Code { .init(storage: .tooLarge) }
        /// There are no bytes at all.
        public static var empty: Code { .init(storage: .empty) }
        /// A high-tag-number identifier, which no receipt structure uses.
        public static var unsupportedTag: Code { .init(storage: .unsupportedTag) }
        public var description: String { storage.rawValue }
    }

    public let code: Code
    /// Offset of the offending byte, counted from the start of `region`.
    public let offset: Int
    /// What the offset counts from: "byte" for the input itself, "payload byte" inside the eContent.
    public let region: String
    /// What was expected, in words.
    public let message: String

    public init(_ code: Code, at offset: Int, _ message: String, region: String = "byte") {
        self.code = code
        self.offset = offset
        self.message = message
        self.region = region
    }

    /// The same error re-anchored in another region (e.g. payload offsets reported as payload bytes).
    public func relocated(by delta: Int, region: String) -> ReceiptDecodingError {
        ReceiptDecodingError(code, at: offset + delta, message, region: region)
    }

    public var description: String { "at \(region) \(offset): \(message)" }

}
