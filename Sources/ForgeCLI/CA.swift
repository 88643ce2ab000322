import ArgumentParser
import Foundation
import ForgeCrypto
import ReceiptForge
import ForgeSupport
import StoreModel

struct CA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Manage TEST certificate sets: export the compiled-in trust anchors, or create a fresh set.",
        subcommands: [Export.self, Init.self])

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write the compiled-in trust anchors (PEM and DER) and a README saying which to trust for what.",
            discussion: """
                Writes, for each anchor, <file>.pem and <file>.der, plus README.txt:
                \(BundledAnchor.allCases.map { "  \($0.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) \($0.fileStem).pem/.der: \($0.use)" }.joined(separator: "\n"))
                The same names work wherever forge takes a root (--root receipt, --root jws, …), from any directory. The folder is written whole (staged, then swapped in): it must be new, empty or an earlier export; anything else refuses (exit 73), naming the entry. TEST ONLY: never trust these in production.
                """)

        @Option(help: ArgumentHelp("Directory to write the anchors into.", valueName: "dir"))
        var out: String

        func run() throws {
            var files: [(String, Data)] = []
            var readme = Self.readmeIntro
            do throws(ForgeError) {
                for anchor in BundledAnchor.allCases {
                    let certificate = try anchor.certificate()
                    files.append((anchor.fileStem + ".pem", Data(certificate.pemRepresentation.utf8)))
                    files.append((anchor.fileStem + ".der", Data(certificate.derRepresentation)))
                    readme += Self.readmeEntry(anchor, certificate)
                }
            } catch { throw fail(error.message, Exit.software) }
            files.append((Self.readmeName, Data(readme.utf8)))
            let interrupts = Interrupts.discardStagedOnSignal()
            let folder: StagedFolder
            do {
                folder = try StagedFolder(replacing: URL(fileURLWithPath: out)) { _ in Set(Self.fileNames) }
                interrupts.guarding(folder)
                defer { folder.discard() }
                for (name, data) in files { try folder.write(data, to: name) }
                if let left = try folder.commit() { note("files appeared in the old \(out) meanwhile; they are in \(left.path)") }
            } catch { throw fail(error.message, Exit.cannotCreate) }
            for anchor in BundledAnchor.allCases { print("\(out)/\(anchor.fileStem).pem  --root \(anchor.rawValue)") }
        }

        static let readmeName = "README.txt"

        /// Every file an export writes: what an earlier export in the folder consists of.
        static var fileNames: [String] { BundledAnchor.allCases.flatMap { [$0.fileStem + ".pem", $0.fileStem + ".der"] } + [readmeName] }

        static let readmeIntro = """
            receipt-forge TEST trust anchors -- TEST ONLY, NOT APPLE

            These are the certificates forge signs with, written by `forge ca export`. Trust them in the tests of
            the code under test, never in production: their private keys are public on purpose. Each is here as
            PEM (.pem) and DER (.der); forge itself takes the name in the first column (--root jws) from any
            directory.

            On-device receipt validation (StoreKit 1 receipts, OpenSSL/ASN.1 code): trust root.der
              (or root.pem) in place of Apple Root CA; for xcode-* receipts pin storekit.der instead.
            Server JWS verification (StoreKit 2, App Store Server Library): pass jws-root-g3.der to
              SignedDataVerifier(root_certificates=[...]) in place of Apple Root CA - G3. Apple's verifier
              skips verification for Environment.XCODE; a verifier that checks Xcode JWS pins jws-xcode.der.
            Xcode: receipts made with an xcode-* preset chain to storekit.pem, JWS to jws-xcode.pem, as
              Xcode's own StoreKit testing certificates do.
            verifyReceipt (forge serve): judges receipts under root.pem; with --tls its serving certificate
              is issued by root.pem, so an HTTPS client trusts root.pem.


            """

        static func readmeEntry(_ anchor: BundledAnchor, _ certificate: X509Certificate) -> String {
            let fingerprint = certificate.sha256Fingerprint.map { String($0, radix: 16, uppercase: true).leftPadded(2) }.joined(separator: ":")
            return """
                --root \(anchor.rawValue): \(anchor.fileStem).pem, \(anchor.fileStem).der (\(anchor.repositoryPath) in the repository)
                  for \(anchor.use)
                  the corpus's anchor \(anchor.corpusID) (Vectors/anchors/\(anchor.corpusID).der; a vector's context.trustAnchor)
                  subject \(certificate.subject)
                  valid \(ReceiptDate.format(certificate.notBefore)) to \(ReceiptDate.format(certificate.notAfter))
                  SHA-256 \(fingerprint)


                """
        }
    }

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
