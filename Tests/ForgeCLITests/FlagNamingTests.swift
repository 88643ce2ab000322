import Foundation
import ForgeTestSupport
import Testing
import ForgeSupport
import StoreModel

/// Issue 20: CLI flag names belong to the CLI. The store model's errors name scenario fields by key path
/// (`purchases[0].trial`); `forge make` and `forge jws make` print their own flags for a scenario made from flags.
@Suite("Flag names: key paths in the library, flags in the CLI", .timeLimit(.minutes(2)))
struct FlagNamingTests {
    static let now = "2025-01-01T00:00:00Z"

    @Test("No store model or forge source spells a forge flag in its code", arguments: ["Sources/StoreModel", "Sources/ReceiptForge"])
    func libraryKnowsNoFlags(_ path: String) throws {
        let folder = Repository.file(path)
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        #expect(!files.isEmpty)
        let flag = /--[a-z]/
        for file in files {
            let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            for line in code where line.contains(flag) && !line.contains("//") { Issue.record("\(file.lastPathComponent) spells a flag: \(line)") }
        }
    }

    @Test("A bad scenario field: the library error names its key path, with no flag")
    func libraryNamesKeyPaths() throws {
        let now = try #require(ReceiptDate.parse(Self.now))
        let cases: [(Scenario, [String], String)] = [
            (
                Scenario(purchases: [Purchase(productID: "p", trial: true, intro: true)]), ["purchases[0].trial", "purchases[0].intro"],
                "'purchases[0].trial' conflicts with 'purchases[0].intro'"
            ),
            (Scenario(purchases: [Purchase(productID: "a"), Purchase(productID: "")]), ["purchases[1].productId"], "'purchases[1].productId' must not be empty"),
            (Scenario(deviceID: "nope", purchases: [Purchase(productID: "p")]), ["deviceId"], "'deviceId' 'nope' is neither"),
        ]
        for (scenario, fields, message) in cases {
            do {
                _ = try Store(scenario, now: now)
                Issue.record("no error for \(fields)")
            } catch {
                #expect(error.fields == fields)
                #expect(error.message.contains(message), "\(error.message)")
                #expect(!error.message.contains("--"), "\(error.message)")
            }
        }
    }

    @Test("forge make and forge jws make print the flags for a scenario made from flags, exit 64")
    func cliPrintsFlags() async throws {
        let cases: [([String], String)] = [
            (["--product", "p", "--type", "auto-renewable", "--trial", "--intro"], "--trial conflicts with --intro"),
            (["--product", "p", "--expired", "--expires", Self.now], "--expired conflicts with --expires"),
            (["--product", "p", "--device-id", "nope"], "--device-id 'nope' is neither a UUID"),
            (["--product", "p", "--bundle-id", ""], "--bundle-id must not be empty"),
            (["--product", "p", "--purchase-date", "yesterday"], "--purchase-date 'yesterday' is not a date"),
        ]
        for (flags, message) in cases {
            for command in [["make"], ["jws", "make", "transaction"]] {
                let result = try await forge(arguments: command + flags + ["--now", Self.now, "-q"])
                #expect(result.status == 64, "\(command) \(flags): \(result.stderr)")
                #expect(result.stderr.contains("forge: error: \(message)"), "\(command) \(flags): \(result.stderr)")
            }
        }
    }
}
