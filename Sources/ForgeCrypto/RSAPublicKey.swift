internal import COpenSSL

/// An RSA public key, identified by its SubjectPublicKeyInfo DER (equality and hashing use those bytes).
public struct RSAPublicKey: Sendable, Hashable {
    let backing: EVPKeyBacking

    /// The key as SubjectPublicKeyInfo DER, re-encoded by OpenSSL so equal keys have equal bytes.
    public let derRepresentation: [UInt8]

    private init(backing: EVPKeyBacking) throws {
        guard backing.isRSA else {
            throw ForgeCryptoError(.keyParsingFailed, "not an RSA key")
        }
        self.backing = backing
        self.derRepresentation = try backing.subjectPublicKeyInfo(failure: .keyParsingFailed)
    }

    /// Parses SubjectPublicKeyInfo DER; the bytes must be exactly one structure.
    public init(derRepresentation: [UInt8]) throws {
        OpenSSLErrorQueue.clear()
        // As for private keys: the RSA-specific parser first, the generic decoder for anything else.
        let backing: EVPKeyBacking
        if let fast = try? decodedExactly(
            derRepresentation, failure: .keyParsingFailed, function: "d2i_RSA_PUBKEY", decode: { COpenSSL_d2i_RSA_public_key($0, $1) },
            takeOwnership: { EVPKeyBacking(takingOwnershipOf: $0, legacyRSA: true) })
        {
            backing = fast
        } else {
            backing = try decodedExactly(
                derRepresentation, failure: .keyParsingFailed, function: "d2i_PUBKEY", decode: { d2i_PUBKEY(nil, $0, $1) },
                takeOwnership: { EVPKeyBacking(takingOwnershipOf: $0) })
        }
        try self.init(backing: backing)
    }

    /// Parses the first `-----BEGIN PUBLIC KEY-----` (SubjectPublicKeyInfo) PEM block.
    public init(pemRepresentation: String) throws {
        let blocks = try pemBlocks(in: pemRepresentation, labeled: ["PUBLIC KEY"], failure: .keyParsingFailed, stoppingAfterFirst: true)
        try self.init(derRepresentation: blocks[0])
    }

    /// The key as a `-----BEGIN PUBLIC KEY-----` PEM block.
    public var pemRepresentation: String {
        PEM.encode(derRepresentation, label: "PUBLIC KEY")
    }

    /// Modulus size in bits.
    public var bitCount: Int { Int(EVP_PKEY_get_bits(backing.pointer)) }

    /// Whether `signature` is a valid PKCS#1 v1.5 signature over `digest` with the DigestInfo of `algorithm`.
    /// Any failure (wrong length, bad padding, other algorithm) is simply `false`.
    public func isValidSignature(_ signature: [UInt8], forDigest digest: [UInt8], algorithm: DigestAlgorithm) -> Bool {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard !signature.isEmpty, digest.count == algorithm.digestLength, let method = try? algorithm.fetchedMethod else {
            return false
        }
        if backing.isLegacyRSA {
            guard let length = UInt32(exactly: signature.count) else { return false }
            return COpenSSL_RSA_verify_PKCS1(backing.pointer, EVP_MD_get_type(method), digest, UInt32(digest.count), signature, length) == 1
        }
        let verified = try? backing.withOperationContext(failure: .signingFailed) { context in
            EVP_PKEY_verify_init(context) == 1
                && EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) > 0
                && EVP_PKEY_CTX_set_signature_md(context, method) > 0
                && EVP_PKEY_verify(context, signature, signature.count, digest, digest.count) == 1
        }
        return verified ?? false
    }

    /// Digests `message` with `algorithm`, then checks the signature (see ``isValidSignature(_:forDigest:algorithm:)``).
    public func isValidSignature<Bytes: Collection>(_ signature: [UInt8], for message: Bytes, algorithm: DigestAlgorithm) -> Bool
    where Bytes.Element == UInt8 {
        guard let digest = try? algorithm.digest(message) else {
            OpenSSLErrorQueue.clear()
            return false
        }
        return isValidSignature(signature, forDigest: digest, algorithm: algorithm)
    }

    /// The payload recovered from a PKCS#1 v1.5 signature without assuming a digest: normally a DER DigestInfo,
    /// so an inspector can tell which digest the signer really used. `nil` if the signature does not decrypt and unpad.
    public func recoveredDigestInfo(from signature: [UInt8]) -> [UInt8]? {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard !signature.isEmpty else { return nil }
        let recovered = try? backing.withOperationContext(failure: .signingFailed) { context -> [UInt8]? in
            guard EVP_PKEY_verify_recover_init(context) == 1,
                EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) > 0
            else { return nil }
            var output = [UInt8](repeating: 0, count: Int(EVP_PKEY_get_size(backing.pointer)))
            var outputLength = output.count
            let rc = output.withUnsafeMutableBufferPointer { buffer in
                EVP_PKEY_verify_recover(context, buffer.baseAddress, &outputLength, signature, signature.count)
            }
            guard rc == 1 else { return nil }
            output.removeSubrange(outputLength...)
            return output
        }
        return recovered ?? nil
    }

    /// Keys are equal when their SubjectPublicKeyInfo DER is.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.derRepresentation == rhs.derRepresentation
    }

    /// Hashes the DER, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derRepresentation)
    }
}
