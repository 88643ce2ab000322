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
            ("_ForgeSupport", ["Foundation", "FoundationEssentials", "Synchronization", "Dispatch", "Glibc", "Darwin", "CForgeSystem"]),
            ("AppStoreVocabulary", ["Foundation", "FoundationEssentials"]),
            ("StoreModel", ["Foundation", "FoundationEssentials", "_ForgeSupport", "AppStoreVocabulary"]),
            ("JWSModel", ["Foundation", "FoundationEssentials", "_ForgeSupport", "Glibc", "Darwin"]),
            ("ReceiptModel", ["Foundation", "FoundationEssentials", "_ForgeSupport", "AppStoreVocabulary"]),
            ("ReceiptCorpus", ["Foundation", "FoundationEssentials", "_ForgeSupport", "AppStoreVocabulary", "Synchronization"]),
            ("ReceiptConformance", ["Foundation", "FoundationEssentials", "_ForgeSupport", "ReceiptCorpus", "Synchronization", "Glibc", "Darwin", "Dispatch"]),
            // The reference validators (receipts and JWS) judge artefacts; they never import the forge that makes them, nor
            // the runner that judges validators (ReferenceHarness serves them to it from ReceiptValidationServer).
            // Glibc/Darwin: their online OCSP check is one POST over a socket (OneShotHTTP), no HTTP stack.
            (
                "ReferenceValidation",
                [
                    "Foundation", "FoundationEssentials", "Synchronization", "_ForgeSupport", "ForgeCrypto", "StoreModel", "ReceiptModel", "JWSModel", "ReceiptCorpus", "Glibc",
                    "Darwin",
                    "AppStoreVocabulary",
                ]
            ),
        ])
    func allowedImports(_ target: String, _ allowed: [String]) throws {
        let found = try Self.imports(of: target)
        #expect(!found.isEmpty)
        for (file, module) in found where !allowed.contains(module) {
            Issue.record("\(target)/\(file) imports \(module)")
        }
    }

    /// Issue 41: `forge` links FoundationEssentials only. One use of Foundation proper (FileHandle, Thread, String(format:),
    /// CharacterSet…) links ICU's 34 MB of data into it; in these targets Foundation is imported only where
    /// FoundationEssentials cannot be (`#else` of `#if canImport(FoundationEssentials)`, or of `#if os(Linux)`: macOS).
    @Test(
        "forge's targets import Foundation only where FoundationEssentials is missing (macOS)",
        arguments: [
            "_ForgeSupport", "AppStoreVocabulary", "StoreModel", "JWSModel", "ReceiptModel", "ReceiptCorpus", "ForgeCrypto", "StoreForge",
            "ReferenceValidation", "ReceiptConformance", "StoreServer", "ReceiptValidationServer", "ForgeCLI", "forge",
        ])
    func essentialsOnly(_ target: String) throws {
        let folder = Repository.file("Sources/\(target)")
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        #expect(!files.isEmpty)
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map { $0.split(separator: " ") }
            for (index, words) in lines.enumerated() where words.suffix(2) == ["import", "Foundation"] && words.count <= 3 {
                if index == 0 || lines[index - 1] != ["#else"] { Issue.record("\(target)/\(file.lastPathComponent):\(index + 1) imports Foundation") }
            }
        }
    }

    /// Issue 39, item 9: the arrows that point down only if nothing below reaches back up. The syntax (receipts, JWS),
    /// the corpus model and the runner never link the store model, not even through a dependency (Package.swift's
    /// closure, so a new dependency cannot smuggle it in), and neither names it in an import; the command line reaches
    /// certificates only through the forge's and the validator's API, never ForgeCrypto itself.
    @Test(
        "What a layer may never reach: syntax, corpus and runner ↛ StoreModel (through any dependency), ForgeCLI ↛ ForgeCrypto (directly)",
        arguments: [
            ("ReceiptModel", "StoreModel", true), ("JWSModel", "StoreModel", true), ("ReceiptCorpus", "StoreModel", true),
            ("ReceiptConformance", "StoreModel", true), ("ForgeCLI", "ForgeCrypto", false),
        ])
    func neverReaches(_ target: String, _ module: String, _ transitively: Bool) throws {
        let graph = ArchitecturePageTests.declaredTargets(try String(contentsOf: Repository.file("Package.swift"), encoding: .utf8))
        #expect(graph[target] != nil, "Package.swift declares no target \(target)")
        var reached: Set<String> = []
        var path: [String: String] = [:]
        var frontier = [target]
        while let next = frontier.popLast() {
            for dependency in graph[next] ?? [] where reached.insert(dependency).inserted {
                path[dependency] = next
                if transitively { frontier.append(dependency) }
            }
        }
        if reached.contains(module) {
            let chain = sequence(first: module) { path[$0] }.prefix { $0 != target }.reversed()
            Issue.record("\(target) depends on \(module): \(([target] + chain).joined(separator: " → "))")
        }
        for (file, imported) in try Self.imports(of: target) where imported == module {
            Issue.record("\(target)/\(file) imports \(module)")
        }
    }

    @Test(
        "Each system library has one importer: libcrypto (COpenSSL) ForgeCrypto, libssl (CTLS) ForgeTLS, SQLite (CSQLite) StoreServerSQLite; the servers know a TLSContext and a ServerStateStore, never OpenSSL or a database",
        arguments: [("COpenSSL", "ForgeCrypto"), ("CTLS", "ForgeTLS"), ("CSQLite", "StoreServerSQLite")])
    func systemLibrariesStayInTheirTargets(_ library: String, _ owner: String) throws {
        let sources = Repository.file("Sources")
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path) where target != owner {
            for (file, module) in try Self.imports(of: target) where module == library {
                Issue.record("\(target)/\(file) imports \(module)")
            }
        }
        #expect(try Self.imports(of: owner).contains { $0.module == library })
    }

    /// Issue 39, item 6: `forge make --format json` renders verifyReceipt's JSON from the store, like every encoder.
    @Test("forge make renders verifyReceipt's JSON from the store: it never decodes the receipt it just forged")
    func makeDecodesNothing() throws {
        let text = try String(contentsOf: Repository.file("Sources/ForgeCLI/Make.swift"), encoding: .utf8)
        #expect(!text.contains("AppReceipt("), "Make.swift decodes a receipt")
    }

    @Test("The JWS encoder renders the store: it never decodes a receipt payload to learn what to sign")
    func noEncoderDecodesAnother() throws {
        let folder = Repository.file("Sources/StoreForge/StoreKit")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        for file in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains("AppReceipt("), "\(file.lastPathComponent) decodes a receipt")
            #expect(!text.contains("ReceiptContainer("), "\(file.lastPathComponent) decodes a receipt container")
        }
    }
}
