import Foundation
import ForgeCrypto
import StoreForge
import ReceiptCorpus
import ReceiptModel
@testable import ReferenceValidation
import Testing
import _ForgeSupport
import StoreModel
import ForgeTestSupport

/// The iOS 6 transaction receipt (issue 43): its TEST PKI, its rendering and its signature blob, byte for byte.
@Suite("Transaction receipts: PKI and forge", .timeLimit(.minutes(2)))
struct TransactionReceiptTests {
    static let directory = Repository.file("Certificates/transaction-receipt")
    static let now = ReceiptDate.instant(year: 2013, month: 6, day: 1, hour: 12, minute: 0, second: 0)

    static func scenario(_ preset: Preset = .appstore) -> Scenario {
        Scenario(
            preset: preset, bundleID: "com.example.app", seed: 43,
            purchases: [
                Purchase(productID: "com.example.coins", type: .consumable, quantity: 3, purchaseDate: "2013-01-01T10:00:00Z"),
                Purchase(productID: "com.example.pro.monthly", type: .autoRenewable, purchaseDate: "2013-01-02T03:04:05Z", renewals: 2),
            ])
    }

    @Test("The compiled-in set equals Certificates/transaction-receipt, and issuing again from its keys gives the same certificates")
    func regenerates() throws {
        let bundled = try CertificateSet<TransactionReceiptRole>.bundled().validated()
        let files = try CertificateSet<TransactionReceiptRole>.load(from: Self.directory)
        let keys = Dictionary(uniqueKeysWithValues: TransactionReceiptRole.allCases.map { ($0, bundled.privateKey($0)) })
        let reissued = try CertificateSet<TransactionReceiptRole>.issue(keys: keys)
        for role in TransactionReceiptRole.allCases {
            #expect(bundled.certificate(role) == files.certificate(role), "\(role): run scripts/embed-certificates.sh")
            #expect(try bundled.privateKey(role).pemRepresentation == files.privateKey(role).pemRepresentation, "\(role)")
            #expect(reissued.certificate(role).derRepresentation == bundled.certificate(role).derRepresentation, "\(role)")
        }
    }

    @Test("Apple's shape: an RSA-1024 SHA-1 leaf with the marker 6.5.1 under a SHA-1 authority, both TEST-named")
    func shape() throws {
        let pki = try CertificateSet<TransactionReceiptRole>.bundled()
        let leaf = pki.certificate(.purchaseReceipt), authority = pki.certificate(.iTunesStoreCA)
        #expect(leaf.publicKey.rsa?.bitCount == 1024)
        #expect(authority.publicKey.rsa?.bitCount == 2048)
        for certificate in [leaf, authority] {
            #expect(certificate.signatureAlgorithmOID == KnownOID.sha1WithRSAEncryption)
            #expect(certificate.subject.contains("TEST") && certificate.subject.contains("not Apple"))
        }
        #expect(leaf.hasExtension(oid: TransactionReceiptProfile.purchaseReceiptMarker))
        #expect(leaf.isIssued(by: authority) && authority.isCA && !leaf.isCA)
        #expect(leaf.subject.contains("PurchaseReceiptCertificate") && authority.subject.contains("iTunes Store Certification Authority"))
    }

