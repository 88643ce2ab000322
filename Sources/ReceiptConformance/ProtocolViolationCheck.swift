#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport

/// `--validate-protocol`: a check every raw harness message goes through before it is decoded; a
/// message it objects to becomes ERROR with the violation, instead of being read leniently.
public struct ProtocolViolationCheck: Sendable {
    private let body: @Sendable (Data) -> String?

    public init(_ body: @escaping @Sendable (Data) -> String?) { self.body = body }

    /// nil when the message conforms; otherwise one line describing every violation.
    public func check(_ message: Data) -> String? { body(message) }
}
