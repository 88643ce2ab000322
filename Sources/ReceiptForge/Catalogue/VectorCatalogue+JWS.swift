import Foundation
import ForgeCrypto
import ReceiptCorpus
import ReceiptModel
import ForgeSupport
import StoreModel

/// The StoreKit 2 families of `Vectors/`: valid artefacts of every kind, then named defects from the bug
/// classes of storekit2-facts §5 and §8 — Wycheproof's ECDSA and JWS classes recomputed over our own JWS,
/// x5c shapes, certificate strictness, the validity instant, claim binding, nested JWS, resource limits.
extension VectorCatalogue {
    /// The scenario every JWS vector starts from (its preset set per vector).
    static let jwsScenario = Scenario(
        preset: .appstore, bundleID: "com.example.app",
        purchases: [Purchase(productID: "com.example.pro.monthly", purchaseDate: "2025-05-01T00:00:00Z", renewals: 1, period: "P1M")])
    /// What a ONE_TIME_CHARGE is about: a one-time purchase, never the subscription.
    static let oneTimeScenario = Scenario(
        preset: .appstore, bundleID: "com.example.app", purchases: [Purchase(productID: "com.example.gems", type: .consumable, purchaseDate: "2025-05-01T00:00:00Z")])

    /// The flags of JWS vectors, explained.
    static let jwsNotes: [String: Note] = [
        "JWS_MALLEABLE_SIGNATURE": Note(
            bugClass: "ecdsa-malleability",
            description: "(r, n−s) is a second valid ES256 signature of the same input; verifiers accept it, so code must not use signatures as ids.",
            links: ["https://github.com/C2SP/wycheproof"]),
        "JWS_UNSIGNED_XCODE": Note(
            bugClass: "unsigned-xcode-accepted",
            description:
                "environment Xcode with no usable signature: Apple's verifiers skip crypto for Xcode, so a server that falls back to an Xcode verifier in production accepts forgeries.",
            effect: "Free purchases for anyone who sets environment to Xcode.", links: ["https://github.com/PicoMLX/PicoAIProxy/pull/3"]),
        "JWS_NESTED_UNVERIFIED": Note(
            bugClass: "unverified-nested-jws", description: "The signed notification is genuine but the transaction inside is not.",
            effect: "Notifications forward forged transactions.", links: ["https://github.com/apple/app-store-server-library-node/issues/216"]),
        "JWS_LEAF_IS_CA": Note(
            bugClass: "leaf-basic-constraints", description: "A signing certificate with CA:TRUE: not Apple's shape, but only Apple's CA could issue it.",
            links: ["https://www.rfc-editor.org/rfc/rfc5280#section-4.2.1.9"]),
        "JWS_SIGNED_DATE_MISSING": Note(
            bugClass: "validity-instant", description: "No numeric signedDate: a verifier may refuse, or evaluate the chain at the current time as Apple's Python library does.",
            links: ["https://github.com/apple/app-store-server-library-python"]),
        "JWS_X5C_THIRD_UNREAD": Note(
            bugClass: "x5c-root-entry", description: "The root travels in x5c[2] but must never be trusted from there; whether it is parsed at all is implementation-defined.",
            links: ["https://github.com/apple/app-store-server-library-java"]),
        "JWS_KEY_IDENTIFIERS": Note(
            bugClass: "key-identifiers", description: "A missing subjectKeyIdentifier on an end entity: RFC 5280 says SHOULD; strict verifiers refuse it.",
            links: ["https://www.rfc-editor.org/rfc/rfc5280#section-4.2.1.2"]),
        "JWS_LEAF_EKU": Note(
            bugClass: "leaf-eku", description: "An extendedKeyUsage Apple's signing leaf does not have; only Apple's CA could issue it.",
            links: ["https://www.rfc-editor.org/rfc/rfc5280#section-4.2.1.12"]),
        "JWS_VALIDITY_INSTANT": Note(
            bugClass: "validity-instant",
            description: "Apple's libraries disagree on when an AppTransaction's chain is evaluated: receiptCreationDate (Swift, Java, Node) or signedDate first (Python).",
            links: ["https://github.com/apple/app-store-server-library-python"]),
    ]

    static let kinds: [JWSKind] = [.transaction, .renewal, .appTransaction, .notification, .realtime]

