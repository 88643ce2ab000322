import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

/// Issue 21 item 11: a timeline stays inside the dates a receipt and a JWS can carry (``ReceiptDate/writable``);
/// anything else exits naming the purchase or event and the date (64 from flags, 65 from a spec). `--now` outside the TEST chain's validity warns.
@Suite("timeline dates are bounded to what Apple can write", .timeLimit(.minutes(2)))
struct TimelineDateBoundTests {
    private static let now = ["--now", "2025-01-01T00:00:00Z"]

    @Test(
        "P1Y with 10000 renewals (inside the flags' bounds) exits 64 naming the purchase and the date, in every format",
        arguments: ["der", "base64", "json"])
    func renewalsBeforeYearZero(format: String) async throws {
        let result = try await forge(arguments: ["make", "--product", "p", "--period", "P1Y", "--renewals", "10000", "--format", format, "-q"] + Self.now)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("purchase p"), "\(result.stderr)")
        #expect(result.stderr.contains("-7976-12-31T23:00:00Z"), "\(result.stderr)")
        #expect(result.stderr.contains("1970-01-01T00:00:00Z up to 9999-12-31T00:00:00Z"), "\(result.stderr)")
        #expect(result.stderr.contains("--renewals") && result.stderr.contains("--period"), "flags named as flags: \(result.stderr)")
    }

    @Test("forge jws make refuses the same timeline, with the same words")
    func jws() async throws {
        let result = try await forge(arguments: ["jws", "make", "transaction", "--product", "p", "--period", "P1Y", "--renewals", "10000", "-q"] + Self.now)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("purchase p") && result.stderr.contains("-7976-12-31T23:00:00Z"), "\(result.stderr)")
    }

    @Test(
        "a purchase, an expiry or --now past either end exits 64 naming it",
        arguments: [
            (["--product", "p", "--type", "consumable", "--purchase-date", "1970-01-30T00:00:00Z"], "the app's original purchase date"),
            (["--product", "p", "--now", "1969-12-31T00:00:00Z"], "now 1969-12-31T00:00:00Z"),
            (["--product", "p", "--type", "auto-renewable", "--purchase-date", "9999-12-01T00:00:00Z"], "purchase p"),
            (["--product", "p", "--purchase-date", "1960-01-01T00:00:00Z", "--now", "2025-01-01T00:00:00Z"], "1960-01-01T00:00:00Z"),
            (["--product", "p", "--expires", "9999-12-31T12:00:00Z", "--now", "2025-01-01T00:00:00Z"], "9999-12-31T12:00:00Z"),
        ])
    func ends(flags: [String], message: String) async throws {
        let result = try await forge(arguments: ["make"] + flags + ["-q", "--format", "base64"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stderr.contains("1970-01-01T00:00:00Z up to 9999-12-31T00:00:00Z"), "\(result.stderr)")
    }

    @Test("a timeline event that renews past 9999 is named by its place in the spec, exit 65 (the file's data)")
    func timelineRenewal() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spec = directory.appendingPathComponent("spec.json")
        try Data(
            #"{"now":"9999-06-01T00:00:00Z","purchases":[{"productId":"p","period":"P1Y","purchaseDate":"9998-01-01T00:00:00Z"}],"timeline":[{"event":"renew","count":3}]}"#
                .utf8
        ).write(to: spec)
        let result = try await forge("make", "--spec", spec.path, "-q", "--format", "base64")
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("'timeline[0]'") && result.stderr.contains("10000-01-01T00:00:00Z"), "\(result.stderr)")
    }

    @Test("the dates at both ends of the bound make receipts that validate and read back in --format json")
    func edges() async throws {
        // The app's original purchase date is 30 days before the first purchase: it too is inside the bound.
        for (purchase, now) in [("1970-01-31T00:00:00Z", "1970-01-31T02:00:00Z"), ("9999-12-30T00:00:00Z", "9999-12-30T12:00:00Z")] {
            let made = try await forge("make", "--product", "p", "--type", "consumable", "--purchase-date", purchase, "--now", now, "--format", "json", "-q")
            #expect(made.status == 0, "\(made.stderr)")
            let inApp = try #require(((try json(made))["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])
            #expect(inApp.first?["purchase_date"] as? String == purchase.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " Etc/GMT"))
        }
    }

    @Test("ReceiptDate writes every instant of the bound as RFC 3339 that parses back; a Store outside it cannot be made")
    func unit() throws {
        let ends = [ReceiptDate.writable.lowerBound, ReceiptDate.writable.upperBound.addingTimeInterval(-1)]
        for date in ends {
            for style in [ReceiptDate.Style.zulu, .fractionalZulu, .offset(minutes: 60), .offset(minutes: -480)] {
                let text = ReceiptDate.format(date, style: style)
                #expect(text.utf8.first.map { (0x30...0x39).contains($0) } == true && text.count >= 20, "\(text)")
                #expect(ReceiptDate.parse(text) == date, "\(text)")
            }
        }
        #expect(ReceiptDate.writable.lowerBound == ReceiptDate.parse("1970-01-01T00:00:00Z"))
        #expect(ReceiptDate.writable.upperBound == ReceiptDate.parse("9999-12-31T00:00:00Z"))
        let scenario = Scenario(purchases: [Purchase(productID: "p", renewals: 10_000, period: "P1Y")])
        #expect(throws: ForgeError(.invalidScenario, "")) { try Store(scenario, now: ReceiptDate.instant(year: 2025, month: 1, day: 1)) }
    }

    @Test(
        "--now outside the TEST chain's validity warns on one stderr line and still makes the artefact",
        arguments: [["make", "--product", "p", "--format", "base64"], ["jws", "make", "transaction", "--product", "p"]])
    func chainValidityWarning(command: [String]) async throws {
        let outside = try await forge(arguments: command + ["--now", "1999-01-01T00:00:00Z"])
        #expect(outside.status == 0, "\(outside.stderr)")
        #expect(!outside.stdout.isEmpty)
        let warnings = outside.stderr.split(separator: "\n").filter { $0.contains("warning:") }
        #expect(warnings.count == 1, "\(outside.stderr)")
        #expect(warnings.first?.contains("1999-01-01T00:00:00Z") == true && warnings.first?.contains("will not validate") == true, "\(outside.stderr)")
        let inside = try await forge(arguments: command + ["--now", "2025-01-01T00:00:00Z"])
        #expect(inside.status == 0 && !inside.stderr.contains("warning:"), "\(inside.stderr)")
    }
}
