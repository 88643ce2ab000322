import ReceiptCorpus
import ReceiptModel
import StoreModel
import _ForgeSupport
import AppStoreVocabulary

/// The conformance vectors, family by family (DESIGN §5; receipt-facts §d.3).
///
/// Ids are stable and never reused: rename nothing, retire by removing and noting it. Verdicts are
/// what a correct validator answers under the `strict` profile; `acceptable` vectors carry flags that
/// the profiles resolve. Error classes are alternatives matched by prefix.
public enum VectorCatalogue {
    /// Every vector is judged at this time (`context.now`).
    public static let now = "2025-06-15T12:00:00Z"
    static let bundleID = "com.example.app"
    static let deviceID = "6A9C1D2E-3B4F-4A5B-8C7D-9E0F1A2B3C4D"
    static let macAddress = "f8:ff:c2:1e:91:82"
    static let subscription = Purchase(productID: "com.example.pro.monthly", renewals: 1)
    /// The base scenario with another product id, chosen so that the receipt's DER length is not a multiple of 3
    /// and its base64 ends in padding that unpadded variants really drop (a test checks each such vector).
    static func paddedScenario(_ productID: String) -> Scenario {
        Scenario(bundleID: bundleID, appVersion: "1", deviceID: deviceID, purchases: [Purchase(productID: productID, renewals: 1)])
    }
    static let baseScenario = Scenario(bundleID: bundleID, appVersion: "1", deviceID: deviceID, purchases: [subscription])

    /// Every vector of the corpus, receipts, StoreKit 2 JWS (``jws``), then iOS 6 transaction receipts
    /// (``transactionReceipts``), in manifest order.
    public static let all: [VectorSpec] = receipts + jws + transactionReceipts
    static let receipts: [VectorSpec] = valid + xcode + encoding + signature + chain + time + payload + binding + transport + resource

    static func scenario(
        _ preset: Preset = .appstore, _ purchases: [Purchase] = [subscription], bundleID: String = bundleID,
        deviceID: String = deviceID, environment: String? = nil
    ) -> Scenario {
        Scenario(preset: preset, bundleID: bundleID, appVersion: "1", environment: environment, deviceID: deviceID, purchases: purchases)
    }

    static func m(_ id: MutationID, _ parameters: [String: String] = [:]) -> MutationStep { MutationStep(id.rawValue, parameters) }

    // MARK: valid::

    static let valid: [VectorSpec] = [
        VectorSpec(
            "valid::appstore-no-purchases", "Current App Store receipt (SHA-256, G5-like chain) without in-app purchases.",
            scenario: scenario(.appstore, []), verdict: .valid, severity: .high, features: ["device-hash"], canary: true,
            appVersion: "1", deviceID: deviceID),
        VectorSpec(
            "valid::appstore-subscription", "App Store receipt with an active monthly subscription renewed once.",
            scenario: scenario(), verdict: .valid, severity: .high, canary: true),
        VectorSpec(
            "valid::appstore-non-consumable", "App Store receipt with one non-consumable purchase.",
            scenario: scenario(.appstore, [Purchase(productID: "com.example.lifetime", type: .nonConsumable)]), verdict: .valid),
        VectorSpec(
            "valid::appstore-consumable", "App Store receipt with a consumable bought five at a time.",
            scenario: scenario(.appstore, [Purchase(productID: "com.example.coins", type: .consumable, quantity: 5)]), verdict: .valid),
        VectorSpec(
            "valid::appstore-non-renewing", "App Store receipt with a non-renewing subscription (no expiry in the receipt).",
            scenario: scenario(.appstore, [Purchase(productID: "com.example.season", type: .nonRenewing)]), verdict: .valid),
        VectorSpec(
            "valid::appstore-subscription-expired", "A valid receipt whose subscription expired a day ago: the receipt stays valid, the entitlement does not.",
            scenario: scenario(.appstore, [Purchase(productID: "com.example.pro.monthly", expired: true, renewals: 2)]),
            verdict: .valid, flags: ["EXPIRED_SUBSCRIPTION_IS_VALID"], severity: .high),
        VectorSpec(
            "valid::appstore-subscription-cancelled", "A valid receipt whose latest subscription period was refunded (1712 set).",
            scenario: scenario(.appstore, [Purchase(productID: "com.example.pro.monthly", renewals: 1, cancelled: .appIssue)]), verdict: .valid),
        VectorSpec(
            "valid::appstore-subscription-trial", "Subscription whose first period was a free trial (1713 = 1).",
            scenario: scenario(.appstore, [Purchase(productID: "com.example.pro.monthly", renewals: 2, trial: true)]), verdict: .valid),
        VectorSpec(
            "valid::appstore-subscription-intro", "Subscription whose first period was an introductory offer (1719 = 1).",
            scenario: scenario(.appstore, [Purchase(productID: "com.example.pro.monthly", renewals: 2, intro: true)]), verdict: .valid),
        VectorSpec(
            "valid::appstore-subscription-promo", "Subscription renewed under a promotional offer (1721).",
            scenario: scenario(.appstore, [Purchase(productID: "com.example.pro.monthly", renewals: 1, promo: "WINBACK_50")]), verdict: .valid),
        VectorSpec(
            "valid::appstore-yearly-twelve-renewals", "A yearly subscription renewed twelve times.",
            scenario: scenario(.appstore, [Purchase(productID: "com.example.pro.yearly", renewals: 12, period: "P1Y")]), verdict: .valid),
        VectorSpec(
            "valid::appstore-mixed-products", "Subscription, non-consumable and consumable purchases together.",
            scenario: scenario(
                .appstore,
                [
                    subscription, Purchase(productID: "com.example.lifetime", type: .nonConsumable),
                    Purchase(productID: "com.example.coins", type: .consumable, quantity: 3),
                ]), verdict: .valid),
        VectorSpec(
            "valid::sandbox-no-purchases", "Sandbox receipt (ProductionSandbox, sandbox constants) without purchases.",
            scenario: scenario(.sandbox, []), verdict: .valid, canary: true),
        VectorSpec(
            "valid::sandbox-subscription", "Sandbox receipt with a renewed subscription.",
            scenario: scenario(.sandbox), verdict: .valid, features: ["device-hash"], deviceID: deviceID),
        VectorSpec(
            "valid::sha1-no-purchases", "Pre-2023 App Store receipt: SHA-1 digest, SHA-1-era chain.",
            scenario: scenario(.appstoreSHA1, []), verdict: .valid, features: ["sha1"], canary: true),
        VectorSpec(
            "valid::sha1-subscription", "Pre-2023 App Store receipt with a subscription.",
            scenario: scenario(.appstoreSHA1), verdict: .valid, features: ["sha1"]),
        VectorSpec(
            "valid::mac-device-hash", "macOS receipt whose hash binds a 6-byte MAC address.",
            scenario: scenario(.appstore, [], deviceID: macAddress), verdict: .valid, severity: .high, features: ["device-hash"],
            deviceID: macAddress),
        VectorSpec(
            "valid::long-bundle-id", "A 200-byte non-ASCII bundle id: its UTF8String length takes the long form, which the device hash includes.",
            scenario: scenario(.appstore, [], bundleID: String(repeating: "é", count: 100)), verdict: .valid, severity: .high,
            features: ["device-hash"], bundleID: String(repeating: "é", count: 100), deviceID: deviceID),
        VectorSpec(
            "valid::unknown-attributes", "Unknown attribute types 9999 (top level) and 1799 (in a purchase), which must be ignored.",
            mutations: [m(.addAttribute, ["type": "9999", "hex": "00ff00ff"]), m(.purchaseSetAttribute, ["type": "1799", "utf8": "future"])],
            verdict: .valid),
        VectorSpec(
            "valid::empty-optional-fields", "Empty strings for optional dates and fields, meaning absent (as Apple writes them).",
            mutations: [m(.setAttribute, ["type": "21", "ia5": ""]), m(.setAttribute, ["type": "8", "ia5": ""])], verdict: .valid),
    ]

