internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The NIST curves Apple's JWS PKI uses: P-384 (Apple Root CA - G3, WWDR G6) and P-256 (the signing leaf).
public enum ECCurve: String, Sendable, Hashable, CaseIterable {
    case p256 = "P-256"
    case p384 = "P-384"

    var nid: Int32 { self == .p256 ? NID_X9_62_prime256v1 : NID_secp384r1 }
    /// Bytes of a scalar or coordinate (and of r and s in a raw JWS signature).
    public var byteCount: Int { self == .p256 ? 32 : 48 }

    init?(nid: Int32) {
        switch nid {
        case NID_X9_62_prime256v1: self = .p256
        case NID_secp384r1: self = .p384
        default: return nil
        }
    }
}

/// An EC public key on P-256 or P-384, identified by its SubjectPublicKeyInfo DER.
public struct ECPublicKey: Sendable, Hashable {
    let backing: EVPKeyBacking
    public let derRepresentation: [UInt8]
    public let curve: ECCurve

    init(backing: EVPKeyBacking) throws {
        guard EVP_PKEY_get_base_id(backing.pointer) == EVP_PKEY_EC else { throw ForgeCryptoError(.keyParsingFailed, "not an EC key") }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(backing.pointer, "group", &name, name.count, &length) == 1,
            let curve = ECCurve(nid: OBJ_sn2nid(name)) ?? ECCurve(nid: OBJ_ln2nid(name)) ?? ECCurve(nid: EC_curve_nist2nid(name))
        else {
            throw ForgeCryptoError(.unsupportedAlgorithm, "EC keys on P-256 and P-384 only")
        }
        self.backing = backing
        self.curve = curve
        self.derRepresentation = try backing.subjectPublicKeyInfo(failure: .keyParsingFailed)
    }

    /// Parses SubjectPublicKeyInfo DER.
    public init(derRepresentation: [UInt8]) throws {
        OpenSSLErrorQueue.clear()
        let backing = try decodedExactly(
            derRepresentation, failure: .keyParsingFailed, function: "d2i_PUBKEY", decode: { d2i_PUBKEY(nil, $0, $1) },
            takeOwnership: { EVPKeyBacking(takingOwnershipOf: $0) })
        try self.init(backing: backing)
    }

    /// Parses the first `PUBLIC KEY` PEM block (SubjectPublicKeyInfo), as `openssl pkey -pubout` writes it.
    public init(pemRepresentation: String) throws {
        let blocks = try pemBlocks(in: pemRepresentation, labeled: ["PUBLIC KEY"], failure: .keyParsingFailed, stoppingAfterFirst: true)
        try self.init(derRepresentation: blocks[0])
    }

    /// Checks a raw `r‖s` signature (JWS, RFC 7518 §3.4) over `message`; any other length is invalid.
    public func isValidSignature<Bytes: Collection>(_ signature: [UInt8], for message: Bytes, algorithm: DigestAlgorithm) -> Bool
    where Bytes.Element == UInt8 {
        guard signature.count == 2 * curve.byteCount, let der = ECDSASignature.der(r: Array(signature.prefix(curve.byteCount)), s: Array(signature.suffix(curve.byteCount))) else {
            return false
        }
        return isValidDERSignature(der, for: message, algorithm: algorithm)
    }

    /// Checks an X9.62 DER `ECDSA-Sig-Value` over `message` (certificates carry these).
    public func isValidDERSignature<Bytes: Collection>(_ der: [UInt8], for message: Bytes, algorithm: DigestAlgorithm) -> Bool where Bytes.Element == UInt8 {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let method = try? algorithm.fetchedMethod, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, method, nil, backing.pointer) == 1 else { return false }
        // A JWS's signing input can be a megabyte: verified where it lies when it is contiguous.
        func verify(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool { EVP_DigestVerify(context, der, der.count, bytes.baseAddress, bytes.count) == 1 }
        return message.withContiguousStorageIfAvailable(verify) ?? Array(message).withUnsafeBufferPointer(verify)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.derRepresentation == rhs.derRepresentation }
    public func hash(into hasher: inout Hasher) { hasher.combine(derRepresentation) }
}

/// An EC private key that signs deterministically (RFC 6979): the same key and message always give the
/// same signature, so forged JWS and EC certificates regenerate byte for byte. OpenSSL 3.0 has no
/// deterministic ECDSA, so the nonce is derived here and the signature computed with OpenSSL's bignums.
public struct ECPrivateKey: Sendable {
    let backing: EVPKeyBacking
    public let publicKey: ECPublicKey
    public var curve: ECCurve { publicKey.curve }
    /// The private scalar, big-endian, `curve.byteCount` bytes.
    let scalar: [UInt8]

