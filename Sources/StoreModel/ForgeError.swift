public import _ForgeSupport

/// Why the forge could not make what was asked. Compared by code only.
public struct ForgeError: CodedError, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Storage: String, Hashable, Sendable {
            case invalidScenario, invalidRecipe, conflictingOptions, certificateSetInvalid, wouldOverwrite, ioFailed, cryptoFailed, encodingFailed
        }
        private let storage: Storage
        /// The scenario (spec file or flags) asks for something impossible or malformed.
        public static var invalidScenario: Code { .init(storage: .invalidScenario) }
        /// A mutation step names no known mutation, or gives a parameter that is missing, malformed or out of
        /// range: the recipe itself is wrong, whatever receipt it is applied to.
        public static var invalidRecipe: Code { .init(storage: .invalidRecipe) }
        /// Two options contradict each other.
        public static var conflictingOptions: Code { .init(storage: .conflictingOptions) }
        /// A certificate set is incomplete, unreadable, or a key does not match its certificate.
        public static var certificateSetInvalid: Code { .init(storage: .certificateSetInvalid) }
        /// Writing would replace existing files without permission.
        public static var wouldOverwrite: Code { .init(storage: .wouldOverwrite) }
        public static var ioFailed: Code { .init(storage: .ioFailed) }
        /// OpenSSL refused an operation; the message carries its reason.
        public static var cryptoFailed: Code { .init(storage: .cryptoFailed) }
        /// The receipt structure could not be encoded (e.g. a malformed OID in a scenario).
        public static var encodingFailed: Code { .init(storage: .encodingFailed) }
        public var description: String { storage.rawValue }
    }

    public let code: Code
    public let message: String
    /// The 1-based mutation step at fault, when the error comes from one (see ``Forge/make(_:now:mutations:reissuedAt:)``).
    public package(set) var step: Int?
    /// The scenario fields the message names, as key paths (`purchases[0].expiresDate`, `deviceId`), each
    /// written `'key.path'` in it: a front end that took them from its own options (the CLI's flags) names them so.
    public let fields: [String]
    /// Where the error was made (`#fileID`, `#line`), for reports from users: not part of equality.
    public let location: CodeLocation

    public init(_ code: Code, _ message: String, fields: [String] = [], fileID: StaticString = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.fields = fields
        self.location = CodeLocation(fileID: fileID, line: line)
    }

    public var description: String { (step.map { "step \($0): " } ?? "") + message }

    /// Runs an OpenSSL-backed step, turning its error into a `cryptoFailed` that says what was being done.
    public static func wrapping<T>(_ what: String, _ body: () throws -> T) throws(ForgeError) -> T {
        do { return try body() } catch let error as ForgeError { throw error } catch {
            throw ForgeError(.cryptoFailed, "\(what): \(error)")
        }
    }
}

extension ForgeError: CustomDebugStringConvertible {
    public var debugDescription: String { "ForgeError.\(code) (\(location)): \(description)" }
}
