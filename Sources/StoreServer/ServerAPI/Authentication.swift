#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import ForgeCrypto
import _ForgeSupport
import JWSModel

/// One App Store Connect API key as the server knows it: its key id and the P-256 public key its tokens are checked
/// with, read from the `.p8` App Store Connect issues (PKCS#8 `PRIVATE KEY`; SEC 1 `EC PRIVATE KEY` too) or from
/// its public key (`PUBLIC KEY`).
package struct ServerAPIKey: Sendable, Hashable {
    package let id: String
    package let publicKey: ECPublicKey

    /// A key whose public key is known; refuses any curve but P-256 (ES256 is ECDSA over P-256).
    package init(id: String, publicKey: ECPublicKey) throws(ServerAPIKeyError) {
        guard publicKey.curve == .p256 else {
            throw ServerAPIKeyError(.notP256, "the key is on \(publicKey.curve.rawValue); App Store Server API keys are EC P-256 (ES256)")
        }
        self.id = id
        self.publicKey = publicKey
    }

    /// The key in a PEM file: a private key (`.p8`) or a public one.
    package init(id: String, pem: String) throws(ServerAPIKeyError) {
        let publicKey: ECPublicKey
        if let privateKey = try? ECPrivateKey(pemRepresentation: pem) {
            publicKey = privateKey.publicKey
        } else if let key = try? ECPublicKey(pemRepresentation: pem) {
            publicKey = key
        } else {
            throw ServerAPIKeyError(.unreadable, "not an EC key in PEM (PRIVATE KEY as in a .p8, EC PRIVATE KEY or PUBLIC KEY)")
        }
        try self.init(id: id, publicKey: publicKey)
    }
}

