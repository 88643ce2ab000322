import ArgumentParser
import Foundation
import ForgeTestSupport
import Testing

@testable import ForgeCLI

/// Every `forge …` command the README and `Documentation/` show in a code block goes through forge's own
/// parser (options, values, and each command's `validate()`), so a renamed flag or a removed value fails
/// here instead of in a reader's terminal.
@Suite("Documented commands", .timeLimit(.minutes(2)))
struct DocumentedCommandTests {
    /// The pages whose code blocks are checked.
    static var pages: [URL] {
        let documentation = Repository.file("Documentation")
        let files = (try? FileManager.default.contentsOfDirectory(at: documentation, includingPropertiesForKeys: nil)) ?? []
        return [Repository.file("README.md")] + files.filter { $0.pathExtension == "md" }.sorted { $0.path < $1.path }
    }

    @Test("The README and every Documentation page show forge commands, and each one parses")
    func everyDocumentedCommandParses() throws {
        var checked = 0
        var failures: [String] = []
        for page in Self.pages {
            let text = try String(contentsOf: page, encoding: .utf8)
            let commands = DocumentedCommands.forgeCommands(inMarkdown: text)
            let teaching = ["README.md", "receipts.md", "storekit2.md", "corpus.md", "runner.md", "serve.md"]
            #expect(!commands.isEmpty || !teaching.contains(page.lastPathComponent), "\(page.lastPathComponent) shows no forge command")
            for command in commands {
                checked += 1
                do {
                    _ = try ForgeCommand.parseAsRoot(ForgeCLI.normalized(command.arguments))
                } catch {
                    let message = ForgeCommand.message(for: error)
                    failures.append("\(page.lastPathComponent):\(command.line): forge \(command.arguments.joined(separator: " ")): \(message)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(checked >= 50, "only \(checked) documented commands found: is the extraction broken?")
    }

    @Test("forge --help opens with all forge does, StoreKit 2, the runner and the server included")
    func helpOpensWithEverything() async throws {
        let help = try await forge("--help")
        #expect(help.status == 0)
        let overview = help.text.components(separatedBy: "USAGE:").first ?? ""
        for taught in ["StoreKit 2", "receipts", "jws make", "jws validate", "vectors", "run", "serve", "TEST"] {
            #expect(overview.contains(taught), "forge --help's overview names \(taught)")
        }
    }

    @Test("The extraction reads what a shell would: quotes, continuations, pipes, redirections, comments")
    func extraction() {
        let markdown = """
            Prose mentions `forge make` inline, which is not a code block.
            ```sh
            swift run forge make --product 'com.example.pro' -o r.der   # a comment
            forge run --target "stdio:$(swift build --show-bin-path)/forge validate --harness" \\
                --junit j.xml 2>err.txt &
            cat x | .build/release/forge inspect - --json && echo done
            FORGE=1 forge jws make transaction --set revocationType='"REFUND_FULL"'
            echo forge is not run here
            ```
            """
        let commands = DocumentedCommands.forgeCommands(inMarkdown: markdown)
        #expect(
            commands.map(\.arguments) == [
                ["make", "--product", "com.example.pro", "-o", "r.der"],
                ["run", "--target", "stdio:$(swift build --show-bin-path)/forge validate --harness", "--junit", "j.xml"],
                ["inspect", "-", "--json"],
                ["jws", "make", "transaction", "--set", #"revocationType="REFUND_FULL""#],
            ])
        #expect(commands.map(\.line) == [3, 4, 6, 7])
    }

    @Test("A command the parser refuses is reported, so the check is not vacuous")
    func refusedCommandIsCaught() {
        let commands = DocumentedCommands.forgeCommands(inMarkdown: "```sh\nforge make --no-such-flag\n```\n")
        #expect(commands.count == 1)
        #expect(throws: (any Error).self) { try ForgeCommand.parseAsRoot(ForgeCLI.normalized(commands.first?.arguments ?? [])) }
    }
}

/// Shell-like reading of Markdown code blocks, enough for documentation: words with single and double quotes,
/// backslash-newline continuations, comments, and the operators that end a simple command (`|`, `&&`, `||`,
/// `;`, `&`) or redirect it (`>`, `2>`, `<`, …).
enum DocumentedCommands {
    struct Command: Equatable {
        /// The 1-based line of the Markdown text where the command starts.
        var line: Int
        /// The arguments after `forge`.
        var arguments: [String]
    }

    static func forgeCommands(inMarkdown markdown: String) -> [Command] {
        var commands: [Command] = []
        var inFence = false
        var inBlock = false
        var pending = ""
        var pendingLine = 0
        for (index, rawLine) in markdown.components(separatedBy: "\n").enumerated() {
            let trimmed = rawLine.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                // Shell and workflow blocks hold commands; `text`, `json`, `swift`, … blocks do not.
                let language = trimmed.dropFirst(3).trimmingCharacters(in: .whitespaces)
                inFence.toggle()
                inBlock = inFence && ["", "sh", "bash", "shell", "console", "yaml"].contains(language)
                pending = ""
                continue
            }
            guard inBlock else { continue }
            if pending.isEmpty { pendingLine = index + 1 }
            if trimmed.hasSuffix("\\") && !trimmed.hasPrefix("#") {
                pending += String(trimmed.dropLast()) + " "
                continue
            }
            var logical = pending + trimmed
            pending = ""
            if logical.hasPrefix("$ ") { logical.removeFirst(2) }
            if logical.hasPrefix("run: ") { logical.removeFirst(5) }  // a workflow step
            for words in simpleCommands(logical) {
                var rest = words[...]
                while let first = rest.first, first.contains("="), !first.hasPrefix("-") { rest = rest.dropFirst() }  // VAR=value
                if rest.starts(with: ["swift", "run", "forge"]) {
                    commands.append(Command(line: pendingLine, arguments: Array(rest.dropFirst(3))))
                } else if let first = rest.first, first == "forge" || first.hasSuffix("/forge") {
                    commands.append(Command(line: pendingLine, arguments: Array(rest.dropFirst())))
                }
            }
        }
        return commands
    }

    /// The simple commands of one logical line, each as its words, redirections removed.
    static func simpleCommands(_ line: String) -> [[String]] {
        var commands: [[String]] = []
        var words: [String] = []
        var word = ""
        var inWord = false
        var skipNextWord = false  // the target of a redirection
        var characters = Array(line)[...]
        func endWord() {
            if inWord {
                if skipNextWord { skipNextWord = false } else { words.append(word) }
            }
            word = ""
            inWord = false
        }
        func endCommand() {
            endWord()
            if !words.isEmpty { commands.append(words) }
            words = []
        }
        while let character = characters.popFirst() {
            switch character {
            case "'":
                inWord = true
                while let next = characters.popFirst(), next != "'" { word.append(next) }
            case "\"":
                inWord = true
                var depth = 0  // $( … ) inside double quotes may hold quotes of its own
                while let next = characters.popFirst() {
                    if next == "\"" && depth == 0 { break }
                    if next == "\\", let escaped = characters.first, "\"\\$`".contains(escaped) {
                        word.append(escaped)
                        characters = characters.dropFirst()
                        continue
                    }
                    if next == "(" && word.hasSuffix("$") { depth += 1 }
                    if next == ")" && depth > 0 { depth -= 1 }
                    word.append(next)
                }
            case "\\":
                inWord = true
                if let escaped = characters.popFirst() { word.append(escaped) }
            case "#" where !inWord:
                endCommand()
                return commands
            case " ", "\t":
                endWord()
            case "|", ";", "&":
                if character != ";", characters.first == character { characters = characters.dropFirst() }
                if character == "&", characters.first == ">" {  // &> file
                    characters = characters.dropFirst()
                    endWord()
                    skipNextWord = true
                    continue
                }
                endCommand()
            case ">", "<":
                if inWord && word.allSatisfy(\.isNumber) {  // 2> file: the descriptor is not a word
                    word = ""
                    inWord = false
                } else {
                    endWord()
                }
                while let next = characters.first, next == ">" || next == "&" { characters = characters.dropFirst() }
                if let next = characters.first, next.isNumber {  // 2>&1
                    characters = characters.dropFirst()
                    continue
                }
                skipNextWord = true
            default:
                inWord = true
                word.append(character)
            }
        }
        endCommand()
        return commands
    }
}

/// The architecture page's target table is the manifest's target graph, so it cannot describe a layering
/// that no longer exists.
@Suite("Architecture page", .timeLimit(.minutes(1)))
struct ArchitecturePageTests {
    @Test("Documentation/architecture.md lists every target of Package.swift with exactly its in-package dependencies")
    func targetTableIsTheManifest() throws {
        let page = try String(contentsOf: Repository.file("Documentation/architecture.md"), encoding: .utf8)
        let manifest = try String(contentsOf: Repository.file("Package.swift"), encoding: .utf8)
        let documented = Self.documentedTargets(page)
        let declared = Self.declaredTargets(manifest)
        #expect(declared.count >= 15, "Package.swift read as \(declared)")
        #expect(Set(documented.keys) == Set(declared.keys), "documented \(documented.keys.sorted()), declared \(declared.keys.sorted())")
        for (name, dependencies) in declared {
            #expect(documented[name] == dependencies, "\(name): documented \(documented[name] ?? []), declared \(dependencies)")
        }
    }

    /// Rows `| \`Target\` | \`A\`, \`B\` | … |` of the page's table.
    static func documentedTargets(_ page: String) -> [String: Set<String>] {
        var targets: [String: Set<String>] = [:]
        for line in page.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 2 else { continue }
            let name = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            targets[name] = Set(cells[2].matches(of: /`([A-Za-z_-]+)`/).map { String($0.output.1) })
        }
        return targets
    }

    /// Every non-test target of the manifest and the quoted names in its `dependencies` (products of other
    /// packages excluded).
    static func declaredTargets(_ manifest: String) -> [String: Set<String>] {
        var targets: [String: Set<String>] = [:]
        let declarations = manifest.split(separator: /\.(target|executableTarget|systemLibrary|testTarget)\(/)
        for declaration in declarations.dropFirst() {
            guard let name = declaration.firstMatch(of: /name: "([^"]+)"/)?.output.1 else { continue }
            if name.hasSuffix("Tests") { continue }
            var dependencies: Set<String> = []
            if let list = declaration.firstMatch(of: /dependencies: \[([^\]]*)\]/)?.output.1 {
                let withoutProducts = list.replacing(/\.product\([^)]*\)/, with: "")
                dependencies = Set(withoutProducts.matches(of: /"([^"]+)"/).map { String($0.output.1) })
            }
            targets[String(name)] = dependencies
        }
        return targets
    }
}