    static func spec(
        _ id: String, _ description: String, _ kind: JWSKind = .transaction, preset: Preset = .appstore, _ mutations: [MutationStep] = [],
        _ verdict: Verdict, _ classes: [ErrorClass] = [], severity: Severity = .high, environment: Environment? = nil, bundleID: String = "com.example.app",
        appID: VectorSpec.AppID = .artefact, flags: [String] = [], notification: (String, String?)? = nil, canary: Bool = false
    ) -> VectorSpec {
        var scenario = jwsScenario
        scenario.preset = preset
        // Revision 2: the recipe's steps gained their parameters (typed JWS mutations), so the provenance changed.
        // Then one more (issue 20): the provenance records the seed and the scenario.
        var spec = VectorSpec(
            jws: id, description, kind: kind, scenario: scenario, mutations: mutations, verdict: verdict, errorClasses: classes, severity: severity,
            environment: environment, bundleID: bundleID, appAppleID: appID, flags: flags, revision: mutations.contains { !$0.parameters.isEmpty } ? 3 : 2)
        if let notification { (spec.notificationType, spec.subtype) = notification }
        spec.canary = canary
        return spec
    }

    static let jws: [VectorSpec] = jwsValid + jwsSignature + jwsHeader + jwsFormat + jwsX5C + jwsChain + jwsTime + jwsBinding + jwsNested + jwsResource

    // MARK: - Valid artefacts

    static let jwsValid: [VectorSpec] = {
        var specs: [VectorSpec] = []
        for kind in kinds {
            // The JWS canaries (run first when JWS are selected): the two artefacts every StoreKit 2 verifier reads.
            specs.append(
                spec(
                    "jws-valid::\(kind.rawValue)-production", "A valid \(kind.rawValue) JWS in Production, as Apple signs it.", kind, [], .valid, severity: .critical,
                    canary: [.transaction, .renewal].contains(kind)))
            specs.append(spec("jws-valid::\(kind.rawValue)-sandbox", "A valid \(kind.rawValue) JWS in Sandbox.", kind, preset: .sandbox, [], .valid, severity: .critical))
        }
        for kind in [JWSKind.transaction, .renewal, .appTransaction] {
            specs.append(
                spec(
                    "jws-valid::\(kind.rawValue)-xcode",
                    "An Xcode-signed \(kind.rawValue): one self-signed certificate, kid Apple_Xcode_Key, fractional-millisecond dates; valid when the Xcode certificate is the anchor.",
                    kind, preset: .xcode2023, [], .valid))
        }
        let notifications: [(String, String?)] = [
            ("SUBSCRIBED", "INITIAL_BUY"), ("SUBSCRIBED", "RESUBSCRIBE"), ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"), ("EXPIRED", "VOLUNTARY"),
            ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"), ("REFUND", nil), ("TEST", nil), ("RENEWAL_EXTENSION", "SUMMARY"), ("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED"),
            ("PRICE_INCREASE", "PENDING"), ("ONE_TIME_CHARGE", nil), ("FUTURE_NOTIFICATION_TYPE", "FUTURE_SUBTYPE"),
        ]
        // Revision 2: the notification carries the state its pair implies (issue 20): expired, refunded, in grace…
        let restated: Set<String> = ["DID_CHANGE_RENEWAL_STATUS", "EXPIRED", "DID_FAIL_TO_RENEW", "REFUND", "PRICE_INCREASE"]
        for (type, subtype) in notifications {
            let name = (type + (subtype.map { "-" + $0 } ?? "")).lowercased().replacingOccurrences(of: "_", with: "-")
            var notification = spec(
                "jws-valid::notification-\(name)",
                "A signed \(type)\(subtype.map { "/" + $0 } ?? "") notification\(type.hasPrefix("FUTURE") ? ": an unknown type must be tolerated" : "").",
                .notification, [], .valid, notification: (type, subtype))
            if restated.contains(type) { notification.revision += 1 }
            if type == NotificationType.oneTimeCharge.rawValue { notification.scenario = oneTimeScenario }
            // Revision 3: a one-time charge is about a consumable, not the subscription; TEST carries no transaction (issue 20).
            if [NotificationType.oneTimeCharge.rawValue, NotificationType.test.rawValue].contains(type) { notification.revision += 1 }
            specs.append(notification)
        }
        specs.append(
            spec(
                "jws-valid::unknown-fields", "Fields no verifier knows yet: they must be ignored.", .transaction,
                [.addField("futureField", .string("x")), .addField("advancedCommerceInfo", .object([("requestReferenceId", .string("r"))]))], .valid))
        specs.append(
            spec(
                "jws-valid::unknown-enum-values", "Values of known fields that are new (type, inAppOwnershipType): readable, as Apple's libraries allow.", .transaction,
                [.addField("type", .string("Future Product Type")), .addField("inAppOwnershipType", .string("FUTURE_OWNERSHIP"))], .valid))
        specs.append(spec("jws-valid::null-optional-field", "An optional field present as null.", .transaction, [.addField("appAccountToken", .null)], .valid))
        specs.append(spec("jws-valid::typ-absent", "No typ: nothing in Apple's verification reads it.", .transaction, [.removeHeader("typ")], .valid))
        specs.append(spec("jws-valid::kid-present", "A kid in a production header: ignored.", .transaction, [.setHeader("kid", .string("anything"))], .valid))
        specs.append(
            spec(
                "jws-valid::malleable-high-s", "(r, n−s): the other valid ECDSA signature of the same input.", .transaction, [.negateS], .valid, flags: ["JWS_MALLEABLE_SIGNATURE"])
        )
        return specs
    }()