    // MARK: xcode::

    static let xcode: [VectorSpec] = [
        VectorSpec(
            "xcode::2020-empty", "Xcode StoreKit receipt as of 2020: BER indefinite, +hhmm dates, one self-signed certificate.",
            scenario: scenario(.xcode2020, []), verdict: .valid, features: ["xcode"], canary: true),
        VectorSpec(
            "xcode::2020-subscription", "Xcode 2020 receipt with a subscription (transaction id \"0\").",
            scenario: scenario(.xcode2020), verdict: .valid, features: ["xcode"]),
        VectorSpec(
            "xcode::2023-empty", "Xcode StoreKit receipt as of 2023: sha256WithRSAEncryption, Z dates.",
            scenario: scenario(.xcode2023, []), verdict: .valid, features: ["xcode"]),
        VectorSpec(
            "xcode::2023-subscription", "Xcode 2023 receipt with a subscription and device hash.",
            scenario: scenario(.xcode2023), verdict: .valid, features: ["xcode", "device-hash"], deviceID: deviceID),
        VectorSpec(
            "xcode::2023-consumable", "Xcode 2023 receipt with a consumable.",
            scenario: scenario(.xcode2023, [Purchase(productID: "com.example.coins", type: .consumable, quantity: 2)]),
            verdict: .valid, features: ["xcode"]),
        VectorSpec(
            "xcode::der-encoded", "An Xcode receipt written in DER instead of BER: the same content, another length form.",
            scenario: scenario(.xcode2023), mutations: [m(.layout, ["wrapper": "minimal", "econtent": "primitive"])],
            verdict: .valid, features: ["xcode"]),
        VectorSpec(
            "xcode::under-app-store-root",
            "An Xcode receipt judged by a validator that trusts only the App Store root: the self-signed StoreKit certificate is not a trust anchor.",
            scenario: scenario(.xcode2023), verdict: .invalid, errorClasses: [.chainUntrusted], severity: .critical,
            trustAnchor: TrustAnchorID.forgeRoot),
        VectorSpec(
            "xcode::environment-in-production", "An Xcode receipt (type 0 = Xcode) checked by an app expecting Production.",
            scenario: scenario(.xcode2023), verdict: .invalid, errorClasses: [.bindingEnvironment], severity: .high,
            features: ["xcode"], environment: .production),
        VectorSpec(
            "xcode::environment-claim-on-app-store-chain",
            "Type 0 says Xcode but the receipt is signed by the App Store chain, checked by an app expecting Production: invalid because the receipt type is not Production (binding.environment). The claim must not pick the trust root: rejecting it as chain.untrusted (as if the StoreKit certificate were the anchor) is the wrong reason.",
            scenario: scenario(.appstore, environment: "Xcode"), verdict: .invalid, errorClasses: [.bindingEnvironment],
            severity: .high, environment: .production, revision: 3),
        VectorSpec(
            "xcode::environment-claim-no-expectation",
            "Type 0 says Xcode but the receipt is signed by the App Store chain, and the app states no expected environment. Signature and chain are sound under the trusted App Store root and nothing is bound, so it is valid, as the other receipt-type variants are (payload::receipt-type-*). A validator that lets the claim choose the trust anchor (the StoreKit certificate for \"Xcode\") rejects it.",
            scenario: scenario(.appstore, environment: "Xcode"), verdict: .valid, severity: .medium),
    ]

    // MARK: encoding::

