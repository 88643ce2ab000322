public import _ForgeSupport

/// Why the runner could not use a file or a command it was given. Compared by code only.
public struct ConformanceError: CodedError, Sendable {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Storage: String, Sendable, Hashable {
            case invalidMapping, invalidResults, invalidCommand, invalidBaseline
        }
        private let storage: Storage
        /// A response mapping file that is not JSON, not version 1, or contradicts itself.
        public static var invalidMapping: Code { .init(storage: .invalidMapping) }
        /// A results file (for `merge`) that is not a run's results, or results of different suites.
        public static var invalidResults: Code { .init(storage: .invalidResults) }
        /// A baseline file that cannot be read or is not a baseline.
        public static var invalidBaseline: Code { .init(storage: .invalidBaseline) }
        /// A target's command that cannot be split into words (an unterminated quote) or is empty.
        public static var invalidCommand: Code { .init(storage: .invalidCommand) }
        public var description: String { storage.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

}
