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
            if jws { return try create(CertificateSet<JWSRole>.self) { role, _ in "\(out)/\(role.fileStem).pem" } }
            try create(CertificateSet<CertificateRole>.self) { role, credential in "\(out)/\(role.fileStem).pem  \(credential.certificate.subject)" }
        }

        /// A fresh set of either vocabulary, written by the one writer (atomic, refuses existing files without --force).
        private func create<Role: PKIRole>(_: CertificateSet<Role>.Type, listing line: (Role, Credential<Role.Key>) -> String) throws {
            do throws(ForgeError) {
                let pki = try CertificateSet<Role>.generate()
                try pki.write(to: URL(fileURLWithPath: out), overwrite: force)
                for role in Role.allCases { print(line(role, pki[role])) }
            } catch {
                throw fail(error.code == .wouldOverwrite ? error.message + "; pass --force to replace them" : error.message, Exit.code(for: error))
            }
        }
    }
}
