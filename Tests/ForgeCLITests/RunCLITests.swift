import Foundation
import Testing

@Suite("forge run through the binary, against real second processes")
struct RunCLITests {
    @Test("swift:reference is conformant; results.json and JUnit name every vector")
    func reference() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let results = directory.appendingPathComponent("results.json"), junit = directory.appendingPathComponent("junit.xml")
        let run = try forge("run", "--target", "swift:reference", "--profile", "apple-compatible", "--vectors", repositoryRoot.appendingPathComponent("Vectors").path,
                            "--results", results.path, "--junit", junit.path)
        #expect(run.status == 0, "\(run.text)\(run.stderr)")
        #expect(run.text.contains("160 vectors") && run.text.contains("conformant (exit 0)"))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])
        #expect((parsed["results"] as? [Any])?.count == 160)
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.components(separatedBy: "<testcase ").count - 1 == 160)
        #expect(xml.contains(#"name="chain::foreign-root""#))
    }

    @Test("exit: the openssl harness passes signature checks, and its false accepts are reported with exit 1")
    func opensslHarness() throws {
        let run = try forge("run", "--target", "exit:\(repositoryRoot.appendingPathComponent("examples/openssl-harness.sh").path)", "--run", "signature::*",
                            "--run", "valid::appstore-no-purchases", "--vectors", repositoryRoot.appendingPathComponent("Vectors").path, "--profile", "apple-compatible")
        #expect(run.status == 1, "\(run.text)\(run.stderr)")
        for id in ["signature::md5", "signature::two-signer-infos", "signature::sha1-with-rsa-signer-oid-sha256-digest"] {
            #expect(run.text.contains("FALSE_ACCEPT     \(id)"), "\(id)")
        }
        #expect(!run.text.contains("FALSE_ACCEPT     signature::appstore-payload-bit-flip"))
    }

    @Test("A harness that rejects everything stops at the canaries with exit 2 and a diagnosis")
    func canaries() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("reject.sh")
        try "#!/bin/sh\ncat > /dev/null\necho chain.untrusted\nexit 1\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let run = try forge("run", "--target", "exit:\(script.path)", "--vectors", repositoryRoot.appendingPathComponent("Vectors").path)
        #expect(run.status == 2)
        #expect(run.text.contains("CANARIES FAILED") && run.text.contains("trust anchor"))
    }

    @Test("Hanging and crashing harnesses become TIMEOUT and CRASH, the run goes on, exit 2, nothing left running")
    func hostile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("hostile.sh")
        // Accepts canaries and valid vectors, hangs on chain vectors, crashes on signature vectors.
        try """
        #!/bin/sh
        cat > /dev/null
        case "$RF_ID" in
          chain::*) sleep 30 ;;
          signature::*) kill -SEGV $$ ;;
        esac
        exit 0
        """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let results = directory.appendingPathComponent("results.json")
        let outcome = try forge("run", "--target", "exit:\(script.path)", "--run", "valid::*", "--run", "chain::foreign-root", "--run", "signature::md5",
                            "--timeout", "2", "--vectors", repositoryRoot.appendingPathComponent("Vectors").path, "--results", results.path)
        #expect(outcome.status == 2, "\(outcome.text)")
        #expect(outcome.text.contains("TIMEOUT          chain::foreign-root"))
        #expect(outcome.text.contains("CRASH            signature::md5"))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: results)) as? [String: Any])
        #expect((parsed["results"] as? [Any])?.count == 22)
        let leftovers = try run(URL(fileURLWithPath: "/usr/bin/pgrep"), ["-f", "sleep 30"])
        #expect(leftovers.text.isEmpty, "a hung harness process survived the run")
    }

    @Test("Bad arguments exit 64")
    func usage() throws {
        #expect(try forge("run", "--target", "ftp://nowhere").status == 64)
        #expect(try forge("run", "--target", "swift:reference", "--profile", "nope", "--vectors", repositoryRoot.appendingPathComponent("Vectors").path).status == 64)
    }
}
