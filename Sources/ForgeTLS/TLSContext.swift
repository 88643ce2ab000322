internal import CTLS

/// A configured TLS endpoint (an `SSL_CTX` of the system's OpenSSL): a server's certificate chain and key, or a
/// client's trusted roots. Immutable once made, so one context is shared by every connection and thread; each
/// connection is a ``TLSHandler`` made from it.
///
/// Why not NIOSSL: it compiles BoringSSL from source, ~115 CPU-seconds of every debug build and ~124 of every release
/// build on the 2-core machine CI runs on, for the handful of calls below; OpenSSL is already linked for the crypto.
package final class TLSContext: @unchecked Sendable {
    enum Role: Sendable { case server, client }

    /// Owned here, freed in `deinit`; OpenSSL allows `SSL_new` from any thread on a context no longer changed.
    let pointer: OpaquePointer
    let role: Role

    private init(role: Role) throws {
        guard let pointer = SSL_CTX_new(role == .server ? TLS_server_method() : TLS_client_method()) else {
            throw TLSError(.configuration, "SSL_CTX_new failed\(OpenSSLErrors.drained())")
        }
        self.pointer = pointer
        self.role = role
        guard CTLS_SSL_CTX_set_min_proto_version(pointer, TLS1_2_VERSION) == 1 else {
            throw TLSError(.configuration, "cannot require TLS 1.2 or later\(OpenSSLErrors.drained())")
        }
        // A peer asking for handshake after handshake (TLS 1.2 renegotiation) would have us sign for it each time.
        _ = SSL_CTX_set_options(pointer, CTLS_refused_options())
    }

    deinit { SSL_CTX_free(pointer) }

    /// Whether the context refuses renegotiation (what `init` sets on every context).
    var refusesRenegotiation: Bool { CTLS_refuses_options(pointer) == 1 }

    /// A server presenting `chain` (DER, leaf first) with the leaf's key (PEM).
    package static func server(certificateChainDER chain: [[UInt8]], privateKeyPEM: String) throws -> TLSContext {
        ERR_clear_error()
        let context = try TLSContext(role: .server)
        guard !chain.isEmpty else { throw TLSError(.configuration, "no certificate to present") }
        for (index, der) in chain.enumerated() {
            let certificate = try Certificate(der: der, index: index)
            let added = index == 0 ? SSL_CTX_use_certificate(context.pointer, certificate.pointer) : CTLS_SSL_CTX_add1_chain_cert(context.pointer, certificate.pointer)
            guard added == 1 else { throw TLSError(.configuration, "certificate \(index) of the chain was refused\(OpenSSLErrors.drained())") }
        }
        let key = try privateKeyPEM.withCString { text throws -> OpaquePointer in
            guard let bio = BIO_new_mem_buf(text, -1) else { throw TLSError(.configuration, "BIO_new_mem_buf failed") }
            defer { BIO_free(bio) }
            guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
                throw TLSError(.configuration, "the private key is not PEM\(OpenSSLErrors.drained())")
            }
            return key
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context.pointer, key) == 1, SSL_CTX_check_private_key(context.pointer) == 1 else {
            throw TLSError(.configuration, "the private key does not match the certificate\(OpenSSLErrors.drained())")
        }
        return context
    }

    /// A client that verifies the server's chain (and, per connection, its name or address) against `trustedRootsPEM`
    /// and, when `systemRoots`, the system's roots.
    package static func client(trustedRootsPEM: String?, systemRoots: Bool) throws -> TLSContext {
        ERR_clear_error()
        let context = try TLSContext(role: .client)
        SSL_CTX_set_verify(context.pointer, SSL_VERIFY_PEER, nil)
        if systemRoots, SSL_CTX_set_default_verify_paths(context.pointer) != 1 {
            throw TLSError(.configuration, "cannot read the system's trusted certificates\(OpenSSLErrors.drained())")
        }
        if let trustedRootsPEM {
            guard let store = SSL_CTX_get_cert_store(context.pointer) else { throw TLSError(.configuration, "the context has no certificate store") }
            let added = try trustedRootsPEM.withCString { text throws -> Int in
                guard let bio = BIO_new_mem_buf(text, -1) else { throw TLSError(.configuration, "BIO_new_mem_buf failed") }
                defer { BIO_free(bio) }
                var added = 0
                while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                    defer { X509_free(certificate) }
                    guard X509_STORE_add_cert(store, certificate) == 1 else {
                        throw TLSError(.configuration, "trusted certificate \(added) was refused\(OpenSSLErrors.drained())")
                    }
                    added += 1
                }
                ERR_clear_error()  // the reader's "no start line" that ends the loop
                return added
            }
            guard added > 0 else { throw TLSError(.configuration, "the trusted certificates hold no PEM certificate") }
        }
        return context
    }
}

/// One DER certificate parsed by OpenSSL, freed when this goes.
private final class Certificate {
    let pointer: OpaquePointer

    init(der: [UInt8], index: Int) throws {
        let parsed = der.withUnsafeBufferPointer { bytes -> OpaquePointer? in
            var cursor = bytes.baseAddress
            return d2i_X509(nil, &cursor, bytes.count)
        }
        guard let parsed else { throw TLSError(.configuration, "certificate \(index) of the chain is not DER\(OpenSSLErrors.drained())") }
        pointer = parsed
    }

    deinit { X509_free(pointer) }
}

/// OpenSSL's per-thread error queue, read as text and emptied.
enum OpenSSLErrors {
    /// "": nothing queued; else ": reason; reason" for appending to a message.
    static func drained() -> String {
        var reasons: [String] = []
        while case let error = ERR_get_error(), error != 0 {
            guard reasons.count < 8 else { continue }
            if let reason = ERR_reason_error_string(error) { reasons.append(String(cString: reason)) } else { reasons.append("error \(error)") }
        }
        return reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ")
    }
}
