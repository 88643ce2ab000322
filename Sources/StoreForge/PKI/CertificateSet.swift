#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ForgeCrypto
import ReceiptModel
import Synchronization
import _ForgeSupport
public import StoreModel

/// The vocabulary of one kind of certificate set: its roles and what each role needs to be held, issued and
/// written. Receipts (``CertificateRole``, RSA) and StoreKit 2 JWS (``JWSRole``, EC) are two vocabularies of the
/// one ``CertificateSet``.
public protocol PKIRole: RawRepresentable, CaseIterable, Hashable, Sendable where RawValue == String, AllCases == [Self] {
    associatedtype Key: CertificateKey
    /// `<stem>.pem` and `<stem>.key.pem` in a set's directory.
    var fileStem: String { get }
    /// Who signs this role's certificate; nil for self-signed roles.
    var issuer: Self? { get }
    /// What this role's certificate says.
    var template: CertificateTemplate { get }
    /// What a fresh key of this role takes (`forge ca init`).
    var keyParameters: Key.Parameters { get }
    /// One line for a set's README.
    var purpose: String { get }
    /// The compiled-in set, in messages.
    static var bundledName: String { get }
    /// The README written with a set, up to its table of files; nil: the set has no README.
    static var readmeIntro: String? { get }
}

/// A certificate with the key that belongs to it.
public struct Credential<Key: CertificateKey>: Sendable {
    public let certificate: X509Certificate
    public let privateKey: Key

    public init(certificate: X509Certificate, privateKey: Key) {
        self.certificate = certificate
        self.privateKey = privateKey
    }
}

/// A TEST PKI: one credential per role of `Role`.
///
/// The default sets are committed in `Certificates/` and compiled into the binary (`BundledCertificates`), so
/// `forge make` works from any directory and from a copied binary. A bundled set is parsed role by role on first
/// use: a receipt needs one key and three certificates of the fourteen objects, and parsing them all was most of
/// a `forge make` process's time.
public struct CertificateSet<Role: PKIRole>: Sendable {
    private let store: CredentialStore<Role>

    public subscript(role: Role) -> Credential<Role.Key> { store.credential(role) }

    /// The subject of `role`'s certificate, as `forge ca init` lists it.
    public func subject(_ role: Role) -> String { "\(self[role].certificate.subject)" }

    /// Only the private key of `role` (parsing its certificate is not needed to sign).
    public func privateKey(_ role: Role) -> Role.Key { store.privateKey(role) }

    /// Only the certificate of `role`, without its key.
    public func certificate(_ role: Role) -> X509Certificate { store.certificate(role) }

    /// Only the DER of `role`'s certificate, unparsed (what a receipt embeds).
    public func certificateDER(_ role: Role) -> [UInt8] { store.certificateDER(role) }

    /// The set compiled into the binary, equal to the repository's `Certificates/` (a test checks it, and that
    /// every role parses, so the lazy parse cannot fail in a build that passed its tests).
    public static func bundled() throws(ForgeError) -> Self {
        Self(store: CredentialStore(files: BundledCertificates.files, source: Role.bundledName, parsed: [:]))
    }

    /// Loads `<stem>.pem` and `<stem>.key.pem` for every role from a directory, checking all of them now: a
    /// user's set that is broken fails here, with the file named, never later.
    public static func load(from directory: URL) throws(ForgeError) -> Self {
        var files: [String: String] = [:]
        for role in Role.allCases {
            for name in [role.fileStem + ".pem", role.fileStem + ".key.pem"] {
                let url = directory.appendingPathComponent(name)
                guard let text = try? String(contentsOf: url, encoding: .utf8) else {
                    throw ForgeError(.certificateSetInvalid, "cannot read \(url.path): a certificate set needs \(role.fileStem).pem and \(role.fileStem).key.pem")
                }
                files[name] = text
            }
        }
        var parsed: [Role: Credential<Role.Key>] = [:]
        for role in Role.allCases { parsed[role] = try CredentialStore.parse(role, files: files, source: directory.path) }
        return Self(store: CredentialStore(files: files, source: directory.path, parsed: parsed))
    }

    /// Every role parsed now (for tests and `forge ca`), with the first problem as an error.
    public func validated() throws(ForgeError) -> Self {
        for role in Role.allCases { _ = try store.parsedCredential(role) }
        return self
    }

