import Foundation
import ForgeTestSupport
import Testing

/// Issue 20, items 1 and 5: the layers by concern (DESIGN §3) hold in the source: the corpus and the runner stop at
/// the support target, the store model knows no encoding, and no encoder decodes another's output.
@Suite("Layering: what each target may import", .timeLimit(.minutes(1)))
struct LayeringTests {
    /// Every `import` of every Swift file under `Sources/<target>`.
    static func imports(of target: String) throws -> [(file: String, module: String)] {
        let folder = Repository.file("Sources/\(target)")
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        return try files.flatMap { file in
            try String(contentsOf: file, encoding: .utf8).split(separator: "\n").compactMap { line -> (String, String)? in
                let words = line.split(separator: " ")
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count, index <= 1 else { return nil }
                return (file.lastPathComponent, String(words[index + 1]))
            }
        }
    }

    @Test(
        "Each target imports only what its layer may",
        arguments: [
            ("ForgeSupport", ["Foundation", "Synchronization", "Dispatch", "Glibc", "Darwin", "CForgeSystem"]),
            ("StoreModel", ["Foundation", "ForgeSupport"]),
            ("JWSModel", ["Foundation", "ForgeSupport"]),
            ("ReceiptModel", ["Foundation", "ForgeSupport", "StoreModel"]),
            ("ReceiptCorpus", ["Foundation", "ForgeSupport", "StoreModel", "Synchronization"]),
            ("ReceiptConformance", ["Foundation", "ForgeSupport", "ReceiptCorpus", "Synchronization", "Glibc", "Darwin", "Dispatch"]),
            // The reference validators (receipts and JWS) judge artefacts; they never import the forge that makes them, nor
            // the runner that judges validators (ReferenceHarness serves them to it from ReceiptValidationServer).
            // Glibc/Darwin: their online OCSP check is one POST over a socket (OneShotHTTP), no HTTP stack.
            (
                "ReferenceValidation",
                ["Foundation", "Synchronization", "ForgeSupport", "ForgeCrypto", "StoreModel", "ReceiptModel", "JWSModel", "ReceiptCorpus", "Glibc", "Darwin"]
            ),
        ])
    func allowedImports(_ target: String, _ allowed: [String]) throws {
        let found = try Self.imports(of: target)
        #expect(!found.isEmpty)
        for (file, module) in found where !allowed.contains(module) {
            Issue.record("\(target)/\(file) imports \(module)")
        }
    }

    @Test(
        "Each system library has one importer: libcrypto (COpenSSL) ForgeCrypto, libssl (CTLS) ForgeTLS, SQLite (CSQLite) ReceiptServeSQLite; the servers know a TLSContext and a ServerStateStore, never OpenSSL or a database",
        arguments: [("COpenSSL", "ForgeCrypto"), ("CTLS", "ForgeTLS"), ("CSQLite", "ReceiptServeSQLite")])
    func systemLibrariesStayInTheirTargets(_ library: String, _ owner: String) throws {
        let sources = Repository.file("Sources")
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path) where target != owner {
            for (file, module) in try Self.imports(of: target) where module == library {
                Issue.record("\(target)/\(file) imports \(module)")
            }
        }
        #expect(try Self.imports(of: owner).contains { $0.module == library })
    }

    @Test("The JWS encoder renders the store: it never decodes a receipt payload to learn what to sign")
    func noEncoderDecodesAnother() throws {
        let folder = Repository.file("Sources/ReceiptForge/StoreKit")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains("AppReceipt("), "\(file.lastPathComponent) decodes a receipt")
            #expect(!text.contains("ReceiptContainer("), "\(file.lastPathComponent) decodes a receipt container")
        }
    }
}
