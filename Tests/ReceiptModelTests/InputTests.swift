import Foundation
import Testing
import ReceiptModel
import _ForgeSupport
import StoreModel

@Suite("Transport decoding", .timeLimit(.minutes(2)))
struct InputTests {
    let der: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x01]

    @Test("DER, base64 with line breaks, URL-safe and double base64 all yield the DER")
    func transports() throws {
        let base64 = Data(der).base64EncodedString()
        #expect(try ReceiptInput.decode(der) == (der, .der))
        let wrapped = Array((String(base64.prefix(3)) + "\r\n" + String(base64.dropFirst(3)) + "\n").utf8)
        #expect(try ReceiptInput.decode(wrapped).der == der)
        #expect(try ReceiptInput.decode(wrapped).transport == .base64)
        let double = Data(Array(base64.utf8)).base64EncodedString()
        #expect(double.hasPrefix("TU"))
        #expect(try ReceiptInput.decode(Array(double.utf8)).transport == .doubleBase64)
        let unpadded = base64.replacingOccurrences(of: "=", with: "")
        #expect(try ReceiptInput.decode(Array(unpadded.utf8)).der == der)
    }

    @Test("A JWS, garbage and empty input get one clear error")
    func refusals() {
        let jws = Array("eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2ln".utf8)
        #expect(throws: ReceiptDecodingError.self) { try ReceiptInput.decode(jws) }
        do { _ = try ReceiptInput.decode(jws) } catch { #expect(error.message.contains("JWS")) }
        do { _ = try ReceiptInput.decode(Array("MIIB%".utf8)) } catch {
            #expect(error.offset == 4)
            #expect(error.message.contains("0x25"))
        }
        #expect(throws: ReceiptDecodingError(.empty, at: 0, "")) { try ReceiptInput.decode([]) }
        #expect(throws: ReceiptDecodingError(.tooLarge, at: 0, "")) { try ReceiptInput.decode([UInt8](repeating: 0x30, count: ReceiptInput.maximumSize + 1)) }
    }
}

@Suite("PEM armour", .timeLimit(.minutes(2)))
struct PEMTests {
    @Test("A PEM PKCS7 receipt decodes; other PEM labels are named in the error")
    func pem() throws {
        let der: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x01]
        let pem = "-----BEGIN PKCS7-----\n\(Data(der).base64EncodedString())\n-----END PKCS7-----\n"
        #expect(try ReceiptInput.decode(Array(pem.utf8)) == (der, .pem))
        do {
            _ = try ReceiptInput.decode(Array("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8))
            Issue.record("a certificate is not a receipt")
        } catch {
            #expect(error.message == "expected a receipt, found a PEM CERTIFICATE (a receipt is PKCS7 SignedData)")
        }
    }
}
