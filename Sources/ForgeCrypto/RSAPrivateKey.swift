internal import COpenSSL

/// An RSA private key used to sign forged receipts and to issue test certificates.
public struct RSAPrivateKey: Sendable {
    let backing: EVPKeyBacking

    /// The matching public key, derived once when the private key is created.
    public let publicKey: RSAPublicKey

    private init(backing: EVPKeyBacking) throws {
        guard backing.isRSA else {
            throw ForgeCryptoError(.keyParsingFailed, "not an RSA key")
        }
        self.backing = backing
        self.publicKey = try RSAPublicKey(derRepresentation: backing.subjectPublicKeyInfo(failure: .keyParsingFailed))
    }

    /// Generates a fresh key with public exponent 65537. This is the only randomised operation in ForgeCrypto.
    public static func generate(bits: Int = 2048) throws -> RSAPrivateKey {
        OpenSSLErrorQueue.clear()
        guard let bitCount = Int32(exactly: bits) else {
            throw ForgeCryptoError(.invalidInput, "RSA key size \(bits) is out of range")
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw ForgeCryptoError(.keyGenerationFailed, "EVP_PKEY_CTX_new_from_name(RSA)")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else {
            throw ForgeCryptoError(.keyGenerationFailed, "EVP_PKEY_keygen_init")
        }
        guard EVP_PKEY_CTX_set_rsa_keygen_bits(context, bitCount) > 0 else {
            throw ForgeCryptoError(.keyGenerationFailed, "EVP_PKEY_CTX_set_rsa_keygen_bits(\(bits))")
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(context, &key) == 1, let key else {
            throw ForgeCryptoError(.keyGenerationFailed, "EVP_PKEY_generate(RSA \(bits))")
        }
        return try RSAPrivateKey(backing: EVPKeyBacking(takingOwnershipOf: key))
    }

    /// Parses the first unencrypted PEM key: PKCS#8 (`PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`).
    /// Encrypted keys (`ENCRYPTED PRIVATE KEY`, or PKCS#1 with `Proc-Type` headers) are rejected, never prompted for.
    public init(pemRepresentation: String) throws {
        let blocks = try pemBlocks(
            in: pemRepresentation, labeled: ["PRIVATE KEY", "RSA PRIVATE KEY"], failure: .keyParsingFailed, stoppingAfterFirst: true)
        OpenSSLErrorQueue.clear()
        // The RSA-specific parser first (microseconds); the generic one for anything else, and for its error text.
        let backing: EVPKeyBacking
        if let fast = try? decodedExactly(
            blocks[0], failure: .keyParsingFailed, function: "d2i_RSAPrivateKey", decode: { COpenSSL_d2i_RSA_private_key($0, $1) },
            takeOwnership: { EVPKeyBacking(takingOwnershipOf: $0, legacyRSA: true) })
        {
            backing = fast
        } else {
            backing = try decodedExactly(
                blocks[0], failure: .keyParsingFailed, function: "d2i_AutoPrivateKey", decode: { d2i_AutoPrivateKey(nil, $0, $1) },
                takeOwnership: { EVPKeyBacking(takingOwnershipOf: $0) })
        }
        try self.init(backing: backing)
    }

    /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    public var pemRepresentation: String {
        get throws {
            try backing.privateKeyPEM()
        }
    }

    /// Modulus size in bits.
    public var bitCount: Int {
        Int(EVP_PKEY_get_bits(backing.pointer))
    }

    /// PKCS#1 v1.5 signature over an already computed digest; OpenSSL wraps it in the DigestInfo for `algorithm`.
    /// Deterministic: the same key, digest and algorithm always give the same bytes.
    public func signature(forDigest digest: [UInt8], algorithm: DigestAlgorithm) throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        guard digest.count == algorithm.digestLength else {
            throw ForgeCryptoError(.invalidInput, "a \(algorithm) digest is \(algorithm.digestLength) bytes, got \(digest.count)")
        }
        let method = try algorithm.fetchedMethod
        if backing.isLegacyRSA { return try legacySignature(forDigest: digest, nid: EVP_MD_get_type(method), algorithm: algorithm) }
        return try backing.withOperationContext(failure: .signingFailed) { context in
            guard EVP_PKEY_sign_init(context) == 1 else {
                throw ForgeCryptoError(.signingFailed, "EVP_PKEY_sign_init")
            }
            guard EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) > 0 else {
                throw ForgeCryptoError(.signingFailed, "EVP_PKEY_CTX_set_rsa_padding")
            }
            guard EVP_PKEY_CTX_set_signature_md(context, method) > 0 else {
                throw ForgeCryptoError(.signingFailed, "EVP_PKEY_CTX_set_signature_md(\(algorithm))")
            }
            var signature = [UInt8](repeating: 0, count: Int(EVP_PKEY_get_size(backing.pointer)))
            var signatureLength = signature.count
            let rc = signature.withUnsafeMutableBufferPointer { output in
                EVP_PKEY_sign(context, output.baseAddress, &signatureLength, digest, digest.count)
            }
            guard rc == 1 else {
                throw ForgeCryptoError(.signingFailed, "EVP_PKEY_sign")
            }
            signature.removeSubrange(signatureLength...)
            return signature
        }
    }

    private func legacySignature(forDigest digest: [UInt8], nid: Int32, algorithm: DigestAlgorithm) throws -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Int(EVP_PKEY_get_size(backing.pointer)))
        var signatureLength = UInt32(signature.count)
        let rc = signature.withUnsafeMutableBufferPointer { output in
            COpenSSL_RSA_sign_PKCS1(backing.pointer, nid, digest, UInt32(digest.count), output.baseAddress, &signatureLength)
        }
        guard rc == 1 else { throw ForgeCryptoError(.signingFailed, "RSA_sign(\(algorithm))") }
        signature.removeSubrange(Int(signatureLength)...)
        return signature
    }

    /// Digests `message` with `algorithm`, then signs the digest (see ``signature(forDigest:algorithm:)``).
    public func signature<Bytes: Collection>(for message: Bytes, algorithm: DigestAlgorithm) throws -> [UInt8]
    where Bytes.Element == UInt8 {
        try signature(forDigest: algorithm.digest(message), algorithm: algorithm)
    }
}
