public import StoreModel
public import Foundation
public import ForgeCrypto
import ReceiptModel
import Synchronization
public import ForgeSupport

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
/// (`BundledCertificates`), so `forge make` works from any directory and from a copied binary. It is
/// parsed role by role on first use: a receipt needs one key and three certificates of the fourteen
/// objects, and parsing them all was most of a `forge make` process's time.
public struct TestPKI: Sendable {
    private let store: CredentialStore

    public subscript(role: CertificateRole) -> Credential { store.credential(role) }

    /// Only the private key of `role` (parsing its certificate is not needed to sign).
    public func privateKey(_ role: CertificateRole) -> RSAPrivateKey { store.privateKey(role) }

    /// Only the certificate of `role`, without its key.
    public func certificate(_ role: CertificateRole) -> X509Certificate { store.certificate(role) }

    /// Only the DER of `role`'s certificate, unparsed (what a receipt embeds).
    public func certificateDER(_ role: CertificateRole) -> [UInt8] { store.certificateDER(role) }

    /// The set compiled into the binary, equal to the repository's `Certificates/` (a test checks it, and
    /// that every role parses, so the lazy parse cannot fail in a build that passed its tests).
    public static func bundled() throws(ForgeError) -> TestPKI {
        TestPKI(store: CredentialStore(files: BundledCertificates.files, source: "the bundled test PKI", parsed: [:]))
    }

    /// Loads `<stem>.pem` and `<stem>.key.pem` for every role from a directory, checking all of them now:
    /// a user's set that is broken fails here, with the file named, never later.
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
        var parsed: [CertificateRole: Credential] = [:]
        for role in CertificateRole.allCases { parsed[role] = try CredentialStore.parse(role, files: files, source: directory.path) }
        return TestPKI(store: CredentialStore(files: files, source: directory.path, parsed: parsed))
    }

    /// Every role parsed now (for tests and `forge ca`), with the first problem as an error.
    public func validated() throws(ForgeError) -> TestPKI {
        for role in CertificateRole.allCases { _ = try store.parsedCredential(role) }
        return self
    }

    private init(store: CredentialStore) { self.store = store }

    private init(credentials: [CertificateRole: Credential]) {
        self.store = CredentialStore(files: [:], source: "a generated test PKI", parsed: credentials)
    }

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
        try Folder.create(directory)
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            try AtomicFile.write(Data(text.utf8), to: directory.appendingPathComponent(name))
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

/// The credentials of one set, parsed on first use and kept: whole credentials, or only a key or only a
/// certificate's bytes when that is all a caller needs (a receipt embeds certificates it never parses).
private final class CredentialStore: Sendable {
    private struct Parsed {
        var credentials: [CertificateRole: Credential] = [:]
        var keys: [CertificateRole: RSAPrivateKey] = [:]
        var certificateDER: [CertificateRole: [UInt8]] = [:]
        var certificates: [CertificateRole: X509Certificate] = [:]
    }
    private let files: [String: String]
    private let source: String
    private let parsed: Mutex<Parsed>

    init(files: [String: String], source: String, parsed credentials: [CertificateRole: Credential]) {
        self.files = files
        self.source = source
        self.parsed = Mutex(Parsed(credentials: credentials))
    }

    func credential(_ role: CertificateRole) -> Credential { bundled { () throws(ForgeError) in try parsedCredential(role) } }

    func privateKey(_ role: CertificateRole) -> RSAPrivateKey {
        bundled { () throws(ForgeError) in
            if let known = parsed.withLock({ $0.keys[role] ?? $0.credentials[role]?.privateKey }) { return known }
            let key = try Self.wrapping(role, source) { try RSAPrivateKey(pemRepresentation: try Self.file(role.fileStem + ".key.pem", files, source)) }
            parsed.withLock { $0.keys[role] = key }
            return key
        }
    }

    func certificateDER(_ role: CertificateRole) -> [UInt8] {
        bundled { () throws(ForgeError) in
            if let known = parsed.withLock({ $0.certificateDER[role] ?? $0.credentials[role]?.certificate.derRepresentation }) { return known }
            let der = try Self.wrapping(role, source) { try X509Certificate.firstDER(inPEM: try Self.file(role.fileStem + ".pem", files, source)) }
            parsed.withLock { $0.certificateDER[role] = der }
            return der
        }
    }

    func certificate(_ role: CertificateRole) -> X509Certificate {
        bundled { () throws(ForgeError) in
            if let known = parsed.withLock({ $0.certificates[role] ?? $0.credentials[role]?.certificate }) { return known }
            let certificate = try Self.wrapping(role, source) { try X509Certificate(pemEncoded: try Self.file(role.fileStem + ".pem", files, source)) }
            parsed.withLock { $0.certificates[role] = certificate }
            return certificate
        }
    }

    func parsedCredential(_ role: CertificateRole) throws(ForgeError) -> Credential {
        if let known = parsed.withLock({ $0.credentials[role] }) { return known }
        let credential = try Self.parse(role, files: files, source: source)
        parsed.withLock { $0.credentials[role] = credential }
        return credential
    }

    /// Only the compiled-in set is parsed lazily, and its tests parse every role: a failure here is a broken build.
    private func bundled<T>(_ body: () throws(ForgeError) -> T) -> T {
        do { return try body() } catch { preconditionFailure("\(error.message)") }
    }

    static func parse(_ role: CertificateRole, files: [String: String], source: String) throws(ForgeError) -> Credential {
        let certificatePEM = try file(role.fileStem + ".pem", files, source), keyPEM = try file(role.fileStem + ".key.pem", files, source)
        let credential = try wrapping(role, source) {
            Credential(certificate: try X509Certificate(pemEncoded: certificatePEM), privateKey: try RSAPrivateKey(pemRepresentation: keyPEM))
        }
        guard credential.privateKey.publicKey == credential.certificate.publicKey.rsa else {
            throw ForgeError(.certificateSetInvalid, "\(source): \(role.fileStem).key.pem is not the key of \(role.fileStem).pem")
        }
        return credential
    }

    private static func file(_ name: String, _ files: [String: String], _ source: String) throws(ForgeError) -> String {
        guard let text = files[name] else { throw ForgeError(.certificateSetInvalid, "\(source) has no \(name)") }
        return text
    }

    private static func wrapping<T>(_ role: CertificateRole, _ source: String, _ body: () throws -> T) throws(ForgeError) -> T {
        do { return try body() } catch let error as ForgeError { throw error } catch {
            throw ForgeError(.certificateSetInvalid, "\(source): \(role.fileStem): \(error)")
        }
    }
}