    private init(store: CredentialStore<Role>) { self.store = store }

    /// A fresh set: a new key for every role, certificates issued from `templates` (the roles' own by default).
    public static func generate(templates: (Role) -> CertificateTemplate = { $0.template }) throws(ForgeError) -> Self {
        var keys: [Role: Role.Key] = [:]
        for role in Role.allCases {
            keys[role] = try ForgeError.wrapping("generating the \(role.fileStem) key") { try Role.Key.generate(role.keyParameters) }
        }
        return try issue(keys: keys, templates: templates)
    }

    /// Issues every certificate of `templates` from the given keys. Deterministic: same keys, same bytes.
    public static func issue(keys: [Role: Role.Key], templates: (Role) -> CertificateTemplate = { $0.template }) throws(ForgeError) -> Self {
        func depth(_ role: Role) -> Int { role.issuer.map { depth($0) + 1 } ?? 0 }
        var credentials: [Role: Credential<Role.Key>] = [:]
        // Issuers before the certificates they sign.
        for role in Role.allCases.sorted(by: { depth($0) < depth($1) }) {
            guard let key = keys[role] else { throw ForgeError(.certificateSetInvalid, "no key for \(role.fileStem)") }
            let issuer = role.issuer.flatMap { credentials[$0] }
            let certificate = try ForgeError.wrapping("issuing the \(role.fileStem) certificate") {
                try (issuer?.privateKey ?? key).issue(templates(role), subjectKey: key.certifiedKey, issuer: issuer?.certificate)
            }
            credentials[role] = Credential(certificate: certificate, privateKey: key)
        }
        return Self(store: CredentialStore(files: [:], source: "a generated certificate set", parsed: credentials))
    }

    /// The files of the set: `<stem>.pem`, `<stem>.key.pem` and, where the vocabulary has one, a README with fingerprints.
    public func files() throws(ForgeError) -> [String: String] {
        var files: [String: String] = [:]
        for role in Role.allCases {
            files[role.fileStem + ".pem"] = self[role].certificate.pemRepresentation
            files[role.fileStem + ".key.pem"] = try ForgeError.wrapping("encoding the \(role.fileStem) key") { try self[role].privateKey.pemRepresentation }
        }
        if let intro = Role.readmeIntro { files["README.md"] = readme(intro) }
        return files
    }

    /// Writes the set into `directory`, refusing to replace existing files unless `overwrite`.
    /// Files are written to temporary names first and renamed, so a failure leaves no partial set.
    public func write(to directory: URL, overwrite: Bool) throws(ForgeError) {
        let files = try files()
        let manager = FileManager.default
        let existing = files.keys.filter { manager.fileExists(atPath: directory.appendingPathComponent($0).path) }.sorted()
        if !overwrite, !existing.isEmpty {
            throw ForgeError(.wouldOverwrite, "\(directory.path) already holds \(existing.joined(separator: ", "))")
        }
        try Folder.create(directory)
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            try AtomicFile.write(Data(text.utf8), to: directory.appendingPathComponent(name))
        }
    }

    private func readme(_ intro: String) -> String {
        var text = intro
        for role in Role.allCases {
            let certificate = self[role].certificate
            let fingerprint = certificate.sha256Fingerprint.map { String($0, radix: 16, uppercase: true).leftPadded(2) }.joined(separator: ":")
            let validity = "\(ReceiptDate.format(certificate.notBefore).prefix(10)) → \(ReceiptDate.format(certificate.notAfter).prefix(10))"
            text += "| `\(role.fileStem).pem` (+ `.key.pem`) | \(role.purpose) | \(certificate.subject) | \(validity) | `\(fingerprint)` |\n"
        }
        return text
    }
}

extension CertificateSet where Role == JWSRole {
    /// The roles of the chain a JWS carries in `x5c`: leaf, intermediate, root (Xcode: its one certificate).
    public static func x5cRoles(xcode: Bool) -> [JWSRole] { xcode ? [.xcode] : [.leaf, .intermediate, .root] }

    /// The chain a JWS carries in `x5c`, parsed.
    public func x5c(xcode: Bool) -> [X509Certificate] { Self.x5cRoles(xcode: xcode).map { certificate($0) } }

    /// The same chain's DER, unparsed.
    public func x5cDER(xcode: Bool) -> [[UInt8]] { Self.x5cRoles(xcode: xcode).map { certificateDER($0) } }
}

