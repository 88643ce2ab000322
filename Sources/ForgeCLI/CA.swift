import ArgumentParser
import Foundation
import ForgeCrypto
import ReceiptForge
import ForgeSupport
import StoreModel

struct CA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Manage TEST certificate sets.",
        subcommands: [Init.self])

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Create a fresh Apple-shaped TEST PKI (new RSA-2048 keys) in a directory.",
            discussion: """
                Writes root, WWDR-like intermediates (G5 and SHA-1 era), receipt-signing leaves, an Xcode-like StoreKit certificate and a foreign root, each as <name>.pem and <name>.key.pem, plus a README with fingerprints. Use it with `forge make --certificates DIR`. Refuses to replace existing files unless --force. These are TEST credentials: the keys are not protected.
                """)

        @Option(help: ArgumentHelp("Directory to create the set in.", valueName: "dir"))
        var out: String
        @Flag(help: "Replace existing files.")
        var force = false
        @Flag(
            help:
                "The EC set that signs StoreKit 2 JWS instead (P-384 root and intermediate, P-256 leaf, Xcode-like P-256): jws-*.pem and jws-*.key.pem, for `forge jws make --jws-certificates DIR`."
        )
        var jws = false

        func run() throws {
            let directory = URL(fileURLWithPath: out)
            if jws { return try writeJWS(to: directory) }
            do {
                let pki = try TestPKI.generate()
                try pki.write(to: directory, overwrite: force)
                for role in CertificateRole.allCases { print("\(out)/\(role.fileStem).pem  \(pki[role].certificate.subject)") }
            } catch {
                throw fail(error.message, Exit.code(for: error))
            }
        }

        private func writeJWS(to directory: URL) throws {
            do {
                let files = try JWSTestPKI.generate().files()
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                for name in files.keys.sorted() {
                    let url = directory.appendingPathComponent(name)
                    if !force, FileManager.default.fileExists(atPath: url.path) { throw fail("\(url.path) exists; --force replaces it", Exit.cannotCreate) }
                    try Data((files[name] ?? "").utf8).write(to: url)
                }
                for role in JWSRole.allCases { print("\(out)/\(role.fileStem).pem") }
            } catch let error as ForgeError {
                throw fail(error.message, Exit.software)
            }
        }
    }
}
