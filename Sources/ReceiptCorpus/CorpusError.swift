public import _ForgeSupport

/// Why the corpus could not be found or read. Compared by code only.
public struct CorpusError: CodedError, Sendable {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Storage: String, Sendable, Hashable {
            case invalidManifest, notFound, io
        }
        private let storage: Storage
        /// The manifest is not JSON or does not match the model; the message names the key path.
        public static var invalidManifest: Code { .init(storage: .invalidManifest) }
        /// The corpus directory or its manifest does not exist where it was looked for.
        public static var notFound: Code { .init(storage: .notFound) }
        /// A file exists but could not be read.
        public static var io: Code { .init(storage: .io) }
        public var description: String { storage.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

}
