import AppStoreVocabulary
import ForgeCrypto
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptCorpus
import ReceiptModel
package import _ForgeSupport
import JWSModel
import StoreModel

/// A JWS as `forge jws inspect` and `forge jws validate --json` show it: kind, header, certificates, payload
/// and nested JWS, decoded from the text (nothing verified; the checks are ``Inspection``'s).
package struct JWSInspection: InspectedArtefact {
    /// What ``describe(_:)`` read.
    let described: JSONObject

    /// Nil when the text is not a compact JWS.
    package init?(_ text: String) {
        guard let described = Self.describe(text)?.objectValue else { return nil }
        self.described = described
    }

    private init(described: JSONObject) { self.described = described }

    /// What is shown of a text that is not a compact JWS: no kind.
    static let unreadable = JWSInspection(described: [("kind", .null)])

    package var members: JSONObject { described }
    package var lines: [String] { Self.lines(.object(described)) }

    /// Header, certificates, payload and nested JWS, decoded; nil when the text is not a compact JWS. At most
    /// ``JWSLimits/maximumCertificates`` of `x5c` are decoded; `certificatesNotShown` counts the rest.
    static func describe(_ text: String) -> JSONValue? {
        guard let jws = try? CompactJWS(parsing: text), let header = try? JSONValue(parsing: jws.header), let payload = try? JSONValue(parsing: jws.payload) else {
            return nil
        }
        let entries = header["x5c"]?.arrayValue ?? []
        let certificates = entries.prefix(JWSLimits.maximumCertificates).map { entry -> JSONValue in
            guard let text = entry.stringValue, let der = base64(text), let certificate = try? X509Certificate(derEncoded: der) else {
                return .object([("unreadable", .bool(true))])
            }
            return certificateJSON(certificate)
        }
        var members: JSONObject = [
            ("kind", JWSVerifier.kind(of: payload).map { .string($0.rawValue) } ?? .null), ("header", header), ("certificates", .array(certificates)),
            ("payload", payload), ("signatureBytes", .integer(Int64(jws.signature.count))),
        ]
        if entries.count > certificates.count { members.append(("certificatesNotShown", .integer(Int64(entries.count - certificates.count)))) }
        var nested = JSONObject()
        for field in ["signedTransactionInfo", "signedRenewalInfo"] {
            if let inner = payload["data"]?[field]?.stringValue, let decoded = describe(inner) { nested.append((field, decoded)) }
        }
        if let inner = payload["appData"]?["signedAppTransactionInfo"]?.stringValue, let decoded = describe(inner) {
            nested.append(("signedAppTransactionInfo", decoded))
        }
        if !nested.isEmpty { members.append(("nested", .object(nested))) }
        return .object(members)
    }

    static func base64(_ text: String) -> [UInt8]? { Base64.decodeStandard(text) }

    static func certificateJSON(_ certificate: X509Certificate) -> JSONValue {
        let markers = [KnownOID.appleReceiptSigningMarker, KnownOID.appleWWDRIntermediateMarker].filter { certificate.hasExtension(oid: $0) }
        return .object([
            ("subject", .string(certificate.subject)), ("issuer", .string(certificate.issuer)),
            ("notBefore", .string(ReceiptDate.format(certificate.notBefore))), ("notAfter", .string(ReceiptDate.format(certificate.notAfter))),
            ("key", .string(certificate.publicKey.ec.map { "EC \($0.curve.rawValue)" } ?? "RSA")), ("isCA", .bool(certificate.isCA)),
            ("markers", .array(markers.map(JSONValue.string))), ("sha256Fingerprint", .string(hexString(certificate.sha256Fingerprint))),
        ])
    }

    /// Human-readable form of ``describe(_:)``.
    static func lines(_ value: JSONValue) -> [String] {
        var lines: [String] = []
        lines.append("kind: \(value["kind"]?.stringValue ?? "unknown")")
        lines.append("header: \((value["header"] ?? .null).withoutX5C.serialized(pretty: false))")
        for (index, certificate) in (value["certificates"]?.arrayValue ?? []).enumerated() {
            let markers = certificate["markers"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? ""
            lines.append(
                "x5c[\(index)]: \(certificate["subject"]?.stringValue ?? "unreadable") (\(certificate["key"]?.stringValue ?? "?"); "
                    + "\(certificate["notBefore"]?.stringValue ?? "?") → \(certificate["notAfter"]?.stringValue ?? "?")\(markers.isEmpty ? "" : "; markers \(markers)"))")
        }
        if let more = value["certificatesNotShown"]?.integerValue { lines.append("x5c: \(more) more entries not decoded") }
        lines.append("payload: " + (value["payload"] ?? .null).serialized())
        for (field, inner) in value["nested"]?.objectValue ?? [] {
            lines.append("\(field) (nested JWS):")
            // Every line indented, those of a pretty-printed payload too.
            lines += Self.lines(inner).joined(separator: "\n").split(separator: "\n").map { "  " + $0 }
        }
        return lines
    }
}

extension JSONValue {
    /// The header with `x5c` shortened to a count, for one readable line.
    fileprivate var withoutX5C: JSONValue {
        guard var object = objectValue else { return self }
        if let count = object["x5c"]?.arrayValue?.count { object["x5c"] = .string("[\(count) certificates]") }
        return .object(object)
    }
}
