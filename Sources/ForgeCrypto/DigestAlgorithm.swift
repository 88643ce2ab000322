internal import COpenSSL

/// The message digests found in App Store receipts (PKCS#7 SignerInfo) and their certificate chains.
public enum DigestAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// MD5 and SHA-1 are broken, but old receipts and Apple's older chains use them, so they can be forged too.
    case md5, sha1
    /// The SHA-2 family.
    case sha256, sha384, sha512

    /// The OID used in `DigestAlgorithmIdentifier`s and DigestInfo structures.
    public var dottedOID: String {
        switch self {
        case .md5: "1.2.840.113549.2.5"
        case .sha1: "1.3.14.3.2.26"
        case .sha256: "2.16.840.1.101.3.4.2.1"
        case .sha384: "2.16.840.1.101.3.4.2.2"
        case .sha512: "2.16.840.1.101.3.4.2.3"
        }
    }

    /// Maps a `DigestAlgorithmIdentifier` OID back to the algorithm; `nil` for any OID ForgeCrypto does not handle.
    public init?(dottedOID: String) {
        guard let match = Self.allCases.first(where: { $0.dottedOID == dottedOID }) else { return nil }
        self = match
    }

    /// Output size in bytes; a digest passed to ``RSAPrivateKey/signature(forDigest:algorithm:)`` must have exactly this length.
    public var digestLength: Int {
        switch self {
        case .md5: 16
        case .sha1: 20
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    /// Hashes `bytes` in one shot. Contiguous collections (`[UInt8]`, `ArraySlice`, `Data`) are hashed in place without copying.
    public func digest<Bytes: Collection>(_ bytes: Bytes) throws -> [UInt8] where Bytes.Element == UInt8 {
        OpenSSLErrorQueue.clear()
        if let result = try bytes.withContiguousStorageIfAvailable({ try digest(of: UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return try Array(bytes).withUnsafeBytes { try digest(of: $0) }
    }

    private func digest(of input: UnsafeRawBufferPointer) throws -> [UInt8] {
        let method = try fetchedMethod
        var output = [UInt8](repeating: 0, count: digestLength)
        var outputLength: UInt32 = 0
        let rc = output.withUnsafeMutableBufferPointer { buffer in
            EVP_Digest(input.baseAddress, input.count, buffer.baseAddress, &outputLength, method, nil)
        }
        guard rc == 1, outputLength == digestLength else {
            throw ForgeCryptoError(.digestFailed, "EVP_Digest(\(openSSLName))")
        }
        return output
    }

    /// OpenSSL's fetch name for the algorithm.
    private var openSSLName: String {
        switch self {
        case .md5: "MD5"
        case .sha1: "SHA1"
        case .sha256: "SHA256"
        case .sha384: "SHA384"
        case .sha512: "SHA512"
        }
    }

    /// The process-wide `EVP_MD` for this algorithm; throws when the loaded providers do not offer it.
    var fetchedMethod: OpaquePointer {
        get throws {
            let fetched: FetchedDigestMethod? =
                switch self {
                case .md5: Self.md5Method
                case .sha1: Self.sha1Method
                case .sha256: Self.sha256Method
                case .sha384: Self.sha384Method
                case .sha512: Self.sha512Method
                }
            guard let fetched else {
                throw ForgeCryptoError(.unsupportedAlgorithm, "EVP_MD_fetch(\(openSSLName)): not offered by the loaded OpenSSL providers")
            }
            return fetched.pointer
        }
    }

    // Fetched once: OpenSSL 3 re-fetches implicitly on every call that is given a legacy `EVP_sha256()`-style method.
    private static let md5Method = FetchedDigestMethod(fetching: DigestAlgorithm.md5.openSSLName)
    private static let sha1Method = FetchedDigestMethod(fetching: DigestAlgorithm.sha1.openSSLName)
    private static let sha256Method = FetchedDigestMethod(fetching: DigestAlgorithm.sha256.openSSLName)
    private static let sha384Method = FetchedDigestMethod(fetching: DigestAlgorithm.sha384.openSSLName)
    private static let sha512Method = FetchedDigestMethod(fetching: DigestAlgorithm.sha512.openSSLName)
}

/// Owns one explicitly fetched `EVP_MD`.
///
/// `@unchecked Sendable` invariant: `pointer` is never mutated after init, and a fetched `EVP_MD` is
/// immutable and documented by OpenSSL as safe to share between threads.
final class FetchedDigestMethod: @unchecked Sendable {
    let pointer: OpaquePointer

    init(takingOwnershipOf pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Fetches `name` from the default library context; `nil` (with the error queue cleared) if no provider offers it.
    convenience init?(fetching name: String) {
        guard let pointer = EVP_MD_fetch(nil, name, nil) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        self.init(takingOwnershipOf: pointer)
    }

    deinit {
        EVP_MD_free(pointer)
    }
}
