import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

@Suite("Bad input: one line, exit 65, no crash", .timeLimit(.minutes(2)))
struct BadInputTests {
    static func inputs() async throws -> [(String, Data)] {
        let made = try await forge("make", "--product", "p", "--now", "2025-01-01T00:00:00Z", "--seed", "1", "--format", "base64", "-q")
        let receipt = try #require(Data(base64Encoded: made.text.trimmingCharacters(in: .whitespacesAndNewlines)))
        var nested = Data()
        for _ in 0..<50_000 { nested.append(contentsOf: [0x30, 0x80]) }
        let certificate = try Data(contentsOf: URL(fileURLWithPath: certificate("root.pem")))
        return [
            ("empty", Data()),
            ("truncated", receipt.prefix(receipt.count / 2)),
            ("garbage", Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) })),
            ("deeply nested", nested),
            ("a certificate, not a receipt", certificate),
            ("text", Data("hello, world\n".utf8)),
            ("a JWS", Data("eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2ln".utf8)),
        ]
    }

    @Test("inspect and validate reject each with one line naming what was expected, exit 65")
    func rejectsEach() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, data) in try await Self.inputs() {
            let file = directory.appendingPathComponent("input")
            try data.write(to: file)
            for command in ["inspect", "validate"] {
                let result = try await forge(command, file.path)
                #expect(result.status == 65, "\(command) \(name): status \(result.status), \(result.stderr)")
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 1, "\(command) \(name): \(result.stderr)")
                #expect(result.stderr.contains("expected") || result.stderr.contains("at most"), "\(command) \(name): \(result.stderr)")
            }
            let piped = try await forge("inspect", "-", stdin: data)
            #expect(piped.status == 65, "inspect - \(name)")
        }
    }

    @Test("Errors name the byte offset")
    func offsets() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad.der")
        try Data([0x30, 0x82, 0x01, 0x00, 0x06, 0x09]).write(to: file)
        let result = try await forge("inspect", file.path)
        #expect(result.status == 65)
        #expect(result.stderr.contains("at byte 4"), "\(result.stderr)")
    }

    @Test("A 100 MB input is refused before it is read, with exit 65")
    func huge() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("huge.der")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 100 << 20)  // sparse: 100 MB without writing them
        try handle.close()
        let result = try await forge("validate", file.path)
        #expect(result.status == 65)
        #expect(result.stderr.contains("at most"))
        let missing = try await forge("inspect", directory.appendingPathComponent("nope.der").path)
        #expect(missing.status == 66)
    }
}

@Suite("forge ca init", .timeLimit(.minutes(2)))
struct CATests {
    @Test("Creates a loadable set, refuses to overwrite, and receipts made with it chain to its root only", .requires(.openssl))
    func initSet() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let set = directory.appendingPathComponent("pki")
        let created = try await forge("ca", "init", "--out", set.path)
        #expect(created.status == 0, "\(created.stderr)")
        let rootPEM = try String(contentsOf: set.appendingPathComponent("root.pem"), encoding: .utf8)
        #expect(try String(contentsOf: set.appendingPathComponent("README.md"), encoding: .utf8).contains("TEST ONLY"))
        let again = try await forge("ca", "init", "--out", set.path)
        #expect(again.status == 73)
        #expect(again.stderr.contains("--force"))
        #expect(try String(contentsOf: set.appendingPathComponent("root.pem"), encoding: .utf8) == rootPEM)

        let receipt = directory.appendingPathComponent("r.der")
        #expect(try await forge("make", "--product", "p", "--certificates", set.path, "-q", "-o", receipt.path).status == 0)
        #expect(try await forge("validate", receipt.path, "--root", set.appendingPathComponent("root.pem").path).status == 0)
        let untrusted = try await forge("validate", receipt.path)
        #expect(untrusted.status == 1 && untrusted.text.contains("chain.untrusted"))
        #expect(
            try await openssl([
                "verify", "-CAfile", set.appendingPathComponent("root.pem").path, "-untrusted",
                set.appendingPathComponent("wwdr-g5.pem").path, set.appendingPathComponent("receipt-signing.pem").path,
            ]).status == 0)
        #expect(try await forge("ca", "init", "--out", set.path, "--force").status == 0)
        #expect(try String(contentsOf: set.appendingPathComponent("root.pem"), encoding: .utf8) != rootPEM)
    }
}
