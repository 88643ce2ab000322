import Foundation
import ReceiptConformance
import ReceiptCorpus
import ReferenceValidation
import ForgeSupport
import StoreModel

extension TargetPlan {
    /// `Name: value` → (name, value).
    static func header(_ text: String) -> (String, String) {
        let name = text.prefix { $0 != ":" }
        return (String(name).trimmingCharacters(in: .whitespaces), String(text.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces))
    }

    /// `verifyreceipt` or a mapping file.
    static func loadMapping(_ name: String) throws -> ResponseMapping {
        if name == "verifyreceipt" { return .verifyReceipt }
        let data = Data(try readInput(name, kind: .json).bytes)
        do { return try ResponseMapping.load(data) } catch { throw fail("\(name): \(error.message)", Exit.dataError) }
    }
}