    // MARK: - Signatures (Wycheproof ECDSA P-256 classes over our own JWS)

    static let jwsSignature: [VectorSpec] = {
        var specs: [VectorSpec] = []
        let cases: [(String, String, MutationStep)] = [
            ("r-zero", "r = 0", .rZero), ("s-zero", "s = 0", .sZero), ("both-zero", "r = s = 0", .bothZero),
            ("r-plus-n", "r + n (33 bytes, 65 in all)", .rPlusN), ("s-plus-n", "s + n (65 bytes)", .sPlusN),
            ("der-signature", "an X9.62 DER signature instead of r‖s", .derSignature), ("short-63", "63 bytes (first dropped)", .truncate(63)),
            ("long-65", "65 bytes (a zero appended)", .appendZero), ("empty", "an empty signature", .emptySignature),
            ("r-only", "r alone (32 bytes)", .truncate(32)), ("bit-flip-r", "one bit of r flipped", .flipBit(0)),
            ("bit-flip-s", "one bit of s flipped", .flipBit(40)), ("other-message", "a valid signature of another payload", .signOtherPayload),
            ("foreign-key", "signed by a P-256 key outside the chain", .signWithForeignKey),
            ("intermediate-key", "signed by the intermediate's P-384 key (96 bytes)", .signWith(.intermediate)),
            ("root-key", "signed by the root's key", .signWith(.root)), ("swapped-r-s", "s‖r", .swapRS),
        ]
        for kind in [JWSKind.transaction, .notification] {
            for (name, what, mutation) in cases {
                specs.append(
                    spec(
                        "jws-signature::\(kind.rawValue)-\(name)", "\(kind.rawValue): \(what); the signature must not verify.", kind, [mutation], .invalid, [.jwsSignature],
                        severity: .critical))
            }
        }
        return specs
    }()

    // MARK: - Header and algorithm

