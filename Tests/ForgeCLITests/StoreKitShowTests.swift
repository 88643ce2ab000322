import Foundation
import ForgeTestSupport
import Testing

/// `forge storekit show` as a user runs it on files a team did not write by hand: a 95,000-product catalogue listed
/// whole, two groups with one id refused (exit 65, the JSON path), and the file's text shown on a terminal with its
/// control characters and bidi overrides escaped, on stdout and in errors alike.
@Suite("forge storekit show: large files, group ids, terminal text", .timeLimit(.minutes(2)))
struct StoreKitShowTests {
    /// ``StoreKitCatalogue/text(consumables:groups:perGroup:groupIDs:)``.
    static func catalogue(consumables: Int, groups: Int, perGroup: Int, groupIDs: [String]? = nil) -> String {
        StoreKitCatalogue.text(consumables: consumables, groups: groups, perGroup: perGroup, groupIDs: groupIDs)
    }

    /// Whether `text` holds a scalar a terminal acts on: C0 but the line feeds between lines, DEL, C1, bidi controls.
    static func active(_ text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter { value in
            (value < 0x20 && value != 0x0A) || (0x7F...0x9F).contains(value) || [0x061C, 0x200E, 0x200F].contains(value) || (0x2028...0x202E).contains(value)
                || (0x2066...0x2069).contains(value)
        }
    }

    @Test("95,000 products are listed, one line each, every subscription with its group and level")
    func largeCatalogue() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Large.storekit")
        try Self.catalogue(consumables: 35_000, groups: 6, perGroup: 10_000).write(to: file, atomically: false, encoding: .utf8)
        let shown = try await forge("storekit", "show", file.path)
        #expect(shown.status == 0, "\(shown.stderr)")
        let lines = shown.text.split(separator: "\n")
        #expect(lines.count == 1 + 95_000)
        #expect(lines.filter { $0.contains("  group Group ") }.count == 60_000)
        #expect(lines.last == "sub.5.9999  auto-renewable P1M  4.99 USD  group Group 5 (21000005) level 1000", "\(lines.last ?? "")")
    }

    @Test("Two groups with one id exit 65 naming the second group's id; the file is not listed")
    func duplicateGroupID() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Twice.storekit")
        try Self.catalogue(consumables: 1, groups: 2, perGroup: 2, groupIDs: ["21000001", "21000001"]).write(to: file, atomically: false, encoding: .utf8)
        let shown = try await forge("storekit", "show", file.path)
        #expect(shown.status == 65, "exit \(shown.status): \(shown.text)\(shown.stderr)")
        #expect(shown.stderr.contains("(at subscriptionGroups[1].id)") && shown.stderr.contains("subscriptionGroups[0]"), "\(shown.stderr)")
        #expect(shown.stdout.isEmpty)
        #expect(try await forge("storekit", "scenario", file.path).status == 65)
    }

    @Test("Ids, names and offer ids are shown with control characters and bidi overrides escaped; --json keeps them exact")
    func controlCharacters() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Hostile.storekit")
        // JSON escapes in the file: ESC (clear the screen, set the title), BEL, CR, newline, DEL, C1 CSI, RLO, RLI.
        let text = #"""
            { "products" : [ { "displayPrice" : "0.99", "productID" : "coins\u001b[2J\u001b]0;pwned\u0007",
                "localizations" : [ { "displayName" : "Coins\r\nforge: all good\u007f", "locale" : "en_US" } ], "type" : "Consumable" } ],
              "subscriptionGroups" : [ { "id" : "g\u009b31m", "name" : "Pro\u202Egnp.exe", "subscriptions" : [
                { "adHocOffers" : [ { "displayPrice" : "1.99", "offerID" : "half\u2067\t", "paymentMode" : "payAsYouGo", "subscriptionPeriod" : "P1M",
                    "numberOfPeriods" : 1 } ],
                  "displayPrice" : "4.99", "groupNumber" : 1, "productID" : "pro\u200f", "recurringSubscriptionPeriod" : "P1M", "type" : "RecurringSubscription" } ] } ],
              "version" : { "major" : 4, "minor" : 0 } }
            """#
        try text.write(to: file, atomically: false, encoding: .utf8)
        let shown = try await forge("storekit", "show", file.path)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(Self.active(shown.text) == [], "\(shown.text.debugDescription)")
        for escaped in [
            #"coins\u{1B}[2J\u{1B}]0;pwned\u{7}"#, #""Coins\u{D}\u{A}forge: all good\u{7F}""#, #"group Pro\u{202E}gnp.exe (g\u{9B}31m)"#,
            #"promotional half\u{2067}\u{9}: pay-as-you-go"#, #"pro\u{200F}  auto-renewable"#,
        ] {
            #expect(shown.text.contains(escaped), "\(escaped) in \(shown.text)")
        }
        #expect(shown.text.split(separator: "\n").count == 4, "one line per product and offer: \(shown.text)")
        // The JSON listing is for programs: the exact values, as JSON escapes them.
        let listed = try json(try await forge("storekit", "show", file.path, "--json"))
        let ids = (listed["products"] as? [[String: Any]])?.compactMap { $0["productId"] as? String }
        #expect(ids == ["coins\u{1B}[2J\u{1B}]0;pwned\u{7}", "pro\u{200F}"])
        // A refusal quoting the file's text escapes it too (stderr is a terminal as well).
        let twice = directory.appendingPathComponent("Twice.storekit")
        try text.replacingOccurrences(of: #""pro\u200f""#, with: #""coins\u001b[2J\u001b]0;pwned\u0007""#).write(to: twice, atomically: false, encoding: .utf8)
        let refused = try await forge("storekit", "show", twice.path)
        #expect(refused.status == 65 && refused.stderr.contains("is defined twice"), "\(refused.stderr)")
        #expect(Self.active(refused.stderr) == [], "\(refused.stderr.debugDescription)")
    }
}