    @Test("Both versions: the blob is version | signature | BE32 length | certificate, signed over version ‖ purchase-info", arguments: TransactionReceiptVersion.allCases)
    func blob(version: TransactionReceiptVersion) throws {
        let forge = try Forge.bundled()
        let receipt = try forge.makeTransactionReceipt(Self.scenario(), now: Self.now, version: version)
        #expect(try forge.makeTransactionReceipt(Self.scenario(), now: Self.now, version: version).bytes == receipt.bytes, "deterministic")
        let outer = try TransactionReceipt.strings(of: OldStylePlist.parse(receipt.bytes))
        #expect(outer.map(\.key) == ["signature", "purchase-info", "pod", "signing-status"])
        let blob = try #require(Base64.decodeStandard(outer[0].value))
        let length = version == .v2 ? 128 : 256
        #expect(blob[0] == version.rawValue)
        let declared = blob[1 + length..<5 + length].reduce(0) { $0 << 8 | Int($1) }
        #expect(declared == blob.count - 5 - length)
        let certificate = try X509Certificate(derEncoded: Array(blob[(5 + length)...]))
        #expect(certificate.derRepresentation == Array(blob[(5 + length)...]))
        #expect(certificate.publicKey.rsa?.bitCount == length * 8)
        let info = try #require(Base64.decodeStandard(outer[1].value))
        #expect(info == receipt.purchaseInfo)
        let signed = [version.rawValue] + info
        #expect(certificate.publicKey.rsa?.isValidSignature(Array(blob[1..<1 + length]), for: signed, algorithm: .sha1) == true)
        #expect(try X509Certificate(derEncoded: receipt.anchor).subject == certificate.issuer)
    }

    @Test("purchase-info has every key of §4 a production subscription period has, in order, with the store's values")
    func everyKey() throws {
        let receipt = try Forge.bundled().makeTransactionReceipt(Self.scenario(), now: Self.now, version: .v3)
        let inner = try TransactionReceipt.strings(of: OldStylePlist.parse(receipt.purchaseInfo))
        #expect(inner.map(\.key) == TransactionReceipt.PurchaseInfoKey.allCases.map(\.rawValue))
        let values = Dictionary(inner, uniquingKeysWith: { first, _ in first })
        let transaction = receipt.transaction
        #expect(transaction.productID == "com.example.pro.monthly", "the latest purchase: the subscription's second renewal")
        #expect(values["transaction-id"] == transaction.transactionID && values["original-transaction-id"] == transaction.originalTransactionID)
        #expect(values["bid"] == "com.example.app" && values["quantity"] == "1" && values["product-id"] == transaction.productID)
        #expect(values["purchase-date-ms"] == ReceiptDate.milliseconds(transaction.purchaseDate).map(String.init))
        #expect(values["purchase-date"]?.hasSuffix(" Etc/GMT") == true && values["purchase-date-pst"]?.hasSuffix(" America/Los_Angeles") == true)
        #expect(values["expires-date"] == transaction.expiresDate.flatMap(ReceiptDate.milliseconds).map(String.init))
        #expect(values["unique-vendor-identifier"] == receipt.store.deviceID.description && values["unique-identifier"]?.utf8.count == 40)
    }

    @Test("Sandbox adds environment = Sandbox; a consumable has no subscription keys; Xcode presets refuse")
    func sandboxAndKinds() throws {
        let forge = try Forge.bundled()
        let sandbox = try forge.makeTransactionReceipt(Self.scenario(.sandbox), now: Self.now, version: .v2)
        let outer = try TransactionReceipt.strings(of: OldStylePlist.parse(sandbox.bytes))
        #expect(outer.map(\.key) == ["signature", "purchase-info", "environment", "pod", "signing-status"])
        #expect(outer[2].value == "Sandbox" && outer[3].value == "100")
        let coins = try #require(try Store(Self.scenario(), now: Self.now).transactions.first { $0.productID == "com.example.coins" })
        let consumable = try forge.makeTransactionReceipt(Self.scenario(), now: Self.now, version: .v3, transactionID: coins.transactionID)
        let keys = try TransactionReceipt.strings(of: OldStylePlist.parse(consumable.purchaseInfo)).map(\.key)
        #expect(!keys.contains("expires-date") && !keys.contains("web-order-line-item-id") && !keys.contains("is-in-intro-offer-period"))
        #expect(keys.contains("quantity"))
        #expect(throws: ForgeError.self) { try forge.makeTransactionReceipt(Self.scenario(.xcode2023), now: Self.now, version: .v3) }
    }

    static let vectors = VectorCatalogue.all.filter { $0.artifact == .transactionReceipt }

    @Test("The corpus has both versions in both environments, and an invalid vector of every defect")
    func corpusShape() {
        #expect(Self.vectors.filter { $0.verdict == .valid }.count == 4)
        let defects = Set(Self.vectors.flatMap(\.mutations).compactMap { TransactionReceiptDefect(mutationID: $0.mutation) })
        #expect(defects == Set(TransactionReceiptDefect.allCases))
    }

