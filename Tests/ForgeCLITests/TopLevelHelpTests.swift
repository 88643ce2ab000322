import Foundation
import ForgeTestSupport
import Testing

/// `forge --help` is the map a new user reads first: its groups must name every subcommand it lists, and say
/// what `serve` stands in for (verifyReceipt, the App Store Server API, notifications, OCSP), not a subset.
@Suite(.timeLimit(.minutes(2)))
struct TopLevelHelpTests {
    @Test("forge --help's groups name every subcommand under SUBCOMMANDS, and the Serve group says what serve and notify do")
    func groupsNameEverySubcommand() async throws {
        let help = try await forge("--help")
        #expect(help.status == 0)
        let text = help.text
        let overview = try #require(text.range(of: "USAGE:").map { String(text[..<$0.lowerBound]) })
        let listed = try #require(text.range(of: "SUBCOMMANDS:").map { String(text[$0.upperBound...]) })
        // The first word of each entry under SUBCOMMANDS (two spaces of indent; continuation lines have more).
        let entries = listed.split(separator: "\n", omittingEmptySubsequences: false).drop { $0.isEmpty }.prefix { !$0.isEmpty }
        let names = entries.compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
            return line.split(separator: " ").first.map(String.init)
        }
        #expect(names.count >= 13 && names.contains("notify"), "\(names)")
        // The groups: a line of two spaces, a capitalised group name and what is in it, and the lines the help's
        // wrapping continues it on (no indent), up to the next group or a blank line.
        var groups: [String] = []
        var inGroups = false
        for line in overview.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  "), line.dropFirst(2).first?.isUppercase == true {
                groups.append(String(line))
                inGroups = true
            } else if inGroups, !line.isEmpty, !line.hasPrefix(" "), let last = groups.indices.last {
                groups[last] += " " + line
            } else {
                inGroups = false
            }
        }
        let grouped = Set(groups.joined(separator: " ").split(whereSeparator: { !$0.isLetter && $0 != "-" }).map(String.init))
        for name in names { #expect(grouped.contains(name), "forge --help's groups do not name '\(name)'") }
        let serve = try #require(groups.first { $0.contains("Serve ") })
        for served in ["verifyReceipt", "Server API", "notifications", "OCSP"] { #expect(serve.contains(served), "the Serve group says: \(serve)") }
    }
}