    static let encoding: [VectorSpec] = {
        var vectors: [VectorSpec] = [
            VectorSpec(
                "encoding::indefinite-lengths", "An App Store receipt written with BER indefinite lengths (as Xcode writes them).",
                mutations: [m(.layout, ["wrapper": "indefinite", "econtent": "constructed-1"])], verdict: .valid, flags: ["BER"]),
            VectorSpec(
                "encoding::constructed-econtent-1", "eContent as a constructed OCTET STRING with one segment, definite lengths.",
                mutations: [m(.layout, ["econtent": "constructed-1"])], verdict: .valid, flags: ["BER"]),
            VectorSpec(
                "encoding::constructed-econtent-2", "eContent split into two segments.",
                mutations: [m(.layout, ["econtent": "constructed-2"])], verdict: .valid, flags: ["BER"]),
            VectorSpec(
                "encoding::constructed-econtent-7", "eContent split into seven segments, indefinite lengths.",
                mutations: [m(.layout, ["wrapper": "indefinite", "econtent": "constructed-7"])], verdict: .valid, flags: ["BER"]),
            VectorSpec(
                "encoding::long-form-lengths",
                "Definite lengths written with 4 length octets where fewer suffice: valid BER, not DER. The signature covers only the payload, and Apple's parsers read BER (every Xcode receipt is BER), so apple-compatible accepts; strict rejects (NON_MINIMAL_LENGTH).",
                mutations: [m(.layout, ["wrapper": "long"])], verdict: .acceptable, flags: ["NON_MINIMAL_LENGTH"], revision: 3),
            VectorSpec(
                "encoding::detached-content", "SignedData without eContent (a detached signature): nothing to read.",
                mutations: [m(.layout, ["econtent": "detached"])], verdict: .invalid, errorClasses: [.containerNoContent], severity: .high),
            VectorSpec(
                "encoding::trailing-bytes", "Four zero bytes after the ContentInfo.",
                mutations: [m(.trailingBytes)], verdict: .invalid, errorClasses: [.containerTrailingBytes, .containerMalformed]),
            VectorSpec(
                "encoding::trailing-byte-ff", "One 0xFF byte after the ContentInfo.",
                mutations: [m(.trailingBytes, ["count": "1", "byte": "ff"])], verdict: .invalid,
                errorClasses: [.containerTrailingBytes, .containerMalformed]),
            VectorSpec(
                "encoding::payload-trailing-bytes", "Signed content with bytes after the payload SET.",
                mutations: [m(.payloadTrailingBytes)], verdict: .invalid, errorClasses: [.payloadMalformed]),
            VectorSpec(
                "encoding::unsorted-payload-set",
                "Payload SET OF written in reverse DER order and signed as such. Xcode receipts are not in DER order either, so Apple's parsers read any order: apple-compatible accepts, strict rejects (UNSORTED_SET).",
                mutations: [m(.reverseOrder)], verdict: .acceptable, flags: ["UNSORTED_SET"], revision: 3),
            VectorSpec(
                "encoding::integer-leading-zero",
                "Attribute 1 written as an INTEGER with a redundant leading zero. DER forbids it and BouncyCastle and swift-asn1 refuse it; the value is unambiguous and signed, so only strict decides (NON_MINIMAL_INTEGER).",
                mutations: [m(.integerLeadingZero, ["type": "1"])], verdict: .acceptable, flags: ["NON_MINIMAL_INTEGER"], revision: 3),
            VectorSpec(
                "encoding::fractional-seconds", "Creation date with fractional seconds (seen from 2020).",
                mutations: [m(.setAttribute, ["type": "12", "ia5": "2025-06-15T12:00:00.123Z"])], verdict: .valid, severity: .high),
            VectorSpec(
                "encoding::offset-date", "Creation date with a +hhmm offset (as Xcode 2020 writes it).",
                mutations: [m(.setAttribute, ["type": "12", "ia5": "2025-06-15T13:00:00+0100"])], verdict: .valid),
            VectorSpec(
                "encoding::expiry-sentinel", "Expiration date 4001-01-01, Foundation's distantFuture, on an App Store receipt.",
                mutations: [m(.setAttribute, ["type": "21", "ia5": "4001-01-01T00:00:00Z"])], verdict: .valid),
            VectorSpec(
                "encoding::creation-date-utf8",
                "Creation date (12) written as a UTF8String instead of the documented IA5String. Same text, signed as such: the inner-tag rule (WRONG_INNER_TAG) applies.",
                mutations: [m(.retagAttribute, ["type": "12", "tag": "0c"])], verdict: .acceptable, flags: ["WRONG_INNER_TAG"], revision: 3),
            VectorSpec(
                "encoding::expiration-date-utf8", "Receipt expiration date (21, a month ahead) written as a UTF8String instead of an IA5String: the inner-tag rule for dates.",
                mutations: [m(.setAttribute, ["type": "21", "ia5": "2025-07-15T12:00:00Z"]), m(.retagAttribute, ["type": "21", "tag": "0c"])],
                verdict: .acceptable, flags: ["WRONG_INNER_TAG"]),
            VectorSpec(
                "encoding::bundle-id-ia5",
                "Bundle id (2) written as an IA5String instead of the documented UTF8String. Same text, and the device hash covers the tag as written: the inner-tag rule (WRONG_INNER_TAG) applies, as for dates.",
                mutations: [m(.retagAttribute, ["type": "2", "tag": "16"])], verdict: .acceptable, flags: ["WRONG_INNER_TAG"], revision: 3),
            VectorSpec(
                "encoding::app-version-ia5", "App version (3) written as an IA5String: the inner-tag rule (WRONG_INNER_TAG).",
                mutations: [m(.retagAttribute, ["type": "3", "tag": "16"])], verdict: .acceptable, flags: ["WRONG_INNER_TAG"], revision: 3),
            VectorSpec(
                "encoding::receipt-type-ia5", "Receipt type (0) written as an IA5String: the inner-tag rule (WRONG_INNER_TAG) for the environment.",
                mutations: [m(.retagAttribute, ["type": "0", "tag": "16"])], verdict: .acceptable, flags: ["WRONG_INNER_TAG"]),
            VectorSpec(
                "encoding::negative-quantity",
                "In-app quantity -1. Apple never writes it, but it is signed data, not a forgery: a validator may refuse it or leave it to the entitlement logic; only strict decides (NEGATIVE_QUANTITY).",
                mutations: [m(.purchaseSetAttribute, ["type": "1701", "integer": "-1"])], verdict: .acceptable, flags: ["NEGATIVE_QUANTITY"], revision: 3),
            VectorSpec(
                "encoding::purchase-missing-product-id",
                "An in-app purchase without a product id (1702). Signed data Apple never writes; it grants nothing by itself, so only strict decides (INCOMPLETE_PURCHASE).",
                mutations: [m(.purchaseDropAttribute, ["type": "1702"])], verdict: .acceptable, flags: ["INCOMPLETE_PURCHASE"], revision: 3),
        ]
        // Truncation at TLV boundaries and inside: every one must be refused, none may crash.
        for (name, length) in [
            ("1", 1), ("header", 4), ("after-oid", 15), ("signed-data-header", 19), ("digest-set", 43),
            ("in-payload", 200), ("in-certificates", 3000), ("last-byte", -1), ("last-16", -16),
        ] {
            vectors.append(
                VectorSpec(
                    "encoding::truncated-\(name)", "The receipt cut \(length > 0 ? "after \(length) bytes" : "by \(-length) bytes at the end").",
                    mutations: [m(.truncate, ["length": String(length)])], verdict: .invalid,
                    errorClasses: [.containerMalformed], severity: .high, features: ["robustness"]))
        }
        return vectors
    }()

