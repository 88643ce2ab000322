import Foundation
import ForgeTestSupport
import ReceiptModel
import Testing
import _ForgeSupport
import StoreModel

/// Issue 19: numbers a JWS can carry that are no instant, objects of a hundred thousand keys, x5c of ten
/// thousand entries and inputs over the size limit, through the built `forge` as users run it. Every answer
/// is a coded verdict or a one-line error with a documented exit code, never a signal, and comes in time.
@Suite("Parsing robustness (issue 19)", .timeLimit(.minutes(2)))
struct ParsingRobustnessTests {
    /// A bound on the inputs that made quadratic parsing take minutes: each takes well under a second when parsing is
    /// linear, so only a regression (or a machine many times slower than any CI) reaches it.
    static let deadline: Duration = .seconds(60)

    /// The three parts of a JWS `forge jws make` signs (the bundled TEST chain, a pinned time).
    static func parts(_ kind: String = "transaction") async throws -> [String] {
        let made = try await forge("jws", "make", kind, "--product", "pro.monthly", "--now", "2025-01-01T00:00:00Z", "-q")
        #expect(made.status == 0, "\(made.stderr)")
        let parts = made.text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        return parts
    }

    static func decoded(_ part: String) throws -> String { String(decoding: try #require(Base64URL.decode(part)), as: UTF8.self) }

    static func encoded(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }

    /// The JWS with its payload's `field` written as `token`, exactly as given (JSON text, so `1e400` stays `1e400`).
    static func jws(_ kind: String = "transaction", field: String = "signedDate", token: String) async throws -> String {
        let parts = try await parts(kind)
        let payload = try decoded(parts[1])
        let edited = payload.replacing(try Regex("\"\(field)\":-?[0-9][0-9.eE+-]*"), with: "\"\(field)\":\(token)")
        #expect(edited != payload, "the payload has a numeric \(field)")
        return [parts[0], encoded(edited), parts[2]].joined(separator: ".")
    }

    /// `forge` that must end within ``deadline`` (else it is killed and the test fails with ``DeadlineExceeded``).
    /// A child that stops reading its stdin early (an input over the limit) gives EPIPE, not SIGPIPE to the tests.
    static func forgeWithin(_ arguments: [String], stdin: Data? = nil) async throws -> RunResult {
        _ = signal(SIGPIPE, SIG_IGN)
        return try await run(Binaries.forge, arguments, stdin: stdin, deadline: deadline)
    }

    // MARK: item 4: numbers that are no instant

    @Test(
        "An unsigned JWS whose signedDate is no instant is invalid (payload.invalid-field, exit 1), not a signal",
        arguments: ["1e300", "1e400", "9.3e18", "9223372036854775807", "-9223372036854775808", "18446744073709551616", "-1e16", "8640000000000001", "-8.6400000000001e15"])
    func signedDateOutOfRange(token: String) async throws {
        let text = try await Self.jws(token: token)
        let result = try await forge("jws", "validate", "-", stdin: Data(text.utf8))
        #expect(result.status == 1, "exit \(result.status) (a trap is 4 or 5): \(result.text)\(result.stderr)")
        #expect(result.text.contains("[payload.invalid-field]") && result.text.hasPrefix("invalid (payload.invalid-field)\n"), "\(result.text)")
        #expect(result.text.contains("signedDate"), "the failure names the field: \(result.text)")
        let report = try await forge("jws", "validate", "-", "--json", stdin: Data(text.utf8))
        #expect(report.status == 1)
        #expect((try? json(report))?["errorClass"] as? String == "payload.invalid-field", "\(report.text)")
    }

    @Test(
        "Extreme instants inside the range (the years 0000 and 9999, -0, 1e-400) are judged by the chain, never a trap",
        arguments: ["-62167219200000", "253402300799999", "-0", "1e-400"])
    func signedDateExtremeButRepresentable(token: String) async throws {
        let result = try await forge("jws", "validate", "-", stdin: Data(try await Self.jws(token: token).utf8))
        #expect(result.status == 1, "exit \(result.status): \(result.text)\(result.stderr)")
        #expect(result.text.contains("FAIL chain: ") && result.text.contains("[chain."), "\(result.text)")
    }

    @Test("A repeated signedDate: the last one counts (as JSON parsers read it), so 1e300 last is refused and 1e300 first is not used")
    func duplicateSignedDate() async throws {
        let parts = try await Self.parts()
        let payload = try Self.decoded(parts[1])
        let last = String(payload.dropLast()) + ",\"signedDate\":1e300}"
        let lastResult = try await forge("jws", "validate", "-", stdin: Data([parts[0], Self.encoded(last), parts[2]].joined(separator: ".").utf8))
        #expect(lastResult.status == 1 && lastResult.text.hasPrefix("invalid (payload.invalid-field)\n"), "\(lastResult.text)\(lastResult.stderr)")
        // 1e300 first, the real date last: the chain is evaluated at the real date, and the edited payload fails the signature.
        let first = "{\"signedDate\":1e300," + payload.dropFirst()
        let firstResult = try await forge("jws", "validate", "-", stdin: Data([parts[0], Self.encoded(first), parts[2]].joined(separator: ".").utf8))
        #expect(firstResult.status == 1 && firstResult.text.hasPrefix("invalid (jws.signature)\n"), "\(firstResult.text)\(firstResult.stderr)")
    }

    @Test("An AppTransaction's receiptCreationDate of 1e300 is refused the same way")
    func receiptCreationDateOutOfRange() async throws {
        let text = try await Self.jws("app-transaction", field: "receiptCreationDate", token: "1e300")
        let result = try await forge("jws", "validate", "-", stdin: Data(text.utf8))
        #expect(result.status == 1 && result.text.hasPrefix("invalid (payload.invalid-field)\n"), "exit \(result.status): \(result.text)\(result.stderr)")
    }

    @Test("`forge jws inspect` of a JWS with signedDate 1e300 prints it, exit 0")
    func inspectOutOfRange() async throws {
        let result = try await forge("jws", "inspect", "-", stdin: Data(try await Self.jws(token: "1e300").utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text.contains("\"signedDate\": 1e+300"), "\(result.text)")
    }

    @Test("forge validate --listen answers a POSTed JWS with signedDate 1e300 (payload.invalid-field) and keeps serving")
    func listenerSurvives() async throws {
        let server = try await BackgroundServer.start(["validate", "--listen", "127.0.0.1:0", "--vectors", Repository.vectors.path, "--threads", "2"])
        defer { server.kill() }
        let text = try await Self.jws(token: "1e300")
        let message: JSONValue = .object([
            ("type", .string("validate")), ("seq", .integer(7)), ("id", .string("jws-time::signed-date-1e300")),
            ("input", .object([("encoding", .string("base64")), ("data", .string(Data(text.utf8).base64EncodedString()))])),
            (
                "context",
                .object([
                    ("now", .string("2025-06-15T12:00:00Z")), ("trustAnchor", .string("forge-jws-root")), ("bundleId", .string("com.example.app")),
                    ("environment", .string("Production")), ("artifact", .string("jws-transaction")),
                ])
            ),
        ])
        // Each request has its own deadline: a server that died answers nothing, and the request throws.
        let answer = try await request(server.url + "/validate", method: "POST", body: Data(message.serialized(pretty: false).utf8))
        #expect(answer.status == 200 && answer.text.contains("\"errorClass\":\"payload.invalid-field\"") && answer.text.contains("\"seq\":7"), "\(answer.text)")
        let hello = try await request(server.url + "/hello")
        #expect(hello.status == 200 && hello.text.contains("\"protocol\":1"), "the server still answers: \(hello.text)")
    }

    // MARK: item 5: objects of many keys

    @Test("A JWS header of 100,000 keys (1.4 MB) is judged in time: jws.signature, exit 1")
    func hundredThousandKeyHeader() async throws {
        let parts = try await Self.parts()
        let header = try Self.decoded(parts[0])
        var keys = ""
        keys.reserveCapacity(1_400_000)
        for index in 0..<100_000 { keys += "\"pad\(index)\":\(index)," }
        let big = "{" + keys + header.dropFirst()
        let text = [Self.encoded(big), parts[1], parts[2]].joined(separator: ".")
        let result = try await Self.forgeWithin(["jws", "validate", "-"], stdin: Data(text.utf8))
        #expect(result.status == 1 && result.text.hasPrefix("invalid (jws.signature)\n"), "exit \(result.status): \(result.text.suffix(300))\(result.stderr)")
    }

    // MARK: found on the way: scripts/fuzz.sh's seed step

    /// One case per seed: each is its own run of 300 mutants, with its own time limit.
    @Test(
        "forge mutate composes JWS mutations in any order without a trap (a zeroed s after an emptied signature, a leaf variant after x5c-clear)",
        arguments: 1...3)
    func jwsMutantsCompose(seed: Int) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("seed-\(seed)")
        let result = try await forge("mutate", "--from", "jws-*", "--seed", String(seed), "--count", "300", "--out", out.path)
        #expect(result.status == 0, "seed \(seed): exit \(result.status) (4 is SIGILL): \(result.stderr.prefix(400))")
    }

    // MARK: item 12: counts and sizes before work, in the right words

    /// A header whose x5c has the real three certificates, then copies of the shortest (the root: 10,002 entries
    /// stay under the 16 MiB input limit), one of them not base64.
    static func manyCertificates(_ count: Int) async throws -> String {
        let parts = try await parts()
        let header = try #require(try JSONValue(parsing: Array(decoded(parts[0]).utf8)).objectValue)
        let real = try #require(header["x5c"]?.arrayValue)
        let filler = try #require(real.min { ($0.stringValue?.count ?? 0) < ($1.stringValue?.count ?? 0) })
        var entries = real
        while entries.count < count { entries.append(entries.count == count / 2 ? .string("not base64!") : filler) }
        var edited = header
        edited["x5c"] = .array(entries)
        return [Self.encoded(JSONValue.object(edited).serialized(pretty: false)), parts[1], parts[2]].joined(separator: ".")
    }

    @Test("x5c of 10,002 entries is refused for its count before any is decoded: jws.x5c, exit 1")
    func tenThousandCertificates() async throws {
        let text = try await Self.manyCertificates(10_002)
        let result = try await Self.forgeWithin(["jws", "validate", "-"], stdin: Data(text.utf8))
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.text.contains("x5c has 10002 certificates") && result.text.hasPrefix("invalid (jws.x5c)\n"), "\(result.text)")
    }

    @Test("forge jws inspect decodes at most 16 x5c entries and counts the rest")
    func inspectManyCertificates() async throws {
        let text = try await Self.manyCertificates(10_002)
        let result = try await Self.forgeWithin(["jws", "inspect", "-", "--json"], stdin: Data(text.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        let described = try json(result)
        #expect((described["certificates"] as? [Any])?.count == 16)
        #expect(described["certificatesNotShown"] as? Int == 9_986)
        let plain = try await Self.forgeWithin(["jws", "inspect", "-"], stdin: Data(text.utf8))
        #expect(plain.status == 0 && plain.text.contains("x5c: 9986 more entries not decoded"), "\(plain.stderr)")
    }

    @Test("A JWS over 16 MiB is refused as a JWS, not as a receipt (file and stdin), exit 65")
    func oversizedJWSWording() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let big = Data(repeating: UInt8(ascii: "A"), count: (16 << 20) + 1)
        let file = directory.appendingPathComponent("big.jws")
        try big.write(to: file)
        for arguments in [["jws", "validate", file.path], ["jws", "inspect", file.path], ["jws", "validate", "-"]] {
            let result = try await Self.forgeWithin(arguments, stdin: arguments.last == "-" ? big : nil)
            #expect(result.status == 65, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("JWS are at most 16777216 bytes") && !result.stderr.contains("receipt"), "\(arguments): \(result.stderr)")
        }
        // A receipt command still speaks of receipts.
        let receipt = try await Self.forgeWithin(["inspect", file.path])
        #expect(receipt.status == 65 && receipt.stderr.contains("receipts are at most 16777216 bytes"), "\(receipt.stderr)")
    }
}
