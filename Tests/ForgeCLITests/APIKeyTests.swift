import Foundation
import ForgeTestSupport
import Testing

/// `forge ca api-key` and `forge serve --api-key/--issuer-id`, through the built binaries and real files.
@Suite("App Store Server API keys: forge ca api-key and forge serve --api-key", .timeLimit(.minutes(2)))
struct APIKeyTests {
    /// The values `forge ca api-key` prints, by their label.
    static func printed(_ result: RunResult) -> [String: String] {
        var values: [String: String] = [:]
        for line in result.text.split(separator: "\n") {
            guard let gap = line.firstRange(of: "  ") else { continue }
            values[String(line[..<gap.lowerBound])] = line[gap.upperBound...].trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    @Test(
        "forge ca api-key writes AuthKey_<KEYID>.p8 (PKCS#8 P-256, 0600) and prints key id, issuer id, path and the serve flags",
        .requires(.openssl))
    func makesAKey() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("keys").path
        let result = try await forge("ca", "api-key", "--out", out)
        #expect(result.status == 0, "\(result.stderr)")
        let values = Self.printed(result)
        let keyID = try #require(values["key id"])
        let issuerID = try #require(values["issuer id"])
        #expect(keyID.wholeMatch(of: /[A-Z0-9]{10}/) != nil)
        #expect(issuerID.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) != nil)
        let path = "\(out)/AuthKey_\(keyID).p8"
        #expect(values["key file"] == path)
        #expect(values["serve"] == "forge serve --api-key \(keyID)=\(path) --issuer-id \(issuerID)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["AuthKey_\(keyID).p8"])
        let permissions = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(permissions == 0o600)
        let pem = try String(contentsOfFile: path, encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        // openssl, independently: an EC key on P-256.
        let text = try await openssl(["pkey", "-in", path, "-noout", "-text"])
        #expect(text.status == 0)
        #expect(text.text.contains("prime256v1") || text.text.contains("P-256"), "\(text.text)")
        // The inner SEC 1 key carries its public key ([1]), as App Store Connect's .p8 files do.
        let inner = try await openssl(["asn1parse", "-in", path, "-strparse", "27"])
        #expect(inner.text.contains("cont [ 1 ]"), "\(inner.text)")
        // A second key is another key.
        let other = Self.printed(try await forge("ca", "api-key", "--out", out))
        #expect(other["key id"] != keyID)
        #expect(other["issuer id"] != issuerID)
    }

    @Test("forge ca api-key --seed: the same seed gives the same key id, issuer id and key bytes")
    func seeded() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await forge("ca", "api-key", "--out", directory.appendingPathComponent("a").path, "--seed", "7")
        let second = try await forge("ca", "api-key", "--out", directory.appendingPathComponent("b").path, "--seed", "7")
        let third = try await forge("ca", "api-key", "--out", directory.appendingPathComponent("c").path, "--seed", "8")
        #expect([first.status, second.status, third.status] == [0, 0, 0])
        let (a, b, c) = (Self.printed(first), Self.printed(second), Self.printed(third))
        #expect(a["key id"] == b["key id"])
        #expect(a["issuer id"] == b["issuer id"])
        #expect(a["key id"] != c["key id"])
        let keyID = try #require(a["key id"])
        let name = "AuthKey_\(keyID).p8"
        #expect(
            try Data(contentsOf: directory.appendingPathComponent("a/\(name)")) == Data(contentsOf: directory.appendingPathComponent("b/\(name)")))
    }

