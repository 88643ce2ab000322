import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport

/// Issue 43, item 4: what forge makes of the iOS 6 transaction receipt, judged by code that is not forge's. Every
/// valid vector's signature verifies with `openssl dgst -sha1 -verify` under the certificate a reader of our own
/// (Python, standard library only, written from apple-2026-facts §4) extracts; that reader parses the outer and inner
/// old-style plists; and Apple's `ReceiptUtility.extract_transaction_id_from_transaction_receipt` returns the forged
/// transaction id.
@Suite("Transaction receipts: independent oracles", .timeLimit(.minutes(2)))
struct TransactionReceiptOracleTests {
    static let valid = ["v2-production", "v2-sandbox", "v3-production", "v3-sandbox"].map {
        Repository.vectors.appendingPathComponent("transaction-receipt-valid/\($0).plist")
    }

    /// An old-style plist reader independent of forge's: quoted strings with escapes, `key = value;` dictionaries of
    /// strings, nothing else (a receipt needs no more). It splits the blob `version | signature | length | certificate`
    /// and writes `OUT.cert.der`, `OUT.sig`, `OUT.msg` (version ‖ purchase-info), and prints the outer keys, the inner
    /// plist as JSON and the transaction id.
    static let reader = #"""
        import base64, json, struct, sys

        def parse(text):
            i, n = 0, len(text)
            def space():
                nonlocal i
                while i < n and text[i] in " \t\r\n": i += 1
            def string():
                nonlocal i
                assert text[i] == '"', f"a quoted string at {i}"
                i += 1; out = []
                while text[i] != '"':
                    if text[i] == "\\":
                        i += 1; out.append({"n": "\n", "t": "\t", "r": "\r"}.get(text[i], text[i]))
                    else:
                        out.append(text[i])
                    i += 1
                i += 1
                return "".join(out)
            space(); assert text[i] == "{"; i += 1
            entries = []
            while True:
                space()
                if text[i] == "}": i += 1; break
                key = string(); space(); assert text[i] == "="; i += 1; space()
                value = string(); space(); assert text[i] == ";"; i += 1
                entries.append((key, value))
            space(); assert i == n, "bytes after the plist"
            keys = [key for key, _ in entries]
            assert len(set(keys)) == len(keys), "a duplicate key"
            return entries

        path, out = sys.argv[1], sys.argv[2]
        outer = dict(entries := parse(open(path, "rb").read().decode("utf-8")))
        blob = base64.b64decode(outer["signature"], validate=True)
        info = base64.b64decode(outer["purchase-info"], validate=True)
        inner = dict(parse(info.decode("utf-8")))
        version = blob[0]
        length = {2: 128, 3: 256}[version]
        (certificate_length,) = struct.unpack(">I", blob[1 + length:5 + length])
        certificate = blob[5 + length:]
        assert len(certificate) == certificate_length, "the certificate length"
        open(out + ".cert.der", "wb").write(certificate)
        open(out + ".sig", "wb").write(blob[1:1 + length])
        open(out + ".msg", "wb").write(bytes([version]) + info)
        print(json.dumps({"outer": [key for key, _ in entries], "version": version, "inner": inner}))
        """#

    /// Apple's extractor, as a server calls it: the base64 of the bytes.
    static let apple = #"""
        import base64, sys
        from appstoreserverlibrary.receipt_utility import ReceiptUtility
        print(ReceiptUtility().extract_transaction_id_from_transaction_receipt(base64.b64encode(open(sys.argv[1], "rb").read()).decode()))
        """#

    static func read(_ vector: URL, into directory: URL) async throws -> [String: Any] {
        let out = directory.appendingPathComponent(vector.deletingPathExtension().lastPathComponent).path
        let result = try await run(try Oracle.python.required(), ["-c", Self.reader, vector.path, out])
        #expect(result.status == 0, "\(vector.lastPathComponent): \(result.stderr)")
        return try json(result)
    }

    @Test("An independent reader parses both plists; openssl dgst -sha1 -verify accepts every valid vector's signature", .requires(.python, .openssl))
    func opensslVerifies() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for vector in Self.valid {
            let read = try await Self.read(vector, into: directory)
            let sandbox = vector.lastPathComponent.contains("sandbox")
            let expected = ["signature", "purchase-info"] + (sandbox ? ["environment"] : []) + ["pod", "signing-status"]
            #expect(read["outer"] as? [String] == expected, "\(vector.lastPathComponent)")
            let inner = try #require(read["inner"] as? [String: String])
            #expect(inner["bid"] == "com.example.app" && inner["product-id"] == "com.example.pro.monthly" && inner["quantity"] == "1")
            #expect(read["version"] as? Int == (vector.lastPathComponent.hasPrefix("v2") ? 2 : 3))
            let stem = directory.appendingPathComponent(vector.deletingPathExtension().lastPathComponent).path
            let key = try await openssl(["x509", "-inform", "DER", "-in", stem + ".cert.der", "-pubkey", "-noout", "-out", stem + ".pub.pem"])
            #expect(key.status == 0, "\(key.stderr)")
            let verified = try await openssl(["dgst", "-sha1", "-verify", stem + ".pub.pem", "-signature", stem + ".sig", stem + ".msg"])
            #expect(verified.status == 0 && verified.text.contains("Verified OK"), "\(vector.lastPathComponent): \(verified.text)\(verified.stderr)")
            // The same check fails for a message one byte off: the oracle is not vacuous.
            var message = try Data(contentsOf: URL(fileURLWithPath: stem + ".msg"))
            message[message.count - 2] ^= 1
            try message.write(to: URL(fileURLWithPath: stem + ".msg"))
            let tampered = try await openssl(["dgst", "-sha1", "-verify", stem + ".pub.pem", "-signature", stem + ".sig", stem + ".msg"])
            #expect(tampered.status != 0, "\(tampered.text)")
        }
    }

    @Test("Apple's ReceiptUtility extracts the forged transaction id, the one the independent reader and forge inspect read", .requires(.python, .appleLibrary))
    func appleExtractsTheId() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for vector in Self.valid {
            let inner = try #require(try await Self.read(vector, into: directory)["inner"] as? [String: String])
            let id = try #require(inner["transaction-id"])
            let extracted = try await run(try Oracle.appleLibrary.required(), ["-c", Self.apple, vector.path])
            #expect(extracted.status == 0, "\(extracted.stderr)")
            #expect(extracted.text.trimmingCharacters(in: .whitespacesAndNewlines) == id, "\(vector.lastPathComponent)")
            let inspected = try json(try await forge("inspect", vector.path, "--json"))
            #expect((inspected["purchaseInfo"] as? [String: Any])?["transaction-id"] as? String == id)
        }
    }
}
