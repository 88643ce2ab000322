package import ForgeCrypto

/// A certificate a validator is told to trust as a chain anchor (``ValidationContext/trustedRoots``): the validator's
/// word for it, so a caller that only hands roots over (the command line's `--root`) never imports the crypto.
package typealias TrustedRoot = X509Certificate

extension ValidationContext {
    /// The roots in a certificate file: one DER certificate, or every certificate of a PEM text. Throws
    /// ForgeCrypto's error when the bytes are neither.
    package static func roots(inFile bytes: [UInt8]) throws -> [TrustedRoot] {
        bytes.first == 0x30 ? [try X509Certificate(derEncoded: bytes)] : try X509Certificate.all(fromPEM: String(decoding: bytes, as: UTF8.self))
    }
}
