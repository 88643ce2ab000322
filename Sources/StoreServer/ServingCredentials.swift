#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
import ForgeCrypto
package import StoreForge
import ReceiptModel
import _ForgeSupport
import StoreModel

/// A TLS serving certificate (DER chain, leaf first) and its private key (PEM), for `forge serve --tls`.
package struct ServingCredentials: Sendable {
    package var chain: [[UInt8]]
    package var privateKeyPEM: String

    package init(chain: [[UInt8]], privateKeyPEM: String) {
        self.chain = chain
        self.privateKeyPEM = privateKeyPEM
    }

    /// A fresh key and a certificate for `host` (plus localhost, 127.0.0.1, ::1 and Apple's Server API host names,
    /// ``ServerAPIEnvironment/appleHost``) issued by the TEST root, so a client that insists on TLS needs one trusted
    /// PEM: `Certificates/root.pem`; one that resolves Apple's host names to this server verifies TLS unpatched.
    /// Valid from an hour before `now` for 30 days; it is made at start-up and never written anywhere.
    package static func issue(for host: String, by pki: CertificateSet<CertificateRole>, now: Date = Date()) throws -> ServingCredentials {
        let key = try RSAPrivateKey.generate(bits: 2048)
        var dnsNames = ["localhost"] + ServerAPIEnvironment.allCases.map(\.appleHost)
        var addresses: [[UInt8]] = [[127, 0, 0, 1], Array(repeating: 0, count: 15) + [1]]
        if let address = ipv4(host) {
            if !addresses.contains(address) { addresses.append(address) }
        } else if !host.contains(":"), !dnsNames.contains(host), !host.isEmpty, host != "0.0.0.0" {
            dnsNames.append(host)
        }
        let template = CertificateTemplate(
            // The clock's seconds (any --now, before 1970 too) as eight bytes: a checked conversion, never a trap.
            serialNumber: Array("forge-serve".utf8) + withUnsafeBytes(of: (ReceiptDate.milliseconds(now) ?? 0).bigEndian, Array.init),
            subject: DistinguishedName([("CN", "receipt-forge TEST serving certificate"), ("O", "receipt-forge TEST")]),
            notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(30 * 86_400),
            extensions: [
                .basicConstraints(isCA: false), .keyUsage([.digitalSignature, .keyEncipherment]), .extendedKeyUsage([.serverAuth]),
                try .subjectAlternativeNames(dnsNames: dnsNames, ipAddresses: addresses), .subjectKeyIdentifier, .authorityKeyIdentifier,
            ])
        let certificate = try X509Certificate.issue(template, subjectKey: key.publicKey, issuer: pki.certificate(.root), issuerKey: pki.privateKey(.root))
        return ServingCredentials(chain: [certificate.derRepresentation], privateKeyPEM: try key.pemRepresentation)
    }

    private static func ipv4(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        return parts.count == 4 && text.split(separator: ".", omittingEmptySubsequences: false).count == 4 ? parts : nil
    }
}