    init(backing: EVPKeyBacking) throws {
        let publicKey = try ECPublicKey(backing: backing)
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(backing.pointer, "priv", &number) == 1, let number else {
            throw ForgeCryptoError(.keyParsingFailed, "EVP_PKEY_get_bn_param(priv): not a private key")
        }
        defer { BN_clear_free(number) }
        var scalar = [UInt8](repeating: 0, count: publicKey.curve.byteCount)
        guard BN_bn2binpad(number, &scalar, Int32(scalar.count)) == Int32(scalar.count) else {
            throw ForgeCryptoError(.keyParsingFailed, "the private scalar does not fit the curve")
        }
        self.backing = backing
        self.publicKey = publicKey
        self.scalar = scalar
    }

    /// Parses the first unencrypted PEM key: PKCS#8 (`PRIVATE KEY`) or SEC 1 (`EC PRIVATE KEY`).
    public init(pemRepresentation: String) throws {
        let blocks = try pemBlocks(in: pemRepresentation, labeled: ["PRIVATE KEY", "EC PRIVATE KEY"], failure: .keyParsingFailed, stoppingAfterFirst: true)
        OpenSSLErrorQueue.clear()
        let backing = try decodedExactly(
            blocks[0], failure: .keyParsingFailed, function: "d2i_AutoPrivateKey", decode: { d2i_AutoPrivateKey(nil, $0, $1) },
            takeOwnership: { EVPKeyBacking(takingOwnershipOf: $0) })
        try self.init(backing: backing)
    }

    /// The key with this private scalar (big-endian; the public key is derived), as in RFC 6979's test vectors.
    public init(scalar: [UInt8], curve: ECCurve) throws {
        guard scalar.count == curve.byteCount else { throw ForgeCryptoError(.invalidInput, "a \(curve.rawValue) scalar has \(curve.byteCount) bytes") }
        // SEC 1 ECPrivateKey { version 1, privateKey, [0] namedCurve }.
        let oid: [UInt8] = curve == .p256 ? [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07] : [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]
        let der = DER.sequence([[0x02, 0x01, 0x01], DER.element(tag: 0x04, contents: scalar), DER.element(tag: 0xA0, contents: oid)])
        OpenSSLErrorQueue.clear()
        let backing = try decodedExactly(
            der, failure: .keyParsingFailed, function: "d2i_PrivateKey(EC)", decode: { d2i_PrivateKey(EVP_PKEY_EC, nil, $0, $1) },
            takeOwnership: { EVPKeyBacking(takingOwnershipOf: $0) })
        try self.init(backing: backing)
    }

    /// A fresh key (for `forge ca init`); the only randomised EC operation here.
    public static func generate(curve: ECCurve) throws -> ECPrivateKey {
        OpenSSLErrorQueue.clear()
        guard let key = COpenSSL_EC_gen(curve == .p256 ? "P-256" : "P-384") else {
            throw ForgeCryptoError(.keyGenerationFailed, "EVP_EC_gen(\(curve.rawValue))")
        }
        return try ECPrivateKey(backing: EVPKeyBacking(takingOwnershipOf: key))
    }

    /// The key as unencrypted PKCS#8 PEM.
    public var pemRepresentation: String {
        get throws {
            try backing.privateKeyPEM()
        }
    }

    /// The key as unencrypted PKCS#8 PEM whose inner SEC 1 key carries its public key, as App Store Connect's `.p8`
    /// files do: a key made from a scalar is otherwise written without it. Encoded from a copy (this key is shared, never changed).
    public var pemRepresentationIncludingPublicKey: String {
        get throws {
            OpenSSLErrorQueue.clear()
            guard let copy = EVP_PKEY_dup(backing.pointer) else { throw ForgeCryptoError(.keyEncodingFailed, "EVP_PKEY_dup") }
            let owned = EVPKeyBacking(takingOwnershipOf: copy)
            guard EVP_PKEY_set_int_param(copy, OSSL_PKEY_PARAM_EC_INCLUDE_PUBLIC, 1) == 1 else {
                throw ForgeCryptoError(.keyEncodingFailed, "EVP_PKEY_set_int_param(include-public)")
            }
            return try owned.privateKeyPEM()
        }
    }

    /// The raw `r‖s` signature of `message` (JWS ES256 with SHA-256 on P-256), nonce by RFC 6979.
    public func signature<Bytes: Collection>(for message: Bytes, algorithm: DigestAlgorithm) throws -> [UInt8] where Bytes.Element == UInt8 {
        try signature(forDigest: try algorithm.digest(message), algorithm: algorithm)
    }

    /// The raw `r‖s` signature of a digest made with `algorithm` (which also keys RFC 6979's HMAC).
    public func signature(forDigest digest: [UInt8], algorithm: DigestAlgorithm) throws -> [UInt8] {
        try ECDSASignature.sign(digest: digest, scalar: scalar, curve: curve, hash: algorithm)
    }