    // MARK: signature::

    static let signature: [VectorSpec] = {
        var vectors: [VectorSpec] = []
        for (preset, label) in [(Preset.appstore, "appstore"), (.appstoreSHA1, "sha1"), (.xcode2023, "xcode")] {
            let features = preset.isXcode ? ["xcode"] : preset == .appstoreSHA1 ? ["sha1"] : []
            for (name, offset) in [("start", "8"), ("middle", ""), ("end", "-")] {
                var mutation = m(.flipPayloadBit)
                if offset == "8" { mutation.parameters["offset"] = "8" }
                if offset == "-" { mutation.parameters["offset"] = "100" }
                if offset == "" { mutation.parameters = [:] }
                vectors.append(
                    VectorSpec(
                        "signature::\(label)-payload-bit-flip-\(name)", "One payload bit flipped after signing (\(preset.rawValue)).",
                        scenario: scenario(preset), mutations: [mutation], verdict: .invalid, errorClasses: [.signatureInvalid],
                        severity: .critical, features: features))
            }
            vectors.append(
                VectorSpec(
                    "signature::\(label)-signature-bit-flip", "One bit of the RSA signature flipped (\(preset.rawValue)).",
                    scenario: scenario(preset), mutations: [m(.flipSignatureBit, ["byte": "128"])], verdict: .invalid,
                    errorClasses: [.signatureInvalid], severity: .critical, features: features))
            vectors.append(
                VectorSpec(
                    "signature::\(label)-signed-by-other-key", "Signed by the foreign root's key; the embedded certificates are genuine (\(preset.rawValue)).",
                    scenario: scenario(preset), mutations: [m(.signWith, ["role": "foreign-root"])], verdict: .invalid,
                    errorClasses: [.signatureInvalid], severity: .critical, features: features))
        }
        vectors += [
            VectorSpec(
                "signature::signed-by-intermediate-key", "Signed by the intermediate's key while the SignerInfo names the leaf.",
                mutations: [m(.signWith, ["role": "intermediate"])], verdict: .invalid, errorClasses: [.signatureInvalid], severity: .critical),
            VectorSpec(
                "signature::digest-oid-sha1-signature-sha256", "SignerInfo and digestAlgorithms say SHA-1; the signature holds a SHA-256 digest.",
                mutations: [m(.digestOid, ["oid": KnownOID.sha1])], verdict: .invalid,
                errorClasses: [.signatureInvalid, .signatureAlgorithmMismatch], severity: .high),
            VectorSpec(
                "signature::digest-oid-sha256-signature-sha1", "OIDs say SHA-256; the signature holds a SHA-1 digest.",
                mutations: [m(.hashAlgorithm, ["algorithm": "sha1"])], verdict: .invalid,
                errorClasses: [.signatureInvalid, .signatureAlgorithmMismatch], severity: .high),
            VectorSpec(
                "signature::signer-digest-not-in-digest-algorithms", "SignerInfo digest SHA-1 is absent from SignedData.digestAlgorithms (SHA-256).",
                mutations: [m(.signerDigestOid, ["oid": KnownOID.sha1])], verdict: .invalid,
                errorClasses: [.signatureAlgorithmMismatch, .signatureInvalid]),
            VectorSpec(
                "signature::unknown-digest-oid", "Digest OID 1.2.3.4, which names no algorithm.",
                mutations: [m(.digestOid, ["oid": "1.2.3.4"])], verdict: .invalid,
                errorClasses: [.signatureUnsupportedAlgorithm, .signatureInvalid], severity: .high),
            VectorSpec(
                "signature::md5",
                "Consistently MD5: digest computed, named and signed with MD5. OpenSSL's CMS verification accepts it (MD5 is still allowed there); receipts never used MD5, so a receipt validator must not.",
                mutations: [m(.consistentDigest, ["algorithm": "md5"])], verdict: .invalid,
                errorClasses: [.signatureUnsupportedAlgorithm], flags: ["OPENSSL_DISAGREES"], severity: .high),
            VectorSpec(
                "signature::sha512",
                "Consistently SHA-512, which Apple never used for receipts. Nothing is forged (the signature verifies); Apple's verifiers accept only SHA-1 and SHA-256 and OpenSSL accepts any, so only strict decides (UNCOMMON_DIGEST).",
                mutations: [m(.consistentDigest, ["algorithm": "sha512"])], verdict: .acceptable, flags: ["UNCOMMON_DIGEST"], revision: 3),
            VectorSpec(
                "signature::sha384", "Consistently SHA-384: as signature::sha512 (UNCOMMON_DIGEST).",
                mutations: [m(.consistentDigest, ["algorithm": "sha384"])], verdict: .acceptable, flags: ["UNCOMMON_DIGEST"], revision: 3),
            VectorSpec(
                "signature::sha1-digest-on-sha256-chain",
                "SHA-1 digest signed by the SHA-256-era leaf (consistent OIDs). The digest is chosen per receipt, not per certificate, and Apple's verifiers accept SHA-1 or SHA-256 with any chain.",
                mutations: [m(.consistentDigest, ["algorithm": "sha1"])], verdict: .valid, flags: ["LEGACY_SHA1"], features: ["sha1"], revision: 3),
            VectorSpec(
                "signature::sha256-with-rsa-signer-oid", "Signature algorithm sha256WithRSAEncryption instead of rsaEncryption (as Xcode since late 2020).",
                mutations: [m(.signatureAlgorithmOid, ["oid": KnownOID.sha256WithRSAEncryption])], verdict: .valid),
            VectorSpec(
                "signature::sha1-with-rsa-signer-oid-sha256-digest",
                "Signature algorithm sha1WithRSAEncryption contradicts the SHA-256 digest. OpenSSL verifies with the digest algorithm and ignores the contradiction; a validator should not trust a container that disagrees with itself.",
                mutations: [m(.signatureAlgorithmOid, ["oid": KnownOID.sha1WithRSAEncryption])], verdict: .invalid,
                errorClasses: [.signatureAlgorithmMismatch, .signatureInvalid], flags: ["OPENSSL_DISAGREES"]),
            VectorSpec(
                "signature::ecdsa-signer-oid", "Signature algorithm ecdsa-with-SHA256 on an RSA signature.",
                mutations: [m(.signatureAlgorithmOid, ["oid": "1.2.840.10045.4.3.2"])], verdict: .invalid,
                errorClasses: [.signatureUnsupportedAlgorithm, .signatureInvalid]),
            VectorSpec(
                "signature::no-signer-infos", "SignedData with zero SignerInfos: nothing vouches for the content.",
                mutations: [m(.signerCount, ["count": "0"])], verdict: .invalid,
                errorClasses: [.containerSignerCount, .signature], severity: .critical),
            VectorSpec(
                "signature::two-signer-infos",
                "Apple's own SignerInfo written twice; both verify. Not an attack in itself: the content is genuine and every signature on it is Apple's. Invalid by Apple's rule that a receipt has exactly one SignerInfo: a validator that tolerates several must choose which to check, and one that checks any but the one it chains is fooled by an appended signer (signature::second-signer-corrupted shows the validators that check only one). OpenSSL accepts because every signer verifies.",
                mutations: [m(.signerCount, ["count": "2"])], verdict: .invalid, errorClasses: [.containerSignerCount, .signature],
                flags: ["OPENSSL_DISAGREES"], revision: 3),
            VectorSpec(
                "signature::second-signer-corrupted",
                "Two SignerInfos, the second with a flipped signature bit. Invalid twice over: a receipt has one signer, and a signature on it does not verify. OpenSSL rejects (every signer must verify); a validator that checks only the first SignerInfo accepts a container it never fully checked.",
                mutations: [m(.signerCount, ["count": "2"]), m(.flipSignatureBit, ["signer": "1", "byte": "128"])], verdict: .invalid,
                errorClasses: [.containerSignerCount, .signature], severity: .high),
            VectorSpec(
                "signature::first-signer-corrupted",
                "Two SignerInfos, the first with a flipped signature bit and the second genuine. A validator that accepts when any signer verifies takes a container whose first signature is broken; OpenSSL rejects (every signer must verify).",
                mutations: [m(.signerCount, ["count": "2"]), m(.flipSignatureBit, ["signer": "0", "byte": "128"])], verdict: .invalid,
                errorClasses: [.containerSignerCount, .signature], severity: .high),
            VectorSpec(
                "signature::empty-signature", "An empty signature OCTET STRING.",
                mutations: [m(.emptySignature)], verdict: .invalid, errorClasses: [.signatureInvalid], severity: .critical),
            VectorSpec(
                "signature::signer-not-embedded", "The SignerInfo names a serial number no embedded certificate has.",
                mutations: [m(.signerSerial)], verdict: .invalid, errorClasses: [.signatureSignerNotFound, .signature], severity: .high),
            VectorSpec(
                "signature::signed-attributes",
                "CMS signed attributes present and correct, as openssl cms -sign writes (Apple never does). RFC 5652 defines them and Apple's verifiers (BouncyCastle's, swift-certificates' CMS) verify them, so apple-compatible accepts; strict rejects (SIGNED_ATTRIBUTES).",
                mutations: [m(.signedAttributes)], verdict: .acceptable, flags: ["SIGNED_ATTRIBUTES"], revision: 3),
            VectorSpec(
                "signature::signed-attributes-wrong-digest", "Signed attributes whose messageDigest does not match the content.",
                mutations: [m(.signedAttributes, ["message-digest": "wrong"])], verdict: .invalid,
                errorClasses: [.signatureMessageDigest, .signatureInvalid], severity: .critical),
        ]
        return vectors
    }()

