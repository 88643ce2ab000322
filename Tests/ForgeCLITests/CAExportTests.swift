import Foundation
import ForgeTestSupport
import Testing

/// `forge ca export --out DIR`: every compiled-in trust anchor as PEM and DER with a README saying which to trust
/// for what, checked with OpenSSL against what forge signs (issue 21, item 8).
@Suite("CA export", .timeLimit(.minutes(2)))
struct CAExportTests {
    static let anchors = [
        "root": "receipt", "storekit": "storekit", "jws-root-g3": "jws", "jws-xcode": "jws-xcode", "itunes-store-ca": "transaction-receipt-v2",
        "wwdr-sha1": "transaction-receipt-v3",
    ]
    /// The corpus's id of each anchor, by file stem: the DER is the corpus's `Vectors/anchors/ID.der`.
    static let corpusIDs = [
        "root": "forge-root", "storekit": "forge-storekit", "jws-root-g3": "forge-jws-root", "jws-xcode": "forge-jws-xcode",
        "itunes-store-ca": "forge-itunes-store-ca", "wwdr-sha1": "forge-wwdr-sha1",
    ]

    @Test("Export writes PEM and DER of the six anchors and a README naming each and its use; the bytes are the repository's", .requires(.openssl))
    func exportWritesEveryAnchor() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("anchors")
        let result = try await forge("ca", "export", "--out", out.path)
        #expect(result.status == 0, "\(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        let expected = (Self.anchors.keys.flatMap { [$0 + ".pem", $0 + ".der"] } + ["README.txt"]).sorted()
        #expect(files == expected)
        let readme = try String(contentsOf: out.appendingPathComponent("README.txt"), encoding: .utf8)
        for (stem, name) in Self.anchors {
            #expect(readme.contains("--root \(name): \(stem).pem, \(stem).der"), "README lacks \(name)")
            // The PEM is the repository's certificate, and the DER is the same certificate.
            let repository = stem.hasPrefix("jws") ? "jws/\(stem).pem" : stem == "itunes-store-ca" ? "transaction-receipt/\(stem).pem" : "\(stem).pem"
            let pem = try String(contentsOf: out.appendingPathComponent("\(stem).pem"), encoding: .utf8)
            #expect(pem == (try String(contentsOfFile: certificate(repository), encoding: .utf8)), "\(stem).pem")
            let converted = try await openssl(["x509", "-inform", "DER", "-in", out.appendingPathComponent("\(stem).der").path, "-outform", "PEM"])
            #expect(converted.status == 0 && converted.text == pem, "\(stem).der is not \(stem).pem: \(converted.stderr)")
            let corpus = Repository.vectors.appendingPathComponent("anchors/\(Self.corpusIDs[stem] ?? "").der")
            #expect(try Data(contentsOf: out.appendingPathComponent("\(stem).der")) == (try Data(contentsOf: corpus)), "\(stem).der is not the corpus's anchor")
        }
        for use in ["On-device receipt validation", "SignedDataVerifier", "Xcode", "iOS 6 transaction receipts"] { #expect(readme.contains(use), "README lacks \(use)") }
    }

    @Test(
        "OpenSSL verifies a forged receipt's CMS signature and chain under the exported receipt root, and a forged JWS's x5c under the exported JWS root",
        .requires(.openssl))
    func opensslVerifiesForgedArtefacts() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("anchors")
        #expect(try await forge("ca", "export", "--out", out.path).status == 0)
        let receipt = directory.appendingPathComponent("receipt.der").path
        #expect(try await forge("make", "--product", "pro.monthly", "--now", "2025-01-01T00:00:00Z", "-q", "-o", receipt).status == 0)
        let verified = try await openssl([
            "cms", "-verify", "-inform", "DER", "-in", receipt, "-CAfile", out.appendingPathComponent("root.pem").path, "-purpose", "any", "-out",
            directory.appendingPathComponent("verified.bin").path,
        ])
        #expect(verified.status == 0, "\(verified.stderr)")
        let foreign = try await openssl([
            "cms", "-verify", "-inform", "DER", "-in", receipt, "-CAfile", out.appendingPathComponent("jws-root-g3.pem").path, "-purpose", "any", "-out",
            directory.appendingPathComponent("foreign.bin").path,
        ])
        #expect(foreign.status != 0, "the receipt must not verify under the JWS root")

        let jws = try await forge("jws", "make", "transaction", "--product", "pro.monthly", "--now", "2025-01-01T00:00:00Z", "-q")
        #expect(jws.status == 0, "\(jws.stderr)")
        let header = try #require(jws.text.split(separator: ".").first)
        var padded = header.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while padded.count % 4 != 0 { padded += "=" }
        let decoded = try #require(Data(base64Encoded: padded))
        let x5c = try #require((try JSONSerialization.jsonObject(with: decoded) as? [String: Any])?["x5c"] as? [String])
        #expect(x5c.count == 3)
        var pems: [String] = []
        for (index, entry) in x5c.prefix(2).enumerated() {
            let der = directory.appendingPathComponent("x5c-\(index).der")
            try #require(Data(base64Encoded: entry)).write(to: der)
            let pem = directory.appendingPathComponent("x5c-\(index).pem").path
            #expect(try await openssl(["x509", "-inform", "DER", "-in", der.path, "-out", pem]).status == 0)
            pems.append(pem)
        }
        let chain = try await openssl(["verify", "-CAfile", out.appendingPathComponent("jws-root-g3.pem").path, "-untrusted", pems[1], pems[0]])
        #expect(chain.status == 0 && chain.text.contains("OK"), "\(chain.text)\(chain.stderr)")
        let derRoot = try await openssl(["verify", "-CAfile", out.appendingPathComponent("root.pem").path, "-untrusted", pems[1], pems[0]])
        #expect(derRoot.status != 0, "the JWS chain must not verify under the receipt root")
    }

    @Test("The output is all or nothing: a folder holding a file of the user's is refused (73) and left as it was; an earlier export is replaced")
    func refusesForeignFolder() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let mine = directory.appendingPathComponent("notes.txt")
        try Data("mine".utf8).write(to: mine)
        let refused = try await forge("ca", "export", "--out", directory.path)
        #expect(refused.status == 73, "exit \(refused.status): \(refused.stderr)")
        #expect(refused.stderr.contains("notes.txt"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.txt"])

        let out = directory.appendingPathComponent("anchors")
        #expect(try await forge("ca", "export", "--out", out.path).status == 0)
        let again = try await forge("ca", "export", "--out", out.path)
        #expect(again.status == 0, "an earlier export is forge's own: \(again.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).count == 13)
    }
}
