import ForgeCrypto
import ReceiptModel
package import _ForgeSupport

/// An iOS 6 transaction receipt as `forge inspect` shows it: the outer keys, the signature blob (version, lengths,
/// certificate) and every key of `purchase-info`, each decoded as far as it goes (nothing verified; the checks are
/// ``Inspection``'s). What does not decode says why in its place.
package struct TransactionReceiptInspection: InspectedArtefact {
    let described: JSONObject

    /// Nil when the bytes are neither an old-style plist nor its base64.
    package init?(_ input: [UInt8], source: String) {
        guard let outerBytes = TransactionReceipt.outerBytes(input) else { return nil }
        var members: JSONObject = [("source", .string(source)), ("kind", .string("transaction-receipt")), ("bytes", .integer(Int64(outerBytes.count)))]
        let outer: OldStylePlist.Value
        do throws(ReceiptDecodingError) { outer = try OldStylePlist.parse(outerBytes) } catch {
            members.append(("outerError", .string("\(error)")))
            described = members
            return
        }
        members.append(("outer", Self.json(outer)))
        let entries: [OldStylePlist.Entry] = if case .dictionary(let entries) = outer { entries } else { [] }
        func string(_ key: TransactionReceipt.OuterKey) -> String? {
            entries.first { $0.key == key.rawValue }.flatMap { if case .string(let text) = $0.value { text } else { nil } }
        }
        if let text = string(.signature) {
            members.append(("signature", Self.signature(text)))
        }
        if let text = string(.purchaseInfo) {
            if let bytes = Base64.decodeStandard(text) {
                do throws(ReceiptDecodingError) {
                    members.append(("purchaseInfo", Self.json(try OldStylePlist.parse(bytes, region: "purchase-info byte"))))
                } catch {
                    members.append(("purchaseInfoError", .string("\(error)")))
                }
            } else {
                members.append(("purchaseInfoError", .string("not base64")))
            }
        }
        described = members
    }

    package var members: JSONObject { described }

    /// Why the outer plist does not read, when it does not: the input is then no transaction receipt to show.
    package var unreadable: String? { described["outerError"]?.stringValue.map { "the outer plist \($0)" } }

    package var lines: [String] {
        var lines = ["\(described["source"]?.stringValue ?? ""): iOS 6 transaction receipt, \(described["bytes"]?.integerValue ?? 0) bytes (old-style plist)"]
        if let error = described["outerError"]?.stringValue { lines.append("outer plist: unreadable \(error)") }
        if let outer = described["outer"]?.objectValue {
            lines.append("outer:")
            for (key, value) in outer {
                let shown = key == "signature" || key == "purchase-info" ? "[\(value.stringValue?.utf8.count ?? 0) base64 characters]" : value.serialized()
                lines.append("  \(key) = \(shown)")
            }
        }
        if let signature = described["signature"] {
            if let error = signature["error"]?.stringValue {
                lines.append("signature blob: unreadable \(error)")
            } else {
                lines.append(
                    "signature blob: version \(signature["version"]?.integerValue ?? 0), \(signature["signatureBytes"]?.integerValue ?? 0)-byte signature, certificate length \(signature["certificateLength"]?.integerValue ?? 0)"
                )
                if let certificate = signature["certificate"] {
                    let markers = certificate["markers"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? ""
                    lines.append(
                        "certificate: \(certificate["subject"]?.stringValue ?? "unreadable") (\(certificate["key"]?.stringValue ?? "?"); issuer \(certificate["issuer"]?.stringValue ?? "?"); \(certificate["notBefore"]?.stringValue ?? "?") → \(certificate["notAfter"]?.stringValue ?? "?")\(markers.isEmpty ? "" : "; markers \(markers)"))"
                    )
                }
            }
        }
        if let error = described["purchaseInfoError"]?.stringValue { lines.append("purchase-info: unreadable \(error)") }
        if let info = described["purchaseInfo"]?.objectValue {
            lines.append("purchase-info:")
            for (key, value) in info { lines.append("  \(key) = \(value.serialized())") }
        }
        return lines
    }

    /// The blob's fields; its certificate as the JWS inspection shows certificates.
    static func signature(_ text: String) -> JSONValue {
        guard let blob = Base64.decodeStandard(text) else { return .object([("error", .string("not base64"))]) }
        let signature: TransactionReceiptSignature
        do throws(ReceiptDecodingError) { signature = try TransactionReceiptSignature(decoding: blob) } catch {
            return .object([("error", .string("\(error)")), ("bytes", .integer(Int64(blob.count)))])
        }
        var members: JSONObject = [
            ("version", .integer(Int64(signature.version))), ("signatureBytes", .integer(Int64(signature.signature.count))),
            ("certificateLength", .integer(Int64(signature.declaredCertificateLength))),
        ]
        if let certificate = try? X509Certificate(derEncoded: signature.certificate) {
            var json = JWSInspection.certificateJSON(certificate)
            if case .object(var object) = json, certificate.hasExtension(oid: TransactionReceiptValidator.purchaseReceiptMarker) {
                object["markers"] = .array((object["markers"]?.arrayValue ?? []) + [.string(TransactionReceiptValidator.purchaseReceiptMarker)])
                object["key"] = .string(certificate.publicKey.rsa.map { "RSA-\($0.bitCount)" } ?? "not RSA")
                json = .object(object)
            } else if case .object(var object) = json {
                object["key"] = .string(certificate.publicKey.rsa.map { "RSA-\($0.bitCount)" } ?? "not RSA")
                json = .object(object)
            }
            members.append(("certificate", json))
        } else {
            members.append(("certificate", .object([("unreadable", .bool(true))])))
        }
        return .object(members)
    }

    /// A plist value as JSON: strings as strings, data as hex, duplicate keys kept (the JSON object then has the key twice,
    /// as the plist does).
    static func json(_ value: OldStylePlist.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .data(let bytes): .object([("data", .string(hexString(bytes)))])
        case .array(let values): .array(values.map(json))
        case .dictionary(let entries): .object(JSONObject(entries.map { ($0.key, json($0.value)) }))
        }
    }
}
