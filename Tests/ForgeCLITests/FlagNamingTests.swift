import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import ReceiptConformance
import StoreServer
import StoreModel

/// Issue 20: CLI flag names belong to the CLI. The store model's errors name scenario fields by key path
/// (`purchases[0].trial`); `forge make` and `forge jws make` print their own flags for a scenario made from flags.
@Suite("Flag names: key paths in the library, flags in the CLI", .timeLimit(.minutes(2)))
struct FlagNamingTests {
    static let now = "2025-01-01T00:00:00Z"

    /// Every library target: only the CLI (ForgeCLI and the two executables) spells forge's flags. A library message
    /// that points the user to an option names it through its typed owner (`RunOption`, `ServeOption`).
    static let libraries = [
        "ForgeCrypto", "_ForgeSupport", "ForgeTLS", "JWSModel", "ReceiptConformance", "ReceiptConformanceHTTP", "ReceiptCorpus", "StoreForge",
        "ReceiptModel", "StoreServer", "HTTPServers", "StoreServerSQLite", "ReceiptValidationServer", "ReferenceValidation", "StoreModel",
    ]

    @Test("No library source spells one of forge's flags in its code", arguments: libraries)
    func libraryKnowsNoFlags(_ target: String) async throws {
        let flags = try await Self.forgeFlags()
        #expect(flags.contains("target") && flags.contains("control-token"))
        let folder = Repository.file("Sources/" + target)
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        #expect(!files.isEmpty)
        for file in files {
            let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            for line in code {
                for match in line.matches(of: /--([a-z][a-z0-9-]*)/) where flags.contains(String(match.output.1)) {
                    Issue.record("\(target)/\(file.lastPathComponent) spells --\(match.output.1): \(line)")
                }
            }
        }
    }

    @Test("The options library messages name are options of forge run and forge serve")
    func typedOptionsExist() async throws {
        let flags = try await Self.forgeFlags()
        for option in RunOption.allCases { #expect(flags.contains(option.rawValue), "forge has no \(option)") }
        for option in ServeOption.allCases { #expect(flags.contains(option.rawValue), "forge has no \(option)") }
    }

    /// The long option names of every forge command, from ArgumentParser's own description of the command tree.
    static func forgeFlags() async throws -> Set<String> {
        let result = try await forge(arguments: ["--experimental-dump-help"])
        #expect(result.status == 0, "\(result.stderr)")
        let root = try JSONValue(parsing: result.stdout)
        var flags = Set<String>()
        var commands = [root["command"]]
        while let command = commands.popLast() {
            for argument in command?["arguments"]?.arrayValue ?? [] {
                for name in argument["names"]?.arrayValue ?? [] where name["kind"]?.stringValue == "long" {
                    if let long = name["name"]?.stringValue { flags.insert(long) }
                }
            }
            commands += (command?["subcommands"]?.arrayValue ?? []).map { Optional($0) }
        }
        return flags
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
