import ReceiptModel
import ForgeCrypto
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptCorpus
package import _ForgeSupport
import StoreModel

/// A receipt as `forge inspect` and `forge validate --json` show it: the container's shape and every
/// attribute (the checks are ``Inspection``'s). Built from a `ValidationReport`, so the inspector and the
/// validator can never disagree about what the bytes say.
package struct ReceiptInspection: InspectedArtefact {
    package let report: ValidationReport
    /// Where the input came from, for the first line.
    package let source: String
    package let inputSize: Int

    package init(report: ValidationReport, source: String, inputSize: Int) {
        self.report = report
        self.source = source
        self.inputSize = inputSize
    }

    // MARK: Text

    package var lines: [String] {
        var lines = ["receipt: \(source) (\(inputSize) bytes\(report.transport.map { ", \($0.rawValue)" } ?? ""))"]
        if let container = report.container {
            lines += containerLines(container)
        }
        if let receipt = report.receipt {
            lines.append("payload: \(receipt.payload.entries.count) attributes, SET \(receipt.payload.isDERSorted ? "DER-sorted" : "not DER-sorted (order as written)")")
            for entry in receipt.payload.entries {
                if entry.attribute.type == AttributeType.inAppPurchase,
                    let purchase = try? DecodedPayload(berEncoded: entry.attribute.value, region: "in-app purchase byte")
                {
                    lines.append(
                        "  \(Inspection.pad("17", 5)) in_app                         v\(entry.attribute.version)  \(purchase.entries.count) attributes, \(purchase.isDERSorted ? "DER-sorted" : "not DER-sorted")"
                    )
                    for inner in purchase.entries { lines.append("    " + Self.attributeLine(inner.attribute)) }
                } else {
                    lines.append("  " + Self.attributeLine(entry.attribute))
                }
            }
        }
        return lines
    }

    private func containerLines(_ container: ReceiptContainer) -> [String] {
        let shape = container.shape
        var lines = ["container: PKCS#7 \(KnownOID.name(container.contentTypeOID) ?? container.contentTypeOID)"]
        lines.append("  lengths        \(shape.lengths)")
        lines.append("  SignedData     version \(shape.signedDataVersion), digestAlgorithms [\(shape.digestAlgorithmOIDs.map(Self.oidName).joined(separator: ", "))]")
        lines.append("  eContent       \(shape.eContent), type \(Self.oidName(container.encapsulatedContentTypeOID)), \(container.payload?.count ?? 0) payload bytes")
        let identities = container.certificates.compactMap { try? CertificateIdentity(derEncoded: $0) }
        lines.append("  certificates   \(container.certificates.count), order \(CertificateIdentity.order(of: identities).rawValue)")
        for (index, certificate) in report.certificates.enumerated() {
            lines.append("    [\(index)] \(certificate.subject)")
            lines.append(
                "        issuer \(certificate.issuer); serial \(hexString(certificate.serialNumber)); \(ReceiptDate.format(certificate.notBefore)) → \(ReceiptDate.format(certificate.notAfter)); \(Self.oidName(certificate.signatureAlgorithmOID))\(Self.markers(certificate))"
            )
            lines.append("        extensions \(Self.extensionSummary(certificate))")
        }
        if report.certificates.count < container.certificates.count {
            lines.append("    (\(container.certificates.count - report.certificates.count) embedded certificate(s) could not be parsed)")
        }
        for (index, signer) in container.signers.enumerated() {
            let match = identities.firstIndex { $0.matches(signer) }.map { "certificate [\($0)]" } ?? "no embedded certificate"
            lines.append(
                "  signer[\(index)]      v\(signer.version), sid → \(match), digest \(Self.oidName(signer.digestAlgorithmOID)), signature \(Self.oidName(signer.signatureAlgorithmOID)) (\(signer.signature.count) bytes), \(signer.signedAttributes == nil ? "no signed attributes" : "signed attributes present")\(signer.hasUnsignedAttributes ? ", unsigned attributes present" : "")"
            )
        }
        if shape.hasCRLs { lines.append("  crls           present") }
        if shape.trailingByteCount > 0 { lines.append("  trailing       \(shape.trailingByteCount) bytes after the ContentInfo") }
        return lines
    }

    static func markers(_ certificate: X509Certificate) -> String {
        var found: [String] = []
        if certificate.hasExtension(oid: KnownOID.appleReceiptSigningMarker) { found.append("receipt-signing marker") }
        if certificate.hasExtension(oid: KnownOID.appleWWDRIntermediateMarker) { found.append("WWDR marker") }
        if certificate.isSelfIssued { found.append("self-signed") }
        if certificate.isCA { found.append("CA") }
        return found.isEmpty ? "" : "; " + found.joined(separator: ", ")
    }

    static func oidName(_ oid: String) -> String { KnownOID.name(oid) ?? oid }

    /// Every extension in order, CRITICAL in capitals, with the values validators judge spelled out:
    /// `basicConstraints CRITICAL CA pathlen 0; keyUsage CRITICAL (keyCertSign, cRLSign); WWDR marker`.
    static func extensionSummary(_ certificate: X509Certificate) -> String {
        guard !certificate.extensions.isEmpty else { return "none" }
        return certificate.extensions.map { item in
            var text = oidName(item.oid) + (item.isCritical ? " CRITICAL" : "")
            switch item.oid {
            case "2.5.29.19": text += certificate.isCA ? " CA" + (certificate.pathLength.map { " pathlen \($0)" } ?? "") : " not CA"
            case "2.5.29.15": text += " (\((certificate.keyUsage ?? []).joined(separator: ", ")))"
            case "2.5.29.37": text += " (\((certificate.extendedKeyUsage ?? []).joined(separator: ", ")))"
            default: break
            }
            return text
        }.joined(separator: "; ")
    }

    /// `  2 bundle_id                 v1  UTF8String "com.example"`
    static func attributeLine(_ attribute: ReceiptAttribute) -> String {
        let name = AttributeType.named(attribute.type)?.name ?? "unknown"
        let described = describe(attribute)
        let number = String(attribute.type)
        return String(repeating: " ", count: max(0, 5 - number.count)) + number + " " + name.paddedColumn(30)
            + " v\(attribute.version)  \(described.tag) \(described.text)"
    }

    /// The value as a person reads it: quoted strings, numbers (with ASCII when that is what they are), hex otherwise.
    static func describe(_ attribute: ReceiptAttribute) -> (tag: String, text: String, json: JSONValue) {
        let reader = BERReader(attribute.value)
        let kind = AttributeType.named(attribute.type)?.kind
        if kind != .raw, kind != .attributeSet, let node = try? reader.node(at: 0), node.endOffset == attribute.value.count, !node.isConstructed {
            let content = Array(reader.content(of: node))
            switch node.identifier {
            case ASN1Tag.utf8String, ASN1Tag.ia5String, ASN1Tag.printableString:
                if let text = String(validating: content, as: UTF8.self) {
                    return (ASN1Tag.name(node.identifier), "\"\(text)\"", .string(text))
                }
            case ASN1Tag.integer:
                if let value = ASN1Value.integerValue(content) {
                    let ascii = content.count == 4 && content.allSatisfy { (0x20...0x7E).contains($0) }
                    return ("INTEGER", ascii ? "\(value) ('\(String(decoding: content, as: UTF8.self))')" : String(value), .integer(value))
                }
            default:
                break
            }
        }
        let preview = attribute.value.count > 40 ? hexString(attribute.value.prefix(40)) + "…" : hexString(attribute.value)
        return ("\(attribute.value.count) bytes", preview, .string(hexString(attribute.value)))
    }

    // MARK: JSON

    package var members: JSONObject {
        var members: JSONObject = [
            (
                "input",
                .object([
                    ("source", .string(source)), ("size", .integer(Int64(inputSize))),
                    ("transport", report.transport.map { .string($0.rawValue) } ?? .null),
                ])
            )
        ]
        if let container = report.container { members.append(("container", containerJSON(container))) }
        if let receipt = report.receipt {
            members.append(
                (
                    "payload",
                    .object([
                        ("derSorted", .bool(receipt.payload.isDERSorted)),
                        ("minimalLengths", .bool(receipt.payload.usesMinimalLengths)),
                        ("attributes", .array(receipt.payload.entries.map { Self.attributeJSON($0.attribute) })),
                    ])
                ))
            members.append(("decoded", VerifyReceiptJSON.receiptObject(receipt)))
        }
        return members
    }

    private func containerJSON(_ container: ReceiptContainer) -> JSONValue {
        let shape = container.shape
        let identities = container.certificates.compactMap { try? CertificateIdentity(derEncoded: $0) }
        let lengths: String =
            switch shape.lengths {
            case .definiteMinimal: "definite-minimal"
            case .definiteNonMinimal: "definite-non-minimal"
            case .indefinite: "indefinite"
            case .mixed: "mixed"
            }
        let eContent: JSONValue =
            switch shape.eContent {
            case .primitive: .object([("form", .string("primitive"))])
            case .constructed(let segments): .object([("form", .string("constructed")), ("segments", .integer(Int64(segments)))])
            case .absent: .object([("form", .string("absent"))])
            }
        return .object([
            ("contentType", .string(container.contentTypeOID)),
            ("lengths", .string(lengths)),
            ("signedDataVersion", .integer(shape.signedDataVersion)),
            ("digestAlgorithms", .array(shape.digestAlgorithmOIDs.map { .string($0) })),
            ("eContentType", .string(container.encapsulatedContentTypeOID)),
            ("eContent", eContent),
            ("payloadSize", .integer(Int64(container.payload?.count ?? 0))),
            ("certificateOrder", .string(CertificateIdentity.order(of: identities).rawValue)),
            (
                "certificates",
                .array(
                    report.certificates.map { certificate in
                        .object([
                            ("subject", .string(certificate.subject)), ("issuer", .string(certificate.issuer)),
                            ("serialNumber", .string(hexString(certificate.serialNumber))),
                            ("notBefore", .string(ReceiptDate.format(certificate.notBefore))),
                            ("notAfter", .string(ReceiptDate.format(certificate.notAfter))),
                            ("signatureAlgorithm", .string(certificate.signatureAlgorithmOID)),
                            ("receiptSigningMarker", .bool(certificate.hasExtension(oid: KnownOID.appleReceiptSigningMarker))),
                            ("wwdrMarker", .bool(certificate.hasExtension(oid: KnownOID.appleWWDRIntermediateMarker))),
                            ("isCA", .bool(certificate.isCA)),
                            ("keyUsage", certificate.keyUsage.map { .array($0.map(JSONValue.string)) } ?? .null),
                            ("extendedKeyUsage", certificate.extendedKeyUsage.map { .array($0.map(JSONValue.string)) } ?? .null),
                            (
                                "extensions",
                                .array(
                                    certificate.extensions.map { item in
                                        .object([
                                            ("oid", .string(item.oid)), ("name", KnownOID.name(item.oid).map(JSONValue.string) ?? .null),
                                            ("critical", .bool(item.isCritical)),
                                        ])
                                    })
                            ),
                            ("sha256Fingerprint", .string(hexString(certificate.sha256Fingerprint))),
                        ])
                    })
            ),
            (
                "signers",
                .array(
                    container.signers.map { signer in
                        .object([
                            ("version", .integer(signer.version)),
                            ("certificateIndex", identities.firstIndex { $0.matches(signer) }.map { .integer(Int64($0)) } ?? .null),
                            ("digestAlgorithm", .string(signer.digestAlgorithmOID)),
                            ("signatureAlgorithm", .string(signer.signatureAlgorithmOID)),
                            ("signatureLength", .integer(Int64(signer.signature.count))),
                            ("signedAttributes", .bool(signer.signedAttributes != nil)),
                            ("unsignedAttributes", .bool(signer.hasUnsignedAttributes)),
                        ])
                    })
            ),
            ("crls", .bool(shape.hasCRLs)),
            ("trailingBytes", .integer(Int64(shape.trailingByteCount))),
        ])
    }

    static func attributeJSON(_ attribute: ReceiptAttribute) -> JSONValue {
        var members: JSONObject = [
            ("type", .integer(Int64(attribute.type))),
            ("name", AttributeType.named(attribute.type).map { .string($0.name) } ?? .null),
            ("version", .integer(Int64(attribute.version))),
        ]
        if attribute.type == AttributeType.inAppPurchase, let purchase = try? DecodedPayload(berEncoded: attribute.value) {
            members.append(("derSorted", .bool(purchase.isDERSorted)))
            members.append(("attributes", .array(purchase.entries.map { attributeJSON($0.attribute) })))
        } else {
            members.append(("value", describe(attribute).json))
        }
        members.append(("hex", .string(hexString(attribute.value))))
        return .object(members)
    }
}
