import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import StoreForge
import StoreServer
import _ForgeSupport
import StoreModel

struct CA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Manage TEST certificate sets: export the compiled-in trust anchors, or create a fresh set.",
        subcommands: [Export.self, Init.self, APIKey.self])

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write the compiled-in trust anchors (PEM and DER) and a README saying which to trust for what.",
            discussion: """
                Writes, for each anchor, <file>.pem and <file>.der, plus README.txt:
                \(BundledAnchor.allCases.map { "  \($0.rawValue.paddedColumn(10)) \($0.fileStem).pem/.der: \($0.use)" }.joined(separator: "\n"))
                The same names work wherever forge takes a root (--root receipt, --root jws, …), from any directory. The folder is written whole (staged, then swapped in): it must be new, empty or an earlier export; anything else refuses (exit 73), naming the entry. TEST ONLY: never trust these in production.
                """)

        @Option(help: ArgumentHelp("Directory to write the anchors into.", valueName: "dir"))
        var out: String

        func run() throws {
            let written = try Self.write(to: out)
            for (anchor, path) in written { print("\(path)  --root \(anchor.rawValue)") }
        }

        /// Writes the anchors and the README into `out` (staged, then swapped in; a signal meanwhile leaves the old
        /// folder), and returns each anchor's PEM path: `forge ca export`, and `forge serve --export-roots` before it listens.
        static func write(to out: String) throws -> [(anchor: BundledAnchor, path: String)] {
            var files: [(String, Data)] = []
            var readme = Self.readmeIntro
            do throws(ForgeError) {
                for anchor in BundledAnchor.allCases {
                    let exported = try anchor.exported()
                    files += exported.files
                    readme += """
                        --root \(anchor.rawValue): \(anchor.fileStem).pem, \(anchor.fileStem).der (\(anchor.repositoryPath) in the repository)
                          for \(anchor.use)
                          the corpus's anchor \(anchor.corpusID) (Vectors/anchors/\(anchor.corpusID).der; a vector's context.trustAnchor)
                          subject \(exported.subject)
                          valid \(ReceiptDate.format(exported.notBefore)) to \(ReceiptDate.format(exported.notAfter))
                          SHA-256 \(exported.sha256Fingerprint)


                        """
                }
            } catch { throw fail(error.message, Exit.software) }
            files.append((Self.readmeName, Data(readme.utf8)))
            let interrupts = Interrupts.discardStagedOnSignal()
            defer { interrupts.watch?.cancel() }
            let folder: StagedFolder
            do {
                folder = try interrupts.slot.stage { () throws(ForgeError) in
                    try StagedFolder(replacing: URL(fileURLWithPath: out)) { _ in Set(Self.fileNames) }
                }
                defer { folder.discard() }
                for (name, data) in files { try folder.write(data, to: name) }
                if let left = try folder.commit() { note("files appeared in the old \(out) meanwhile; they are in \(left.path)") }
            } catch { throw fail(error.message, Exit.cannotCreate) }
            return BundledAnchor.allCases.map { ($0, "\(out)/\($0.fileStem).pem") }
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
            iOS 6 transaction receipts (forge make --transaction-receipt): the chain is the embedded
              certificate and its issuer, which is the anchor: itunes-store-ca.der for signature version 2,
              wwdr-sha1.der for version 3 (an intermediate: trust it as a partial chain).
            verifyReceipt (forge serve): judges receipts under root.pem; with --tls its serving certificate
              is issued by root.pem, so an HTTPS client trusts root.pem.


            """
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
        @Option(
            help: ArgumentHelp(
                "With --jws: the OCSP responder the leaf's and the intermediate's AIA name (the root names none), e.g. the /ocsp URL `forge serve --ocsp --ocsp-ca DIR` prints, so verifiers with online checks on (Apple's enableOnlineChecks) ask it.",
                valueName: "url"))
        var ocspURL: String?

        func validate() throws {
            guard let ocspURL else { return }
            if !jws { throw ValidationError("--ocsp-url names the responder of a JWS set: add --jws") }
            do throws(HTTPURL.Problem) { _ = try HTTPURL(ocspURL, schemes: [.http]) } catch {
                throw ValidationError("--ocsp-url must be an http:// URL (OCSP goes over plain HTTP): \(error)")
            }
        }

        func run() throws {
            if jws {
                let ocsp = ocspURL.map { [$0] }
                let generate = { () throws(ForgeError) in try CertificateSet<JWSRole>.generate(ocsp: ocsp) }
                return try create(generate) { role, _ in "\(out)/\(role.fileStem).pem" }
            }
            let generate = { () throws(ForgeError) in try CertificateSet<CertificateRole>.generate() }
            try create(generate) { role, pki in "\(out)/\(role.fileStem).pem  \(pki.subject(role))" }
        }

        /// A fresh set of either vocabulary, written by the one writer (atomic, refuses existing files without --force).
        private func create<Role: PKIRole>(_ generate: () throws(ForgeError) -> CertificateSet<Role>, listing line: (Role, CertificateSet<Role>) -> String) throws {
            do throws(ForgeError) {
                let pki = try generate()
                try pki.write(to: URL(fileURLWithPath: out), overwrite: force)
                for role in Role.allCases { print(line(role, pki)) }
            } catch {
                throw fail(error.code == .wouldOverwrite ? error.message + "; pass --force to replace them" : error.message, Exit.code(for: error))
            }
        }
    }
}

extension CA {
    /// `forge ca api-key`: the key pair App Store Connect issues for the App Store Server API, for `forge serve --api-key`.
    struct APIKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "api-key",
            abstract: "Create an App Store Connect-style API key (EC P-256, AuthKey_<KEYID>.p8) and issuer id for the App Store Server API of `forge serve`.",
            discussion: """
                Writes DIR/AuthKey_<KEYID>.p8 (the private key as unencrypted PKCS#8 PEM, mode 0600, as App Store Connect issues it) and prints the three values a client such as Apple's app-store-server-library needs (key id, issuer id, the .p8's path) and the flags that make `forge serve` accept its tokens:
                  key id     2X9R4HXF34
                  issuer id  57246542-96fe-1a63-e053-0824d011072a
                  key file   DIR/AuthKey_2X9R4HXF34.p8
                  serve      forge serve --api-key 2X9R4HXF34=DIR/AuthKey_2X9R4HXF34.p8 --issuer-id 57246542-96fe-1a63-e053-0824d011072a
                With --json, one line for a program instead: {"keyId":"2X9R4HXF34","issuerId":"57246542-…","keyPath":"DIR/AuthKey_2X9R4HXF34.p8","serveArguments":["--api-key","2X9R4HXF34=DIR/AuthKey_2X9R4HXF34.p8","--issuer-id","57246542-…"]}. The key id is 10 characters of A-Z and 0-9, the issuer id a UUID; with --seed all three values are reproducible. The file is written whole or not at all and never replaces one (exit 73). TEST ONLY: the key is not protected.
                """)

        @Option(help: ArgumentHelp("Directory to write AuthKey_<KEYID>.p8 into (created if absent).", valueName: "dir"))
        var out: String
        @Option(help: ArgumentHelp("Derive the key, key id and issuer id from this seed (the same seed, the same values). Default: random.", valueName: "n"))
        var seed: UInt64?
        @Flag(help: "Print the values as one JSON object instead: {\"keyId\", \"issuerId\", \"keyPath\", \"serveArguments\"}.")
        var json = false

        func run() throws {
            let key: IssuedAPIKey
            do { key = try IssuedAPIKey.generate(seed: seed) } catch { throw fail(error.message, Exit.software) }
            let path = URL(fileURLWithPath: out).appendingPathComponent(key.fileName)
            let shown = (out.hasSuffix("/") ? out : out + "/") + key.fileName
            do throws(ForgeError) {
                try Folder.create(URL(fileURLWithPath: out))
                try AtomicFile.create(Data(key.privateKeyPEM.utf8), at: path, permissions: 0o600)
            } catch {
                throw fail(error.code == .wouldOverwrite ? "\(shown) already exists; forge never replaces a key" : error.message, Exit.cannotCreate)
            }
            let serve = ["--api-key", "\(key.keyID)=\(shown)", "--issuer-id", key.issuerID]
            if json {
                let values: JSONValue = .object([
                    ("keyId", .string(key.keyID)), ("issuerId", .string(key.issuerID)), ("keyPath", .string(shown)),
                    ("serveArguments", .array(serve.map(JSONValue.string))),
                ])
                return print(values.serialized(pretty: false))
            }
            print(
                """
                key id     \(key.keyID)
                issuer id  \(key.issuerID)
                key file   \(shown)
                serve      forge serve \(serve.map(APIKeyOptions.shellWord).joined(separator: " "))
                """)
        }
    }
}

/// `forge serve --api-key KEY_ID=FILE --issuer-id ID`: the App Store Server API keys whose tokens the server accepts.
enum APIKeyOptions {
    static let apiKeyHelp =
        "An App Store Connect API key the App Store Server API routes accept tokens of: its key id (the JWT's kid) and its .p8 (or public key PEM), EC P-256 only; repeatable. `forge ca api-key` makes one. Needs --issuer-id."
    static let issuerIDHelp = "The issuer id (the JWT's iss) the --api-key tokens must carry."

    /// The forms: every --api-key is KEY_ID=FILE with a distinct printable key id; --issuer-id goes with --api-key.
    static func validate(apiKeys: [String], issuerID: String?) throws {
        var seen: Set<String> = []
        for option in apiKeys {
            guard let (keyID, path) = split(option) else {
                throw ValidationError("--api-key must be KEY_ID=FILE (e.g. 2X9R4HXF34=AuthKey_2X9R4HXF34.p8), not '\(option)'")
            }
            guard path.isEmpty == false else { throw ValidationError("--api-key \(keyID)= names no file") }
            guard seen.insert(keyID).inserted else { throw ValidationError("--api-key \(keyID) is given twice") }
        }
        if let issuerID, !printable(issuerID) { throw ValidationError("--issuer-id must be non-empty printable ASCII without spaces") }
        if !apiKeys.isEmpty, issuerID == nil { throw ValidationError("--api-key needs --issuer-id (the JWT's iss; `forge ca api-key` prints it)") }
        if apiKeys.isEmpty, issuerID != nil { throw ValidationError("--issuer-id needs at least one --api-key") }
    }

    /// The authenticator of the keys, read now: a file that cannot be read exits 66, one that is no P-256 key 65,
    /// naming the file. The apps served are the scenarios'. Nil without --api-key.
    static func authenticator(apiKeys: [String], issuerID: String?, scenarios: [Scenario]) throws -> ServerAPIAuthenticator? {
        guard let issuerID, !apiKeys.isEmpty else { return nil }
        var keys: [ServerAPIKey] = []
        for option in apiKeys {
            guard let (keyID, path) = split(option) else { throw fail("--api-key must be KEY_ID=FILE", Exit.usage) }
            let (bytes, _) = try readInput(path, kind: .key)
            do { keys.append(try ServerAPIKey(id: keyID, pem: String(decoding: bytes, as: UTF8.self))) } catch {
                throw fail("--api-key \(keyID): \(path): \(error.message)", Exit.dataError)
            }
        }
        let bundleIDs = Set(scenarios.map { $0.bundleID ?? Store.defaultBundleID })
        return ServerAPIAuthenticator(keys: keys, issuerID: issuerID, bundleIDs: bundleIDs.isEmpty ? [Store.defaultBundleID] : bundleIDs)
    }

    /// `KEY_ID=FILE` as its two parts; nil when it is not that form.
    static func split(_ option: String) -> (keyID: String, path: String)? {
        guard let equals = option.firstIndex(of: "=") else { return nil }
        let keyID = String(option[..<equals])
        guard printable(keyID) else { return nil }
        return (keyID, String(option[option.index(after: equals)...]))
    }

    private static func printable(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }
    }

    /// A word a POSIX shell reads back as `text`: as it is when it is plain, else in single quotes.
    static func shellWord(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { $0.isASCII && (Character($0).isLetter || Character($0).isNumber || "-_./=:@%+,".unicodeScalars.contains($0)) }
        return plain ? text : "'" + text.replacing("'", with: "'\\''") + "'"
    }
}
