import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

/// The published known-results matrix (Documentation/runner.md) is the output of `scripts/known-results.sh`;
/// these tests run the same script for one validator at a time and compare its row and its column of the
/// per-family table with the published ones, so the figures cannot silently rot. Each validator is an oracle: its test
/// runs when it is installed (`openssl` on PATH; the Python ones in their venvs under `.oracles/`, which `.ci/run`
/// installs) and is skipped, saying what installs it, when it is not.
/// The rows run side by side; the ones that need 127.0.0.1:6960, the one port `online` vectors name, are in
/// ``Online``, one at a time.
@Suite("Known results of real validators", .timeLimit(.minutes(2)))
struct KnownResultsTests {
    static let oracles = Repository.file(".oracles")

    /// The page the script writes the matrix into.
    static let published = Repository.file("Documentation/runner.md")

    /// The validators' venvs, which `.ci/run` installs (`scripts/known-results.sh --install-only .oracles`).
    static let aprvVenv = Oracle.venv("aprv", "apple-purchase-receipt-verifier")
    static let iapVenv = Oracle.venv("iap", "iap_local_receipt")

    /// Bounds the script's run with a signal forge run handles.
    static let timeout = Oracle.tool("timeout", installedBy: "apt-get install coreutils")

    /// vapor/jwt-kit's harness, which `.ci/run` builds into `.oracles/jwtkit` (no venv: a Swift binary).
    static let jwtkitHarness = oracles.appendingPathComponent("jwtkit/debug/jwtkit-harness")

    @Test("openssl cms -verify: the published row and column are what the script measures now", .requires(.openssl))
    func openssl() async throws { try await check("openssl") }

    @Test("apple-purchase-receipt-verifier: the published row and column hold", .requires(aprvVenv))
    func aprv() async throws { try await check("aprv") }

    @Test("iap_local_receipt: the published row and column hold", .requires(iapVenv))
    func iap() async throws { try await check("iap") }

    @Test("app-store-server-library ReceiptUtility: the published row and column hold", .requires(.appleLibrary))
    func asl() async throws { try await check("asl") }

    @Test(
        "app-store-server-library ReceiptUtility on iOS 6 transaction receipts (extract only): the published row and column hold",
        .requires(.appleLibrary))
    func aslTransactionReceipts() async throws { try await check("asl-tr") }

