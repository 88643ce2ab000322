import Foundation
import ForgeTestSupport
import Testing

/// `--root receipt|storekit|jws|jws-xcode`: the compiled-in anchors by name, from any directory, wherever a root
/// file is taken; the Xcode hints name the exact flags (issue 21, item 8).
@Suite("Named roots", .timeLimit(.minutes(2)))
struct NamedRootTests {
    static let now = "2025-01-01T00:00:00Z"

    @Test("--root jws and --root receipt validate from a directory outside the clone; a wrong name exits 66 listing the names")
    func namesWorkOutsideTheClone() async throws {
        try await withTemporaryDirectory { directory in  // outside the clone
            #expect(try await forge("jws", "make", "transaction", "--product", "pro.monthly", "--now", Self.now, "-q", "-o", "t.jws", in: directory).status == 0)
            #expect(try await forge("make", "--product", "pro.monthly", "--now", Self.now, "-q", "-o", "r.der", in: directory).status == 0)
            let jws = try await forge("jws", "validate", "t.jws", "--root", "jws", in: directory)
            #expect(jws.status == 0 && jws.text.hasPrefix("valid"), "\(jws.text)\(jws.stderr)")
            let receipt = try await forge("validate", "r.der", "--root", "receipt", in: directory)
            #expect(receipt.status == 0 && receipt.text.hasPrefix("valid"), "\(receipt.text)\(receipt.stderr)")
            // The wrong anchor: chain.untrusted, and the hint names the right one.
            let wrong = try await forge("jws", "validate", "t.jws", "--root", "receipt", in: directory)
            #expect(wrong.status == 1 && wrong.text.contains("chain.untrusted") && wrong.stderr.contains("pass --root jws"), "\(wrong.text)\(wrong.stderr)")
            let unknown = try await forge("validate", "r.der", "--root", "jwss", in: directory)
            #expect(unknown.status == 66, "exit \(unknown.status)")
            #expect(unknown.stderr.contains("receipt, storekit, jws, jws-xcode") && unknown.stderr.split(separator: "\n").count == 1, "\(unknown.stderr)")
            // A file path still works, and a file named like an anchor is reached as ./NAME.
            #expect(try await forge("ca", "export", "--out", "anchors", in: directory).status == 0)
            #expect(try await forge("jws", "validate", "t.jws", "--root", "anchors/jws-root-g3.der", in: directory).status == 0)
            try FileManager.default.copyItem(at: directory.appendingPathComponent("anchors/jws-root-g3.pem"), to: directory.appendingPathComponent("jws"))
            #expect(try await forge("jws", "validate", "t.jws", "--root", "./jws", in: directory).status == 0)
        }
    }

    @Test("An xcode-* receipt under the default root: the hint names --root storekit, and that flag accepts it")
    func xcodeReceiptHint() async throws {
        try await withTemporaryDirectory { directory in  // outside the clone
            #expect(try await forge("make", "--product", "pro.monthly", "--preset", "xcode-2023", "--now", Self.now, "-q", "-o", "x.der", in: directory).status == 0)
            let rejected = try await forge("validate", "x.der", in: directory)
            #expect(rejected.status == 1 && rejected.stderr.contains("pass --root storekit"), "\(rejected.text)\(rejected.stderr)")
            #expect(try await forge("validate", "x.der", "--root", "storekit", in: directory).status == 0)
            // inspect takes the same names.
            #expect(try await forge("inspect", "x.der", "--root", "storekit", in: directory).text.contains("verdict: valid"))
        }
    }

    @Test("An Xcode JWS read as Apple's: the hint names --environment Xcode --root jws-xcode, and those flags accept it")
    func xcodeJWSHint() async throws {
        try await withTemporaryDirectory { directory in  // outside the clone
            #expect(
                try await forge("jws", "make", "transaction", "--product", "pro.monthly", "--preset", "xcode-2023", "--now", Self.now, "-q", "-o", "x.jws", in: directory).status
                    == 0)
            let rejected = try await forge("jws", "validate", "x.jws", in: directory)
            #expect(rejected.status == 1 && rejected.stderr.contains("pass --environment Xcode --root jws-xcode"), "\(rejected.text)\(rejected.stderr)")
            #expect(try await forge("jws", "validate", "x.jws", "--environment", "Xcode", "--root", "jws-xcode", in: directory).status == 0)
            let wrongRoot = try await forge("jws", "validate", "x.jws", "--environment", "Xcode", "--root", "jws", in: directory)
            #expect(wrongRoot.status == 1 && wrongRoot.stderr.contains("pass --root jws-xcode"), "\(wrongRoot.stderr)")
        }
    }

    @Test("forge serve takes the names too: an unknown one exits 66 listing them before anything listens")
    func serveTakesNames() async throws {
        let result = try await run(Binaries.forge, ["serve", "--listen", "127.0.0.1:0", "--root", "nope"], killAfter: .seconds(30))
        #expect(result.exited && result.status == 66, "exit \(result.status): \(result.stderr)")
        #expect(result.stderr.contains("receipt, storekit, jws, jws-xcode"))
        let help = try await forge("serve", "--help")
        #expect(!help.text.contains("Certificates/root.pem"), "serve --help names the anchor, not a path of the clone")
    }
}