    @Test("The reference validator gives every transaction-receipt vector its verdict and error class", arguments: vectors.map(\.id))
    func oracle(id: String) throws {
        let spec = try #require(Self.vectors.first { $0.id == id })
        let (bytes, context) = try spec.make(forge: Forge.bundled())
        let anchor = try #require(BundledAnchor.allCases.first { $0.corpusID == context.trustAnchor })
        let report = TransactionReceiptValidator().validate(
            bytes,
            context: ValidationContext(
                trustedRoots: [try anchor.certificate()], bundleID: context.bundleId, environment: context.environment, now: ReceiptDate.parse(context.now)!))
        if spec.verdict == .valid {
            #expect(report.verdict == .valid, "\(report.message)")
            #expect(report.checks.map(\.name) == [.parse, .structure, .signature, .payload, .chain, .bundleID, .environment])
        } else {
            let got = try #require(report.errorClass, "\(report.message)")
            #expect(spec.errorClasses.contains { got.isWithin($0) }, "got \(got): \(report.message)")
        }
    }

    @Test("Hostile plists are judged in linear time and bounded depth: deep nesting, a million entries, 16 MiB of one string")
    func hostile() {
        let context = ValidationContext(trustedRoots: [], now: Self.now)
        let inputs: [[UInt8]] = [
            Array(("{a=" + String(repeating: "(", count: 1_000_000)).utf8), Array(("{" + String(repeating: "a=b;", count: 1_000_000) + "}").utf8),
            Array(("{\"a\"=\"" + String(repeating: "x", count: 16_000_000)).utf8), Array(("{" + String(repeating: "/*", count: 100_000)).utf8),
            Array(("{" + String(repeating: "a=<0a0b", count: 100_000)).utf8),
        ]
        for input in inputs {
            let clock = ContinuousClock()
            let elapsed = clock.measure { _ = TransactionReceiptValidator().validate(input, context: context) }
            #expect(elapsed < .seconds(10), "\(input.prefix(8)): \(elapsed)")
            #expect(TransactionReceiptValidator().validate(input, context: context).verdict == .invalid)
        }
    }

    @Test("The old-style plist round-trips escapes, and the reader takes the whole syntax in one bounded pass")
    func plist() throws {
        let entries: [(key: String, value: String)] = [("a\"b", "line\nnext\\tab\t"), ("é", "ü")]
        let parsed = try TransactionReceipt.strings(of: OldStylePlist.parse(OldStylePlist.render(entries)))
        #expect(parsed.map(\.key) == entries.map(\.key) && parsed.map(\.value) == entries.map(\.value))
        let general = try OldStylePlist.parse(Array("/* c */ { a = (1, <0aff>, {b = c;}); // x\n \"d\" = \"\\U00e9\\101\"; }".utf8))
        guard case .dictionary(let top) = general else { Issue.record("not a dictionary"); return }
        #expect(top.count == 2 && top[1].value == .string("éA"))
        #expect(top[0].value == .array([.string("1"), .data([0x0A, 0xFF]), .dictionary([OldStylePlist.Entry(key: "b", value: .string("c"))])]))
        for bad in ["", "{", "{ a = b }", "{ a = \"b;", "( a b )", "{ a = b; } x", "<0>", "/* x", String(repeating: "(", count: 40)] {
            #expect(throws: ReceiptDecodingError.self, "\(bad)") { try OldStylePlist.parse(Array(bad.utf8)) }
        }
        #expect(throws: TransactionReceipt.StringsProblem.duplicateKey("a")) { try TransactionReceipt.strings(of: OldStylePlist.parse(Array("{a=b;a=c;}".utf8))) }
        #expect(throws: TransactionReceipt.StringsProblem.notString(key: "a", kind: "an array")) {
            try TransactionReceipt.strings(of: OldStylePlist.parse(Array("{a=();}".utf8)))
        }
    }
}
