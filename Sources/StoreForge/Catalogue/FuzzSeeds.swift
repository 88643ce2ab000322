import StoreModel
import ReceiptModel
import _ForgeSupport

/// Tokens a fuzzer should splice into receipts and JWS: OIDs, attribute-type encodings, headers, JSON members and strings.
/// Written in the libFuzzer/AFL dictionary format (`name="\xHH…"`).
public enum FuzzDictionary {
    public static func text() -> String {
        var entries: [(String, [UInt8])] = []
        let oids = [
            ("oid_signed_data", KnownOID.signedData), ("oid_data", KnownOID.data), ("oid_sha1", KnownOID.sha1),
            ("oid_sha256", KnownOID.sha256), ("oid_rsa", KnownOID.rsaEncryption), ("oid_sha256_rsa", KnownOID.sha256WithRSAEncryption),
            ("oid_sha1_rsa", KnownOID.sha1WithRSAEncryption), ("oid_receipt_marker", KnownOID.appleReceiptSigningMarker),
            ("oid_wwdr_marker", KnownOID.appleWWDRIntermediateMarker), ("oid_receipt_policy", KnownOID.appleReceiptSigningPolicy),
            ("oid_message_digest", KnownOID.messageDigestAttribute), ("oid_content_type", KnownOID.contentTypeAttribute),
        ]
        for (name, oid) in oids {
            if let content = try? OID.encodeContent(oid) { entries.append((name, ASN1Value.tlv(ASN1Tag.objectIdentifier, content))) }
        }
        let types = [0, 1, 2, 3, 4, 5, 12, 17, 19, 21, 1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1719, 1721]
        for type in types { entries.append(("attr_type_\(type)", ASN1Value.integer(Int64(type)))) }
        entries.append(("attr_version_1", [0x02, 0x01, 0x01]))
        for (name, bytes) in [
            ("seq_long2", [0x30, 0x82]), ("seq_indefinite", [0x30, 0x80]), ("set_long2", [0x31, 0x82]), ("ctx0_indefinite", [0xA0, 0x80]),
            ("ctx0_long2", [0xA0, 0x82]), ("octets_constructed", [0x24, 0x80]), ("octets_long2", [0x04, 0x82]), ("end_of_contents", [0x00, 0x00]),
            ("null", [0x05, 0x00]), ("len_long4", [0x84, 0x7F, 0xFF, 0xFF, 0xFF]),
        ] as [(String, [UInt8])] {
            entries.append((name, bytes))
        }
        for (name, text) in [
            ("env_production", "Production"), ("env_sandbox", "ProductionSandbox"), ("env_xcode", "Xcode"),
            ("date_sentinel", "4001-01-01T00:00:00Z"), ("date_prefix", "2025-06-15T"),
        ] {
            entries.append((name, ASN1Value.utf8String(text)))
            entries.append((name + "_ia5", ASN1Value.ia5String(text)))
        }
        // StoreKit 2 JWS: the tokens of compact headers and payloads, as text.
        for (name, text) in [
            ("jws_es256", "ES256"), ("jws_alg", "\"alg\""), ("jws_x5c", "\"x5c\""), ("jws_typ", "\"typ\":\"JWT\""), ("jws_none", "\"none\""),
            ("jws_hs256", "HS256"), ("jws_b64_brace", "eyJ"), ("jws_dot", "."), ("jws_signed_date", "\"signedDate\":"),
            ("jws_environment", "\"environment\":\"Sandbox\""), ("jws_bundle", "\"bundleId\":"), ("jws_app_id", "\"appAppleId\":"),
            ("jws_nested", "\"signedTransactionInfo\":"), ("jws_notification", "\"notificationType\":"), ("jws_kid", "\"kid\":\"Apple_Xcode_Key\""),
        ] {
            entries.append((name, Array(text.utf8)))
        }
        return entries.map { name, bytes in "\(name)=\"" + bytes.map { "\\x" + hexString([$0]) }.joined() + "\"" }.joined(separator: "\n") + "\n"
    }
}
