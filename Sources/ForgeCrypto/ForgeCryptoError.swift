/// The one error type ForgeCrypto throws.
///
/// It carries OpenSSL's own reason texts (e.g. "no start line", "bad decrypt") so a failure says why
/// OpenSSL refused, not only that it did. Equality and hashing consider ``code`` only: reason texts
/// are diagnostics whose wording depends on the OpenSSL version.
public struct ForgeCryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of operation that failed; stable across OpenSSL versions, meant for matching in `catch` and tests.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Storage: Sendable, Hashable {
            case keyParsingFailed
            case keyEncodingFailed
            case keyGenerationFailed
            case certificateParsingFailed
            case certificateIssuanceFailed
            case signingFailed
            case digestFailed
            case unsupportedAlgorithm
            case invalidInput
        }

        private let storage: Storage

        private init(_ storage: Storage) {
            self.storage = storage
        }

        /// A private or public key could not be decoded (malformed PEM/DER, or not an RSA key).
        public static var keyParsingFailed: Self { Self(.keyParsingFailed) }
        /// A key could not be serialised to PEM.
        public static var keyEncodingFailed: Self { Self(.keyEncodingFailed) }
        /// OpenSSL refused to generate an RSA key (e.g. a size below its minimum).
        public static var keyGenerationFailed: Self { Self(.keyGenerationFailed) }
        /// Certificate bytes or PEM text are not exactly one well-formed X.509 certificate.
        public static var certificateParsingFailed: Self { Self(.certificateParsingFailed) }
        /// Building, extending or signing a new certificate failed.
        public static var certificateIssuanceFailed: Self { Self(.certificateIssuanceFailed) }
        /// Producing an RSA signature failed.
        public static var signingFailed: Self { Self(.signingFailed) }
        /// Computing a message digest failed.
        public static var digestFailed: Self { Self(.digestFailed) }
        /// The OpenSSL build does not offer an algorithm ForgeCrypto needs.
        public static var unsupportedAlgorithm: Self { Self(.unsupportedAlgorithm) }
        /// The caller passed a value that cannot be valid (wrong digest length, empty serial, malformed OID or URI).
        public static var invalidInput: Self { Self(.invalidInput) }

        /// A short lowercase phrase, used as the first part of ``ForgeCryptoError/description``.
        public var description: String {
            switch storage {
            case .keyParsingFailed: "key parsing failed"
            case .keyEncodingFailed: "key encoding failed"
            case .keyGenerationFailed: "key generation failed"
            case .certificateParsingFailed: "certificate parsing failed"
            case .certificateIssuanceFailed: "certificate issuance failed"
            case .signingFailed: "signing failed"
            case .digestFailed: "digest failed"
            case .unsupportedAlgorithm: "unsupported algorithm"
            case .invalidInput: "invalid input"
            }
        }
    }

    /// What failed, for matching.
    public let code: Code
    /// OpenSSL's reason texts from its error queue at the time of failure, oldest first; empty when ForgeCrypto itself rejected the input.
    public let reasons: [String]
    /// Which step failed, usually the OpenSSL function name or a sentence about the rejected input.
    public let context: String
    /// Source file (`#fileID`) in ForgeCrypto that raised the error.
    public let file: String
    /// Source line in ForgeCrypto that raised the error.
    public let line: Int

    /// Creates an error and drains the calling thread's OpenSSL error queue into ``reasons``.
    init(_ code: Code, _ context: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.context = context
        self.reasons = OpenSSLErrorQueue.drain()
        self.file = file
        self.line = line
    }

    /// `"<code>: <context>: <reason>; <reason>"`, e.g. `"certificate parsing failed: PEM_read_bio: no start line"`.
    public var description: String {
        let head = "\(code): \(context)"
        return reasons.isEmpty ? head : "\(head): \(reasons.joined(separator: "; "))"
    }

    /// Errors are equal when their codes are; see the type's documentation.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code
    }

    /// Hashes the code only, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }
}
