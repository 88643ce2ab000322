import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport

/// Issue 43 through the built binary: `forge make --transaction-receipt` from flags, a spec and a StoreKit file, both
/// signature versions, and `forge inspect` / `forge validate` of what it makes.
@Suite("forge make --transaction-receipt", .timeLimit(.minutes(2)))
struct TransactionReceiptCLITests {
    static let now = "2015-06-01T00:00:00Z"
    static let sources: [[String]] = [
        ["--product", "com.example.pro.monthly", "--type", "auto-renewable", "--renewals", "1"],
        ["--spec", Repository.file("examples/scenario.json").path],
        ["--storekit", Repository.file("examples/storekit/Products.storekit").path, "--product", "com.example.coins"],
    ]

    @Test("Flags, a spec and a .storekit alike: both versions, the same bytes twice, valid under the bundled anchors", arguments: sources)
    func makes(_ source: [String]) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for version in ["2", "3"] {
            let file = directory.appendingPathComponent("v\(version).plist").path
            let arguments = ["make", "--transaction-receipt", "--signature-version", version, "--now", Self.now, "--seed", "9"] + source
            let made = try await forge(arguments: arguments + ["-o", file])
            #expect(made.status == 0, "\(made.stderr)")
            #expect(made.stderr.contains("trust anchor: --root transaction-receipt-v\(version)"), "\(made.stderr)")
            let again = try await forge(arguments: arguments + ["--format", "der", "-q"])
            #expect(again.stdout == (try Data(contentsOf: URL(fileURLWithPath: file))), "deterministic")
            let valid = try await forge("validate", file, "--bundle-id", "com.example.app")
            #expect(valid.status == 0, "\(valid.text)\(valid.stderr)")
            #expect(valid.text.contains("checked: parse, structure, signature, payload, chain, bundle id"), "\(valid.text)")
            let inspected = try await forge("inspect", file)
            #expect(inspected.status == 0 && inspected.text.contains("signature blob: version \(version), \(version == "2" ? 128 : 256)-byte signature"), "\(inspected.text)")
            #expect(inspected.text.contains("transaction-id = ") && inspected.text.contains("bid = \"com.example.app\""), "\(inspected.text)")
        }
    }

    @Test("The runner over HTTP: a verifyReceipt mapping that declares transaction-receipt, against forge serve, judges every vector right")
    func servedThroughTheRunner() async throws {
        let server = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:0"])
        defer { server.kill() }
        try await withTemporaryDirectory { directory in
            // Apple's verifyReceipt shape with the vector's context, and the artefact declared (the built-in mapping declares receipts).
            let mapping = directory.appendingPathComponent("mapping.json")
            try Data(
                #"""
                {"mappingVersion": 1, "name": "verifyreceipt-ios6",
                 "request": {"headers": {"X-Forge-Now": "{{now}}", "X-Forge-Trust-Anchor": "{{trustAnchor}}", "X-Forge-Bundle-Id": "{{bundleId}}",
                                         "X-Forge-Environment": "{{environment}}"},
                             "body": {"receipt-data": "{{receipt}}"}},
                 "response": {"verdict": "/status", "accept": ["0", "21006"],
                              "reject": {"21002": "container", "21003": "signature", "21007": "binding.environment", "21008": "binding.environment", "21010": "binding"}},
                 "artifacts": ["transaction-receipt"]}
                """#.utf8
            ).write(to: mapping)
            let results = directory.appendingPathComponent("results.json")
            let outcome = try await run(
                Binaries.forge,
                [
                    "run", "--target", server.url + "/verifyReceipt", "--mapping", mapping.path, "--vectors", Repository.vectors.path, "--results", results.path,
                    "--quiet",
                ], deadline: .seconds(60))
            #expect(outcome.status == 0, "\(outcome.text)\(outcome.stderr)")
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])
            let rows = try #require(parsed["results"] as? [[String: Any]])
            #expect(rows.count == 16 && rows.allSatisfy { $0["outcome"] as? String == "PASS" }, "\(rows.map { "\($0["id"] ?? "") \($0["outcome"] ?? "")" })")
        }
    }

    @Test("validate binds the receipt to the transaction the app reported: --transaction-id, --product-id, --quantity")
    func transactionBinding() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("t.plist").path
        let made = try await forge(
            "make", "--transaction-receipt", "--product", "com.example.coins", "--quantity", "3", "--now", Self.now, "--seed", "1", "-q", "-o", file)
        #expect(made.status == 0, "\(made.stderr)")
        let inspected = try json(try await forge("inspect", file, "--json"))
        let id = try #require((inspected["purchaseInfo"] as? [String: Any])?["transaction-id"] as? String)
        let bound = try await forge("validate", file, "--transaction-id", id, "--product-id", "com.example.coins", "--quantity", "3")
        #expect(bound.status == 0 && bound.text.contains("transaction"), "\(bound.text)")
        for (flag, value) in [("--transaction-id", "1"), ("--product-id", "com.example.gems"), ("--quantity", "30")] {
            let other = try await forge("validate", file, flag, value)
            #expect(other.status == 1 && other.text.hasPrefix("invalid (binding)"), "\(flag) \(value): \(other.text)")
        }
        let receipt = directory.appendingPathComponent("r.der").path
        #expect(try await forge("make", "--product", "com.example.coins", "--now", Self.now, "-q", "-o", receipt).status == 0)
        #expect(try await forge("validate", receipt, "--quantity", "1").status == 64, "the flags are a transaction receipt's")
    }

    @Test("--signature-version needs --transaction-receipt, --count refuses it, and an Xcode preset has none to make")
    func refusals() async throws {
        #expect(try await forge("make", "--signature-version", "2", "--product", "p").status == 64)
        #expect(try await forge("make", "--transaction-receipt", "--signature-version", "4", "--product", "p").status == 64)
        #expect(try await forge("make", "--transaction-receipt", "--count", "2", "--out", "x", "--product", "p").status == 64)
        let xcode = try await forge("make", "--transaction-receipt", "--preset", "xcode-2023", "--product", "p", "--now", Self.now)
        #expect(xcode.status == 64 && xcode.stderr.contains("Xcode"), "exit \(xcode.status): \(xcode.stderr)")
        // Not a plist at all, though it starts like one: inspect and validate say so with exit 65, as for any unreadable input.
        let broken = Data("{ \"signature\" = ".utf8)
        let inspected = try await forge("inspect", "-", stdin: broken)
        #expect(inspected.status == 65 && inspected.stderr.contains("outer plist"), "exit \(inspected.status): \(inspected.stderr)")
        #expect(try await forge("validate", "-", stdin: broken).status == 65)
    }
}
