import ReceiptConformance
import ReceiptCorpus
import StoreForge
import ReceiptModel
import Testing
import _ForgeSupport
import StoreModel

/// Every error type of the package follows one pattern (`CodedError`): matched by code, messages free to vary.
@Suite("Errors compare by code, not by message", .timeLimit(.minutes(2)))
struct CodedErrorTests {
    private func check<E: CodedError>(_ make: (String) -> E, different: E) {
        let first = make("one message"), second = make("another, with an offset 17")
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first != different)
        #expect(first.description.contains("one message"))
    }

    @Test("CorpusError, ConformanceError, SchemaError, ForgeError")
    func codes() {
        check({ CorpusError(.notFound, $0) }, different: CorpusError(.io, "one message"))
        check({ ConformanceError(.invalidMapping, $0) }, different: ConformanceError(.invalidBaseline, "one message"))
        check({ SchemaError(.invalidSchema, $0) }, different: SchemaError(.unsupportedKeyword, "one message"))
        check({ ForgeError(.invalidRecipe, $0) }, different: ForgeError(.ioFailed, "one message"))
    }

    @Test("ReceiptDecodingError ignores the offset and the message as well")
    func decoding() {
        let first = ReceiptDecodingError(.truncated, at: 3, "a length runs past the end")
        #expect(first == ReceiptDecodingError(.truncated, at: 90, "the input ends early", region: "payload byte"))
        #expect(first != ReceiptDecodingError(.tooDeep, at: 3, "a length runs past the end"))
    }
}