    /// The X9.62 DER form of ``signature(forDigest:algorithm:)``, as certificates carry it.
    public func derSignature(forDigest digest: [UInt8], algorithm: DigestAlgorithm) throws -> [UInt8] {
        let raw = try signature(forDigest: digest, algorithm: algorithm)
        guard let der = ECDSASignature.der(r: Array(raw.prefix(curve.byteCount)), s: Array(raw.suffix(curve.byteCount))) else {
            throw ForgeCryptoError(.signingFailed, "i2d_ECDSA_SIG")
        }
        return der
    }
}

/// ECDSA with an RFC 6979 nonce, on OpenSSL's bignums and curve arithmetic.
enum ECDSASignature {
    /// `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }` from big-endian r and s.
    static func der(r: [UInt8], s: [UInt8]) -> [UInt8]? {
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let rNumber = BN_bin2bn(r, Int32(r.count), nil) else { return nil }
        guard let sNumber = BN_bin2bn(s, Int32(s.count), nil) else {
            BN_free(rNumber)
            return nil
        }
        guard ECDSA_SIG_set0(signature, rNumber, sNumber) == 1 else {
            BN_free(rNumber)
            BN_free(sNumber)
            return nil
        }
        return try? encodedDER(failure: .signingFailed, context: "i2d_ECDSA_SIG") { i2d_ECDSA_SIG(signature, $0) }
    }

    /// Big-endian r and s, each `curve.byteCount` bytes, from DER; nil when it is not an ECDSA-Sig-Value.
    static func raw(der: [UInt8], curve: ECCurve) -> [UInt8]? {
        var cursor: UnsafePointer<UInt8>? = nil
        return der.withUnsafeBufferPointer { buffer -> [UInt8]? in
            cursor = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else { return nil }
            defer { ECDSA_SIG_free(signature) }
            var out = [UInt8](repeating: 0, count: 2 * curve.byteCount)
            guard let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature),
                out.withUnsafeMutableBufferPointer({ BN_bn2binpad(r, $0.baseAddress, Int32(curve.byteCount)) }) == Int32(curve.byteCount),
                out.withUnsafeMutableBufferPointer({ BN_bn2binpad(s, $0.baseAddress.map { $0 + curve.byteCount }, Int32(curve.byteCount)) })
                    == Int32(curve.byteCount)
            else { return nil }
            return out
        }
    }

    /// s = k⁻¹(e + r·d) mod n with r = x(k·G) mod n, k from RFC 6979 §3.2 (HMAC with `hash`).
    static func sign(digest: [UInt8], scalar: [UInt8], curve: ECCurve, hash: DigestAlgorithm) throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        let numbers = try BigNumbers()
        guard let group = (curve == .p256 ? ECGroup.p256 : ECGroup.p384)?.pointer else { throw ForgeCryptoError(.signingFailed, "EC_GROUP_new_by_curve_name") }
        guard let point = EC_POINT_new(group) else { throw ForgeCryptoError(.signingFailed, "EC_POINT_new") }
        defer { EC_POINT_free(point) }
        let order = try numbers.make()
        guard EC_GROUP_get_order(group, order, numbers.context) == 1 else { throw ForgeCryptoError(.signingFailed, "EC_GROUP_get_order") }
        let length = curve.byteCount
        // bits2int: the leftmost qlen bits; qlen is a whole number of bytes on both curves.
        let e = try numbers.make(Array(digest.prefix(length)))
        let d = try numbers.make(scalar)
        var nonces = try RFC6979Nonces(scalar: scalar, digest: digest, order: order, length: length, hash: hash, numbers: numbers)
        let (k, x, r, s, t) = (try numbers.make(), try numbers.make(), try numbers.make(), try numbers.make(), try numbers.make())
        for _ in 0..<64 {
            try nonces.next(into: k)
            guard EC_POINT_mul(group, point, k, nil, nil, numbers.context) == 1,
                EC_POINT_get_affine_coordinates(group, point, x, nil, numbers.context) == 1,
                BN_nnmod(r, x, order, numbers.context) == 1
            else { throw ForgeCryptoError(.signingFailed, "k·G") }
            if BN_is_zero(r) == 1 { continue }
            guard BN_mod_mul(t, r, d, order, numbers.context) == 1, BN_mod_add(t, t, e, order, numbers.context) == 1,
                BN_mod_inverse(k, k, order, numbers.context) != nil, BN_mod_mul(s, k, t, order, numbers.context) == 1
            else { throw ForgeCryptoError(.signingFailed, "s = k⁻¹(e + r·d)") }
            if BN_is_zero(s) == 1 { continue }
            var out = [UInt8](repeating: 0, count: 2 * length)
            guard BN_bn2binpad(r, &out, Int32(length)) == Int32(length) else { throw ForgeCryptoError(.signingFailed, "r") }
            let tail = out.withUnsafeMutableBufferPointer { BN_bn2binpad(s, $0.baseAddress.map { $0 + length }, Int32(length)) }
            guard tail == Int32(length) else { throw ForgeCryptoError(.signingFailed, "s") }
            return out
        }
        throw ForgeCryptoError(.signingFailed, "no usable nonce")
    }
}