    static let jwsHeader: [VectorSpec] = [
        spec(
            "jws-header::alg-none", "alg none and no signature: the oldest JWT bug.", .transaction, [.setHeader("alg", .string("none")), .emptySignature], .invalid,
            [.jwsAlgorithm, .jwsSignature], severity: .critical),
        spec(
            "jws-header::alg-none-signed", "alg none, ES256 signature kept.", .transaction, [.setHeader("alg", .string("none"))], .invalid, [.jwsAlgorithm, .jwsSignature],
            severity: .critical),
        spec(
            "jws-header::alg-hs256-ec-key", "HS256 keyed with the leaf's public key bytes (algorithm confusion).", .transaction,
            [.setHeader("alg", .string("HS256")), .hmacWithLeafKey], .invalid, [.jwsAlgorithm, .jwsSignature], severity: .critical),
        spec("jws-header::alg-es384", "alg ES384 over a P-256 key.", .transaction, [.setHeader("alg", .string("ES384"))], .invalid, [.jwsAlgorithm, .jwsSignature]),
        spec("jws-header::alg-rs256", "alg RS256.", .transaction, [.setHeader("alg", .string("RS256"))], .invalid, [.jwsAlgorithm, .jwsSignature]),
        spec("jws-header::alg-lowercase", "alg es256.", .transaction, [.setHeader("alg", .string("es256"))], .invalid, [.jwsAlgorithm, .jwsSignature]),
        spec("jws-header::alg-absent", "No alg.", .transaction, [.removeHeader("alg")], .invalid, [.jwsAlgorithm, .jwsHeader, .jwsSignature]),
        spec("jws-header::alg-number", "alg as a number.", .transaction, [.setHeader("alg", .integer(256))], .invalid, [.jwsAlgorithm, .jwsHeader, .jwsSignature]),
        spec(
            "jws-header::duplicate-alg-last-none", "alg twice, ES256 then none: parsers that keep the last see none.", .transaction, [.duplicateAlgNone], .invalid,
            [.jwsAlgorithm, .jwsHeader, .jwsSignature]),
        spec(
            "jws-header::embedded-jwk", "A jwk of a foreign key, and the JWS signed by it: the embedded key must not be trusted.", .transaction,
            [.embedForeignJWK, .signWithForeignKey], .invalid, [.jwsSignature, .chain], severity: .critical),
        spec(
            "jws-header::x5u-injection", "An x5u URL and a foreign signature.", .transaction, [.setHeader("x5u", .string("http://127.0.0.1:1/chain.pem")), .signWithForeignKey],
            .invalid, [.jwsSignature], severity: .critical),
        spec(
            "jws-header::jku-injection", "A jku URL and a foreign signature.", .transaction, [.setHeader("jku", .string("http://127.0.0.1:1/jwks.json")), .signWithForeignKey],
            .invalid, [.jwsSignature], severity: .critical),
        spec(
            "jws-header::kid-injection-foreign", "A kid naming a key and a foreign signature.", .transaction,
            [.setHeader("kid", .string("../../keys/foreign")), .signWithForeignKey], .invalid, [.jwsSignature]),
        spec("jws-header::not-json", "The header is not JSON.", .transaction, [.headerBytes(Array("not json".utf8))], .invalid, [.jwsFormat, .jwsHeader]),
        spec("jws-header::array", "The header is a JSON array.", .transaction, [.headerBytes(Array("[\"ES256\"]".utf8))], .invalid, [.jwsFormat, .jwsHeader]),
        spec("jws-header::x5c-string", "x5c is a string, not an array.", .transaction, [.setHeader("x5c", .string("MII"))], .invalid, [.jwsX5C, .jwsHeader]),
        spec(
            "jws-header::x5c-numbers", "x5c holds numbers.", .transaction, [.setHeader("x5c", .array([.integer(1), .integer(2), .integer(3)]))], .invalid, [.jwsX5C, .jwsHeader]),
        spec(
            "jws-header::xcode-kid-production", "An Xcode-shaped header (kid, one certificate) checked as Production.", .transaction, preset: .xcode2023, [], .invalid,
            [.jwsX5C, .chain, .bindingEnvironment], environment: .production),
    ]

    // MARK: - Compact form

