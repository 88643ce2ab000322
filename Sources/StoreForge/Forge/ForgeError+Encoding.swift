import StoreModel
import _ForgeSupport
import ReceiptModel

extension ForgeError {
    /// Runs an encoding step, turning a model error into `encodingFailed`.
    static func encoding<T>(_ what: String, _ body: () throws(ReceiptDecodingError) -> T) throws(ForgeError) -> T {
        do { return try body() } catch { throw ForgeError(.encodingFailed, "\(what): \(error.message)") }
    }
}