/// The HMAC-DRBG of RFC 6979 §3.2, steps b–h: candidate nonces for one key and message.
struct RFC6979Nonces {
    private var key: [UInt8]
    private var value: [UInt8]
    private let order: OpaquePointer
    private let length: Int
    private let hash: DigestAlgorithm
    private let numbers: BigNumbers
    private var first = true

    init(scalar: [UInt8], digest: [UInt8], order: OpaquePointer, length: Int, hash: DigestAlgorithm, numbers: BigNumbers) throws {
        self.order = order
        self.length = length
        self.hash = hash
        self.numbers = numbers
        // bits2octets(h1) = int2octets(bits2int(h1) mod q).
        let z1 = try numbers.make(Array(digest.prefix(length)))
        if BN_cmp(z1, order) >= 0 { guard BN_sub(z1, z1, order) == 1 else { throw ForgeCryptoError(.signingFailed, "bits2octets") } }
        var octets = [UInt8](repeating: 0, count: length)
        guard BN_bn2binpad(z1, &octets, Int32(length)) == Int32(length) else { throw ForgeCryptoError(.signingFailed, "bits2octets") }
        let seed = scalar + octets
        value = [UInt8](repeating: 0x01, count: hash.digestLength)
        key = [UInt8](repeating: 0x00, count: hash.digestLength)
        key = try mac(key, value + [0x00] + seed)
        value = try mac(key, value)
        key = try mac(key, value + [0x01] + seed)
        value = try mac(key, value)
    }

    private func mac(_ key: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: hash.digestLength)
        var outLength: UInt32 = 0
        guard HMAC(try hash.fetchedMethod, key, Int32(key.count), data, data.count, &out, &outLength) != nil, Int(outLength) == out.count else {
            throw ForgeCryptoError(.signingFailed, "HMAC")
        }
        return out
    }

    /// The next k with 1 ≤ k < q (step h), written into `k`.
    mutating func next(into k: OpaquePointer) throws {
        while true {
            if !first {
                key = try mac(key, value + [0x00])
                value = try mac(key, value)
            }
            first = false
            var t: [UInt8] = []
            while t.count < length {
                value = try mac(key, value)
                t += value
            }
            guard BN_bin2bn(t, Int32(length), k) != nil else { throw ForgeCryptoError(.signingFailed, "BN_bin2bn") }
            if BN_is_zero(k) != 1, BN_cmp(k, order) < 0 { return }
        }
    }
}

/// Bignums of one signing operation, freed together (cleared, as they hold secrets).
final class BigNumbers {
    let context: OpaquePointer
    private var owned: [OpaquePointer] = []

    init() throws {
        guard let context = BN_CTX_new() else { throw ForgeCryptoError(.signingFailed, "BN_CTX_new") }
        self.context = context
    }

    func make(_ bytes: [UInt8] = []) throws -> OpaquePointer {
        guard let number = bytes.isEmpty ? BN_new() : BN_bin2bn(bytes, Int32(bytes.count), nil) else { throw ForgeCryptoError(.signingFailed, "BN_new") }
        owned.append(number)
        return number
    }

    deinit {
        owned.forEach { BN_clear_free($0) }
        BN_CTX_free(context)
    }
}

/// One `EC_GROUP` per curve for the process (with OpenSSL's precomputed generator multiples), owned here.
///
/// `@unchecked Sendable` invariant: the group is never modified after creation; OpenSSL only reads it
/// during point multiplication, which is safe from several threads at once.
final class ECGroup: @unchecked Sendable {
    let pointer: OpaquePointer

    private init?(nid: Int32) {
        guard let group = EC_GROUP_new_by_curve_name(nid) else { return nil }
        pointer = group
    }

    deinit { EC_GROUP_free(pointer) }

    static let p256 = ECGroup(nid: ECCurve.p256.nid)
    static let p384 = ECGroup(nid: ECCurve.p384.nid)
}

/// HMAC-SHA-256 (JWS HS256), for the forge's algorithm-confusion vectors.
public enum HMACSHA256 {
    public static func mac(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard HMAC(try DigestAlgorithm.sha256.fetchedMethod, key, Int32(key.count), message, message.count, &out, &length) != nil, length == 32 else {
            throw ForgeCryptoError(.signingFailed, "HMAC-SHA-256")
        }
        return out
    }
}