    // MARK: chain::

    static let chain: [VectorSpec] = [
        VectorSpec(
            "chain::foreign-root", "Leaf and intermediate chain to another root than the trusted one.",
            mutations: [m(.reissueIntermediate, ["variant": "under-foreign-root"])], verdict: .invalid,
            errorClasses: [.chainUntrusted], severity: .critical),
        VectorSpec(
            "chain::trusted-root-embedded-foreign-signer",
            "The trusted root is embedded as the last certificate, but the chain above the leaf leads to a foreign root: comparing the last embedded certificate with the anchor is not validation.",
            mutations: [m(.reissueIntermediate, ["variant": "under-foreign-root"]), m(.addCertificate, ["role": "root"])],
            verdict: .invalid, errorClasses: [.chainUntrusted], severity: .critical),
        VectorSpec(
            "chain::self-signed-leaf", "The signing certificate is self-signed (a forgery anyone can make).",
            mutations: [m(.reissueLeaf, ["variant": "self-signed"])], verdict: .invalid, errorClasses: [.chainUntrusted], severity: .critical),
        VectorSpec(
            "chain::leaf-missing-marker", "Leaf without the receipt-signing marker 1.2.840.113635.100.6.11.1.",
            mutations: [m(.reissueLeaf, ["variant": "no-marker"])], verdict: .invalid,
            errorClasses: [.chainLeafMarker], severity: .critical),
        VectorSpec(
            "chain::intermediate-missing-marker", "Intermediate without the WWDR marker 1.2.840.113635.100.6.2.1.",
            mutations: [m(.reissueIntermediate, ["variant": "no-marker"])], verdict: .invalid,
            errorClasses: [.chainIntermediateMarker], severity: .critical),
        VectorSpec(
            "chain::both-markers-missing", "Neither marker present.",
            mutations: [m(.reissueLeaf, ["variant": "no-marker"]), m(.reissueIntermediate, ["variant": "no-marker"])],
            verdict: .invalid, errorClasses: [.chainLeafMarker, .chainIntermediateMarker], severity: .critical),
        VectorSpec(
            "chain::sha1-intermediate-missing-marker", "SHA-1-era intermediate without its marker.",
            scenario: scenario(.appstoreSHA1), mutations: [m(.reissueIntermediate, ["variant": "no-marker"])], verdict: .invalid,
            errorClasses: [.chainIntermediateMarker], severity: .critical, features: ["sha1"]),
        VectorSpec(
            "chain::two-certificates", "Leaf issued directly by the root: a 2-certificate chain where Apple's has 3.",
            mutations: [m(.reissueLeaf, ["variant": "under-root"]), m(.dropCertificate, ["index": "1"])], verdict: .invalid,
            errorClasses: [.chainLength, .chainIntermediateMarker], severity: .high),
        VectorSpec(
            "chain::four-certificates",
            "An extra unrelated root embedded after the chain. CMS certificates are a set \"sufficient\" for a path, extra ones allowed; a validator building the path from the signer ignores it, one demanding exactly three embedded rejects: harmless either way (EXTRA_CERTIFICATE).",
            mutations: [m(.addCertificate, ["role": "foreign-root"])], verdict: .acceptable, flags: ["EXTRA_CERTIFICATE"], revision: 3),
        VectorSpec(
            "chain::duplicate-intermediate", "The intermediate embedded twice: as chain::four-certificates (EXTRA_CERTIFICATE).",
            mutations: [m(.addCertificate, ["role": "intermediate"])], verdict: .acceptable, flags: ["EXTRA_CERTIFICATE"], revision: 3),
        VectorSpec(
            "chain::root-not-embedded",
            "Only leaf and intermediate embedded; the root comes from the trust store, which is where trust comes from anyway. Apple always embeds the root and the verifiers that count embedded certificates reject; accepting lets no forgery through (ROOT_NOT_EMBEDDED).",
            mutations: [m(.dropCertificate, ["index": "2"])], verdict: .acceptable, flags: ["ROOT_NOT_EMBEDDED"], revision: 3),
        VectorSpec(
            "chain::intermediate-not-embedded", "Leaf and root embedded, the intermediate missing: no path.",
            mutations: [m(.dropCertificate, ["index": "1"])], verdict: .invalid, errorClasses: [.chainUntrusted, .chainInvalid], severity: .high),
        VectorSpec(
            "chain::only-leaf", "Only the leaf embedded.",
            mutations: [m(.dropCertificate, ["index": "2"]), m(.dropCertificate, ["index": "1"])], verdict: .invalid,
            errorClasses: [.chainUntrusted, .chainInvalid], severity: .high),
        VectorSpec(
            "chain::no-certificates", "No certificates embedded at all.",
            mutations: [m(.dropCertificate, ["index": "2"]), m(.dropCertificate, ["index": "1"]), m(.dropCertificate, ["index": "0"])],
            verdict: .invalid, errorClasses: [.signatureSignerNotFound, .chain], severity: .high),
        VectorSpec(
            "chain::reversed-order",
            "Certificates embedded root first. The signer is named by issuer and serial number (RFC 5652 §5.3) and the certificates field is an unordered SET, so a correct validator finds it anywhere; one that takes certificates[0] checks the root's key.",
            mutations: [m(.certificateOrder, ["order": "reverse"])], verdict: .valid, flags: ["CERTIFICATE_ORDER"], severity: .high, revision: 3),
        VectorSpec(
            "chain::intermediate-first", "Certificates embedded intermediate, leaf, root.",
            mutations: [m(.certificateOrder, ["order": "1,0,2"])], verdict: .valid, flags: ["CERTIFICATE_ORDER"], severity: .high),
        VectorSpec(
            "chain::der-sorted-order", "Certificates in DER SET order, as openssl cms -sign writes them.",
            mutations: [m(.certificateOrder, ["order": "2,1,0"])], verdict: .valid, flags: ["CERTIFICATE_ORDER"], severity: .high),
        VectorSpec(
            "chain::intermediate-expired", "The intermediate expired long before the receipt was made.",
            mutations: [m(.reissueIntermediate, ["variant": "expired"])], verdict: .invalid, errorClasses: [.chainExpired], severity: .high),
        VectorSpec(
            "chain::intermediate-not-ca", "The intermediate is not a CA (basicConstraints cA false).",
            mutations: [m(.reissueIntermediate, ["variant": "not-ca"])], verdict: .invalid, errorClasses: [.chainInvalid], severity: .critical),
        VectorSpec(
            "chain::leaf-without-digital-signature",
            "Leaf key usage keyEncipherment instead of digitalSignature. RFC 5280 §4.2.1.3 forbids verifying signatures with such a key, so rejecting is right; path validators that do not check the leaf's key usage accept, and the chain is still Apple's: either verdict outside strict (KEY_USAGE).",
            mutations: [m(.reissueLeaf, ["variant": "no-digital-signature"])], verdict: .acceptable, flags: ["KEY_USAGE"], revision: 3),
        VectorSpec(
            "chain::leaf-marker-critical",
            "Leaf marker extension 1.2.840.113635.100.6.11.1 marked critical. RFC 5280 §4.2 rejects critical extensions a validator does not process, and Apple's server library does; apple-compatible rejects it, lenient lets a validator that processes the marker accept (CRITICAL_MARKER).",
            mutations: [m(.reissueLeaf, ["variant": "marker-critical"])], verdict: .acceptable, flags: ["CRITICAL_MARKER"], revision: 3),
    ]

