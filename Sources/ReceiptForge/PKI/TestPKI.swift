public import Foundation
public import ForgeCrypto
import ReceiptModel

/// A certificate with the key that belongs to it.
public struct Credential: Sendable {
    public let certificate: X509Certificate
    public let privateKey: RSAPrivateKey

    public init(certificate: X509Certificate, privateKey: RSAPrivateKey) {
        self.certificate = certificate
        self.privateKey = privateKey
    }
}

/// The whole test PKI: one credential per role.
///
/// The default set is committed in `Certificates/` and compiled into the binary
/// (`BundledCertificates`), so `forge make` works from any directory and from a copied binary.
public struct TestPKI: Sendable {
    public let credentials: [CertificateRole: Credential]

    public subscript(role: CertificateRole) -> Credential { credentials[role]! }

    /// The set compiled into the binary, equal to the repository's `Certificates/` (a test checks it).
    public static func bundled() throws(ForgeError) -> TestPKI {
        try TestPKI(files: BundledCertificates.files, source: "the bundled test PKI")
    }

    /// Loads `<stem>.pem` and `<stem>.key.pem` for every role from a directory.
    public static func load(from directory: URL) throws(ForgeError) -> TestPKI {
        var files: [String: String] = [:]
        for role in CertificateRole.allCases {
            for name in [role.fileStem + ".pem", role.fileStem + ".key.pem"] {
                let url = directory.appendingPathComponent(name)
                guard let text = try? String(contentsOf: url, encoding: .utf8) else {
                    throw ForgeError(.certificateSetInvalid, "cannot read \(url.path): a certificate set needs \(role.fileStem).pem and \(role.fileStem).key.pem")
                }
                files[name] = text
            }
        }
        return try TestPKI(files: files, source: directory.path)
    }

    init(files: [String: String], source: String) throws(ForgeError) {
        var credentials: [CertificateRole: Credential] = [:]
        for role in CertificateRole.allCases {
            guard let certificatePEM = files[role.fileStem + ".pem"], let keyPEM = files[role.fileStem + ".key.pem"] else {
                throw ForgeError(.certificateSetInvalid, "\(source) has no \(role.fileStem).pem / \(role.fileStem).key.pem")
            }
            do {
                let credential = Credential(
                    certificate: try X509Certificate(pemEncoded: certificatePEM),
                    privateKey: try RSAPrivateKey(pemRepresentation: keyPEM))
                guard credential.privateKey.publicKey == credential.certificate.publicKey else {
                    throw ForgeError(.certificateSetInvalid, "\(source): \(role.fileStem).key.pem is not the key of \(role.fileStem).pem")
                }
                credentials[role] = credential
            } catch let error as ForgeError {
                throw error
            } catch {
                throw ForgeError(.certificateSetInvalid, "\(source): \(role.fileStem): \(error)")
            }
        }
        self.credentials = credentials
    }

    private init(credentials: [CertificateRole: Credential]) { self.credentials = credentials }

    /// A fresh set: new RSA-2048 keys for every role, certificates issued from `TestPKIProfile`.
    public static func generate() throws(ForgeError) -> TestPKI {
        var keys: [CertificateRole: RSAPrivateKey] = [:]
        for role in CertificateRole.allCases {
            keys[role] = try ForgeError.wrapping("generating the \(role.fileStem) key") { try RSAPrivateKey.generate(bits: 2048) }
        }
        return try issue(keys: keys)
    }

    /// Issues every certificate of the profile from the given keys. Deterministic: same keys, same bytes.
    public static func issue(keys: [CertificateRole: RSAPrivateKey]) throws(ForgeError) -> TestPKI {
        var credentials: [CertificateRole: Credential] = [:]
        // Issuers before the certificates they sign.
        let order: [CertificateRole] = [.root, .foreignRoot, .storeKit, .intermediate, .intermediateSHA1, .leaf, .leafSHA1]
        for role in order {
            let key = keys[role]!
            let issuer = role.issuerRole.map { credentials[$0]! }
            let certificate = try ForgeError.wrapping("issuing the \(role.fileStem) certificate") {
                try X509Certificate.issue(
                    TestPKIProfile.template(for: role), subjectKey: key.publicKey,
                    issuer: issuer?.certificate, issuerKey: issuer?.privateKey ?? key)
            }
            credentials[role] = Credential(certificate: certificate, privateKey: key)
        }
        return TestPKI(credentials: credentials)
    }

    /// The files of the set: `<stem>.pem`, `<stem>.key.pem` and a README with fingerprints.
    public func files() throws(ForgeError) -> [String: String] {
        var files: [String: String] = [:]
        for role in CertificateRole.allCases {
            files[role.fileStem + ".pem"] = self[role].certificate.pemRepresentation
            files[role.fileStem + ".key.pem"] = try ForgeError.wrapping("encoding the \(role.fileStem) key") { try self[role].privateKey.pemRepresentation }
        }
        files["README.md"] = readme()
        return files
    }

    /// Writes the set into `directory`, refusing to replace existing files unless `overwrite`.
    /// Files are written to temporary names first and renamed, so a failure leaves no partial set.
    public func write(to directory: URL, overwrite: Bool) throws(ForgeError) {
        let files = try files()
        let manager = FileManager.default
        let existing = files.keys.filter { manager.fileExists(atPath: directory.appendingPathComponent($0).path) }.sorted()
        if !overwrite, !existing.isEmpty {
            throw ForgeError(.wouldOverwrite, "\(directory.path) already holds \(existing.joined(separator: ", ")); pass --force to replace them")
        }
        do {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true)
            for (name, text) in files.sorted(by: { $0.key < $1.key }) {
                try AtomicFile.write(Data(text.utf8), to: directory.appendingPathComponent(name))
            }
        } catch let error as ForgeError {
            throw error
        } catch {
            throw ForgeError(.ioFailed, "writing \(directory.path): \(error.localizedDescription)")
        }
    }

    func readme() -> String {
        var text = """
            # Certificates — receipt-forge TEST PKI

            **TEST ONLY. Not Apple.** These certificates and their private keys are public on purpose: anyone can
            sign anything with them. They imitate the *shape* of Apple's receipt PKI (names, extensions, marker
            OIDs, policies) under names that say TEST, so validators can be tested offline. Never trust them in
            production. Generated by `forge ca init`; the default set is also compiled into `forge`
            (`Sources/ReceiptForge/PKI/BundledCertificates.swift`, kept equal to these files by a test).

            AIA and CPS URLs point at `\(TestPKIProfile.loopbackBase)` so validators that go online fail fast and locally.

            | file | role | subject | validity | SHA-256 fingerprint |
            |---|---|---|---|---|

            """
        for role in CertificateRole.allCases {
            let certificate = self[role].certificate
            let fingerprint = certificate.sha256Fingerprint.map { String($0, radix: 16, uppercase: true).leftPadded(2) }.joined(separator: ":")
            let validity = "\(ReceiptDate.format(certificate.notBefore).prefix(10)) → \(ReceiptDate.format(certificate.notAfter).prefix(10))"
            text += "| `\(role.fileStem).pem` (+ `.key.pem`) | \(role.purpose) | \(certificate.subject) | \(validity) | `\(fingerprint)` |\n"
        }
        return text
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