    /// vapor/jwt-kit's X5CVerifier, built from the package mirror by the script (`.ci/run` builds it).
    @Test(
        "vapor/jwt-kit X5CVerifier (StoreKit 2 JWS): the published row and column hold",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: jwtkitHarness.path),
            "vapor/jwt-kit's harness is absent: .ci/run builds it into .oracles/jwtkit (scripts/known-results.sh --install-only .oracles)"))
    func jwtkit() async throws { try await check("jwtkit") }

    /// An `exit:` harness that checks revocation only, with `openssl ocsp` (python3's standard library splits the JWS):
    /// the intermediate, then the leaf, each at the URL its AIA names, answers verified under the vector's anchor.
    /// An independent client of the responder that `forge run` starts for `online` vectors.
    static let opensslOCSPHarness = """
        import base64, json, os, subprocess, sys, tempfile, textwrap
        chain = json.loads(base64.urlsafe_b64decode(sys.stdin.read().strip().split(".")[0] + "=="))["x5c"]
        folder = tempfile.mkdtemp()
        def pem(text, name):
            path = os.path.join(folder, name)
            with open(path, "w") as file:
                file.write("-----BEGIN CERTIFICATE-----\\n" + "\\n".join(textwrap.wrap(text, 64)) + "\\n-----END CERTIFICATE-----\\n")
            return path
        leaf, intermediate = pem(chain[0], "leaf.pem"), pem(chain[1], "intermediate.pem")
        root = os.path.join(folder, "root.pem")
        subprocess.run(["openssl", "x509", "-inform", "DER", "-in", os.environ["RF_TRUST_ANCHOR"], "-out", root], check=True)
        for certificate, issuer in [(intermediate, root), (leaf, intermediate)]:
            url = subprocess.run(["openssl", "x509", "-in", certificate, "-noout", "-ocsp_uri"], capture_output=True, text=True).stdout.strip()
            if not url:
                print("chain.revocation-unknown"); sys.exit(1)
            asked = subprocess.run(
                ["openssl", "ocsp", "-issuer", issuer, "-cert", certificate, "-url", url, "-CAfile", root, "-timeout", "10"], capture_output=True, text=True)
            said = asked.stdout + asked.stderr
            if asked.returncode != 0 or "Response verify OK" not in said or certificate + ": good" not in said or "WARNING" in said:
                print("chain.revoked" if certificate + ": revoked" in said else "chain.revocation-unknown"); sys.exit(1)
        """

    /// Runs the script for `name` into a scratch folder (the installed venv linked in), on a copy of the
    /// published page, and compares the two matrices for that validator.
    func check(_ name: String) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let scratch = directory.appendingPathComponent("oracles")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        if name != "openssl" {
            let venv = name == "asl-jws" || name == "asl-tr" ? "asl" : name  // the JWS and transaction-receipt rows run in asl's venv
            try FileManager.default.createSymbolicLink(at: scratch.appendingPathComponent(venv), withDestinationURL: Self.oracles.appendingPathComponent(venv))
        }
        let page = directory.appendingPathComponent("runner.md")
        try FileManager.default.copyItem(at: Self.published, to: page)
        let script = Repository.file("scripts/known-results.sh")
        // An overrun ends with SIGTERM to the script's whole group (timeout's), so forge run stops what it started: its
        // OCSP responder is a process group of its own, which a SIGKILL of the run would leave holding 127.0.0.1:6960.
        let ran = try await run(
            try Self.timeout.required(),
            ["-s", "TERM", "-k", "5", "100", "/bin/bash", script.path, "--forge", Binaries.forge.path, "--only", name, "--doc", page.path, scratch.path],
            deadline: .seconds(110))
        let failure = ran.status == 124 ? "scripts/known-results.sh --only \(name) did not end within 100 s: \(ran.stderr.suffix(2000))" : ran.stderr
        guard ran.status == 0 else { throw ScriptFailed(description: "exit \(ran.status): \(failure)") }

        let published = try Self.matrix(String(contentsOf: Self.published, encoding: .utf8))
        let measured = try Self.matrix(String(contentsOf: page, encoding: .utf8))
        let row = try #require(measured.rows[name], "the script wrote no row for \(name): \(measured.rows.keys)")
        #expect(published.rows[name] == row, "published row for \(name) is stale: published \(published.rows[name] ?? []), measured \(row); run scripts/known-results.sh .oracles")
        for (family, cells) in measured.families {
            #expect(published.families[family]?[name] == cells[name], "published cell \(family)/\(name) is stale: measured \(cells[name] ?? "-")")
        }
        // The families of what the row judged: two of transaction receipts, ten and more of the other artefacts.
        #expect(measured.families.count >= (name == "asl-tr" ? 2 : 10))
    }

    struct ScriptFailed: Error, CustomStringConvertible { let description: String }

    /// The known-results matrix between the page's markers: each validator's counts (every column but
    /// the time) and each family's cell per validator.
    static func matrix(_ text: String) throws -> (rows: [String: [String]], families: [String: [String: String]]) {
        let section = try #require(
            text.range(of: "<!-- known-results:begin -->").flatMap { begin in
                text.range(of: "<!-- known-results:end -->", range: begin.upperBound..<text.endIndex).map { text[begin.upperBound..<$0.lowerBound] }
            }, "no known-results markers")
        var rows: [String: [String]] = [:], families: [String: [String: String]] = [:]
        var header: [String] = []
        for line in section.split(separator: "\n") where line.hasPrefix("|") && !line.hasPrefix("|---") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = cells.first else { continue }
            if first == "validator" || first == "family" { header = cells; continue }
            if header.first == "validator" {
                rows[first] = Array(cells.dropFirst().dropLast())  // the time varies from run to run
            } else if header.first == "family" {
                let family = String(first.prefix { $0 != " " })
                families[family] = Dictionary(zip(header.dropFirst(), cells.dropFirst()).map { ($0, $1) }, uniquingKeysWith: { first, _ in first })
            }
        }
        return (rows, families)
    }
}