    // MARK: time::

    static let time: [VectorSpec] = [
        VectorSpec(
            "time::leaf-expired-now-valid-at-creation", "Made in 2024 when the leaf was valid; judged in 2025 after it expired. Apple's practice: evaluate at the creation date.",
            mutations: [m(.leafValidity, ["not-before": "2024-01-01T00:00:00Z", "not-after": "2025-01-01T00:00:00Z"])], verdict: .valid,
            flags: ["HISTORICAL_VALIDATION"], severity: .high, made: "2024-06-01T00:00:00Z", revision: 3),
        VectorSpec(
            "time::leaf-expired-at-creation", "The leaf had expired when the receipt was made.",
            mutations: [m(.reissueLeaf, ["variant": "expired"])], verdict: .invalid, errorClasses: [.chainExpired], severity: .high),
        VectorSpec(
            "time::leaf-not-yet-valid-at-creation", "The leaf was not yet valid when the receipt was made.",
            mutations: [m(.reissueLeaf, ["variant": "not-yet-valid"])], verdict: .invalid, errorClasses: [.chainNotYetValid], severity: .high),
        VectorSpec(
            "time::creation-after-leaf-expiry", "Made in 2025 after a leaf valid only in 2024.",
            mutations: [m(.leafValidity, ["not-before": "2024-01-01T00:00:00Z", "not-after": "2025-01-01T00:00:00Z"])],
            verdict: .invalid, errorClasses: [.chainExpired], severity: .high),
        VectorSpec(
            "time::creation-in-the-future",
            "Creation date a year after the time the receipt is judged at. The chain is valid at creation; Apple never signs the future, but the date is signed: only strict decides (FUTURE_CREATION).",
            verdict: .acceptable, flags: ["FUTURE_CREATION"], made: "2026-06-15T12:00:00Z", revision: 4),
        VectorSpec(
            "time::receipt-expired", "Receipt expiration (type 21) a month before now.",
            mutations: [m(.setAttribute, ["type": "21", "ia5": "2025-05-15T12:00:00Z"])], verdict: .invalid,
            errorClasses: [.policyExpired], severity: .medium),
        VectorSpec(
            "time::receipt-expires-later", "Receipt expiration (type 21) a month after now.",
            mutations: [m(.setAttribute, ["type": "21", "ia5": "2025-07-15T12:00:00Z"])], verdict: .valid),
        VectorSpec(
            "time::receipt-expiration-garbage",
            "Receipt expiration (type 21) is not a date. Fail closed: a validator that cannot read the expiry cannot tell the receipt is unexpired.",
            mutations: [m(.setAttribute, ["type": "21", "ia5": "next tuesday"])], verdict: .invalid,
            errorClasses: [.payloadInvalidField], revision: 3),
    ]

