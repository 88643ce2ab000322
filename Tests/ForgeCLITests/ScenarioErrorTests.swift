import Foundation
import ForgeTestSupport
import Testing

/// Issue 21 item 9: a scenario's errors (a `--spec` file of `forge make` and `forge jws make`, and the scenario
/// flags) name the key path and what the key takes (its values, its range), never Codable's text; a spec file's
/// exits 65, a flag's 64.
@Suite("scenario errors name the key and what it takes", .timeLimit(.minutes(2)))
struct ScenarioErrorTests {
    /// Runs `forge <command…> --spec FILE` with `spec` as the file's text.
    private func withSpec(_ spec: String, _ command: [String] = ["make"], _ extra: [String] = []) async throws -> RunResult {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("spec.json")
        try Data(spec.utf8).write(to: file)
        return try await forge(arguments: command + ["--spec", file.path, "--now", "2025-01-01T00:00:00Z", "-q"] + extra)
    }

    private func expectNoCodableText(_ stderr: String) {
        for leak in ["Cannot initialize", "not valid JSON", "DecodingError", "CodingKeys", "Swift.", "Int64", "UInt64"] {
            #expect(!stderr.contains(leak), "leaks '\(leak)': \(stderr)")
        }
    }

    @Test(
        "a value outside a key's vocabulary exits 65 naming the key path, the value and every valid value",
        arguments: [
            (
                #"{"purchases":[{"productId":"p","type":"auto-renewable"}],"timeline":[{"event":"explode","at":"2025-01-01T00:00:00Z"}]}"#,
                "'timeline[0].event' is \"explode\", not one of renew, cancel, refund, billing-retry, grace-period, recover, price-increase, change-product, account-deleted, billing-retry-ended, product-withdrawn, extend, app-account-token, consent-revoked, refund-request"
            ),
            (#"{"purchases":[{"productId":"p","type":"explode"}]}"#, "'purchases[0].type' is \"explode\", not one of non-consumable, consumable, non-renewing, auto-renewable"),
            (#"{"purchases":[{"productId":"p","cancelled":"maybe"}]}"#, "'purchases[0].cancelled' is \"maybe\", not one of other, app-issue"),
            (#"{"preset":"appstore-2031"}"#, "'preset' is \"appstore-2031\", not one of appstore, appstore-sha1, sandbox, xcode-2020, xcode-2023"),
        ])
    func vocabulary(spec: String, message: String) async throws {
        let result = try await withSpec(spec)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        expectNoCodableText(result.stderr)
    }

    @Test(
        "a number out of a key's range exits 65 naming the key path and the range (negatives where Apple's field is unsigned)",
        arguments: [
            (#"{"purchases":[{"productId":"p","quantity":99999999999999999999}]}"#, "'purchases[0].quantity' must be an integer between 1 and 1000000, not 1e+20"),
            (#"{"purchases":[{"productId":"p","quantity":1.5}]}"#, "'purchases[0].quantity' must be an integer between 1 and 1000000, not 1.5"),
            (#"{"appItemId":-5}"#, "'appItemId' must be an integer between 0 and 9007199254740991, not -5"),
            (#"{"appItemId":9007199254740992}"#, "'appItemId' must be an integer between 0 and 9007199254740991, not 9007199254740992"),
            (#"{"purchases":[{"productId":"p","renewals":-1}]}"#, "'purchases[0].renewals' must be an integer between 0 and 10000, not -1"),
            (#"{"seed":-1}"#, "'seed' must be an integer between 0 and 18446744073709551615, not -1"),
            (#"{"seed":18446744073709551616}"#, "'seed' must be an integer between 0 and 18446744073709551615, not 1.8446744073709552e+19"),
            (
                #"{"purchases":[{"productId":"p","type":"auto-renewable"}],"timeline":[{"event":"renew","count":0}]}"#,
                "'timeline[0].count' must be an integer between 1 and 1000, not 0"
            ),
        ])
    func range(spec: String, message: String) async throws {
        let result = try await withSpec(spec)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        expectNoCodableText(result.stderr)
    }

    @Test(
        "a value of the wrong kind, a missing key, a malformed date or period exits 65 naming the key path",
        arguments: [
            (#"{"purchases":[{"productId":"p","trial":"yes"}]}"#, "'purchases[0].trial' must be true or false, not \"yes\""),
            (#"{"bundleId":5}"#, "'bundleId' must be a string, not 5"),
            (#"{"purchases":{"productId":"p"}}"#, "'purchases' must be an array, not an object"),
            (#"{"purchases":[{"type":"consumable"}]}"#, "'purchases[0].productId' is required"),
            (#"{"purchases":[{"productId":"p","purchaseDate":"yesterday"}]}"#, "'purchases[0].purchaseDate' is \"yesterday\", not a date like 2025-01-31T12:00:00Z"),
            (#"{"now":"soon"}"#, "'now' is \"soon\", not a date like 2025-01-31T12:00:00Z"),
            (#"{"purchases":[{"productId":"p","period":"P0M"}]}"#, "'purchases[0].period' is \"P0M\", not an ISO 8601 period"),
            (#"{"purchases":[{"productId":"p","expird":true}]}"#, "unknown key 'expird' in 'purchases[0]'"),
        ])
    func shape(spec: String, message: String) async throws {
        let result = try await withSpec(spec)
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        expectNoCodableText(result.stderr)
    }

    @Test("forge jws make --spec reads a spec the same way")
    func otherReaders() async throws {
        let spec = #"{"purchases":[{"productId":"p","type":"explode"}]}"#
        let jws = try await withSpec(spec, ["jws", "make", "transaction"])
        #expect(jws.status == 65, "\(jws.stderr)")
        #expect(jws.stderr.contains("'purchases[0].type' is \"explode\""), "\(jws.stderr)")
        expectNoCodableText(jws.stderr)
    }

    /// Issue 39 item 11: a spec that asks for what cannot be made exited 64 from `forge jws make` and `forge make`, the
    /// same scenario 65 from `forge serve --scenario`. Bad data in a file the user names is 65 everywhere; the same
    /// contradiction from flags stays a usage error (64).
    @Test("A spec that cannot be made exits 65 naming the file from make, jws make and serve; the same from flags, 64")
    func oneExitForAFilesData() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("trial.json")
        try Data(#"{"now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "gems", "type": "consumable", "trial": true}]}"#.utf8).write(to: file)
        for command in [
            ["jws", "make", "transaction", "--spec", file.path, "-q"], ["make", "--spec", file.path, "-q", "--format", "base64"],
            ["serve", "--listen", "127.0.0.1:0", "--scenario", file.path],
        ] {
            let result = try await forge(arguments: command)
            #expect(result.status == 65 && result.stderr.contains("'purchases[0].trial' conflicts"), "\(command): \(result.status) \(result.stderr)")
        }
        #expect(try await forge(arguments: ["jws", "make", "transaction", "--spec", file.path, "-q"]).stderr.contains("trial.json"))
        let flags = try await forge("jws", "make", "transaction", "--product", "gems", "--type", "consumable", "--trial", "--now", "2025-01-01T00:00:00Z", "-q")
        #expect(flags.status == 64 && flags.stderr.contains("--trial conflicts"), "\(flags.status) \(flags.stderr)")
        // A valid spec the flags contradict: the flags' error.
        let valid = directory.appendingPathComponent("valid.json")
        try Data(#"{"now": "2025-01-01T00:00:00Z", "purchases": [{"productId": "gems", "type": "consumable"}]}"#.utf8).write(to: valid)
        let against = try await forge("jws", "make", "transaction", "--spec", valid.path, "--trial", "-q")
        #expect(against.status == 64 && against.stderr.contains("trial"), "\(against.status) \(against.stderr)")
    }

    @Test("a seed above Int64.max is read exactly (the seed forge reports is one a spec can give back)")
    func largeSeed() async throws {
        let result = try await withSpec(#"{"seed":18446744073709551615,"purchases":[{"productId":"p"}]}"#, ["make"], ["--format", "base64"])
        #expect(result.status == 0, "\(result.stderr)")
        let flag = try await forge("make", "--product", "p", "--seed", "18446744073709551615", "--now", "2025-01-01T00:00:00Z", "-q", "--format", "base64")
        #expect(result.stdout == flag.stdout)
    }

    @Test(
        "a negative number given to a scenario flag gets the flag's range, not 'Missing value' (exit 64)",
        arguments: [
            (["make", "--product", "p", "--renewals", "-1"], "--renewals must be an integer between 0 and 10000, not -1"),
            (["make", "--product", "p", "--quantity", "-3"], "--quantity must be an integer between 1 and 1000000, not -3"),
            (["make", "--product", "p", "--seed", "-1"], "--seed must be an integer between 0 and 18446744073709551615, not -1"),
            (["make", "--product", "p", "--count", "-1", "--out", "x"], "--count must be between 1 and 10000000"),
            (["jws", "make", "transaction", "--product", "p", "--renewals", "-1"], "--renewals must be an integer between 0 and 10000, not -1"),
            (["jws", "make", "transaction", "--product", "p", "--app-apple-id", "-5"], "--app-apple-id must be an integer between 1 and 9007199254740991, not -5"),
            (["jws", "make", "transaction", "--product", "p", "--price", "-5"], "--price must be an integer between 0 and 9007199254740991, not -5"),
        ])
    func negativeFlags(arguments: [String], message: String) async throws {
        let result = try await forge(arguments: arguments + ["--now", "2025-01-01T00:00:00Z"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!result.stderr.contains("Missing value"), "\(result.stderr)")
    }
}