    static let jwsFormat: [VectorSpec] = [
        spec("jws-format::two-parts", "header.payload, no signature part.", .transaction, [.dropSignaturePart], .invalid, [.jwsFormat]),
        spec("jws-format::four-parts", "An extra part.", .transaction, [.appendPart], .invalid, [.jwsFormat]),
        spec("jws-format::five-parts-jwe", "Five parts, JWE-shaped.", .transaction, [.appendPart, .appendPart], .invalid, [.jwsFormat]),
        spec("jws-format::json-serialization", "The flattened JSON serialization instead of compact.", .transaction, [.jsonSerialization], .invalid, [.jwsFormat]),
        spec("jws-format::padding", "Base64 padding on the parts.", .transaction, [.padParts], .invalid, [.jwsFormat]),
        spec("jws-format::standard-base64", "+ and / instead of - and _ in the signature.", .transaction, [.standardAlphabetSignature], .invalid, [.jwsFormat, .jwsSignature]),
        spec("jws-format::whitespace", "A space inside the payload part.", .transaction, [.insertSpace], .invalid, [.jwsFormat]),
        spec("jws-format::empty", "Empty input.", .transaction, [.replaceCompact("")], .invalid, [.jwsFormat]),
        spec("jws-format::dots-only", "Two dots.", .transaction, [.replaceCompact("..")], .invalid, [.jwsFormat]),
        spec("jws-format::payload-not-utf8", "The signed payload is not UTF-8.", .transaction, [.payloadBytes([0x7B, 0xFF, 0xFE, 0x7D])], .invalid, [.jwsFormat, .payload]),
        spec("jws-format::payload-array", "The signed payload is a JSON array.", .transaction, [.payloadBytes(Array("[1,2,3]".utf8))], .invalid, [.jwsFormat, .payload]),
        spec(
            "jws-format::payload-empty-object", "The signed payload is {}: no signedDate to evaluate the chain at.", .transaction, [.payloadBytes(Array("{}".utf8))], .invalid,
            [.payloadMissingField, .payload, .binding]),
        spec("jws-format::payload-not-json", "The signed payload is not JSON.", .transaction, [.payloadBytes(Array("hello".utf8))], .invalid, [.jwsFormat, .payload]),
        spec(
            "jws-format::deep-nesting", "The signed payload nests 10,000 arrays.", .transaction, [.payloadBytes(Array(String(repeating: "[", count: 10_000).utf8))], .invalid,
            [.jwsFormat, .payload, .resource]),
    ]

    // MARK: - x5c shapes

    static let jwsX5C: [VectorSpec] = [
        spec("jws-x5c::missing", "No x5c.", .transaction, [.removeHeader("x5c"), .clearChain], .invalid, [.jwsX5C, .jwsHeader], severity: .critical),
        spec("jws-x5c::empty", "x5c is [].", .transaction, [.chainRoles([])], .invalid, [.jwsX5C], severity: .critical),
        spec("jws-x5c::leaf-only", "x5c holds the leaf alone.", .transaction, [.chainRoles([.leaf])], .invalid, [.jwsX5C, .chainLength], severity: .critical),
        spec("jws-x5c::two-certificates", "Leaf and intermediate, no root.", .transaction, [.chainRoles([.leaf, .intermediate])], .invalid, [.jwsX5C, .chainLength]),
        spec("jws-x5c::four-certificates", "The root twice.", .transaction, [.chainRoles([.leaf, .intermediate, .root, .root])], .invalid, [.jwsX5C, .chainLength]),
        spec(
            "jws-x5c::garbage-third",
            "x5c[2] is not a certificate. Apple's Swift, Python and Node verifiers never read it (the root comes from configuration); Java and verifiers that parse the whole chain reject it. Either is safe.",
            .transaction, [.garbageThird], .acceptable, [.jwsX5C], flags: ["JWS_X5C_THIRD_UNREAD"]),
        spec("jws-x5c::reversed", "Root, intermediate, leaf.", .transaction, [.chainRoles([.root, .intermediate, .leaf])], .invalid, [.chain, .jwsSignature, .jwsX5C]),
        spec("jws-x5c::intermediate-first", "Intermediate, leaf, root.", .transaction, [.chainRoles([.intermediate, .leaf, .root])], .invalid, [.chain, .jwsSignature, .jwsX5C]),
        spec(
            "jws-x5c::root-only-three", "The root three times: a root-only check passes it.", .transaction, [.chainRoles([.root, .root, .root])], .invalid,
            [.chain, .jwsSignature], severity: .critical),
        spec("jws-x5c::base64url-entries", "x5c entries in base64url (RFC 7515 says standard base64).", .transaction, [.x5cBase64URL], .invalid, [.jwsX5C]),
        spec("jws-x5c::pem-entries", "x5c entries as PEM text.", .transaction, [.x5cPEM], .invalid, [.jwsX5C]),
        spec(
            "jws-x5c::xcode-certificate-production", "The Xcode certificate as a one-entry x5c in Production.", .transaction, [.xcodeChainInProduction], .invalid,
            [.jwsX5C, .chain], severity: .critical),
        spec(
            "jws-x5c::leaf-is-intermediate", "x5c[0] is the intermediate itself (signed with its key).", .transaction,
            [.chainRoles([.intermediate, .intermediate, .root]), .signWith(.intermediate)], .invalid, [.chain, .jwsSignature]),
    ]

    // MARK: - Certificate strictness

