import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

/// `forge jws` through the built binary, judged by our verifier and by two independent oracles: Python
/// `cryptography` (chain and ES256 signature, by hand) and Apple's own app-store-server-library.
@Suite("forge jws", .timeLimit(.minutes(2)))
struct JWSCLITests {
    static let kinds = ["transaction", "renewal", "app-transaction", "notification", "realtime"]
    static let now = "2025-01-01T00:00:00Z"
    /// The TEST JWS root every forged JWS chains to.
    static let root = Repository.certificate("jws/jws-root-g3.pem")
    /// `SignedDataVerifier` of a JWS, as a command line: `ROOT ENVIRONMENT BUNDLE APP_APPLE_ID KIND FILE` → a JSON verdict.
    static let appleVerifier = Repository.file("examples/oracles/asl_verify_jws.py").path

    /// The claims of a compact JWS, decoded without a check (the test's own look at what was signed); empty when it is not one.
    static func payload(_ compact: String) -> [String: Any] {
        let parts = compact.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }

    /// Forges every kind in `environment` into `directory`; returns the paths and the appAppleId.
    static func forgeAll(_ directory: URL, preset: String) async throws -> (paths: [String: String], appAppleID: String) {
        var paths: [String: String] = [:]
        for kind in kinds {
            let path = directory.appendingPathComponent("\(preset)-\(kind).jws").path
            let made = try await forge("jws", "make", kind, "--product", "pro.monthly", "--renewals", "2", "--preset", preset, "--now", now, "-q", "-o", path)
            #expect(made.status == 0, "\(kind): \(made.stderr)")
            paths[kind] = path
        }
        let inspected = try json(try await forge("jws", "inspect", paths["app-transaction"] ?? "", "--json"))
        let appAppleID = ((inspected["payload"] as? [String: Any])?["appAppleId"] as? Int).map(String.init) ?? "-"
        return (paths, appAppleID)
    }

    @Test("Every kind forges, inspects and validates in Production and Sandbox; the same arguments give the same bytes")
    func roundTrip() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (preset, environment) in [("appstore", "Production"), ("sandbox", "Sandbox")] {
            let (paths, appAppleID) = try await Self.forgeAll(directory, preset: preset)
            for kind in Self.kinds {
                let path = try #require(paths[kind])
                var arguments = ["jws", "validate", path, "--bundle-id", "com.example.app", "--environment", environment, "--json"]
                if appAppleID != "-" { arguments += ["--app-apple-id", appAppleID] }
                let report = try json(try await forge(arguments: arguments))
                #expect(report["verdict"] as? String == "valid", "\(preset) \(kind): \(report["message"] ?? "")")
                #expect(report["kind"] as? String == kind)
                let inspected = try json(try await forge("jws", "inspect", path, "--json"))
                let header = try #require(inspected["header"] as? [String: Any])
                #expect(header["alg"] as? String == "ES256" && (header["x5c"] as? [Any])?.count == 3 && header["typ"] as? String == "JWT")
                let payload = try #require(inspected["payload"] as? [String: Any])
                #expect(payload["signedDate"] as? Int == 1_735_689_600_000)
                if kind != "app-transaction" && kind != "notification" { #expect(payload["environment"] as? String == environment) }
            }
            let again = try await forge("jws", "make", "notification", "--product", "pro.monthly", "--renewals", "2", "--preset", preset, "--now", Self.now, "-q")
            #expect(again.stdout == (try Data(contentsOf: URL(fileURLWithPath: paths["notification"] ?? ""))))
        }
    }

    @Test("Xcode: kid Apple_Xcode_Key, one self-signed certificate, ids \"0\", fractional-millisecond dates, year-1 originalPurchaseDate")
    func xcode() async throws {
        let made = try await forge("jws", "make", "transaction", "--product", "p", "--preset", "xcode-2023", "--now", Self.now, "-q", "--format", "json")
        let output = try json(made)
        #expect(output["environment"] as? String == "Xcode")
        let payload = try #require(output["payload"] as? [String: Any])
        #expect(payload["transactionId"] as? String == "0")
        let purchase = try #require(payload["purchaseDate"] as? Double)
        #expect(purchase != purchase.rounded())
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("x.jws")
        try Data(((output["jws"] as? String) ?? "").utf8).write(to: file)
        let header = try #require(try json(try await forge("jws", "inspect", file.path, "--json"))["header"] as? [String: Any])
        #expect(header["kid"] as? String == "Apple_Xcode_Key" && (header["x5c"] as? [Any])?.count == 1)
        #expect(try await forge("jws", "validate", file.path, "--environment", "Xcode").status == 0)
        // Not in Production: an Xcode JWS never chains to the root.
        #expect(try await forge("jws", "validate", file.path, "--environment", "Production").status == 1)
        let app = try json(try await forge("jws", "make", "app-transaction", "--preset", "xcode-2023", "--now", Self.now, "-q", "--format", "json"))
        #expect((app["payload"] as? [String: Any])?["originalPurchaseDate"] as? Int == -62_135_769_600_000)
    }