    // MARK: payload::

    static let payload: [VectorSpec] = {
        var vectors: [VectorSpec] = []
        for (type, name) in [(2, "bundle-id"), (3, "app-version"), (12, "creation-date")] {
            vectors.append(
                VectorSpec(
                    "payload::missing-\(name)", "Attribute \(type) (\(name)) absent.",
                    mutations: [m(.dropAttribute, ["type": String(type)])], verdict: .invalid, errorClasses: [.payloadMissingField],
                    severity: .high, appVersion: "1"))
        }
        for (type, name) in [(4, "opaque-value"), (5, "sha1-hash")] {
            vectors.append(
                VectorSpec(
                    "payload::missing-\(name)", "Attribute \(type) (\(name)) absent: no device hash can be checked.",
                    mutations: [m(.dropAttribute, ["type": String(type)])], verdict: .invalid,
                    errorClasses: [.payloadMissingField, .bindingDeviceHash], severity: .high,
                    features: ["device-hash"], deviceID: deviceID))
        }
        for (type, name, value) in [
            (2, "bundle-id", "com.example.other"), (3, "app-version", "2"), (12, "creation-date", "2025-06-15T12:00:01Z"),
            (0, "receipt-type", "ProductionSandbox"),
        ] {
            vectors.append(
                VectorSpec(
                    "payload::duplicate-\(name)",
                    "Attribute \(type) (\(name)) appears twice with different values: the receipt's own first in the DER-sorted SET, \(value) second. First-wins readers see the genuine value, last-wins readers \(value).",
                    mutations: [m(.addAttribute, ["type": String(type), type == 12 ? "ia5" : "utf8": value])],
                    verdict: .invalid, errorClasses: [.payloadInvalidField], flags: ["DUPLICATE_ATTRIBUTE"], severity: .high, revision: 3))
        }
        vectors.append(
            VectorSpec(
                "payload::duplicate-bundle-id-matching-last",
                "Bundle id (2) twice, in the mirrored order: com.example.aaa first in the DER-sorted SET, then the expected com.example.app. A last-wins reader binds the receipt to the app it checks and accepts; a first-wins reader rejects it for the wrong reason. Either way one value was ignored.",
                scenario: scenario(.appstore, bundleID: "com.example.aaa"), mutations: [m(.addAttribute, ["type": "2", "utf8": bundleID])],
                verdict: .invalid, errorClasses: [.payloadInvalidField], flags: ["DUPLICATE_ATTRIBUTE"], severity: .high))
        vectors += [
            VectorSpec(
                "payload::creation-date-garbage", "Creation date (12) is not a date: no time to judge the chain at.",
                mutations: [m(.setAttribute, ["type": "12", "ia5": "yesterday"])], verdict: .invalid,
                errorClasses: [.payloadMissingField, .payloadInvalidField]),
            VectorSpec(
                "payload::attribute-version-7", "Every-day attributes at an unknown attribute version.",
                mutations: [m(.addAttribute, ["type": "9998", "utf8": "x", "version": "7"])], verdict: .valid),
            VectorSpec(
                "payload::empty-bundle-id", "Bundle id is the empty string.",
                mutations: [m(.setAttribute, ["type": "2", "utf8": ""])], verdict: .invalid, errorClasses: [.bindingBundleID], severity: .high),
            VectorSpec(
                "payload::many-unknown-attributes", "Fifty unknown attribute types (1000–1049).",
                mutations: (1000..<1050).map { m(.addAttribute, ["type": String($0), "integer": String($0)]) }, verdict: .valid),
        ]
        for (type, name) in [
            ("ProductionVPP", "production-vpp"), ("ProductionVPPSandbox", "production-vpp-sandbox"), ("LocalTesting", "local-testing"),
            ("Staging", "unknown"),
        ] {
            vectors.append(
                VectorSpec(
                    "payload::receipt-type-\(name)", "Receipt type (0) \(type), with no environment expectation.",
                    scenario: scenario(.appstore, environment: type), verdict: .valid))
        }
        vectors.append(
            VectorSpec(
                "payload::receipt-type-missing", "No receipt type (0) at all.",
                mutations: [m(.dropAttribute, ["type": "0"])], verdict: .valid))
        return vectors
    }()

    // MARK: binding::