    static let jwsChain: [VectorSpec] = [
        spec("jws-chain::foreign-root", "A complete Apple-shaped chain under another root.", .transaction, [.foreignChain], .invalid, [.chainUntrusted], severity: .critical),
        spec(
            "jws-chain::leaf-without-marker", "A leaf under our intermediate without 1.2.840.113635.100.6.11.1: any end entity of the CA.", .transaction, [.leafVariant(.noMarker)],
            .invalid, [.chainLeafMarker], severity: .critical),
        spec(
            "jws-chain::intermediate-without-marker", "An intermediate under our root without 1.2.840.113635.100.6.2.1.", .transaction, [.intermediateVariant(.noMarker)], .invalid,
            [.chainIntermediateMarker], severity: .critical),
        spec(
            "jws-chain::leaf-marker-critical", "The leaf marker marked critical: an unknown critical extension.", .transaction, [.leafVariant(.criticalMarker)], .invalid,
            [.chainInvalid, .chain]),
        spec("jws-chain::leaf-expired", "The leaf expired before signedDate.", .transaction, [.leafVariant(.expired)], .invalid, [.chainExpired], severity: .critical),
        spec("jws-chain::leaf-not-yet-valid", "The leaf becomes valid after signedDate.", .transaction, [.leafVariant(.notYetValid)], .invalid, [.chainNotYetValid]),
        spec("jws-chain::intermediate-expired", "The intermediate expired before signedDate.", .transaction, [.intermediateVariant(.expired)], .invalid, [.chainExpired]),
        spec(
            "jws-chain::intermediate-not-ca", "The intermediate says CA:FALSE.", .transaction, [.intermediateVariant(.notCA)], .invalid, [.chainInvalid, .chain],
            severity: .critical),
        spec(
            "jws-chain::leaf-is-ca",
            "The leaf says CA:TRUE: path validation accepts a CA as the end entity, but Apple's leaf is CA:FALSE; refusing it is stricter, accepting it lets no forgery through.",
            .transaction, [.leafVariant(.isCA)], .acceptable, [.chain], flags: ["JWS_LEAF_IS_CA"]),
        spec(
            "jws-chain::leaf-signed-by-root", "The leaf issued by the root directly, placed in a three-certificate x5c.", .transaction, [.leafVariant(.signedByRoot)], .invalid,
            [.chain, .chainLength], severity: .critical),
        spec("jws-chain::intermediate-self-signed", "A self-signed intermediate.", .transaction, [.intermediateVariant(.selfSigned)], .invalid, [.chainUntrusted, .chain]),
        spec("jws-chain::leaf-bad-certificate-signature", "The leaf's certificate signature does not verify.", .transaction, [.leafVariant(.badSignature)], .invalid, [.chain]),
        spec(
            "jws-chain::critical-unknown-extension", "An unknown critical extension in the leaf.", .transaction, [.leafVariant(.criticalUnknown)], .invalid,
            [.chainInvalid, .chain]),
        spec(
            "jws-chain::leaf-without-aki", "A leaf without authorityKeyIdentifier: Apple's Python verifier's strict X.509 mode refuses it; RFC 5280 requires it.", .transaction,
            [.leafVariant(.noAKI)], .invalid, [.chainInvalid, .chain]),
        spec(
            "jws-chain::leaf-without-ski", "A leaf without subjectKeyIdentifier (RFC 5280 says SHOULD, Apple's leaf has one).", .transaction, [.leafVariant(.noSKI)], .acceptable,
            [.chainInvalid, .chain], flags: ["JWS_KEY_IDENTIFIERS"]),
        spec(
            "jws-chain::intermediate-without-ski", "An intermediate without subjectKeyIdentifier: RFC 5280 requires it of a CA.", .transaction, [.intermediateVariant(.noSKI)],
            .invalid, [.chainInvalid, .chain]),
        spec(
            "jws-chain::intermediate-without-aki", "An intermediate without authorityKeyIdentifier: RFC 5280 requires it.", .transaction, [.intermediateVariant(.noAKI)], .invalid,
            [.chainInvalid, .chain]),
        spec(
            "jws-chain::leaf-keycertsign-only", "A leaf whose keyUsage is keyCertSign, not digitalSignature: it may not sign data.", .transaction,
            [.leafVariant(.keyUsageKeyCertSign)], .invalid, [.chainInvalid, .chain]),
        spec(
            "jws-chain::leaf-eku-server-auth", "A leaf with extendedKeyUsage serverAuth, which Apple's leaf does not have: a TLS certificate of the CA.", .transaction,
            [.leafVariant(.ekuServerAuth)], .acceptable, [.chainInvalid, .chain], flags: ["JWS_LEAF_EKU"]),
        spec(
            "jws-chain::pathlen-exceeded", "An extra CA between intermediate and leaf (x5c of 3 with pathlen 0 violated).", .transaction, [.pathlenExceeded], .invalid,
            [.chain, .jwsX5C]),
    ]

