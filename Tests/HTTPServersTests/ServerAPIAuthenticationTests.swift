import Foundation
import ForgeTestSupport
import StoreServer
import Testing

/// The App Store Server API's token check against tokens made by Apple's own Python client and by PyJWT, with a key
/// made by the built `forge ca api-key`. The Python parts need `.oracles/asl` (app-store-server-library).
@Suite("App Store Server API authentication", .timeLimit(.minutes(2)))
struct ServerAPIAuthenticationTests {
    static let bundleID = "com.example.auth"

    /// A key made by `forge ca api-key`: the key id, issuer id, .p8 path and the authenticator serving `bundleID`.
    struct Key {
        let keyID: String
        let issuerID: String
        let path: String
        let authenticator: ServerAPIAuthenticator
    }

    static func makeKey(in directory: URL) async throws -> Key {
        let result = try await forge("ca", "api-key", "--out", directory.path, "--seed", "22")
        try #require(result.status == 0, "forge ca api-key: \(result.text) \(result.stderr)")
        var values: [String: String] = [:]
        for line in result.text.split(separator: "\n") {
            guard let gap = line.firstRange(of: "  ") else { continue }
            values[String(line[..<gap.lowerBound])] = line[gap.upperBound...].trimmingCharacters(in: .whitespaces)
        }
        let keyID = try #require(values["key id"])
        let issuerID = try #require(values["issuer id"])
        let path = try #require(values["key file"])
        let key = try ServerAPIKey(id: keyID, pem: String(contentsOfFile: path, encoding: .utf8))
        return Key(keyID: keyID, issuerID: issuerID, path: path, authenticator: ServerAPIAuthenticator(keys: [key], issuerID: issuerID, bundleIDs: [bundleID]))
    }

    /// Tokens by name, made in one Python run with the `.p8`: Apple's client, PyJWT, and each rule broken alone.
    static let script = #"""
        import base64, calendar, datetime, hashlib, hmac, json, sys, time
        import jwt
        from cryptography.hazmat.primitives import serialization
        from appstoreserverlibrary.api_client import AppStoreServerAPIClient
        from appstoreserverlibrary.models.Environment import Environment

        path, kid, iss, bid = sys.argv[1:5]
        pem = open(path, "rb").read()
        key = serialization.load_pem_private_key(pem, password=None)
        public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        now = int(time.time())

        def b64(data):
            return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

        def claims(**changes):
            body = {"bid": bid, "iss": iss, "aud": "appstoreconnect-v1", "exp": now + 300}
            for name, value in changes.items():
                if value is None:
                    body.pop(name, None)
                else:
                    body[name] = value
            return body

        def es256(body, headers={"kid": kid}):
            return jwt.encode(body, key, algorithm="ES256", headers=headers)

