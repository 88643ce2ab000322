import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptConformance
import ReceiptCorpus
import ReferenceValidation
import _ForgeSupport
import StoreModel

extension TargetPlan {
    /// `Name: value` → (name, value).
    static func header(_ text: String) -> (String, String) {
        let name = text.prefix { $0 != ":" }
        return (String(name).trimmingWhitespace(), String(text.dropFirst(name.count + 1)).trimmingWhitespace())
    }

    /// `verifyreceipt` or a mapping file.
    static func loadMapping(_ name: String) throws -> ResponseMapping {
        if name == "verifyreceipt" { return .verifyReceipt }
        let data = Data(try readInput(name, kind: .json).bytes)
        do { return try ResponseMapping.load(data) } catch { throw fail("\(name): \(error.message)", Exit.dataError) }
    }
}

extension HTTPURL {
    /// An http(s) URL from the command line (`flag`'s value, or an argument): checked where it is read, so a
    /// port outside 1-65535 is a usage error (64) with one line, before anything connects.
    static func argument(_ text: String, _ flag: String? = nil) throws -> HTTPURL {
        do throws(HTTPURL.Problem) { return try HTTPURL(text) } catch { throw ValidationError([flag, error.description].compactMap(\.self).joined(separator: " ")) }
    }
}