    static let binding: [VectorSpec] = [
        VectorSpec(
            "binding::wrong-bundle-id", "Made for com.example.other, checked by com.example.app.",
            scenario: scenario(.appstore, bundleID: "com.example.other"), verdict: .invalid, errorClasses: [.bindingBundleID], severity: .critical),
        VectorSpec(
            "binding::bundle-id-case", "Bundle id differs only in case. Apple's verifiers compare bundle ids exactly (string equality), so case matters.",
            scenario: scenario(.appstore, bundleID: "com.example.App"), verdict: .invalid, errorClasses: [.bindingBundleID], severity: .high, revision: 3),
        VectorSpec(
            "binding::bundle-id-prefix", "Bundle id is a prefix-extension of the expected one.",
            scenario: scenario(.appstore, bundleID: "com.example.app.evil"), verdict: .invalid, errorClasses: [.bindingBundleID], severity: .high),
        VectorSpec(
            "binding::wrong-app-version", "App version 1 where 2 is expected.",
            verdict: .invalid, errorClasses: [.bindingAppVersion], appVersion: "2"),
        VectorSpec(
            "binding::device-hash-other-device", "Hash made for another device id.",
            scenario: scenario(.appstore, deviceID: "00000000-0000-4000-8000-000000000000"), verdict: .invalid,
            errorClasses: [.bindingDeviceHash], severity: .critical, features: ["device-hash"], deviceID: deviceID),
        VectorSpec(
            "binding::device-hash-mac-vs-uuid", "Hash made for a MAC address, checked with a UUID.",
            scenario: scenario(.appstore, deviceID: macAddress), verdict: .invalid, errorClasses: [.bindingDeviceHash],
            severity: .high, features: ["device-hash"], deviceID: deviceID),
        VectorSpec(
            "binding::device-hash-zeroed", "Hash attribute replaced by 20 zero bytes.",
            mutations: [m(.setAttribute, ["type": "5", "hex": String(repeating: "00", count: 20)])], verdict: .invalid,
            errorClasses: [.bindingDeviceHash], severity: .critical, features: ["device-hash"], deviceID: deviceID),
        VectorSpec(
            "binding::device-hash-short", "Hash attribute of 19 bytes.",
            mutations: [m(.setAttribute, ["type": "5", "hex": String(repeating: "ab", count: 19)])], verdict: .invalid,
            errorClasses: [.bindingDeviceHash], features: ["device-hash"], deviceID: deviceID),
        VectorSpec(
            "binding::sandbox-in-production", "A sandbox receipt checked by an app expecting Production (App Review does this).",
            scenario: scenario(.sandbox), verdict: .invalid, errorClasses: [.bindingEnvironment], environment: .production),
        VectorSpec(
            "binding::production-in-sandbox", "A production receipt checked by an app expecting ProductionSandbox.",
            verdict: .invalid, errorClasses: [.bindingEnvironment], environment: .sandbox),
        VectorSpec(
            "binding::production-matches", "A production receipt checked with the environment expectation Production.",
            verdict: .valid, environment: .production),
    ]

    // MARK: transport::

    static let transport: [VectorSpec] = [
        VectorSpec(
            "transport::base64",
            "The receipt as one line of standard base64, the form verifyReceipt's receipt-data and Apple's ReceiptUtility take. A validator that declares transport-decoding must read it; one that takes DER bytes never sees it.",
            mutations: [m(.transport, ["encoding": "base64"])], verdict: .valid, features: [Feature.transportDecoding.rawValue],
            fileExtension: "b64", revision: 3),
        VectorSpec(
            "transport::base64-lines", "Base64 wrapped at 76 columns with line feeds. verifyReceipt rejects line breaks; MIME decoders (Java's, Python's by default) skip them.",
            mutations: [m(.transport, ["encoding": "base64-lines"])], verdict: .acceptable, flags: ["TRANSPORT_ENCODING"],
            features: [Feature.transportDecoding.rawValue], fileExtension: "b64", revision: 3),
        VectorSpec(
            "transport::base64url",
            "URL-safe base64 without padding: another alphabet, which no Apple endpoint documents. The receipt's length is not a multiple of 3, so padding was really dropped.",
            scenario: paddedScenario("com.example.pro.mon"), mutations: [m(.transport, ["encoding": "base64url"])], verdict: .acceptable, flags: ["TRANSPORT_ENCODING"],
            features: [Feature.transportDecoding.rawValue], fileExtension: "b64", revision: 3),
        VectorSpec(
            "transport::base64-unpadded",
            "Standard base64 without its = padding (the receipt's length is not a multiple of 3, so there was padding to drop): strict decoders reject, lenient ones restore it.",
            scenario: paddedScenario("com.example.pro.month"), mutations: [m(.transport, ["encoding": "base64-unpadded"])], verdict: .acceptable, flags: ["TRANSPORT_ENCODING"],
            features: [Feature.transportDecoding.rawValue], fileExtension: "b64", revision: 3),
        VectorSpec(
            "transport::double-base64", "Base64 of base64 (starts TU…), as clients send when they encode twice: a client bug a tolerant server may repair.",
            mutations: [m(.transport, ["encoding": "double-base64"])], verdict: .acceptable, flags: ["TRANSPORT_ENCODING"],
            features: [Feature.transportDecoding.rawValue], fileExtension: "b64", revision: 3),
        VectorSpec(
            "transport::pem", "PEM armour (BEGIN PKCS7), as openssl writes it; no Apple API produces or takes it.",
            mutations: [m(.transport, ["encoding": "pem"])], verdict: .acceptable, flags: ["TRANSPORT_ENCODING"],
            features: [Feature.transportDecoding.rawValue], fileExtension: "pem", revision: 3),
        VectorSpec(
            "transport::jws-instead-of-receipt",
            "A StoreKit 2 JWS sent where a receipt belongs: not a receipt in any encoding. A DER-only validator sees bytes that are not ASN.1, so container.malformed is as right as input.encoding.",
            mutations: [m(.jwsInstead)],
            verdict: .invalid, errorClasses: [.inputEncoding, .input, .containerMalformed], severity: .medium, fileExtension: "txt", revision: 3),
        VectorSpec(
            "transport::base64-of-garbage", "Base64 text that decodes to something other than a receipt.",
            mutations: [m(.truncate, ["length": "40"]), m(.transport, ["encoding": "base64"])],
            verdict: .invalid, errorClasses: [.input, .containerMalformed], fileExtension: "b64"),
    ]

    // MARK: resource::

    static let resource: [VectorSpec] = [
        VectorSpec(
            "resource::three-hundred-purchases", "300 in-app purchases (a receipt over 100 KiB, 3-byte lengths).",
            scenario: scenario(.appstore, [Purchase(productID: "com.example.weekly", renewals: 299, period: "P1W")]),
            verdict: .valid, severity: .high, features: ["large"]),
        VectorSpec(
            "resource::xcode-two-hundred-purchases", "An Xcode receipt with 200 purchases.",
            scenario: scenario(.xcode2023, [Purchase(productID: "com.example.daily", renewals: 199, period: "P1D")]),
            verdict: .valid, features: ["xcode", "large"]),
        VectorSpec(
            "resource::deep-nesting", "100,000 nested indefinite-length SEQUENCEs: a recursive parser overflows its stack.",
            mutations: [m(.nestedSequences)], verdict: .invalid, errorClasses: [.containerMalformed, .input, .resource],
            severity: .high, features: ["robustness"]),
        VectorSpec(
            "resource::huge-declared-length", "The outer SEQUENCE declares 2 GiB: a parser that allocates what it is told runs out of memory.",
            mutations: [m(.hugeDeclaredLength)], verdict: .invalid, errorClasses: [.containerMalformed, .input, .resource],
            severity: .high, features: ["robustness"]),
    ]
}