    // MARK: - The validity instant

    static let jwsTime: [VectorSpec] = [
        spec(
            "jws-time::signed-date-missing",
            "No signedDate: Apple always writes one; Apple's Python verifier then evaluates the chain at the current time. Only Apple's key could sign it, so accepting lets no forgery through.",
            .transaction, [.removeField("signedDate")], .acceptable, [.payloadMissingField, .payload], flags: ["JWS_SIGNED_DATE_MISSING"]),
        spec(
            "jws-time::signed-date-string", "signedDate as a string: treated as absent by verifiers that read numbers.", .transaction,
            [.addField("signedDate", .string("1750000000000"))], .acceptable, [.payloadMissingField, .payload], flags: ["JWS_SIGNED_DATE_MISSING"]),
        spec(
            "jws-time::signed-date-negative", "signedDate before 1970: before the chain's validity.", .transaction, [.addField("signedDate", .integer(-1_000))], .invalid,
            [.chainNotYetValid, .chain]),
        spec(
            "jws-time::signed-date-huge", "signedDate in the year 33658: after the chain expired.", .transaction, [.addField("signedDate", .integer(1_000_000_000_000_000))],
            .invalid, [.chainExpired, .chain]),
        spec(
            "jws-time::signed-date-fractional", "A fractional signedDate inside the validity (Xcode writes these).", .transaction,
            [.addField("signedDate", .number(1_749_988_800_000.5))], .valid),
        spec(
            "jws-time::signed-date-before-chain", "signedDate in 2019, before the chain's notBefore (2020).", .transaction, [.addField("signedDate", .integer(1_546_300_800_000))],
            .invalid, [.chainNotYetValid, .chain]),
        spec(
            "jws-time::signed-date-after-chain", "signedDate in 2050, after the chain's notAfter.", .transaction, [.addField("signedDate", .integer(2_556_144_000_000))], .invalid,
            [.chainExpired, .chain]),
        spec(
            "jws-time::app-transaction-creation-date-wins",
            "AppTransaction: receiptCreationDate inside the validity, signedDate outside. Apple's Swift, Java and Node libraries evaluate the chain at receiptCreationDate and accept; Python prefers signedDate and rejects.",
            .appTransaction, [.addField("signedDate", .integer(2_556_144_000_000))], .valid, flags: ["JWS_VALIDITY_INSTANT"]),
    ]

    // MARK: - Claim binding