/// Why a file is no API key.
package struct ServerAPIKeyError: CodedError, Sendable {
    package enum Code: String, Hashable, Sendable, CustomStringConvertible {
        /// Not an EC key in PEM.
        case unreadable
        /// An EC key on another curve than P-256.
        case notP256
        package var description: String { rawValue }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// The one rule of Apple's App Store Server API authentication a request broke; `rawValue` is its name in the
/// request log, `description` one line saying what was wrong. Neither ever holds the key or the token.
package enum ServerAPIAuthRule: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case missing = "authorization-missing"
    case notBearer = "authorization-not-bearer"
    case tooLarge = "token-too-large"
    case malformed = "token-malformed"
    case algorithm = "alg"
    case critical = "crit"
    case keyID = "kid"
    case signature = "signature"
    case audience = "aud"
    case bundleID = "bid"
    case issuer = "iss"
    case expirationMissing = "exp-missing"
    case expired = "exp-expired"
    case issuedAtInvalid = "iat-invalid"
    case issuedInFuture = "iat-future"
    case lifetime = "exp-after-iat"
    case lifetimeWithoutIssuedAt = "exp-too-far"

    package var description: String {
        switch self {
        case .missing: "no Authorization header"
        case .notBearer: "the Authorization header is not 'Bearer <token>'"
        case .tooLarge: "the Authorization header is over \(ServerAPIAuthenticator.maximumAuthorizationBytes) bytes"
        case .malformed: "the token is not a compact JWS whose header and payload are JSON objects"
        case .algorithm: "the header's alg is not ES256"
        case .critical: "the header has crit, naming extensions this server does not understand (RFC 7515 §4.1.11)"
        case .keyID: "the header's kid names no configured API key"
        case .signature: "the ES256 signature does not verify under the key kid names"
        case .audience: "aud is not appstoreconnect-v1"
        case .bundleID: "bid is missing or not an app this server serves"
        case .issuer: "iss is missing or not the configured issuer id"
        case .expirationMissing: "exp is missing or not a number"
        case .expired: "exp is not in the future"
        case .issuedAtInvalid: "iat is present but not a number"
        case .issuedInFuture: "iat is more than \(Int(ServerAPIAuthenticator.maximumClockSkew)) s ahead of the server's clock"
        case .lifetime: "exp is more than \(Int(ServerAPIAuthenticator.maximumLifetime / 60)) minutes after iat"
        case .lifetimeWithoutIssuedAt:
            "there is no iat and exp is more than \(Int(ServerAPIAuthenticator.maximumLifetime / 60)) minutes after the server's clock (\(Int(ServerAPIAuthenticator.maximumClockSkew)) s of skew allowed)"
        }
    }
}

/// The verdict on one request's `Authorization` header.
package enum ServerAPIAuthDecision: Sendable, Hashable {
    /// The token is good: signed by API key `keyID` for app `bundleID` (the request's app: its `bid`).
    case accepted(keyID: String, bundleID: String)
    /// Answer 401 with an empty body; log the rule.
    case rejected(ServerAPIAuthRule)
}

/// Apple's App Store Server API authentication, socket-free: `Authorization: Bearer <JWT>` signed ES256 with an
/// App Store Connect API key (https://developer.apple.com/documentation/appstoreserverapi/generating-json-web-tokens-for-api-requests).
///
/// What Apple's own clients send decides what is accepted: `iat` is optional, because the Python and Java clients of
/// app-store-server-library never send it (Swift and Node do); `typ` is not checked. A token lives at most
/// ``maximumLifetime``: counted from `iat`, or — without `iat` — from the server's clock (a missing `iat` is taken as
/// the latest one that would be accepted, so a token without it lives no longer than one with it; Apple's clients mint
/// 5 minutes). A header with `crit` is refused: it names extensions that must be understood, and this server
/// understands none (RFC 7515 §4.1.11). Every check is on bounded input: the header is refused past
/// ``maximumAuthorizationBytes`` before it is decoded.
package struct ServerAPIAuthenticator: Sendable {
    /// Apple's audience for App Store Connect and App Store Server API tokens.
    package static let audience = "appstoreconnect-v1"
    /// Bytes of the `Authorization` value read at all: Apple's clients send about 350 (a token with a 10-character
    /// kid and a reverse-DNS bid); 8 KiB leaves room for long claims and is far below any header limit.
    package static let maximumAuthorizationBytes = 8 << 10
    /// Seconds from `iat` to `exp` at most: "Tokens that expire more than 60 minutes after the time in iat are not valid".
    package static let maximumLifetime: TimeInterval = 3600
    /// Seconds `iat` may be ahead of the server's clock: a client's clock a little fast is tolerated, a token minted
    /// for later (which would outlive the 60 minutes counted from now) is not. Apple states no figure; one minute
    /// is the usual JWT leeway.
    package static let maximumClockSkew: TimeInterval = 60

    /// The API keys by key id (`kid`).
    package let keys: [String: ServerAPIKey]
    /// The issuer id (`iss`) of the App Store Connect team the keys belong to.
    package let issuerID: String
    /// The apps served: a token's `bid` must be one of them.
    package let bundleIDs: Set<String>

    package init(keys: [ServerAPIKey], issuerID: String, bundleIDs: Set<String>) {
        var byID: [String: ServerAPIKey] = [:]
        for key in keys { byID[key.id] = key }
        self.keys = byID
        self.issuerID = issuerID
        self.bundleIDs = bundleIDs
    }

    /// Judges a request's `Authorization` header (nil when absent) at `now`, the wall clock: clients mint tokens
    /// from their own clocks, so the scenario's clock (`--now`, `X-Forge-Now`) must not be passed here. With
    /// `expected`, `bid` must be that app; otherwise any app in ``bundleIDs``.
    package func check(authorization: String?, bundleID expected: String? = nil, now: Date) -> ServerAPIAuthDecision {
        guard let authorization else { return .rejected(.missing) }
        guard authorization.utf8.count <= Self.maximumAuthorizationBytes else { return .rejected(.tooLarge) }
        guard let token = Self.bearerToken(authorization) else { return .rejected(.notBearer) }
        guard let jws = try? CompactJWS(parsing: String(token)), let header = try? JSONValue(parsing: jws.header), header.objectValue != nil,
            let payload = try? JSONValue(parsing: jws.payload), payload.objectValue != nil
        else { return .rejected(.malformed) }

        guard header["alg"] == .string("ES256") else { return .rejected(.algorithm) }
        guard header["crit"] == nil else { return .rejected(.critical) }
        guard let keyID = header["kid"]?.stringValue, let key = keys[keyID] else { return .rejected(.keyID) }
        guard key.publicKey.isValidSignature(jws.signature, for: jws.signingInput, algorithm: .sha256) else {
            return .rejected(.signature)
        }

        guard payload["aud"] == .string(Self.audience) else { return .rejected(.audience) }
        guard let bundleID = payload["bid"]?.stringValue, expected.map({ $0 == bundleID }) ?? bundleIDs.contains(bundleID) else {
            return .rejected(.bundleID)
        }
        guard payload["iss"] == .string(issuerID) else { return .rejected(.issuer) }
        // NumericDate (RFC 7519 §2): seconds, possibly fractional; compared as Double, never converted to Int.
        guard let expiry = payload["exp"]?.numericValue else { return .rejected(.expirationMissing) }
        let clock = now.timeIntervalSince1970
        guard expiry > clock else { return .rejected(.expired) }
        if let issued = payload["iat"] {
            guard let issuedAt = issued.numericValue else { return .rejected(.issuedAtInvalid) }
            guard issuedAt <= clock + Self.maximumClockSkew else { return .rejected(.issuedInFuture) }
            guard expiry - issuedAt <= Self.maximumLifetime else { return .rejected(.lifetime) }
        } else {
            guard expiry - (clock + Self.maximumClockSkew) <= Self.maximumLifetime else { return .rejected(.lifetimeWithoutIssuedAt) }
        }
        return .accepted(keyID: keyID, bundleID: bundleID)
    }

    /// The token of `Bearer <token>`: the scheme in any case (RFC 9110 §11.1), then the token without white space.
    static func bearerToken(_ value: String) -> Substring? {
        let trimmed = value.trimmingWhitespace()
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "bearer" else { return nil }
        let token = trimmed[space...].drop { $0 == " " }
        guard !token.isEmpty, !token.contains(where: \.isWhitespace) else { return nil }
        return token
    }
}
