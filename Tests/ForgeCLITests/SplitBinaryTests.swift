import Foundation
import ForgeTestSupport
import Testing
import _ForgeSupport
import StoreModel

/// `forge` links no network code; `forge-http` does, and `forge` hands HTTP work over to it.
@Suite("forge and forge-http", .timeLimit(.minutes(2)))
struct SplitBinaryTests {
    /// Whether the executable holds Swift symbols of module `module` (mangled as `<length><name>`).
    private func links(_ binary: URL, _ module: String) throws -> Bool {
        let bytes = try Data(contentsOf: binary)
        return bytes.range(of: Data("\(module.count)\(module)".utf8)) != nil
    }

    @Test("forge has none of swift-nio or TLS in it; forge-http has them, its TLS on the system's OpenSSL: no NIOSSL (BoringSSL) and no AsyncHTTPClient")
    func noNetworkInForge() throws {
        for module in ["NIOCore", "NIOPosix", "ForgeTLS"] {
            #expect(try !links(Binaries.forge, module), "forge links \(module)")
            #expect(try links(Binaries.forgeHTTP, module), "forge-http does not link \(module)")
        }
        for module in ["NIOSSL", "AsyncHTTPClient"] { #expect(try !links(Binaries.forgeHTTP, module), "forge-http links \(module)") }
    }

    @Test("without forge-http, an HTTP target is exit 69 naming the build command; nothing else needs it")
    func missingHelper() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let alone = directory.appendingPathComponent("forge")
        try FileManager.default.copyItem(at: Binaries.forge, to: alone)
        let environment = ["PATH": "/usr/bin:/bin", "HOME": directory.path]
        let vectors = Repository.vectors.path
        let remote = try await run(alone, ["run", "--vectors", vectors, "--target", "http://127.0.0.1:9"], environment: environment)
        #expect(remote.status == 69)
        #expect(remote.stderr.contains("swift build --product forge-http"), "\(remote.stderr)")
        let listen = try await run(alone, ["validate", "--listen", "127.0.0.1:0", "--vectors", vectors], environment: environment)
        #expect(listen.status == 69)
        let local = try await run(alone, ["run", "--vectors", vectors, "--target", "swift:reference", "--quiet", "--run", "valid::*"], environment: environment)
        #expect(local.status == 0, "\(local.text)\(local.stderr)")
        let made = try await run(alone, ["make", "--product", "com.example.pro", "-o", directory.appendingPathComponent("r.der").path], environment: environment)
        #expect(made.status == 0, "\(made.stderr)")
    }

    @Test("forge-http answers the same command line as forge")
    func sameCommands() async throws {
        let forgeHelp = try await run(Binaries.forge, ["--help"])
        let helperHelp = try await run(Binaries.forgeHTTP, ["--help"])
        #expect(forgeHelp.status == 0 && helperHelp.status == 0)
        #expect(forgeHelp.text == helperHelp.text)
    }
}