    @Test("forge ca api-key quotes a path with spaces in the serve line, so it can be pasted into a shell")
    func quotesPaths() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("my keys").path
        let values = Self.printed(try await forge("ca", "api-key", "--out", out, "--seed", "5"))
        let keyID = try #require(values["key id"])
        let issuerID = try #require(values["issuer id"])
        #expect(values["serve"] == "forge serve --api-key '\(keyID)=\(out)/AuthKey_\(keyID).p8' --issuer-id \(issuerID)")
        #expect(FileManager.default.fileExists(atPath: "\(out)/AuthKey_\(keyID).p8"))
    }

    @Test("forge ca api-key never replaces a key: exit 73 naming the file, the file and stdout untouched")
    func refusesToOverwrite() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await forge("ca", "api-key", "--out", directory.path, "--seed", "1")
        #expect(first.status == 0)
        let keyID = try #require(Self.printed(first)["key id"])
        let path = directory.appendingPathComponent("AuthKey_\(keyID).p8")
        try Data("not the key\n".utf8).write(to: path)
        let again = try await forge("ca", "api-key", "--out", directory.path, "--seed", "1")
        #expect(again.status == 73)
        #expect(again.stdout.isEmpty)
        #expect(again.stderr.contains("AuthKey_\(keyID).p8"), "\(again.stderr)")
        #expect(try String(contentsOf: path, encoding: .utf8) == "not the key\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["AuthKey_\(keyID).p8"])
    }

    @Test(
        "forge serve --api-key/--issuer-id: forms are usage errors (64), a missing file 66 and a key that is not P-256 65, naming the file",
        .requires(.openssl))
    func serveOptions() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try await forge("ca", "api-key", "--out", directory.path, "--seed", "3")
        let values = Self.printed(made)
        let keyID = try #require(values["key id"])
        let path = try #require(values["key file"])
        let listen = ["serve", "--listen", "127.0.0.1:0"]

        for arguments in [
            ["--api-key", "\(keyID)=\(path)"], ["--issuer-id", "abc"], ["--api-key", "no-equals-sign", "--issuer-id", "abc"],
            ["--api-key", "\(keyID)=", "--issuer-id", "abc"], ["--api-key", "\(keyID)=\(path)", "--api-key", "\(keyID)=\(path)", "--issuer-id", "abc"],
        ] {
            let result = try await forge(arguments: listen + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
        }

        let missing = directory.appendingPathComponent("AuthKey_MISSING.p8").path
        let absent = try await forge(arguments: listen + ["--api-key", "K=\(missing)", "--issuer-id", "abc"])
        #expect(absent.status == 66)
        #expect(absent.stderr.contains(missing), "\(absent.stderr)")

        let p384 = directory.appendingPathComponent("p384.p8").path
        #expect(try await openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", p384]).status == 0)
        let garbage = directory.appendingPathComponent("garbage.p8").path
        try Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8).write(to: URL(fileURLWithPath: garbage))
        let rsa = directory.appendingPathComponent("rsa.p8").path
        #expect(try await openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", rsa]).status == 0)
        for file in [p384, garbage, rsa] {
            let result = try await forge(arguments: listen + ["--api-key", "K=\(file)", "--issuer-id", "abc"])
            #expect(result.status == 65, "\(file): \(result.stderr)")
            #expect(result.stderr.contains(file), "\(result.stderr)")
        }
    }

    @Test(
        "forge serve starts with the .p8 of forge ca api-key, or its public key",
        .requires(.openssl))
    func serveStarts() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let values = Self.printed(try await forge("ca", "api-key", "--out", directory.path, "--seed", "4"))
        let keyID = try #require(values["key id"])
        let path = try #require(values["key file"])
        let issuerID = try #require(values["issuer id"])
        let publicKey = directory.appendingPathComponent("public.pem").path
        #expect(try await openssl(["pkey", "-in", path, "-pubout", "-out", publicKey]).status == 0)
        let server = try await BackgroundServer.start(
            ["serve", "--listen", "127.0.0.1:0", "--api-key", "\(keyID)=\(path)", "--api-key", "PUBLIC=\(publicKey)", "--issuer-id", issuerID])
        defer { server.kill() }
        #expect(server.port > 0)
    }
}

extension APIKeyTests {
    @Test("forge ca api-key --json: one JSON object with the key id, issuer id and key path the text gives for the seed, and the serve arguments")
    func printsJSON() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = Self.printed(try await forge("ca", "api-key", "--out", directory.appendingPathComponent("text").path, "--seed", "9"))
        let out = directory.appendingPathComponent("json").path
        let result = try await forge("ca", "api-key", "--out", out, "--seed", "9", "--json")
        #expect(result.status == 0 && result.text.split(separator: "\n").count == 1, "\(result.text) \(result.stderr)")
        let values = try #require(try JSONSerialization.jsonObject(with: Data(result.text.utf8)) as? [String: Any], "\(result.text)")
        let keyID = try #require(values["keyId"] as? String)
        #expect(keyID == text["key id"] && values["issuerId"] as? String == text["issuer id"], "\(values) \(text)")
        #expect(values["keyPath"] as? String == "\(out)/AuthKey_\(keyID).p8" && FileManager.default.fileExists(atPath: "\(out)/AuthKey_\(keyID).p8"))
        #expect(values["serveArguments"] as? [String] == ["--api-key", "\(keyID)=\(out)/AuthKey_\(keyID).p8", "--issuer-id", text["issuer id"] ?? ""], "\(values)")
    }
}