/// The credentials of one set, parsed on first use and kept: whole credentials, or only a key or only a
/// certificate's bytes when that is all a caller needs (a receipt embeds certificates it never parses).
private final class CredentialStore<Role: PKIRole>: Sendable {
    private struct Parsed {
        var credentials: [Role: Credential<Role.Key>] = [:]
        var keys: [Role: Role.Key] = [:]
        var certificateDER: [Role: [UInt8]] = [:]
        var certificates: [Role: X509Certificate] = [:]
    }
    private let files: [String: String]
    private let source: String
    private let parsed: Mutex<Parsed>

    init(files: [String: String], source: String, parsed credentials: [Role: Credential<Role.Key>]) {
        self.files = files
        self.source = source
        self.parsed = Mutex(Parsed(credentials: credentials))
    }

    func credential(_ role: Role) -> Credential<Role.Key> { bundled { () throws(ForgeError) in try parsedCredential(role) } }

    func privateKey(_ role: Role) -> Role.Key {
        bundled { () throws(ForgeError) in
            if let known = parsed.withLock({ $0.keys[role] ?? $0.credentials[role]?.privateKey }) { return known }
            let key = try Self.key(role, files, source)
            parsed.withLock { $0.keys[role] = key }
            return key
        }
    }

    func certificateDER(_ role: Role) -> [UInt8] {
        bundled { () throws(ForgeError) in
            if let known = parsed.withLock({ $0.certificateDER[role] ?? $0.credentials[role]?.certificate.derRepresentation }) { return known }
            let name = role.fileStem + ".pem"
            let der = try Self.parsing(name, source) { try X509Certificate.firstDER(inPEM: try Self.file(name, files, source)) }
            parsed.withLock { $0.certificateDER[role] = der }
            return der
        }
    }

    func certificate(_ role: Role) -> X509Certificate {
        bundled { () throws(ForgeError) in
            if let known = parsed.withLock({ $0.certificates[role] ?? $0.credentials[role]?.certificate }) { return known }
            let certificate = try Self.certificate(role, files, source)
            parsed.withLock { $0.certificates[role] = certificate }
            return certificate
        }
    }

    func parsedCredential(_ role: Role) throws(ForgeError) -> Credential<Role.Key> {
        if let known = parsed.withLock({ $0.credentials[role] }) { return known }
        let credential = try Self.parse(role, files: files, source: source)
        parsed.withLock { $0.credentials[role] = credential }
        return credential
    }

    /// Only the compiled-in set is parsed lazily, and its tests parse every role: a failure here is a broken build.
    private func bundled<T>(_ body: () throws(ForgeError) -> T) -> T {
        do { return try body() } catch { preconditionFailure("\(error.message)") }
    }

    static func parse(_ role: Role, files: [String: String], source: String) throws(ForgeError) -> Credential<Role.Key> {
        let credential = Credential(certificate: try certificate(role, files, source), privateKey: try key(role, files, source))
        guard credential.privateKey.certifiedKey == credential.certificate.publicKey else {
            throw ForgeError(.certificateSetInvalid, "\(source): \(role.fileStem).key.pem is not the key of \(role.fileStem).pem")
        }
        return credential
    }

    private static func certificate(_ role: Role, _ files: [String: String], _ source: String) throws(ForgeError) -> X509Certificate {
        let name = role.fileStem + ".pem"
        return try parsing(name, source) { try X509Certificate(pemEncoded: try file(name, files, source)) }
    }

    private static func key(_ role: Role, _ files: [String: String], _ source: String) throws(ForgeError) -> Role.Key {
        let name = role.fileStem + ".key.pem"
        return try parsing(name, source) { try Role.Key(pemRepresentation: try file(name, files, source)) }
    }

    private static func file(_ name: String, _ files: [String: String], _ source: String) throws(ForgeError) -> String {
        guard let text = files[name] else { throw ForgeError(.certificateSetInvalid, "\(source) has no \(name)") }
        return text
    }

    /// A file that does not parse (or is not of the role's key type), named.
    private static func parsing<T>(_ name: String, _ source: String, _ body: () throws -> T) throws(ForgeError) -> T {
        do { return try body() } catch let error as ForgeError { throw error } catch {
            throw ForgeError(.certificateSetInvalid, "\(source): \(name): \(error)")
        }
    }
}
