import ReceiptConformance
import Testing
import _ForgeSupport

@Suite("Targets, parsed once", .timeLimit(.minutes(2)))
struct TargetTests {
    @Test("Each form parses to its kind, command words or address; the text is kept for reports")
    func forms() throws {
        let swift = try Target("swift:reference")
        #expect(swift.kind == .swift && swift.address == "reference" && swift.command.isEmpty)
        let exec = try Target(#"exec:python3 "my harness.py" --strict"#)
        #expect(exec.kind == .exec && exec.command == ["python3", "my harness.py", "--strict"] && exec.defaultTimeout == 5)
        #expect(try Target("exit:./a.sh").kind == .exit)
        let stdio = try Target("stdio:forge validate --harness")
        #expect(stdio.kind == .stdio && stdio.command == ["forge", "validate", "--harness"] && stdio.defaultTimeout == 2)
        for url in ["http://127.0.0.1:8080/verifyReceipt", "https://example.invalid"] {
            let http = try Target(url)
            #expect(http.kind == .http && http.address == url && http.description == url)
        }
    }

    @Test("Malformed targets are refused with the forms a target may take")
    func malformed() {
        for text in ["reference", "ftp://x", "http:x", "swift:", "exec:'unterminated", "nope:cmd", ""] {
            do {
                _ = try Target(text)
                Issue.record("'\(text)' was accepted")
            } catch {
                #expect(error.code == .invalidCommand, "\(text)")
            }
        }
    }
}
