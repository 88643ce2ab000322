import ForgeCrypto
import _ForgeSupport
package import StoreModel

/// A TEST App Store Connect API key, shaped as App Store Connect issues one: a 10-character key id, an issuer id, and
/// the P-256 private key as the unencrypted PKCS#8 PEM of an `AuthKey_<KEYID>.p8`. It lives beside
/// ``ServerAPIKey``, which reads such a file back to check the tokens signed with it: one owner for the key's shape.
package struct IssuedAPIKey: Sendable {
    /// The JWT's `kid`: 10 characters of A-Z and 0-9.
    package let keyID: String
    /// The JWT's `iss`: a lowercase RFC 9562 version 4 UUID.
    package let issuerID: String
    /// The private key, PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) with its public key.
    package let privateKeyPEM: String

    /// The file name App Store Connect gives the key.
    package var fileName: String { "AuthKey_\(keyID).p8" }

    /// A fresh key; with `seed`, the key, key id and issuer id all follow from it (the same seed, the same values).
    package static func generate(seed: UInt64? = nil) throws(ForgeError) -> IssuedAPIKey {
        do {
            let key: ECPrivateKey
            let keyID: String
            let issuerID: String
            if let seed {
                var random = SeededGenerator(seed: seed)
                (keyID, issuerID) = (Self.keyID(&random), Self.issuerID(&random))
                key = try Self.key(&random)
            } else {
                var random = SystemRandomNumberGenerator()
                (keyID, issuerID) = (Self.keyID(&random), Self.issuerID(&random))
                key = try ECPrivateKey.generate(curve: .p256)
            }
            return IssuedAPIKey(keyID: keyID, issuerID: issuerID, privateKeyPEM: try key.pemRepresentationIncludingPublicKey)
        } catch let error as ForgeError {
            throw error
        } catch {
            throw ForgeError(.cryptoFailed, "cannot make a P-256 key: \(error)")
        }
    }

    /// Key ids as App Store Connect's look: 10 characters of A-Z and 0-9.
    static func keyID(_ random: inout some RandomNumberGenerator) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<10).map { _ in alphabet[Int(random.next(upperBound: UInt64(alphabet.count)))] })
    }

    /// A lowercase RFC 9562 version 4 UUID, as App Store Connect's issuer ids are written.
    static func issuerID(_ random: inout some RandomNumberGenerator) -> String {
        var bytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String($0, radix: 16).leftPadded(2) }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }

    /// A P-256 key from the seeded stream: a scalar OpenSSL refuses (0 or at least the order) is drawn again.
    static func key(_ random: inout SeededGenerator) throws -> ECPrivateKey {
        var lastError: (any Error)?
        for _ in 0..<8 {
            do { return try ECPrivateKey(scalar: random.bytes(ECCurve.p256.byteCount), curve: .p256) } catch { lastError = error }
        }
        throw lastError ?? ForgeError(.cryptoFailed, "no P-256 scalar")
    }
}