    static let jwsBinding: [VectorSpec] = [
        spec("jws-binding::transaction-other-bundle", "Another app's transaction.", .transaction, [], .invalid, [.bindingBundleID], severity: .critical, bundleID: "com.other.app"),
        spec(
            "jws-binding::app-transaction-other-bundle", "Another app's AppTransaction.", .appTransaction, [], .invalid, [.bindingBundleID], severity: .critical,
            bundleID: "com.other.app"),
        spec(
            "jws-binding::notification-other-bundle", "A notification for another app.", .notification, [], .invalid, [.bindingBundleID], severity: .critical,
            bundleID: "com.other.app"),
        spec(
            "jws-binding::sandbox-transaction-in-production", "A Sandbox transaction checked as Production.", .transaction, preset: .sandbox, [], .invalid, [.bindingEnvironment],
            severity: .critical, environment: .production),
        spec(
            "jws-binding::production-transaction-in-sandbox", "A Production transaction checked as Sandbox.", .transaction, [], .invalid, [.bindingEnvironment],
            environment: .sandbox),
        spec(
            "jws-binding::renewal-sandbox-in-production", "Sandbox renewal info checked as Production.", .renewal, preset: .sandbox, [], .invalid, [.bindingEnvironment],
            environment: .production),
        spec("jws-binding::environment-missing", "No environment in the payload.", .transaction, [.removeField("environment")], .invalid, [.bindingEnvironment]),
        spec(
            "jws-binding::environment-xcode-signed-production", "environment Xcode inside a production-signed JWS, checked as Production.", .transaction,
            [.addField("environment", .string("Xcode"))], .invalid, [.bindingEnvironment]),
        spec(
            "jws-binding::unsigned-xcode-in-production", "alg none, environment Xcode, no signature: what a server that cascades to an Xcode verifier accepts.", .transaction,
            [.addField("environment", .string("Xcode")), .setHeader("alg", .string("none")), .emptySignature], .invalid, [.jwsAlgorithm, .jwsSignature, .bindingEnvironment],
            severity: .critical, flags: ["JWS_UNSIGNED_XCODE"]),
        spec(
            "jws-binding::app-transaction-other-app-id", "An AppTransaction of another app id in Production.", .appTransaction, [], .invalid, [.bindingAppAppleID],
            severity: .critical, appID: .value(1)),
        spec("jws-binding::notification-other-app-id", "A notification of another app id in Production.", .notification, [], .invalid, [.bindingAppAppleID], appID: .value(1)),
        spec("jws-binding::realtime-other-app-id", "A realtime request of another app id in Production.", .realtime, [], .invalid, [.bindingAppAppleID], appID: .value(1)),
        spec(
            "jws-binding::app-transaction-app-id-missing", "An AppTransaction without appAppleId in Production.", .appTransaction, [.removeField("appAppleId")], .invalid,
            [.bindingAppAppleID]),
        spec(
            "jws-binding::receipt-type-sandbox-in-production", "AppTransaction receiptType Sandbox checked as Production.", .appTransaction, preset: .sandbox, [], .invalid,
            [.bindingEnvironment], environment: .production, appID: .value(1)),
    ]

    // MARK: - Nested JWS

    static let jwsNested: [VectorSpec] = [
        spec(
            "jws-nested::transaction-tampered", "The notification is genuine; its signedTransactionInfo's signature is not.", .notification,
            [.nested("signedTransactionInfo", .flipBit(8))], .invalid, [.jwsNested], severity: .critical, flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::renewal-tampered", "signedRenewalInfo's signature does not verify.", .notification, [.nested("signedRenewalInfo", .flipBit(8))], .invalid, [.jwsNested],
            severity: .critical, flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::transaction-foreign-chain", "signedTransactionInfo signed under another root.", .notification, [.nested("signedTransactionInfo", .foreignChain)], .invalid,
            [.jwsNested], severity: .critical, flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::transaction-sandbox", "A Sandbox transaction inside a Production notification.", .notification, [.nestedEnvironment("signedTransactionInfo", "Sandbox")],
            .invalid, [.jwsNested], flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::transaction-alg-none", "signedTransactionInfo with alg none.", .notification, [.nested("signedTransactionInfo", .setHeader("alg", .string("none")))],
            .invalid, [.jwsNested], severity: .critical, flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::transaction-not-jws", "signedTransactionInfo is plain JSON text.", .notification, [.replaceNested("signedTransactionInfo", "{\"transactionId\":\"1\"}")],
            .invalid, [.jwsNested], flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::transaction-other-bundle", "signedTransactionInfo of another app.", .notification, [.nestedBundle("signedTransactionInfo", "com.other.app")], .invalid,
            [.jwsNested], flags: ["JWS_NESTED_UNVERIFIED"]),
    ]

    // MARK: - Resources

    static let jwsResource: [VectorSpec] = [
        spec(
            "jws-resource::payload-1mib", "A 1 MiB field in a signed payload: valid, and must be judged in time.", .transaction,
            [.fillField("padding", count: 1 << 20)], .valid, severity: .medium),
        spec(
            "jws-resource::x5c-100-entries", "x5c with 100 certificates.", .transaction, [.chainRoles(Array(repeating: .leaf, count: 100))], .invalid,
            [.jwsX5C, .chainLength, .resource], severity: .medium),
        spec("jws-resource::header-1mib", "A 1 MiB header member.", .transaction, [.fillHeader("pad", count: 1 << 20)], .valid, severity: .medium),
    ]
}