    @Test("--kind verifies as the kind given (issue 39, item 8): a transaction as a notification has no data.bundleId; without it the payload says transaction")
    func kindGiven() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("t.jws").path
        #expect(try await forge("jws", "make", "transaction", "--product", "pro.monthly", "--now", Self.now, "-q", "-o", file).status == 0)
        let checks = ["--bundle-id", "com.example.app", "--at", Self.now]
        let guessed = try await forge(arguments: ["jws", "validate", file] + checks)
        #expect(guessed.status == 0 && guessed.text.hasPrefix("valid"), "\(guessed.text)")
        #expect(try await forge(arguments: ["jws", "validate", file, "--kind", "transaction"] + checks).text == guessed.text)
        let asNotification = try await forge(arguments: ["jws", "validate", file, "--kind", "notification"] + checks)
        #expect(asNotification.status == 1 && asNotification.text.hasPrefix("invalid (binding.bundle-id)"), "\(asNotification.text)")
        #expect(try await forge("jws", "validate", "--harness", "--kind", "transaction").status == 64)
    }

    @Test("A one-byte tamper, another bundle, environment, app or root: rejected with the class that says why")
    func rejections() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (paths, appAppleID) = try await Self.forgeAll(directory, preset: "appstore")
        func verdict(_ path: String, _ extra: [String]) async throws -> (Int32, String?) {
            let result = try await forge(arguments: ["jws", "validate", path, "--json"] + extra)
            return (result.status, try json(result)["errorClass"] as? String)
        }
        let transaction = try #require(paths["transaction"])
        let tampered = directory.appendingPathComponent("tampered.jws").path
        var text = try String(contentsOfFile: transaction, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = text.split(separator: ".").map(String.init)
        // One byte of the payload changed ("quantity":1 → 2), still JSON, signature kept.
        func base64url(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        var standard = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        let claims = String(decoding: try #require(Data(base64Encoded: standard)), as: UTF8.self)
        #expect(claims.contains(#""quantity":1"#))
        text = parts[0] + "." + base64url(Data(claims.replacingOccurrences(of: #""quantity":1"#, with: #""quantity":2"#).utf8)) + "." + parts[2]
        try text.write(toFile: tampered, atomically: true, encoding: .utf8)
        #expect(try await verdict(tampered, []) == (1, "jws.signature"))

        #expect(try await verdict(transaction, ["--bundle-id", "com.other.app"]) == (1, "binding.bundle-id"))
        #expect(try await verdict(transaction, ["--environment", "Sandbox"]) == (1, "binding.environment"))
        #expect(try await verdict(try #require(paths["app-transaction"]), ["--environment", "Production", "--app-apple-id", "1"]) == (1, "binding.app-apple-id"))
        #expect(appAppleID != "-")
        #expect(try await verdict(transaction, ["--root", Repository.certificate("root.pem")]).1?.hasPrefix("chain") == true)
        let alg = directory.appendingPathComponent("alg.jws").path
        let noneHeader = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        try (noneHeader + "." + parts[1] + ".").write(toFile: alg, atomically: true, encoding: .utf8)
        #expect(try await verdict(alg, []) == (1, "jws.algorithm"))
        let garbage = directory.appendingPathComponent("garbage.jws").path
        try "a.b.c.d".write(toFile: garbage, atomically: true, encoding: .utf8)
        #expect(try await verdict(garbage, []).0 == 65)
    }

    @Test(
        "Python cryptography, by hand: each x5c certificate is signed by the next, the root is ours, the ES256 signature verifies",
        .requires(.appleLibrary))
    func cryptographyOracle() async throws {
        let python = try Oracle.appleLibrary.required()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (paths, _) = try await Self.forgeAll(directory, preset: "appstore")
        let script = directory.appendingPathComponent("oracle.py")
        try """
        import base64, json, sys
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
        def b64url(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
        root = x509.load_pem_x509_certificate(open(sys.argv[1], "rb").read())
        def check(text):
            h, p, s = text.split(".")
            header = json.loads(b64url(h))
            chain = [x509.load_der_x509_certificate(base64.b64decode(c)) for c in header["x5c"]]
            assert header["alg"] == "ES256" and len(chain) == 3
            assert chain[2] == root
            for child, parent in zip(chain, chain[1:]):
                parent.public_key().verify(child.signature, child.tbs_certificate_bytes, ec.ECDSA(child.signature_hash_algorithm))
                child.verify_directly_issued_by(parent)
            raw = b64url(s)
            assert len(raw) == 64
            signature = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
            chain[0].public_key().verify(signature, (h + "." + p).encode(), ec.ECDSA(hashes.SHA256()))
            payload = json.loads(b64url(p))
            for field in ("signedTransactionInfo", "signedRenewalInfo"):
                if field in payload.get("data", {}): check(payload["data"][field])
        for path in sys.argv[2:]:
            check(open(path).read().strip())
        print("ok", len(sys.argv) - 2)
        """.write(to: script, atomically: true, encoding: .utf8)
        let result = try await run(python, [script.path, Self.root] + Self.kinds.compactMap { paths[$0] })
        #expect(result.status == 0 && result.text.hasPrefix("ok 5"), "\(result.text)\(result.stderr)")
    }

    @Test(
        "Apple's app-store-server-library 3.1.2 (SignedDataVerifier, online checks off) accepts every valid artefact and rejects a one-byte tamper",
        .requires(.appleLibrary))
    func appleLibraryOracle() async throws {
        let python = try Oracle.appleLibrary.required(), oracle = Self.appleVerifier
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (preset, environment) in [("appstore", "Production"), ("sandbox", "Sandbox")] {
            let (paths, appAppleID) = try await Self.forgeAll(directory, preset: preset)
            for kind in Self.kinds {
                let path = try #require(paths[kind])
                let accepted = try await run(python, [oracle, Self.root, environment, "com.example.app", appAppleID, kind, path])
                #expect(accepted.status == 0, "\(environment) \(kind): \(accepted.text)\(accepted.stderr)")
                // The last character of the signature flipped: one byte of r‖s changes.
                var text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                let last = text.removeLast()
                text.append(last == "A" ? "Q" : "A")
                let tampered = directory.appendingPathComponent("tampered-\(kind).jws").path
                try text.write(toFile: tampered, atomically: true, encoding: .utf8)
                let rejected = try await run(python, [oracle, Self.root, environment, "com.example.app", appAppleID, kind, tampered])
                #expect(rejected.status == 1, "\(environment) \(kind) tampered: \(rejected.text)\(rejected.stderr)")
                #expect(try await forge("jws", "validate", tampered).status == 1)
            }
        }
    }

    @Test(
        "Apple's library accepts the notification shapes without data: a RENEWAL_EXTENSION summary and an EXTERNAL_PURCHASE_TOKEN",
        .requires(.appleLibrary))
    func notificationShapes() async throws {
        let python = try Oracle.appleLibrary.required(), oracle = Self.appleVerifier
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (type, subtype, member) in [("RENEWAL_EXTENSION", "SUMMARY", "summary"), ("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", "externalPurchaseToken")] {
            let path = directory.appendingPathComponent("\(type).jws").path
            let made = try await forge("jws", "make", "notification", "--notification-type", type, "--subtype", subtype, "--product", "p", "--now", Self.now, "-q", "-o", path)
            #expect(made.status == 0)
            let payload = try #require(try json(try await forge("jws", "inspect", path, "--json"))["payload"] as? [String: Any])
            let claims = try #require(payload[member] as? [String: Any])
            #expect(payload["data"] == nil)
            let appAppleID = String(try #require(claims["appAppleId"] as? Int))
            #expect(try await forge("jws", "validate", path, "--environment", "Production", "--bundle-id", "com.example.app", "--app-apple-id", appAppleID).status == 0)
            let accepted = try await run(python, [oracle, Self.root, "Production", "com.example.app", appAppleID, "notification", path])
            #expect(accepted.status == 0, "\(type): \(accepted.text)\(accepted.stderr)")
        }
    }

    @Test("The JWS families of the corpus through `forge jws validate --harness` over stdio: the reference verifier agrees with every vector")
    func corpusOverStdio() async throws {
        let vectors = Repository.vectors.path
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let results = directory.appendingPathComponent("jws.json")
        let judged = try await forge(
            "run", "--target", "stdio:\(Binaries.forge.path) jws validate --harness --vectors \(vectors)", "--vectors", vectors, "--run", "jws-*",
            "--results", results.path, "--quiet")
        #expect(judged.status == 0, "\(judged.text)\(judged.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])["results"] as? [[String: Any]]
        #expect((rows?.count ?? 0) >= 150 && rows?.allSatisfy(agrees) == true)
        // `forge vectors show` decodes a JWS vector as a JWS.
        let shown = try await forge("vectors", "show", "jws-valid::notification-production", "--vectors", vectors)
        #expect(shown.status == 0 && shown.text.contains("kind: notification") && shown.text.contains("signedTransactionInfo (nested JWS)"))
    }

    @Test("forge mutate covers the StoreKit 2 families: JWS mutants with recipes that replay byte for byte, judged by the reference verifier without a trap")
    func mutants() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try await forge("mutate", "--from", "jws-*", "--seed", "11", "--count", "25", "--out", directory.path)
        #expect(made.status == 0 && made.text.contains("wrote 25 mutants"), "\(made.text)\(made.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".jws") }.sorted()
        #expect(files.count >= 20)  // names collide when the same base and steps are drawn twice
        for file in files.prefix(8) {
            let recipe = directory.appendingPathComponent(file.replacingOccurrences(of: ".jws", with: ".recipe.json")).path
            let again = try await forge("mutate", "--replay", recipe)
            let original = try Data(contentsOf: directory.appendingPathComponent(file))
            #expect(again.status == 0 && again.stdout == original, "\(file)")
            let verdict = try await forge("jws", "validate", directory.appendingPathComponent(file).path)
            #expect([0, 1, 65].contains(verdict.status), "\(file): \(verdict.stderr)")
        }
        let again = try await forge("mutate", "--from", "jws-*", "--seed", "11", "--count", "25", "--out", directory.appendingPathComponent("again").path)
        #expect(again.status == 0)
        let repeated = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("again").path).filter { $0.hasSuffix(".jws") }
        #expect(repeated.sorted() == files)
    }

    @Test("One scenario, both artefacts: the transaction JWS carries the receipt's transaction ids and dates")
    func receiptTwin() async throws {
        let arguments = ["--product", "pro.monthly", "--renewals", "2", "--now", Self.now, "--seed", "42", "-q"]
        let receipt = try json(try await forge(arguments: ["make", "--format", "json"] + arguments))
        let latest = try #require((receipt["latest_receipt_info"] as? [[String: Any]])?.first)
        let jws = try json(try await forge(arguments: ["jws", "make", "transaction", "--format", "json"] + arguments))
        let payload = try #require(jws["payload"] as? [String: Any])
        #expect(payload["transactionId"] as? String == latest["transaction_id"] as? String)
        #expect(payload["originalTransactionId"] as? String == latest["original_transaction_id"] as? String)
        #expect((payload["purchaseDate"] as? Int).map(String.init) == latest["purchase_date_ms"] as? String)
        #expect((payload["expiresDate"] as? Int).map(String.init) == latest["expires_date_ms"] as? String)
    }
}

extension JWSCLITests {
    @Test(
        "A subscription notification implies an auto-renewable product, as --expired does: DID_RENEW and EXPIRED of --product X forge without --type; a stated other type still exits 64"
    )
    func subscriptionNotificationImpliesAutoRenewable() async throws {
        for (type, subtype) in [("DID_RENEW", []), ("EXPIRED", ["--subtype", "VOLUNTARY"]), ("DID_FAIL_TO_RENEW", [])] {
            let made = try await forge(arguments: ["jws", "make", "notification", "--notification-type", type, "--product", "pro.monthly", "--now", Self.now] + subtype)
            #expect(made.status == 0, "\(type): \(made.stderr)")
            let data = Self.payload(made.text.trimmingCharacters(in: .whitespacesAndNewlines))["data"] as? [String: Any]
            let transaction = Self.payload(data?["signedTransactionInfo"] as? String ?? "")
            #expect(transaction["type"] as? String == "Auto-Renewable Subscription" && data?["signedRenewalInfo"] is String, "\(type): \(transaction)")
        }
        let stated = try await forge("jws", "make", "notification", "--notification-type", "DID_RENEW", "--product", "lifetime", "--type", "non-consumable", "--now", Self.now)
        #expect(stated.status == 64 && stated.stderr.contains("make it auto-renewable"), "\(stated.stderr)")
    }
}
