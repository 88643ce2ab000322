import Foundation
import ForgeTestSupport
import Testing
import StoreModel
import _ForgeSupport

/// Fidelity to reality: the 21 real receipts in ../shared/interop (skipped when the folder is absent).
@Suite("Interop with real receipts", .requires(.interop), .timeLimit(.minutes(2)))
struct InteropTests {
    static var receipts: [URL] {
        ((try? FileManager.default.contentsOfDirectory(at: Repository.interop.appendingPathComponent("receipts"), includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.pathExtension == "der" }.sorted { $0.path < $1.path }
    }
    static func cert(_ name: String) -> String { Repository.interop.appendingPathComponent("certs/\(name)").path }

    @Test("forge inspect decodes all 21 real receipts")
    func inspectsAll() async throws {
        #expect(Self.receipts.count == 21)
        for receipt in Self.receipts {
            let result = try await forge("inspect", receipt.path, "--json")
            #expect(result.status == 0, "\(receipt.lastPathComponent): \(result.stderr)")
            let payload = try #require(try json(result)["payload"] as? [String: Any])
            #expect((payload["attributes"] as? [Any])?.isEmpty == false)
        }
    }

    @Test("App Store receipts validate under Apple's root at their creation date, and not under the test root; Xcode ones under StoreKit")
    func validatesGenuine() async throws {
        for receipt in Self.receipts {
            let xcode = receipt.lastPathComponent.contains("xcode")
            let genuine = try await forge("validate", receipt.path, "--root", Self.cert(xcode ? "StoreKitTestCertificate.cer" : "AppleIncRootCertificate.cer"))
            #expect(genuine.status == 0, "\(receipt.lastPathComponent): \(genuine.text)")
            let test = try await forge("validate", receipt.path)
            #expect(test.status == 1, "\(receipt.lastPathComponent) must not validate under the TEST root")
            #expect(test.text.contains("chain.untrusted"))
        }
    }

    @Test(
        "The device-hash ground truth holds",
        arguments: [
            ("tpinapp-sandbox-g5.der", "956328D9-CC6A-47F4-BE40-6953FB0AB6C7"),
            ("arv-purchasing-experiments-sandbox.der", "5hgQmGLdQz+7lGddOBXSYw=="),
            ("arv-mindnode-mac-sha256.der", "f8:ff:c2:1e:91:82"),
            ("arv-mindnode-mac-2017.der", "6c:40:08:b5:94:5e"),
            ("arv-mindnode-ios-sandbox1.der", "3B76A7BD-8F5B-46A4-BCB1-CCE8DBD1B3CD"),
        ])
    func deviceHash(file: String, device: String) async throws {
        var deviceID = device
        if device.hasSuffix("==") {  // 16 raw bytes in base64: write them as a UUID
            let bytes = try #require(Data(base64Encoded: device))
            deviceID = UUID(uuid: bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).uuidString
        }
        let path = Repository.interop.appendingPathComponent("receipts/\(file)").path
        let right = try await forge("validate", path, "--root", Self.cert("AppleIncRootCertificate.cer"), "--device-id", deviceID, "--json")
        #expect(right.status == 0, "\(right.text)")
        let wrong = try await forge("validate", path, "--root", Self.cert("AppleIncRootCertificate.cer"), "--device-id", "00000000-0000-0000-0000-000000000000")
        #expect(wrong.status == 1 && wrong.text.contains("binding.device-hash"))
    }

    /// The properties of preset item 5 that `inspect --json` reports, for comparison with reality.
    static func shape(_ path: String) async throws -> [String: String] {
        let inspection = try json(try await forge("inspect", path, "--json"))
        let container = try #require(inspection["container"] as? [String: Any])
        let payload = try #require(inspection["payload"] as? [String: Any])
        let attributes = try #require(payload["attributes"] as? [[String: Any]])
        let signers = try #require(container["signers"] as? [[String: Any]])
        let opaque = attributes.first { $0["type"] as? Int == 4 }
        let purchases = attributes.filter { $0["type"] as? Int == 17 }
        let purchaseTypes = Set(purchases.flatMap { ($0["attributes"] as? [[String: Any]] ?? []).compactMap { $0["type"] as? Int } })
        return [
            "lengths": "\(container["lengths"]!)", "eContent": try canonical(container["eContent"]!),
            "purchasesDERSorted": "\(Set(purchases.map { $0["derSorted"] as? Bool == true }).sorted { !$0 && $1 })",
            "digests": "\(container["digestAlgorithms"]!)", "signatureAlgorithm": "\(signers.map { $0["signatureAlgorithm"]! })",
            "signedAttributes": "\(signers.map { $0["signedAttributes"]! })", "certificateCount": "\((container["certificates"] as? [Any])?.count ?? -1)",
            "certificateOrder": "\(container["certificateOrder"]!)", "derSorted": "\(payload["derSorted"]!)",
            "opaque": "\((opaque?["hex"] as? String)?.count ?? 0) hex, v\(opaque?["version"] ?? "")",
            "types": "\(Set(attributes.compactMap { $0["type"] as? Int }).subtracting([17]).sorted())",
            "purchaseTypes": "\(purchaseTypes.subtracting([1721]).sorted())",
        ]
    }

    static func canonical(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test(
        "Each preset's container shape equals the matching real receipt's",
        arguments: [
            ("appstore", "tpinapp-production.der", ["--renewals", "1"]),
            ("appstore-sha1", "tpinapp-watch.der", ["--renewals", "1"]),
            ("sandbox", "tpinapp-sandbox-g5.der", ["--renewals", "1"]),
            ("xcode-2020", "tpinapp-xcode.der", ["--renewals", "0"]),
            ("xcode-2023", "apple-xcode-app-receipt-with-transaction.der", ["--renewals", "0"]),
        ])
    func presetShapes(preset: String, real: String, purchase: [String]) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let forged = directory.appendingPathComponent("forged.der")
        let made = try await forge(arguments: ["make", "--preset", preset, "--product", "com.example.sub"] + purchase + ["-q", "-o", forged.path])
        #expect(made.status == 0, "\(made.stderr)")
        let ours = try await Self.shape(forged.path)
        let theirs = try await Self.shape(Repository.interop.appendingPathComponent("receipts/\(real)").path)
        for key in theirs.keys.sorted() {
            #expect(ours[key] == theirs[key], "\(preset) vs \(real): \(key)")
        }
    }
}
