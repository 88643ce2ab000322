import Foundation
import ForgeCrypto
import ForgeTestSupport
import Testing

/// The `openssl` command-line tool (``Oracle/openssl``), used as an independent oracle for what ForgeCrypto
/// produces: a folder of its own for the files it reads and writes. Tests that use it say `.requires(.openssl)`.
struct OpenSSLCommandLine {
    /// What one `openssl` invocation printed (stdout, then stderr) and how it exited.
    struct Outcome {
        let exitStatus: Int32
        let output: String
    }

    /// A fresh directory for the files handed to `openssl`.
    let directory: URL

    init() throws {
        directory = try temporaryDirectory()
    }

    /// Writes `contents` to `name` inside ``directory`` and returns the file's path.
    @discardableResult
    func write(_ contents: some DataProtocol, to name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(contents).write(to: url)
        return url.path
    }

    /// Writes UTF-8 `text` to `name` inside ``directory`` and returns the file's path.
    @discardableResult
    func write(_ text: String, to name: String) throws -> String {
        try write(Data(text.utf8), to: name)
    }

    /// Reads back a file that `openssl` wrote into ``directory``.
    func read(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    /// Runs `openssl arguments…` with ``directory`` as working directory.
    func run(_ arguments: String...) async throws -> Outcome {
        try await run(arguments)
    }

    /// Runs `openssl arguments…` with ``directory`` as working directory, without blocking a thread.
    func run(_ arguments: [String]) async throws -> Outcome {
        let result = try await ForgeTestSupport.run(try Oracle.openssl.required(), arguments, in: directory)
        return Outcome(exitStatus: result.status, output: result.text + result.stderr)
    }

    /// Removes ``directory`` and everything in it.
    func removeDirectory() {
        try? FileManager.default.removeItem(at: directory)
    }
}

extension Array where Element == UInt8 {
    /// Parses lowercase or uppercase hex, ignoring spaces; for writing expected bytes in tests.
    init(hex: String) {
        let digits = Array(hex.replacingOccurrences(of: " ", with: "").utf8)
        self = stride(from: 0, to: digits.count, by: 2).map { index in
            UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)!
        }
    }

    /// Lowercase hex, for comparing with `openssl` output.
    var hex: String {
        map { String(format: "%02x", $0) }.joined()
    }
}

/// Expects `body` to throw a ``ForgeCryptoError`` whose code is `code`.
func expectForgeCryptoError<Result>(
    _ code: ForgeCryptoError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Result
) {
    let error = #expect(throws: ForgeCryptoError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
}
