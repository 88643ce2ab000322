public import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import StoreForge
import ReceiptModel
import _ForgeSupport
import JWSModel
package import StoreModel
package import AppStoreVocabulary

/// sysexits(3) codes, documented in `forge --help`.
enum Exit {
    static let invalid = ExitCode(1)
    static let usage = ExitCode(64)
    static let dataError = ExitCode(65)
    static let noInput = ExitCode(66)
    /// A part of forge that is not built (forge-http).
    static let unavailable = ExitCode(69)
    static let software = ExitCode(70)
    static let cannotCreate = ExitCode(73)
}

/// Prints one error line to stderr and exits with `code`.
func fail(_ message: String, _ code: ExitCode) -> ExitCode {
    StandardStream.error.write("forge: error: \(message)\n")
    return code
}

func note(_ message: String) {
    StandardStream.error.write("forge: \(message)\n")
}

/// What a command reads, for the words of its size error: a JWS over the limit is not "a receipt".
enum InputKind {
    case receipt, jws, json, certificate, vector, key

    /// The plural a message names: "receipts are at most …".
    var plural: String {
        switch self {
        case .receipt: "receipts"
        case .jws: "JWS"
        case .json: "JSON files forge reads"
        case .certificate: "certificate files"
        case .vector: "vector files"
        case .key: "key files"
        }
    }
}

/// Reads a file or standard input (`-`), refusing anything larger than ``ReceiptLimits/maximumInputSize``
/// (16 MiB) before reading it all; the message names what `kind` of input was too large.
func readInput(_ path: String, kind: InputKind = .receipt) throws -> (bytes: [UInt8], source: String) {
    let limit = ReceiptInput.maximumSize
    if path == "-" {
        var data: [UInt8] = []
        while true {
            guard let chunk = StandardStream.input.read(upTo: 1 << 16) else { throw fail("cannot read standard input", Exit.noInput) }
            if chunk.isEmpty { break }
            data += chunk
            if data.count > limit {
                throw fail("standard input is larger than \(limit) bytes; \(kind.plural) are at most \(limit) bytes (at byte \(limit))", Exit.dataError)
            }
        }
        return (data, "stdin")
    }
    guard let (isDirectory, size) = FileBytes.status(path) else {
        throw fail("no such file: \(path)", Exit.noInput)
    }
    guard !isDirectory else { throw fail("\(path) is a directory, not a file", Exit.noInput) }
    guard size <= limit else {
        throw fail("\(path) is \(size) bytes; \(kind.plural) are at most \(limit) bytes (at byte \(limit))", Exit.dataError)
    }
    guard let data = FileManager.default.contents(atPath: path) else { throw fail("cannot read \(path)", Exit.noInput) }
    return ([UInt8](data), path)
}

/// Writes to a file atomically, or to standard output for `-`/nil.
func writeOutput(_ data: Data, to path: String?) throws {
    guard let path, path != "-" else {
        StandardStream.output.write(data)
        return
    }
    do { try AtomicFile.write(data, to: URL(fileURLWithPath: path)) } catch { throw fail(error.message, Exit.cannotCreate) }
}

/// Parses a `YYYY-MM-DDThh:mm:ssZ` option value.
func parseDate(_ text: String, option: String) throws -> Date {
    guard let date = ReceiptDate.parse(text) else {
        throw fail("\(option) '\(text)' is not a date like 2025-01-31T12:00:00Z", Exit.usage)
    }
    return date
}

/// The seconds of the wall clock, for commands whose user did not pin a time.
func wallClock() -> Date { Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)) }

extension Preset: ExpressibleByArgument {}
extension ProductType: ExpressibleByArgument {}
extension JWSKind: ExpressibleByArgument {}
extension TransactionReceiptVersion: ExpressibleByArgument {}
// Apple's raw values, exactly: a miscased or unknown value is a usage error (64) that lists them.
extension Environment: ExpressibleByArgument {}
extension ReceiptType: ExpressibleByArgument {}
extension NotificationType: ExpressibleByArgument {}
extension NotificationSubtype: ExpressibleByArgument {}
extension ConsumptionRequestReason: ExpressibleByArgument {}
extension ExternalPurchaseTokenType: ExpressibleByArgument {}
extension BillingPlanType: ExpressibleByArgument {}
