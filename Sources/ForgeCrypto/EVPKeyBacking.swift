internal import COpenSSL

/// Owns one `EVP_PKEY` and is the only place that frees it.
///
/// `@unchecked Sendable` invariant: `pointer` is never mutated after init; it is only handed to
/// OpenSSL calls that read the key (signing, verification, encoding), which OpenSSL allows on a
/// shared `EVP_PKEY` from several threads at once.
final class EVPKeyBacking: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Made by the RSA-specific parser: a legacy RSA key with blinding off, signed through `RSA_sign`.
    let isLegacyRSA: Bool

    init(takingOwnershipOf pointer: OpaquePointer, legacyRSA: Bool = false) {
        self.pointer = pointer
        self.isLegacyRSA = legacyRSA
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// Whether the key is plain RSA (`rsaEncryption`); RSA-PSS-restricted and non-RSA keys are not.
    var isRSA: Bool {
        EVP_PKEY_get_base_id(pointer) == EVP_PKEY_RSA
    }

    /// The private key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    func privateKeyPEM() throws -> String {
        OpenSSLErrorQueue.clear()
        let bytes = try bytesWritten(failure: .keyEncodingFailed, context: "PEM_write_bio_PrivateKey") { bio in
            PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The SubjectPublicKeyInfo DER of the key's public half.
    func subjectPublicKeyInfo(failure code: ForgeCryptoError.Code) throws -> [UInt8] {
        try encodedDER(failure: code, context: "i2d_PUBKEY") { i2d_PUBKEY(pointer, $0) }
    }

    /// Runs `body` with a fresh `EVP_PKEY_CTX` for this key, freed afterwards.
    func withOperationContext<Result>(
        failure code: ForgeCryptoError.Code,
        _ body: (OpaquePointer) throws -> Result
    ) throws -> Result {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else {
            throw ForgeCryptoError(code, "EVP_PKEY_CTX_new_from_pkey")
        }
        defer { EVP_PKEY_CTX_free(context) }
        return try body(context)
    }
}
