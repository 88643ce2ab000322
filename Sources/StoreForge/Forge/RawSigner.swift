import ForgeCrypto
public import StoreModel

/// One raw signature of the kind a forged artefact carries, without the artefact: what `forge bench` times beside
/// whole receipts and JWS, so the ratio says how much of making one is the signature.
public struct RawSigner: Sendable {
    /// What is signed, for the figures' label.
    public let label: String
    private let sign: @Sendable (Int) -> Void

    /// The receipt signer of `preset`: RSA PKCS#1 v1.5 over a fixed digest of the preset's algorithm.
    public static func receipt(_ forge: Forge, preset: Preset) -> RawSigner {
        let key = forge.receiptPKI[preset.chain[0]].privateKey
        let algorithm = preset.digest
        let digest = [UInt8](repeating: 0xA5, count: algorithm.digestLength)
        return RawSigner(label: "raw RSA-2048 sign/s (\(algorithm.rawValue))") { _ in _ = try? key.signature(forDigest: digest, algorithm: algorithm) }
    }

    /// The JWS leaf: ES256 over a digest that differs by `index` (RFC 6979 nonces are derived per message, so a
    /// repeated one would time a cache), as long as `preset`'s digest up to 32 bytes.
    public static func jws(_ forge: Forge, preset: Preset) -> RawSigner {
        let key = forge.jwsPKI.privateKey(.leaf)
        let digest = [UInt8](repeating: 0xA5, count: preset.digest.digestLength)
        return RawSigner(label: "raw ES256 sign/s (RFC 6979, P-256)") { index in
            var message = digest
            withUnsafeBytes(of: index) { message.replaceSubrange(0..<$0.count, with: $0) }
            _ = try? key.signature(forDigest: Array(message.prefix(32)), algorithm: .sha256)
        }
    }

    /// Signs once; `index` varies the message where the scheme needs it.
    public func callAsFunction(_ index: Int) { sign(index) }
}
