import Foundation
import ForgeTestSupport
import Testing

/// A harness may say anything. Every character XML 1.0 forbids (C0 controls but tab, LF and CR; U+FFFE and U+FFFF;
/// lone surrogates), and those HTML forbids besides (DEL, C1 controls, the other noncharacters), reaches the JUnit
/// and HTML reports as U+FFFD: the JUnit XML stays well-formed to an independent parser (Python's expat; Python is the harness too).
@Suite(.timeLimit(.minutes(2)), .requires(.python))
struct ReportCharacterTests {
    static let vectors = Repository.vectors.path

    /// Said in every message, one of each forbidden class, as Python's JSON escapes it. A lone surrogate (`\ud800`) is
    /// not JSON a reply can carry (the reply is refused whole); it arrives as raw bytes on a line that is not JSON.
    static let said =
        #""C0 \u0001\u0008\u000b\u000c\u001f DEL \u007f C1 \u0080\u0085\u009f nonchar \ufdd0\ufdef\ufffe\uffff \U0001fffe\U0010ffff tab\tok""#

    /// A stdio harness that accepts (so invalid vectors fail with its message), skips, errors, and prints a line that is
    /// not JSON (the raw text, a lone surrogate's UTF-8 bytes and a NUL with it), in turn.
    static func harness(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("says.py")
        try """
        import json, sys
        said = \(said)
        for line in sys.stdin:
            message = json.loads(line)
            if message["type"] == "hello":
                print(json.dumps({"type": "hello", "protocol": 1, "implementation": "says " + said, "features": [], "errorGranularity": "none",
                                  "clockInjection": True, "maxConcurrency": 1}), flush=True)
            elif message["type"] == "validate":
                seq = message["seq"]
                kind = seq % 4
                if kind == 3:
                    sys.stdout.buffer.write(b"raw " + said.encode() + b" lone \\xed\\xa0\\x80 nul \\x00 end\\n")
                    sys.stdout.flush()
                    continue
                reply = ({"type": "result", "seq": seq, "verdict": "accept", "message": said} if kind == 0
                         else {"type": "skipped", "seq": seq, "reason": said} if kind == 1
                         else {"type": "errored", "seq": seq, "message": said})
                print(json.dumps(reply), flush=True)
            else:
                break
        """.write(to: file, atomically: true, encoding: .utf8)
        return "stdio:\(try Oracle.python.required().path) \(file.path)"
    }

    /// A code point XML 1.0 or HTML forbids in a document (tab, LF and CR are allowed), by the specifications' lists.
    static func forbidden(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value == 0x9 || value == 0xA || value == 0xD { return false }
        return value < 0x20 || (0x7F...0x9F).contains(value) || (0xFDD0...0xFDEF).contains(value) || value % 0x10000 >= 0xFFFE
    }

    @Test("JUnit XML parses with xml.dom.minidom and holds no forbidden character; the HTML report holds none either; each became U+FFFD")
    func forbiddenCharacters() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let junit = directory.appendingPathComponent("junit.xml"), html = directory.appendingPathComponent("report.html")
        let ran = try await forge(arguments: [
            "run", "--vectors", Self.vectors, "--target", try Self.harness(in: directory), "--run", "chain::*", "--junit", junit.path, "--html", html.path,
        ])
        #expect(ran.exited && [1, 2].contains(ran.status), "\(ran.text)\(ran.stderr)")
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(xml.contains("<failure") && xml.contains("<skipped") && xml.contains("<error"), "every place a message goes: \(xml.prefix(2000))")
        #expect(xml.contains("tab\tok") && xml.contains("C0 \u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD} DEL"), "replaced visibly")

        let parsed = try await run(
            try Oracle.python.required(),
            ["-c", "import sys, xml.dom.minidom; d = xml.dom.minidom.parse(sys.argv[1]); print(len(d.getElementsByTagName('testcase')))", junit.path])
        #expect(parsed.status == 0 && Int(parsed.text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0, "not well-formed: \(parsed.stderr)")

        let page = try String(contentsOf: html, encoding: .utf8)
        for (name, text) in [("JUnit", xml), ("HTML", page)] {
            let found = Set(text.unicodeScalars.filter(Self.forbidden).map { String($0.value, radix: 16) })
            #expect(found.isEmpty, "\(name) holds U+\(found.sorted())")
        }
        #expect(page.contains("nonchar \u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD} \u{FFFD}\u{FFFD}"), "the noncharacters replaced in the HTML")
    }
}
