import StoreModel
import Foundation
import ReceiptConformance
import ReceiptCorpus
import Testing
import _ForgeSupport
import ForgeTestSupport
import AppStoreVocabulary

/// `ValidateRequest.jsonLine`, the fast encoding every transport sends, says what `JSONEncoder` says.
@Suite("ValidateRequest.jsonLine", .timeLimit(.minutes(2)))
struct JSONLineTests {
    @Test(
        "decodes to the same request as the Codable encoding, with optional context members and escapes",
        arguments: [
            Context(now: "2025-01-01T00:00:00Z", trustAnchor: "forge-root"),
            Context(
                now: "2025-01-01T00:00:00Z", trustAnchor: "a \"quoted\"\\anchor", bundleId: "com.example.app", appVersion: "1.0\n",
                deviceId: "70A21D61-5404-4D93-8B54-4667ECC13D9A", environment: .production),
        ])
    func sameMessage(context: Context) throws {
        let request = ValidateRequest(seq: 42, id: "family::name\u{1}", base64: "MIIB+/==", context: context)
        let line = request.jsonLine
        #expect(!line.contains(0x0A), "one line")
        #expect(try JSONDecoder().decode(ValidateRequest.self, from: line) == request)
        let viaCodable = try JSONSerialization.jsonObject(with: JSONEncoder().encode(request)) as? NSDictionary
        #expect(try JSONSerialization.jsonObject(with: line) as? NSDictionary == viaCodable)
    }

    @Test("For every vector of the corpus, the line written straight into its buffer is the JSON value's compact serialization, byte for byte")
    func sameBytesAsTheValue() throws {
        let vectors = Repository.vectors
        let manifest = try ManifestIO.load(from: vectors)
        for (seq, vector) in manifest.vectors.enumerated() {
            let data = try Data(contentsOf: vectors.appendingPathComponent(vector.file))
            let request = ValidateRequest(seq: seq, id: vector.id.text, base64: Base64.encode(data), context: vector.context)
            #expect(request.jsonLineBytes == Array(request.message.serialized(pretty: false).utf8), "\(vector.id)")
            #expect(request.input.data == data.base64EncodedString(), "\(vector.id): Base64 writes what Foundation writes")
        }
        let escaped = ValidateRequest(seq: -1, id: "a\"b\\c\u{1}é", base64: "x\ny", context: Context(now: "n\t", trustAnchor: "t"))
        #expect(escaped.jsonLineBytes == Array(escaped.message.serialized(pretty: false).utf8))
    }

    @Test("The bytes an in-process validator reads are never on the wire: neither the JSON line nor Codable carries them")
    func bytesStayInProcess() throws {
        var request = ValidateRequest(seq: 7, id: "x::y", base64: "AAE=", context: Context(now: "2025-01-01T00:00:00Z", trustAnchor: "forge-root"))
        let line = request.jsonLine
        request.bytes = [0, 1]
        #expect(request.jsonLine == line)
        let encoded = try JSONEncoder().encode(request)
        #expect(!String(decoding: encoded, as: UTF8.self).contains("bytes"))
        #expect(try JSONDecoder().decode(ValidateRequest.self, from: encoded).bytes == nil)
    }

    @Test("every runner message it writes conforms to the harness protocol schema")
    func conformsToSchema() throws {
        let checker = try ProtocolChecker()
        let request = ValidateRequest(seq: 1, id: "x::y", base64: "AA==", context: Context(now: "2025-01-01T00:00:00Z", trustAnchor: "forge-root", bundleId: "b"))
        #expect(checker.check(runnerMessage: request.jsonLine).isEmpty)
    }
}