        def unsigned(header, body, sign):
            signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(body).encode())
            return signing_input + "." + b64(sign(signing_input.encode()))

        apple = AppStoreServerAPIClient(pem, kid, iss, bid, Environment.SANDBOX)._generate_token()
        head, payload, signature = apple.split(".")
        raw = bytearray(base64.urlsafe_b64decode(signature + "=="))
        raw[10] ^= 1
        tokens = {
            "apple": apple,
            "pyjwt-iat": es256(claims(iat=now)),
            "pyjwt-iat-hour": es256(claims(iat=now - 60, exp=now - 60 + 3600)),
            "alg-hs256": unsigned({"alg": "HS256", "typ": "JWT", "kid": kid}, claims(), lambda m: hmac.new(public, m, hashlib.sha256).digest()),
            "alg-none": unsigned({"alg": "none", "typ": "JWT", "kid": kid}, claims(), lambda m: b""),
            "kid-unknown": es256(claims(), headers={"kid": "ZZZZZZZZZZ"}),
            "kid-missing": es256(claims(), headers={}),
            "signature": head + "." + payload + "." + b64(bytes(raw)),
            "aud": es256(claims(aud="appstoreconnect-v2")),
            "bid-wrong": es256(claims(bid="com.example.other")),
            "bid-missing": es256(claims(bid=None)),
            "iss-wrong": es256(claims(iss="00000000-0000-4000-8000-000000000000")),
            "iss-missing": es256(claims(iss=None)),
            "exp-expired": es256(claims(exp=now - 5)),
            "exp-missing": es256(claims(exp=None)),
            "exp-string": es256(claims(exp=str(now + 300))),
            "exp-after-iat": es256(claims(iat=now, exp=now + 3601)),
            "iat-future": es256(claims(iat=now + 600, exp=now + 900)),
            "iat-string": es256(claims(iat=str(now))),
        }
        print(json.dumps(tokens))
        """#

    static func pythonTokens(_ key: Key, in directory: URL) async throws -> [String: String] {
        let file = directory.appendingPathComponent("tokens.py")
        try Data(script.utf8).write(to: file)
        let result = try await run(try Oracle.appleLibrary.required(), [file.path, key.path, key.keyID, key.issuerID, bundleID])
        try #require(result.status == 0, "python: \(result.text) \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: String])
    }

    @Test(
        "Apple's Python client's token (no iat) and PyJWT's with iat are accepted; each rule broken alone is rejected by name",
        .requires(.appleLibrary, .openssl))
    func pythonTokens() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try await Self.makeKey(in: directory)
        let tokens = try await Self.pythonTokens(key, in: directory)
        let now = Date()
        func decision(_ name: String, bundleID: String? = nil) throws -> ServerAPIAuthDecision {
            key.authenticator.check(authorization: "Bearer " + (try #require(tokens[name], "token \(name)")), bundleID: bundleID, now: now)
        }

        let accepted = ServerAPIAuthDecision.accepted(keyID: key.keyID, bundleID: Self.bundleID)
        for name in ["apple", "pyjwt-iat", "pyjwt-iat-hour"] { #expect(try decision(name) == accepted, "\(name)") }
        #expect(try decision("apple", bundleID: Self.bundleID) == accepted)
        #expect(try decision("apple", bundleID: "com.example.other") == .rejected(.bundleID))
        // Apple's token was made for now + 5 minutes: 6 minutes later it has expired.
        #expect(key.authenticator.check(authorization: "Bearer " + (tokens["apple"] ?? ""), now: now.addingTimeInterval(360)) == .rejected(.expired))

        let rejected: [String: ServerAPIAuthRule] = [
            "alg-hs256": .algorithm, "alg-none": .algorithm, "kid-unknown": .keyID, "kid-missing": .keyID, "signature": .signature,
            "aud": .audience, "bid-wrong": .bundleID, "bid-missing": .bundleID, "iss-wrong": .issuer, "iss-missing": .issuer,
            "exp-expired": .expired, "exp-missing": .expirationMissing, "exp-string": .expirationMissing, "exp-after-iat": .lifetime,
            "iat-future": .issuedInFuture, "iat-string": .issuedAtInvalid,
        ]
        for (name, rule) in rejected.sorted(by: { $0.key < $1.key }) { #expect(try decision(name) == .rejected(rule), "\(name)") }

        // The public key alone (as `openssl pkey -pubout` writes it) checks the same tokens.
        let publicPEM = try await openssl(["pkey", "-in", key.path, "-pubout"]).text
        let publicOnly = ServerAPIAuthenticator(keys: [try ServerAPIKey(id: key.keyID, pem: publicPEM)], issuerID: key.issuerID, bundleIDs: [Self.bundleID])
        #expect(publicOnly.check(authorization: "Bearer " + (tokens["apple"] ?? ""), now: now) == accepted)
        // Another key under the same kid: the signature rule.
        let other = try await forge("ca", "api-key", "--out", directory.appendingPathComponent("other").path, "--seed", "23")
        let otherPath = try #require(other.text.split(separator: "\n").first { $0.hasPrefix("key file") }?.split(separator: " ").last.map(String.init))
        let wrongKey = ServerAPIAuthenticator(
            keys: [try ServerAPIKey(id: key.keyID, pem: String(contentsOfFile: otherPath, encoding: .utf8))], issuerID: key.issuerID, bundleIDs: [Self.bundleID])
        #expect(wrongKey.check(authorization: "Bearer " + (tokens["apple"] ?? ""), now: now) == .rejected(.signature))
    }

    @Test("The header's form: absent, not Bearer, not a JWS, not JSON, oversize are rejected by name, and nothing traps")
    func malformed() throws {
        let authenticator = ServerAPIAuthenticator(keys: [], issuerID: "issuer", bundleIDs: [Self.bundleID])
        let now = Date()
        let header = Self.base64URL(#"{"alg":"ES256","kid":"K"}"#)
        let payload = Self.base64URL(#"{"aud":"appstoreconnect-v1"}"#)
        let cases: [(String?, ServerAPIAuthRule)] = [
            (nil, .missing), ("", .notBearer), ("Bearer", .notBearer), ("Bearer ", .notBearer), ("Basic dXNlcjpwYXNz", .notBearer),
            ("\(header).\(payload).AAAA", .notBearer), ("Bearer a b", .notBearer), ("Bearer abc", .malformed), ("Bearer a.b", .malformed),
            ("Bearer a.b.c.d", .malformed), ("Bearer !!.??.**", .malformed), ("Bearer \(Self.base64URL("[1]")).\(payload).AAAA", .malformed),
            ("Bearer \(header).\(Self.base64URL("not json")).AAAA", .malformed), ("Bearer \(header).\(payload).AAAA", .keyID),
            ("bearer \(header).\(payload).AAAA", .keyID), ("Bearer \(header).\(payload).", .keyID),
            ("Bearer " + String(repeating: "A", count: ServerAPIAuthenticator.maximumAuthorizationBytes), .tooLarge),
            ("Bearer " + String(repeating: "A", count: 16 << 20), .tooLarge),
        ]
        for (value, rule) in cases { #expect(authenticator.check(authorization: value, now: now) == .rejected(rule), "\(value?.prefix(60) ?? "nil")") }
        // Every rule has a log name and a one-line description.
        for rule in ServerAPIAuthRule.allCases {
            #expect(!rule.rawValue.isEmpty && !rule.rawValue.contains(" "))
            #expect(!rule.description.isEmpty && !rule.description.contains("\n"))
        }
        #expect(Set(ServerAPIAuthRule.allCases.map(\.rawValue)).count == ServerAPIAuthRule.allCases.count)
    }

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
