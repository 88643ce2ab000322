import AppStoreVocabulary
import Foundation
import ForgeCrypto
import StoreForge
import Testing
import _ForgeSupport
import JWSModel
import StoreModel
import ForgeTestSupport

/// Issue 20: one certificate-set type for both vocabularies (RSA receipts, EC JWS), one forge for both artefacts.
@Suite("One certificate set, one forge", .timeLimit(.minutes(2)))
struct OneForgeTests {
    /// A copy of a committed set in a fresh directory, without `omitting`, or with `replacing` files' text.
    static func copy(_ folder: String, omitting: String? = nil, replacing: [String: String] = [:]) throws -> URL {
        let source = Repository.file(folder)
        let directory = try temporaryDirectory()
        for name in try FileManager.default.contentsOfDirectory(atPath: source.path) where name.hasSuffix(".pem") && name != omitting {
            let text = try replacing[name] ?? String(contentsOf: source.appendingPathComponent(name), encoding: .utf8)
            try Data(text.utf8).write(to: directory.appendingPathComponent(name))
        }
        return directory
    }

    static func loadError<Role: PKIRole>(_: Role.Type, _ directory: URL) -> ForgeError? {
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            _ = try CertificateSet<Role>.load(from: directory)
            return nil
        } catch { return error }
    }

    @Test("The one certificate-set type holds both bundled sets, each equal to its committed files")
    func bothBundledSets() throws {
        let receipts = try CertificateSet<CertificateRole>.bundled().validated()
        let jws = try CertificateSet<JWSRole>.bundled().validated()
        #expect(receipts.certificate(.root).publicKey.rsa != nil)
        #expect(jws.certificate(.root).publicKey.ec?.curve == .p384 && jws.privateKey(.leaf).curve == .p256)
        #expect(jws.x5c(xcode: false) == [jws.certificate(.leaf), jws.certificate(.intermediate), jws.certificate(.root)])
        let onDisk = try CertificateSet<JWSRole>.load(from: Repository.file("Certificates/jws"))
        #expect(onDisk.certificate(.xcode) == jws.certificate(.xcode))
    }

    @Test("A missing file is reported the same way in either kind of directory, with the file named")
    func missingFile() throws {
        let receipt = try #require(Self.loadError(CertificateRole.self, try Self.copy("Certificates", omitting: "wwdr-g5.key.pem")))
        let jws = try #require(Self.loadError(JWSRole.self, try Self.copy("Certificates/jws", omitting: "jws-signing.key.pem")))
        #expect(receipt.code == .certificateSetInvalid && jws.code == .certificateSetInvalid)
        #expect(receipt.message.contains("wwdr-g5.key.pem") && jws.message.contains("jws-signing.key.pem"))
        // The same sentence, the names aside.
        func shape(_ message: String, _ stem: String) -> String {
            message.replacingOccurrences(of: stem, with: "STEM").replacingOccurrences(of: #"/[^ :]*/"#, with: "/DIR/", options: .regularExpression)
        }
        #expect(shape(receipt.message, "wwdr-g5") == shape(jws.message, "jws-signing"))
    }

    @Test("A file that does not parse, or a key of the other kind, is refused with the file named")
    func invalidFile() throws {
        let broken = try #require(Self.loadError(JWSRole.self, try Self.copy("Certificates/jws", replacing: ["jws-wwdr-g6.pem": "not a certificate\n"])))
        #expect(broken.code == .certificateSetInvalid && broken.message.contains("jws-wwdr-g6.pem"))
        let ecKey = try String(contentsOf: Repository.file("Certificates/jws/jws-signing.key.pem"), encoding: .utf8)
        let foreign = try #require(Self.loadError(CertificateRole.self, try Self.copy("Certificates", replacing: ["receipt-signing.key.pem": ecKey])))
        #expect(foreign.code == .certificateSetInvalid && foreign.message.contains("receipt-signing.key.pem"))
    }

    @Test("One forge makes a receipt and a JWS of the same scenario, and their transaction ids agree")
    func oneForgeBothArtefacts() throws {
        let forge = try Forge.bundled()
        let scenario = Scenario(purchases: [Purchase(productID: "com.example.pro", renewals: 2, period: "P1M")])
        let receipt = try forge.make(scenario, now: pinnedNow)
        let jws = try forge.make(.transaction, scenario: scenario, now: pinnedNow)
        let artefacts: [any ForgedArtefact] = [receipt, jws]
        #expect(artefacts.map(\.artefact) == [.receipt, .jws])
        #expect(artefacts.allSatisfy { !$0.bytes.isEmpty })
        #expect(receipt.store.transactions.map(\.transactionID) == jws.store.transactions.map(\.transactionID))
        let latest = try #require(receipt.transactions.max { $0.purchaseDate < $1.purchaseDate })
        #expect(jws.payload["transactionId"] == .string(latest.transactionID))
        #expect(jws.payload["originalTransactionId"] == .string(latest.originalTransactionID))
    }

    @Test("A forge over a user's receipt set alone still makes JWS, from the compiled-in EC set")
    func ownReceiptSetOnly() throws {
        let directory = try Self.copy("Certificates")
        defer { try? FileManager.default.removeItem(at: directory) }
        let forge = try Forge(receiptPKI: try CertificateSet<CertificateRole>.load(from: directory))
        let scenario = Scenario(purchases: [Purchase(productID: "com.example.pro")])
        #expect(try forge.make(scenario, now: pinnedNow).bytes == (try sharedForge.make(scenario, now: pinnedNow).bytes))
        #expect(try forge.make(.transaction, scenario: scenario, now: pinnedNow).compact == (try sharedForge.make(.transaction, scenario: scenario, now: pinnedNow).compact))
    }
}