extension KnownResultsTests {
    /// What needs 127.0.0.1:6960 free, one at a time: the asl-jws row (its `online` vectors), the runner's responder
    /// test and ``OnlineResponderPortTests`` (nested here for that reason).
    @Suite("Known results that need the online vectors' port", .serialized, .timeLimit(.minutes(2)))
    struct Online {
        /// Apple's SignedDataVerifier over the whole StoreKit 2 corpus: the outcome counts are the published row.
        @Test("app-store-server-library SignedDataVerifier (StoreKit 2 JWS): the published row and column hold", .requires(.appleLibrary))
        func aslJWS() async throws { try await KnownResultsTests().check("asl-jws") }

        @Test(
            "forge run starts the OCSP responder online vectors name: an openssl ocsp harness declaring online and swift:reference-online pass every jws-online vector; undeclared they SKIP; with 127.0.0.1:6960 taken they SKIP saying so; either is exit 2",
            .requires(.python, .openssl))
        func onlineVectorsThroughTheRunner() async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let harness = directory.appendingPathComponent("ocsp-harness.py")
            try KnownResultsTests.opensslOCSPHarness.write(to: harness, atomically: true, encoding: .utf8)
            let results = directory.appendingPathComponent("results.json")
            // Judged (0), or nothing judged: every vector SKIP, undeclared or for want of the responder (2).
            let python = try Oracle.python.required().path
            func outcomes(_ features: String, status: Int32 = 0) async throws -> [(id: String, outcome: String, message: String)] {
                let ran = try await forge(
                    "run", "--target", "exit:\(python) \(harness.path)", "--artifacts", "jws", "--features", features, "--granularity", "coarse", "--run", "jws-online::*",
                    "--results", results.path, "--quiet")
                #expect(ran.status == status, "\(ran.text)\(ran.stderr)")
                let parsed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])
                return try #require(parsed["results"] as? [[String: Any]]).map {
                    ($0["id"] as? String ?? "", $0["outcome"] as? String ?? "", $0["message"] as? String ?? "")
                }
            }
            let judged = try await outcomes("online")
            #expect(judged.count == 16 && judged.allSatisfy { ["PASS", "ACCEPTABLE"].contains($0.outcome) }, "\(judged)")
            #expect(judged.filter { $0.outcome == "ACCEPTABLE" }.map(\.id) == ["jws-online::leaf-no-next-update", "jws-online::leaf-no-ocsp"], "\(judged)")
            // The reference verifier with online checks, at fine granularity: every error class as expected.
            let reference = try await forge("run", "--target", "swift:reference-online", "--artifacts", "jws", "--run", "jws-online::*", "--results", results.path, "--quiet")
            #expect(reference.status == 0, "\(reference.text)\(reference.stderr)")
            let referenceResults = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])["results"] as? [[String: Any]]
            #expect(referenceResults?.count == 16 && referenceResults?.allSatisfy { ["PASS", "ACCEPTABLE"].contains($0["outcome"] as? String) } == true)
            let undeclared = try await outcomes("", status: 2)
            #expect(undeclared.allSatisfy { $0.outcome == "SKIP" && $0.message.contains("feature not declared by the harness: online") }, "\(undeclared)")
            let squatter = try await BackgroundServer.start(["serve", "--listen", "127.0.0.1:6960"])
            defer { squatter.kill() }
            let taken = try await outcomes("online", status: 2)
            #expect(
                taken.allSatisfy { $0.outcome == "SKIP" && $0.message.contains("the OCSP responder on 127.0.0.1:6960 could not start") && $0.message.contains("in use") },
                "\(taken)")
            await squatter.stop()  // the port is free again before the next test of the suite
        }
    }
}
