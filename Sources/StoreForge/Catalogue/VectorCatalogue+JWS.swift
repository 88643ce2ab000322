#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ForgeCrypto
import ReceiptCorpus
import ReceiptModel
import _ForgeSupport
import JWSModel
import StoreModel
import AppStoreVocabulary

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

    /// What Apple added in 2025–26 (issue 40), each a value a verifier must take: a prorated refund
    /// (revocationType, revocationPercentage), a retention offer (offerType 5, which Apple's libraries do not
    /// model yet), an offer code on a one-time purchase (offerDiscountType ONE_TIME), a consumption request's reason,
    /// monthly billing over a 12-month commitment.
    static var appleSince2025: [VectorSpec] {
        let subscription = Purchase(productID: "com.example.pro.monthly", purchaseDate: "2025-05-01T00:00:00Z", renewals: 1, period: "P1M")
        var prorated = spec(
            "jws-valid::refund-prorated",
            "A transaction refunded in part: revocationType REFUND_PRORATED and revocationPercentage 50000 (half, in milli-percent), as Apple sends since 2025-12: genuine, so every correct verifier must accept it.",
            .transaction, [], .valid)
        prorated.scenario.timeline = [TimelineEvent(.refund, at: "2025-06-05T00:00:00Z", productID: subscription.productID, percentage: 50_000)]
        var retention = spec(
            "jws-valid::offer-type-retention",
            "A transaction under a retention offer, offerType 5 (WWDC26), a value Apple's libraries do not model yet: they keep it as a raw value, so a verifier that rejects it drops genuine transactions.",
            .transaction, [], .valid)
        retention.scenario.products = [
            ProductDefinition(
                productID: subscription.productID, type: .autoRenewable, period: "P1M", price: "9.99",
                offers: [SubscriptionOffer(kind: .retention, id: "stay-half-price", paymentMode: .payAsYouGo, period: "P1M", periods: 3, price: "4.99")])
        ]
        retention.scenario.purchases[0].promo = "stay-half-price"
        var oneTime = spec(
            "jws-valid::one-time-offer-code",
            "An offer code redeemed on a consumable: offerType 3 and offerDiscountType ONE_TIME (2025-10), no offerPeriod: genuine, so every correct verifier must accept it.",
            .transaction, [], .valid)
        oneTime.scenario = oneTimeScenario
        oneTime.scenario.products = [
            ProductDefinition(
                productID: "com.example.gems", type: .consumable, price: "4.99",
                offers: [SubscriptionOffer(kind: .offerCode, id: "GEMS50", paymentMode: .oneTime, period: nil, price: "2.49")])
        ]
        oneTime.scenario.purchases[0].promo = "GEMS50"
        var consumption = spec(
            "jws-valid::notification-consumption-request",
            "A signed CONSUMPTION_REQUEST about a consumable, whose data carries consumptionRequestReason (UNINTENDED_PURCHASE, 2026): genuine, with genuine nested JWS, so every correct verifier must accept it.",
            .notification, [], .valid, notification: (NotificationType.consumptionRequest.rawValue, nil))
        consumption.scenario = oneTimeScenario
        // A yearly subscription billed monthly over a 12-month commitment (API 1.21): the fifth month's transaction
        // and the renewal info, each with its commitmentInfo.
        let monthly = Purchase(productID: "com.example.pro.yearly", purchaseDate: "2025-01-20T00:00:00Z", renewals: 4, period: "P1Y", billingPlan: .monthly)
        var commitment = spec(
            "jws-valid::commitment-monthly-transaction",
            "The fifth monthly transaction of a yearly subscription billed MONTHLY over a 12-month commitment: billingPlanType and commitmentInfo (billingPeriodNumber 5 of 12, commitmentExpiresDate, commitmentPrice), as Apple sends since 2026-04: genuine, so every correct verifier must accept it.",
            .transaction, [], .valid)
        commitment.scenario.purchases = [monthly]
        var commitmentRenewal = spec(
            "jws-valid::commitment-monthly-renewal",
            "The renewal info of a subscription billed MONTHLY over a 12-month commitment: renewalBillingPlanType and its commitmentInfo (the commitment's renewal date, price and product): genuine, so every correct verifier must accept it.",
            .renewal, [], .valid)
        commitmentRenewal.scenario.purchases = [monthly]
        return [prorated, retention, oneTime, consumption, commitment, commitmentRenewal]
    }

    /// A sane verifier's bound on one JWS: real ones are a few KiB, so refusing more than this is a DoS guard,
    /// not a bug. Vectors over it are behind `large`, flagged JWS_OVERSIZE, and take either verdict outside strict.
    public static let jwsSizeBound = 256 << 10

    /// The flags of JWS vectors, explained.
    static let jwsNotes: [String: Note] = [
        "JWS_MALLEABLE_SIGNATURE": Note(
            bugClass: "ecdsa-malleability",
            description:
                "(r, n−s) is a second valid ES256 signature of the same input; Apple's own signatures have a high s about half the time, so verifiers must accept it, and code must not use signatures as ids.",
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
        "JWS_X5C_ENCODING": Note(
            bugClass: "x5c-encoding",
            description:
                "x5c entries in another text form than RFC 7515 §4.1.6's base64 DER (base64url, PEM). The certificates are Apple's and the header is signed, so nothing is forged; Apple's Node library decodes with Buffer 'base64', which takes both alphabets, while Swift, Java and Python refuse. Strict rejects.",
            effect: "Lenient decoders accept what Apple never writes; strict ones reject it.", links: ["https://www.rfc-editor.org/rfc/rfc7515#section-4.1.6"]),
        "JWS_KEY_IDENTIFIERS": Note(
            bugClass: "key-identifiers",
            description:
                "A missing authorityKeyIdentifier or subjectKeyIdentifier. RFC 5280 puts these on the issuing CA, not on the verifier; Apple's Python verifier runs OpenSSL's strict mode and refuses, Swift, Java and Node do not look. Only Apple's CA could issue the certificate, so nothing is forged. Strict rejects.",
            links: ["https://www.rfc-editor.org/rfc/rfc5280#section-4.2.1.2"]),
        "JWS_LEAF_EKU": Note(
            bugClass: "leaf-eku", description: "An extendedKeyUsage Apple's signing leaf does not have; only Apple's CA could issue it.",
            links: ["https://www.rfc-editor.org/rfc/rfc5280#section-4.2.1.12"]),
        "JWS_APP_DATA_SHAPE": Note(
            bugClass: "app-data-shape",
            description:
                "A RESCIND_CONSENT whose appData is not Apple's shape: beside data (Apple sends one of data, summary, externalPurchaseToken, appData), or without the signed AppTransaction that says whose consent ended. Only Apple could sign it, so nothing is forged; Apple's Python SignedDataVerifier binds data first and never looks for the nested JWS, so it accepts both. Apple-compatible takes either verdict, strict rejects.",
            links: ["https://developer.apple.com/documentation/appstoreservernotifications/appdata"]),
        "JWS_VALIDITY_INSTANT": Note(
            bugClass: "validity-instant",
            description:
                "Apple's libraries disagree on when an AppTransaction's chain is evaluated: receiptCreationDate (Swift, Java, Node; Apple documents it as the date the App Store signed it) or signedDate first when present (Python, the Go port). Apple-compatible takes either; strict judges at signedDate.",
            links: ["https://github.com/apple/app-store-server-library-python"]),
        "OCSP_NO_NEXT_UPDATE": Note(
            bugClass: "revocation",
            description:
                "A good OCSP answer without nextUpdate. RFC 6960 §4.2.2.1 allows it (newer information is always available) and Java's PKIX checker takes it; Apple's Swift verifier requires nextUpdate and Python 3.1.2 refuses an answer without one. The status is good either way, so nothing is forged: apple-compatible takes either, strict rejects.",
            links: ["https://www.rfc-editor.org/rfc/rfc6960#section-4.2.2.1"]),
        "OCSP_NO_RESPONDER": Note(
            bugClass: "revocation",
            description:
                "A leaf whose AIA names no OCSP responder. Apple's Swift verifier skips the check (its policy is met), Python and Node fail, Java's PKIX cannot determine the status (retryable). Only Apple's CA could issue it: apple-compatible takes either, strict rejects.",
            links: ["https://github.com/apple/swift-certificates"]),
        "JWS_OVERSIZE": Note(
            bugClass: "resource-bound",
            description:
                "A genuinely signed JWS over 256 KiB (real ones are a few KiB). Apple's libraries read it, and a verifier with a sane size bound refuses it before parsing; neither lets a forgery through, so only strict decides: it rejects. Only harnesses declaring `large` see these.",
            effect: "Verifiers without any bound can be made to parse and hash megabytes per request.", links: []),
    ]

    static let kinds: [JWSKind] = [.transaction, .renewal, .appTransaction, .notification, .realtime]

    static func spec(
        _ id: String, _ description: String, _ kind: JWSKind = .transaction, preset: Preset = .appstore, _ mutations: [MutationStep] = [],
        _ verdict: Verdict, _ classes: [ErrorClass] = [], severity: Severity = .high, environment: Environment? = nil, bundleID: String = "com.example.app",
        appID: VectorSpec.AppID = .artefact, flags: [String] = [], features: [Feature] = [], notification: (String, String?)? = nil, canary: Bool = false
    ) -> VectorSpec {
        var scenario = jwsScenario
        scenario.preset = preset
        // Revision 2: the recipe's steps gained their parameters (typed JWS mutations), so the provenance changed.
        // Then one more (issue 20): the provenance records the seed and the scenario. Then one more (issue 21):
        // every description states the reason for its verdict, and some verdicts, flags and features changed.
        var spec = VectorSpec(
            jws: id, description, kind: kind, scenario: scenario, mutations: mutations, verdict: verdict, errorClasses: classes, severity: severity,
            environment: environment, bundleID: bundleID, appAppleID: appID, flags: flags, revision: mutations.contains { !$0.parameters.isEmpty } ? 4 : 3)
        spec.features += features.map(\.rawValue)
        if let notification { (spec.notificationType, spec.subtype) = notification }
        spec.canary = canary
        return spec
    }

    static let jws: [VectorSpec] =
        jwsValid + jwsSignature + jwsHeader + jwsFormat + jwsX5C + jwsChain + jwsTime + jwsBinding + jwsAppDataBinding + jwsNested + jwsAppDataNested
        + jwsResource + jwsOnline

    // MARK: - Valid artefacts

    static let jwsValid: [VectorSpec] = {
        var specs: [VectorSpec] = []
        for kind in kinds {
            // The JWS canaries (run first when JWS are selected): the two artefacts every StoreKit 2 verifier reads.
            specs.append(
                spec(
                    "jws-valid::\(kind.rawValue)-production",
                    "A valid \(kind.rawValue) JWS in Production, as Apple signs it: ES256 under a three-certificate x5c to the configured root, claims matching the context. Every correct verifier must accept it.",
                    kind, [], .valid, severity: .critical, canary: [.transaction, .renewal].contains(kind)))
            specs.append(
                spec(
                    "jws-valid::\(kind.rawValue)-sandbox",
                    "A valid \(kind.rawValue) JWS in Sandbox, checked by a verifier configured for Sandbox: Apple signs Sandbox data with the same chain, so every correct verifier must accept it.",
                    kind, preset: .sandbox, [], .valid, severity: .critical))
        }
        // Behind `xcode` (issue 21): Apple's SignedDataVerifier skips every check for Xcode, and many servers never accept
        // Xcode-signed data at all; only a verifier that declares it is asked to.
        for kind in [JWSKind.transaction, .renewal, .appTransaction] {
            specs.append(
                spec(
                    "jws-valid::\(kind.rawValue)-xcode",
                    "An Xcode-signed \(kind.rawValue) (one self-signed certificate, kid Apple_Xcode_Key, fractional-millisecond dates) checked as Xcode with the Xcode certificate as the anchor. Valid for a verifier that accepts Xcode data (Apple's SignedDataVerifier skips verification for Xcode and accepts it too); verifiers that never accept Xcode-signed data do not declare xcode and are not sent it.",
                    kind, preset: .xcode2023, [], .valid, features: [.xcode]))
        }
        let notifications: [(String, String?)] = [
            ("SUBSCRIBED", "INITIAL_BUY"), ("SUBSCRIBED", "RESUBSCRIBE"), ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"), ("EXPIRED", "VOLUNTARY"),
            ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"), ("REFUND", nil), ("TEST", nil), ("RENEWAL_EXTENSION", "SUMMARY"), ("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED"),
            ("PRICE_INCREASE", "PENDING"), ("ONE_TIME_CHARGE", nil), ("RESCIND_CONSENT", nil), ("FUTURE_NOTIFICATION_TYPE", "FUTURE_SUBTYPE"),
        ]
        // One more revision (issue 20): the notification carries the state its pair implies (expired, refunded, in grace…);
        // a one-time charge is about a consumable, not the subscription; TEST carries no transaction.
        let restated: Set<String> = ["DID_CHANGE_RENEWAL_STATUS", "EXPIRED", "DID_FAIL_TO_RENEW", "REFUND", "PRICE_INCREASE"]
        for (type, subtype) in notifications {
            let name = (type + (subtype.map { "-" + $0 } ?? "")).lowercased().replacing("_", with: "-")
            let why =
                type.hasPrefix("FUTURE")
                ? "an unknown type and subtype: Apple's libraries keep unknown values as raw strings, so a verifier that rejects them drops the notifications Apple adds next year"
                : "genuine, with genuine nested JWS, so every correct verifier must accept it"
            var notification = spec(
                "jws-valid::notification-\(name)", "A signed \(type)\(subtype.map { "/" + $0 } ?? "") notification in Production: \(why).", .notification, [], .valid,
                notification: (type, subtype))
            if type == NotificationType.oneTimeCharge.rawValue { notification.scenario = oneTimeScenario }
            if restated.contains(type) || [NotificationType.oneTimeCharge.rawValue, NotificationType.test.rawValue].contains(type) { notification.revision += 1 }
            // And one more (issue 40): a refund's transaction says how it was taken back (revocationType).
            if type == NotificationType.refund.rawValue { notification.revision += 1 }
            specs.append(notification)
        }
        specs += appleSince2025
        specs.append(
            spec(
                "jws-valid::unknown-fields",
                "Fields no verifier knows yet (Apple adds some every year, advancedCommerceInfo among them): the signature covers them and Apple's libraries ignore unknown keys, so every correct verifier must accept.",
                .transaction, [.addField("futureField", .string("x")), .addField("advancedCommerceInfo", .object([("requestReferenceId", .string("r"))]))], .valid))
        specs.append(
            spec(
                "jws-valid::unknown-enum-values",
                "New values of known fields (type, inAppOwnershipType): Apple's libraries keep unknown enum values as raw strings, so a verifier that rejects them breaks on Apple's next release.",
                .transaction, [.addField("type", .string("Future Product Type")), .addField("inAppOwnershipType", .string("FUTURE_OWNERSHIP"))], .valid))
        specs.append(
            spec(
                "jws-valid::null-optional-field",
                "An optional field (appAccountToken) present as null: Apple's libraries decode it as absent and the signature covers it, so every correct verifier must accept.",
                .transaction, [.addField("appAccountToken", .null)], .valid))
        specs.append(
            spec(
                "jws-valid::typ-absent", "No typ header: RFC 7515 makes typ optional and none of Apple's verifiers reads it; the signature and chain are intact, so valid.",
                .transaction, [.removeHeader("typ")], .valid))
        specs.append(
            spec(
                "jws-valid::kid-present",
                "A kid in a Production header (Xcode's header has one): Apple's verifiers never read kid, the x5c chain decides, so valid; a verifier that looks keys up by kid is wrong.",
                .transaction, [.setHeader("kid", .string("anything"))], .valid))
        specs.append(
            spec(
                "jws-valid::malleable-high-s",
                "(r, n−s): the other valid ECDSA signature of the same input. ES256 does not require a low s and Apple's own signatures have a high s half the time, so a verifier that rejects it rejects half of real JWS.",
                .transaction, [.negateS], .valid, flags: ["JWS_MALLEABLE_SIGNATURE"]))
        return specs
    }()

    // MARK: - Signatures (Wycheproof ECDSA P-256 classes over our own JWS)

    static let jwsSignature: [VectorSpec] = {
        var specs: [VectorSpec] = []
        // (name, what, why it must be rejected)
        let cases: [(String, String, String, MutationStep)] = [
            ("r-zero", "r = 0", "never a valid ECDSA signature (Wycheproof InvalidSignature)", .rZero),
            ("s-zero", "s = 0", "never a valid ECDSA signature; Java 15–18 accepted it (CVE-2022-21449)", .sZero),
            ("both-zero", "r = s = 0", "the psychic signature of CVE-2022-21449, which verified any message", .bothZero),
            ("r-plus-n", "r + n (33 bytes, 65 in all)", "out of range and the wrong length; reducing it mod n accepts a second encoding (Wycheproof RangeCheck)", .rPlusN),
            ("s-plus-n", "s + n (65 bytes)", "out of range and the wrong length (Wycheproof RangeCheck)", .sPlusN),
            ("der-signature", "an X9.62 DER signature instead of r‖s", "RFC 7518 §3.4 requires the 64-byte R‖S, and Wycheproof's P1363 vectors mark DER invalid", .derSignature),
            ("short-63", "63 bytes (first dropped)", "not 64 bytes and no longer the signed (r, s)", .truncate(63)),
            ("long-65", "65 bytes (a zero appended)", "RFC 7518 §3.4 requires exactly 64; ignoring the extra byte accepts bytes nobody signed", .appendZero),
            ("empty", "an empty signature", "nothing is signed: alg none by another name", .emptySignature),
            ("r-only", "r alone (32 bytes)", "there is no s to verify", .truncate(32)),
            ("bit-flip-r", "one bit of r flipped", "the signature no longer matches the input", .flipBit(0)),
            ("bit-flip-s", "one bit of s flipped", "the signature no longer matches the input", .flipBit(40)),
            ("other-message", "a valid signature of another payload", "the payload changed after signing", .signOtherPayload),
            ("foreign-key", "signed by a P-256 key outside the chain", "the x5c leaf's key does not verify it: a forgery", .signWithForeignKey),
            ("intermediate-key", "signed by the intermediate's P-384 key (96 bytes)", "only the leaf signs data, and ES256 is P-256", .signWith(.intermediate)),
            ("root-key", "signed by the root's key", "only the leaf's key signs data", .signWith(.root)),
            ("swapped-r-s", "s‖r", "not the signature of the input", .swapRS),
        ]
        for kind in [JWSKind.transaction, .notification] {
            for (name, what, why, mutation) in cases {
                specs.append(
                    spec(
                        "jws-signature::\(kind.rawValue)-\(name)",
                        "\(kind.rawValue): \(what): \(why). The signature does not verify under the leaf's key as ES256 defines it, so every correct verifier must reject it (Apple's four do).",
                        kind, [mutation], .invalid, [.jwsSignature], severity: .critical))
            }
        }
        return specs
    }()

    // MARK: - Header and algorithm

    /// Why a header whose alg is not ES256 is refused, though the bytes carry a genuine ES256 signature.
    static let pinnedAlgorithm =
        "Apple signs ES256 only and all four of its verifiers refuse any other alg (Swift and Python before the chain, Java after it, Node through jsonwebtoken); RFC 8725 §3.1 requires a verifier to pin the algorithm, so accepting is the algorithm-confusion bug"

    static let jwsHeader: [VectorSpec] = [
        spec(
            "jws-header::alg-none", "alg none and no signature: the oldest JWT bug. Nothing is signed, so accepting is a forgery.", .transaction,
            [.setHeader("alg", .string("none")), .emptySignature], .invalid, [.jwsAlgorithm, .jwsSignature], severity: .critical),
        spec(
            "jws-header::alg-none-signed",
            "alg none with an ES256 signature kept: an unsecured JWS must have an empty signature (RFC 7515 §A.5), and \(pinnedAlgorithm).", .transaction,
            [.setHeader("alg", .string("none"))], .invalid, [.jwsAlgorithm, .jwsSignature], severity: .critical),
        spec(
            "jws-header::alg-hs256-ec-key",
            "HS256 keyed with the leaf's public key bytes (algorithm confusion, Wycheproof's symmetry-confusion class): anyone can compute it from the public x5c, so accepting is a forgery.",
            .transaction, [.setHeader("alg", .string("HS256")), .hmacWithLeafKey], .invalid, [.jwsAlgorithm, .jwsSignature], severity: .critical),
        spec(
            "jws-header::alg-es384", "alg ES384 over a P-256 key and an ES256 signature: \(pinnedAlgorithm).", .transaction, [.setHeader("alg", .string("ES384"))], .invalid,
            [.jwsAlgorithm, .jwsSignature]),
        spec(
            "jws-header::alg-rs256", "alg RS256 over an ES256 signature: \(pinnedAlgorithm).", .transaction, [.setHeader("alg", .string("RS256"))], .invalid,
            [.jwsAlgorithm, .jwsSignature]),
        spec(
            "jws-header::alg-lowercase", "alg es256: alg values are case-sensitive (RFC 7515 §4.1.1), so this names no algorithm; \(pinnedAlgorithm).", .transaction,
            [.setHeader("alg", .string("es256"))], .invalid, [.jwsAlgorithm, .jwsSignature]),
        spec(
            "jws-header::alg-absent", "No alg: RFC 7515 §4.1.1 makes it required; \(pinnedAlgorithm).", .transaction, [.removeHeader("alg")], .invalid,
            [.jwsAlgorithm, .jwsHeader, .jwsSignature]),
        spec(
            "jws-header::alg-number", "alg as a number: not an algorithm name; \(pinnedAlgorithm).", .transaction, [.setHeader("alg", .integer(256))], .invalid,
            [.jwsAlgorithm, .jwsHeader, .jwsSignature]),
        spec(
            "jws-header::duplicate-alg-last-none",
            "alg twice, ES256 then none: RFC 7515 §4 says reject, or keep the lexically last, which is none; a parser that keeps the first reads another header than its neighbours.",
            .transaction, [.duplicateAlgNone], .invalid, [.jwsAlgorithm, .jwsHeader, .jwsSignature]),
        spec(
            "jws-header::embedded-jwk",
            "A jwk of a foreign key, and the JWS signed by it: trusting a key the message brings is a forgery (Wycheproof rejectsAttackerProvidedEmbeddedJwk); only the x5c chain to the configured root is trusted.",
            .transaction, [.embedForeignJWK, .signWithForeignKey], .invalid, [.jwsSignature, .chain], severity: .critical),
        spec(
            "jws-header::x5u-injection",
            "An x5u URL and a foreign signature: fetching keys from a URL the message names trusts the attacker; the leaf's key does not verify it, so accepting is a forgery.",
            .transaction, [.setHeader("x5u", .string("http://127.0.0.1:1/chain.pem")), .signWithForeignKey], .invalid, [.jwsSignature], severity: .critical),
        spec(
            "jws-header::jku-injection", "A jku URL and a foreign signature: the same key injection through a JWK set URL; accepting is a forgery.", .transaction,
            [.setHeader("jku", .string("http://127.0.0.1:1/jwks.json")), .signWithForeignKey], .invalid, [.jwsSignature], severity: .critical),
        spec(
            "jws-header::kid-injection-foreign", "A kid naming a key and a foreign signature: kid selects nothing in Apple's scheme; accepting is a forgery.", .transaction,
            [.setHeader("kid", .string("../../keys/foreign")), .signWithForeignKey], .invalid, [.jwsSignature]),
        spec(
            "jws-header::not-json", "The header is not JSON: there is no alg or x5c to verify with.", .transaction, [.headerBytes(Array("not json".utf8))], .invalid,
            [.jwsFormat, .jwsHeader]),
        spec(
            "jws-header::array", "The header is a JSON array, not the object RFC 7515 requires: no alg or x5c to verify with.", .transaction,
            [.headerBytes(Array("[\"ES256\"]".utf8))], .invalid, [.jwsFormat, .jwsHeader]),
        spec(
            "jws-header::x5c-string", "x5c is a string, not an array (RFC 7515 §4.1.6): there is no chain to verify.", .transaction, [.setHeader("x5c", .string("MII"))], .invalid,
            [.jwsX5C, .jwsHeader]),
        spec(
            "jws-header::x5c-numbers", "x5c holds numbers, not certificates: there is no chain to verify.", .transaction,
            [.setHeader("x5c", .array([.integer(1), .integer(2), .integer(3)]))], .invalid, [.jwsX5C, .jwsHeader]),
        // Judged for every verifier, not behind `xcode`: a Production verifier must refuse Xcode data whatever it supports.
        spec(
            "jws-header::xcode-kid-production",
            "An Xcode-signed JWS (kid, one self-signed certificate) checked as Production: not under the configured root, and Apple's Production verifier demands three certificates. Every verifier must reject it, Xcode support or not.",
            .transaction, preset: .xcode2023, [], .invalid, [.jwsX5C, .chain, .bindingEnvironment], environment: .production),
    ]

    // MARK: - Compact form

    static let jwsFormat: [VectorSpec] = [
        spec(
            "jws-format::two-parts", "header.payload, no signature part: not a compact JWS (RFC 7515 §7.1) and nothing is signed.", .transaction, [.dropSignaturePart],
            .invalid, [.jwsFormat]),
        spec(
            "jws-format::four-parts",
            "An extra part after the signature: not a compact JWS; a parser that takes the first three ignores bytes nobody signed (the trailing-data differential the receipt corpus rejects too).",
            .transaction, [.appendPart], .invalid, [.jwsFormat]),
        spec(
            "jws-format::five-parts-jwe", "Five parts: a JWE's shape, not a JWS; Apple sends JWS only, and nothing here is verified.", .transaction, [.appendPart, .appendPart],
            .invalid, [.jwsFormat]),
        spec(
            "jws-format::json-serialization",
            "The flattened JSON serialization of a genuine JWS instead of the compact form: RFC 7515 defines it, but Apple sends compact only and none of its verifiers parses JSON; a server that accepts it widens its input language for nothing.",
            .transaction, [.jsonSerialization], .invalid, [.jwsFormat]),
        spec(
            "jws-format::padding",
            "Base64 padding on every part: the signing input is the parts as sent (RFC 7515 §5.2), so the signature no longer verifies; a verifier that strips padding first verifies other bytes than it parses.",
            .transaction, [.padParts], .invalid, [.jwsFormat]),
        spec(
            "jws-format::standard-base64",
            "The signature part in standard base64 (+, / and padding) instead of base64url: RFC 7515 requires base64url; Apple's verifiers refuse it.", .transaction,
            [.standardAlphabetSignature], .invalid, [.jwsFormat, .jwsSignature]),
        spec(
            "jws-format::whitespace", "A space inside the payload part: not base64url, and the signing input no longer matches the signature.", .transaction, [.insertSpace],
            .invalid, [.jwsFormat]),
        spec("jws-format::empty", "Empty input: nothing to verify.", .transaction, [.replaceCompact("")], .invalid, [.jwsFormat]),
        spec("jws-format::dots-only", "Two dots: three empty parts, nothing signed.", .transaction, [.replaceCompact("..")], .invalid, [.jwsFormat]),
        spec(
            "jws-format::payload-not-utf8", "The signed payload is not UTF-8: not a JSON claims set (RFC 7519 §7.2), so there are no claims to bind.", .transaction,
            [.payloadBytes([0x7B, 0xFF, 0xFE, 0x7D])], .invalid, [.jwsFormat, .payload]),
        spec(
            "jws-format::payload-array", "The signed payload is a JSON array: no bundleId or environment to bind, so it must be refused.", .transaction,
            [.payloadBytes(Array("[1,2,3]".utf8))], .invalid, [.jwsFormat, .payload]),
        spec(
            "jws-format::payload-empty-object",
            "The signed payload is {}: no signedDate to evaluate the chain at and no bundleId or environment to bind, so it must be refused.", .transaction,
            [.payloadBytes(Array("{}".utf8))], .invalid, [.payloadMissingField, .payload, .binding]),
        spec(
            "jws-format::payload-not-json", "The signed payload is not JSON: no claims to bind.", .transaction, [.payloadBytes(Array("hello".utf8))], .invalid,
            [.jwsFormat, .payload]),
        spec(
            "jws-format::deep-nesting",
            "The signed payload nests 10,000 arrays: no claims to bind, and a recursive parser overflows its stack; refuse without crashing.", .transaction,
            [.payloadBytes(Array(String(repeating: "[", count: 10_000).utf8))], .invalid, [.jwsFormat, .payload, .resource]),
    ]

    // MARK: - x5c shapes

    static let jwsX5C: [VectorSpec] = [
        spec(
            "jws-x5c::missing", "No x5c: no chain to the root, so the signing key is nobody's; accepting is a forgery.", .transaction, [.removeHeader("x5c"), .clearChain],
            .invalid, [.jwsX5C, .jwsHeader], severity: .critical),
        spec("jws-x5c::empty", "x5c is []: no chain, so the signing key is nobody's.", .transaction, [.chainRoles([])], .invalid, [.jwsX5C], severity: .critical),
        spec(
            "jws-x5c::leaf-only",
            "x5c holds the leaf alone: with only the root configured no path reaches it, so a verifier that accepts never checked the chain.", .transaction,
            [.chainRoles([.leaf])], .invalid, [.jwsX5C, .chainLength], severity: .critical),
        spec(
            "jws-x5c::two-certificates",
            "Leaf and intermediate, no root: the path to the configured root is complete, which is where trust comes from anyway. Apple always sends three and all four of its verifiers demand exactly three; accepting lets no forgery through, so only strict rejects (ROOT_NOT_EMBEDDED).",
            .transaction, [.chainRoles([.leaf, .intermediate])], .acceptable, [.jwsX5C, .chainLength], flags: ["ROOT_NOT_EMBEDDED"]),
        spec(
            "jws-x5c::four-certificates",
            "The root twice: a complete genuine chain with a spare copy of the root. Apple's verifiers demand exactly three; a path builder ignores the extra. Nothing is forged, so only strict rejects (EXTRA_CERTIFICATE).",
            .transaction, [.chainRoles([.leaf, .intermediate, .root, .root])], .acceptable, [.jwsX5C, .chainLength], flags: ["EXTRA_CERTIFICATE"]),
        spec(
            "jws-x5c::garbage-third",
            "x5c[2] is not a certificate. Apple's Swift, Python and Node verifiers never read it (the root comes from configuration); Java and verifiers that parse the whole chain reject it. Either is safe, so only strict decides: it rejects.",
            .transaction, [.garbageThird], .acceptable, [.jwsX5C], flags: ["JWS_X5C_THIRD_UNREAD"]),
        spec(
            "jws-x5c::reversed",
            "Root, intermediate, leaf: RFC 7515 §4.1.6 puts the signer first. A verifier that searches x5c for any key that verifies would also accept an attacker's own certificate beside Apple's chain, so it must be refused.",
            .transaction, [.chainRoles([.root, .intermediate, .leaf])], .invalid, [.chain, .jwsSignature, .jwsX5C]),
        spec(
            "jws-x5c::intermediate-first", "Intermediate, leaf, root: the signer is not first (RFC 7515 §4.1.6); refused for the reason of jws-x5c::reversed.", .transaction,
            [.chainRoles([.intermediate, .leaf, .root])], .invalid, [.chain, .jwsSignature, .jwsX5C]),
        spec(
            "jws-x5c::root-only-three", "The root three times: a check that only compares x5c[2] with the root passes it, though the root never signs data.", .transaction,
            [.chainRoles([.root, .root, .root])], .invalid, [.chain, .jwsSignature], severity: .critical),
        spec(
            "jws-x5c::base64url-entries",
            "x5c entries in base64url, not RFC 7515's base64. The certificates are Apple's and the header is signed, so nothing is forged; Apple's Node library reads them (Buffer 'base64' takes both alphabets), Swift, Java and Python refuse. Only strict decides: it rejects (JWS_X5C_ENCODING).",
            .transaction, [.x5cBase64URL], .acceptable, [.jwsX5C], flags: ["JWS_X5C_ENCODING"]),
        spec(
            "jws-x5c::pem-entries",
            "x5c entries as PEM text, not RFC 7515's base64 DER. The certificates are Apple's and the header is signed, so nothing is forged; none of Apple's verifiers reads PEM here, a tolerant certificate loader does. Only strict decides: it rejects (JWS_X5C_ENCODING).",
            .transaction, [.x5cPEM], .acceptable, [.jwsX5C], flags: ["JWS_X5C_ENCODING"]),
        // Judged for every verifier, not behind `xcode`.
        spec(
            "jws-x5c::xcode-certificate-production",
            "Signed with the Xcode key, its one certificate as x5c, checked as Production: not under the configured root. Every verifier must reject it, Xcode support or not.",
            .transaction, [.xcodeChainInProduction], .invalid, [.jwsX5C, .chain], severity: .critical),
        spec(
            "jws-x5c::leaf-is-intermediate",
            "x5c[0] is the intermediate itself, signed with its P-384 key: a CA does not sign data, it lacks the leaf marker, and ES256 is P-256.", .transaction,
            [.chainRoles([.intermediate, .intermediate, .root]), .signWith(.intermediate)], .invalid, [.chain, .jwsSignature]),
    ]

    // MARK: - Certificate strictness

    static let jwsChain: [VectorSpec] = [
        spec(
            "jws-chain::foreign-root", "A complete Apple-shaped chain under another root: untrusted, so accepting is a forgery.", .transaction, [.foreignChain], .invalid,
            [.chainUntrusted], severity: .critical),
        spec(
            "jws-chain::leaf-without-marker",
            "A leaf under the real intermediate without 1.2.840.113635.100.6.11.1: any end entity of the CA (a developer's certificate) could sign; Apple's four verifiers demand the marker.",
            .transaction, [.leafVariant(.noMarker)], .invalid, [.chainLeafMarker], severity: .critical),
        spec(
            "jws-chain::intermediate-without-marker",
            "An intermediate under the root without 1.2.840.113635.100.6.2.1: not the WWDR intermediate, so its end entities are not Apple's signing leaf; Apple's four verifiers demand the marker.",
            .transaction, [.intermediateVariant(.noMarker)], .invalid, [.chainIntermediateMarker], severity: .critical),
        spec(
            "jws-chain::leaf-marker-critical",
            "The leaf marker marked critical. RFC 5280 §4.2 lets only a verifier that processes the extension accept it; Apple's Swift, Java and Python verifiers reject it, Node's hand-written check reads it and accepts. As for receipts: strict and apple-compatible reject, lenient leaves it open (CRITICAL_MARKER).",
            .transaction, [.leafVariant(.criticalMarker)], .acceptable, [.chainInvalid, .chain], flags: ["CRITICAL_MARKER"]),
        spec(
            "jws-chain::leaf-expired", "The leaf expired before signedDate: the chain is invalid at the instant Apple's verifiers judge it.", .transaction,
            [.leafVariant(.expired)], .invalid, [.chainExpired], severity: .critical),
        spec(
            "jws-chain::leaf-not-yet-valid",
            "The leaf becomes valid months after signedDate (far beyond Node's 60 s skew): invalid at the instant Apple's verifiers judge it.", .transaction,
            [.leafVariant(.notYetValid)], .invalid, [.chainNotYetValid]),
        spec(
            "jws-chain::intermediate-expired", "The intermediate expired before signedDate: the chain is invalid at the instant Apple's verifiers judge it.", .transaction,
            [.intermediateVariant(.expired)], .invalid, [.chainExpired]),
        spec(
            "jws-chain::intermediate-not-ca", "The intermediate says CA:FALSE: it may not issue certificates, so its leaf is nobody's (RFC 5280 §6.1.4; Node checks it too).",
            .transaction, [.intermediateVariant(.notCA)], .invalid, [.chainInvalid, .chain], severity: .critical),
        spec(
            "jws-chain::leaf-is-ca",
            "The leaf says CA:TRUE: path validation accepts a CA as the end entity, but Apple's leaf is CA:FALSE; refusing it is stricter, accepting it lets no forgery through. Only strict decides: it rejects.",
            .transaction, [.leafVariant(.isCA)], .acceptable, [.chain], flags: ["JWS_LEAF_IS_CA"]),
        spec(
            "jws-chain::leaf-signed-by-root",
            "A leaf issued by the root directly, placed before the real intermediate: the path skips the WWDR intermediate and its marker. Accepting means checking the marker on x5c[1] instead of on the path (the Go port's bug).",
            .transaction, [.leafVariant(.signedByRoot)], .invalid, [.chain, .chainLength], severity: .critical),
        spec(
            "jws-chain::intermediate-self-signed", "A self-signed intermediate: no path to the configured root, so the chain is untrusted.", .transaction,
            [.intermediateVariant(.selfSigned)], .invalid, [.chainUntrusted, .chain]),
        spec(
            "jws-chain::leaf-bad-certificate-signature", "The leaf's certificate signature does not verify: the intermediate never issued it, so its key is nobody's.",
            .transaction, [.leafVariant(.badSignature)], .invalid, [.chain]),
        spec(
            "jws-chain::critical-unknown-extension",
            "An unknown critical extension in the leaf: RFC 5280 §4.2 says MUST reject, since the CA placed a constraint the verifier cannot honour. Apple's Swift, Java and Python verifiers reject it (Node's hand-written check does not look).",
            .transaction, [.leafVariant(.criticalUnknown)], .invalid, [.chainInvalid, .chain]),
        spec(
            "jws-chain::leaf-without-aki",
            "A leaf without authorityKeyIdentifier: RFC 5280 requires it of the issuing CA, not of the verifier. Apple's Python verifier (OpenSSL strict mode) refuses it; Swift, Java and Node do not look, nor does jwt-kit. Only Apple's CA could issue it, so only strict decides: it rejects (JWS_KEY_IDENTIFIERS).",
            .transaction, [.leafVariant(.noAKI)], .acceptable, [.chainInvalid, .chain], flags: ["JWS_KEY_IDENTIFIERS"]),
        spec(
            "jws-chain::leaf-without-ski",
            "A leaf without subjectKeyIdentifier: RFC 5280 says SHOULD, Apple's leaf has one. Apple's verifiers accept it (OpenSSL's strict mode asks it of CAs only), strict verifiers may refuse; only Apple's CA could issue it, so only strict decides: it rejects (JWS_KEY_IDENTIFIERS).",
            .transaction, [.leafVariant(.noSKI)], .acceptable, [.chainInvalid, .chain], flags: ["JWS_KEY_IDENTIFIERS"]),
        spec(
            "jws-chain::intermediate-without-ski",
            "An intermediate without subjectKeyIdentifier: RFC 5280 requires it of a CA certificate's issuer. Apple's Python verifier (OpenSSL strict mode) refuses it; Swift, Java and Node accept. Only Apple's root could issue it, so only strict decides: it rejects (JWS_KEY_IDENTIFIERS).",
            .transaction, [.intermediateVariant(.noSKI)], .acceptable, [.chainInvalid, .chain], flags: ["JWS_KEY_IDENTIFIERS"]),
        spec(
            "jws-chain::intermediate-without-aki",
            "An intermediate without authorityKeyIdentifier: RFC 5280 requires it of the issuing CA. Apple's Python verifier (OpenSSL strict mode) refuses it; Swift, Java and Node accept. Only Apple's root could issue it, so only strict decides: it rejects (JWS_KEY_IDENTIFIERS).",
            .transaction, [.intermediateVariant(.noAKI)], .acceptable, [.chainInvalid, .chain], flags: ["JWS_KEY_IDENTIFIERS"]),
        {
            // Revision 5 (issue 40): Apple's Swift library, run against it, accepts.
            var keyCertSign = spec(
                "jws-chain::leaf-keycertsign-only",
                "A leaf whose keyUsage is keyCertSign, not digitalSignature. RFC 5280 §4.2.1.3 forbids verifying signatures with such a key, so rejecting is right; Apple's Python verifier rejects it, verifiers that do not check the leaf's key usage (Apple's Swift and Node libraries, Java's PKIX, jwt-kit) accept, and the chain is still Apple's: as for receipts, either verdict outside strict (KEY_USAGE).",
                .transaction, [.leafVariant(.keyUsageKeyCertSign)], .acceptable, [.chainInvalid, .chain], flags: ["KEY_USAGE"])
            keyCertSign.revision += 1
            return keyCertSign
        }(),
        spec(
            "jws-chain::leaf-eku-server-auth",
            "A leaf with extendedKeyUsage serverAuth, which Apple's leaf does not have: a TLS certificate of the CA. Path validators without a purpose accept it, and only Apple's CA could issue it, so only strict decides: it rejects.",
            .transaction, [.leafVariant(.ekuServerAuth)], .acceptable, [.chainInvalid, .chain], flags: ["JWS_LEAF_EKU"]),
        spec(
            "jws-chain::pathlen-exceeded",
            "An extra CA between the intermediate (pathlen 0) and the leaf: the intermediate may not issue CAs, so the leaf is nobody's Apple would vouch for (RFC 5280 §6.1.4); Apple's verifiers find no path.",
            .transaction, [.pathlenExceeded], .invalid, [.chain, .jwsX5C]),
    ]

    // MARK: - The validity instant

    static let jwsTime: [VectorSpec] = [
        {
            // Revision 5 (issue 40): Apple's Swift library, run against it, decodes it and judges at the wall clock.
            var missing = spec(
                "jws-time::signed-date-missing",
                "No signedDate: Apple always writes one; Apple's Python and Swift verifiers then evaluate the chain at the current time (and accept while it is valid), verifiers that require the member fail to decode. Only Apple's key could sign it, so accepting lets no forgery through: only strict decides, and it rejects.",
                .transaction, [.removeField("signedDate")], .acceptable, [.payloadMissingField, .payload], flags: ["JWS_SIGNED_DATE_MISSING"])
            missing.revision += 1
            return missing
        }(),
        spec(
            "jws-time::signed-date-string",
            "signedDate as a string: verifiers that read numbers treat it as absent (see jws-time::signed-date-missing), typed decoders refuse it. Nothing is forged, so only strict decides: it rejects.",
            .transaction, [.addField("signedDate", .string("1750000000000"))], .acceptable, [.payloadMissingField, .payload], flags: ["JWS_SIGNED_DATE_MISSING"]),
        spec(
            "jws-time::signed-date-negative",
            "signedDate before 1970, before the chain's validity: Apple's four verifiers judge the chain at signedDate offline and reject; a verifier that judges at the present accepts a JWS whose own signing date its chain does not cover.",
            .transaction, [.addField("signedDate", .integer(-1_000))], .invalid, [.chainNotYetValid, .chain]),
        {
            // Revision 5 (issue 36): payload.invalid-field is a right reason too, the reference verifier's.
            var huge = spec(
                "jws-time::signed-date-huge",
                "signedDate in the year 33658, after the chain expired: judged at signedDate, as Apple's four verifiers do offline, the chain is invalid; a verifier whose certificate dates end with the year 9999 (X.509's GeneralizedTime, OpenSSL's verifier) cannot check a chain then and may refuse the date itself (payload.invalid-field); the date must also not trap a converter.",
                .transaction, [.addField("signedDate", .integer(1_000_000_000_000_000))], .invalid, [.chainExpired, .chain, .payloadInvalidField])
            huge.revision = 5
            return huge
        }(),
        spec(
            "jws-time::signed-date-fractional",
            "A fractional signedDate inside the validity: Xcode writes these and Apple's libraries read them, so every correct verifier must accept.", .transaction,
            [.addField("signedDate", .number(1_749_988_800_000.5))], .valid),
        spec(
            "jws-time::signed-date-before-chain",
            "signedDate in 2019, before the chain's notBefore (2020): judged at signedDate, as Apple's four verifiers do offline, the chain is not yet valid.", .transaction,
            [.addField("signedDate", .integer(1_546_300_800_000))], .invalid, [.chainNotYetValid, .chain]),
        spec(
            "jws-time::signed-date-after-chain",
            "signedDate in 2050, after the chain's notAfter: judged at signedDate, as Apple's four verifiers do offline, the leaf had expired when it signed.", .transaction,
            [.addField("signedDate", .integer(2_556_144_000_000))], .invalid, [.chainExpired, .chain]),
        spec(
            "jws-time::app-transaction-creation-date-wins",
            "AppTransaction: receiptCreationDate inside the chain's validity, a signedDate (which Apple's AppTransaction does not document) outside it. Apple's Swift, Java and Node libraries evaluate the chain at receiptCreationDate and accept; Python and the Go port prefer signedDate and reject. Either is safe: apple-compatible takes either, strict judges at signedDate and rejects (JWS_VALIDITY_INSTANT).",
            .appTransaction, [.addField("signedDate", .integer(2_556_144_000_000))], .acceptable, [.chainExpired, .chain], flags: ["JWS_VALIDITY_INSTANT"]),
    ]

    // MARK: - Claim binding

    static let jwsBinding: [VectorSpec] = [
        spec(
            "jws-binding::transaction-other-bundle", "Another app's genuine transaction: Apple's verifiers compare bundleId, or one app's purchase unlocks another.",
            .transaction, [], .invalid, [.bindingBundleID], severity: .critical, bundleID: "com.other.app"),
        spec(
            "jws-binding::app-transaction-other-bundle", "Another app's genuine AppTransaction: bundleId must match the app.", .appTransaction, [], .invalid, [.bindingBundleID],
            severity: .critical, bundleID: "com.other.app"),
        spec(
            "jws-binding::notification-other-bundle", "A genuine notification for another app: bundleId in data must match the app.", .notification, [], .invalid,
            [.bindingBundleID], severity: .critical, bundleID: "com.other.app"),
        spec(
            "jws-binding::sandbox-transaction-in-production",
            "A genuine Sandbox transaction checked as Production: Sandbox purchases are free, so Apple's verifiers refuse the environment mismatch.", .transaction,
            preset: .sandbox, [], .invalid, [.bindingEnvironment], severity: .critical, environment: .production),
        spec(
            "jws-binding::production-transaction-in-sandbox",
            "A genuine Production transaction checked as Sandbox: Apple's verifiers refuse any environment mismatch (java#154: deliberately not optional).", .transaction, [],
            .invalid, [.bindingEnvironment], environment: .sandbox),
        spec(
            "jws-binding::renewal-sandbox-in-production", "Genuine Sandbox renewal info checked as Production: environment is the one claim renewal info binds.", .renewal,
            preset: .sandbox, [], .invalid, [.bindingEnvironment], environment: .production),
        spec(
            "jws-binding::environment-missing", "No environment in the payload: it cannot match the expected one, and Apple's verifiers refuse it.", .transaction,
            [.removeField("environment")], .invalid, [.bindingEnvironment]),
        spec(
            "jws-binding::environment-xcode-signed-production",
            "environment Xcode inside a production-signed JWS, checked as Production: the claim does not match; judged for every verifier, Xcode support or not.",
            .transaction, [.addField("environment", .string("Xcode"))], .invalid, [.bindingEnvironment]),
        spec(
            "jws-binding::unsigned-xcode-in-production",
            "alg none, environment Xcode, no signature, checked as Production: what a server that cascades to an Xcode verifier accepts. A forgery; every verifier must reject it, Xcode support or not.",
            .transaction, [.addField("environment", .string("Xcode")), .setHeader("alg", .string("none")), .emptySignature], .invalid,
            [.jwsAlgorithm, .jwsSignature, .bindingEnvironment], severity: .critical, flags: ["JWS_UNSIGNED_XCODE"]),
        spec(
            "jws-binding::app-transaction-other-app-id", "An AppTransaction of another app id in Production: Apple's verifiers compare appAppleId in Production.",
            .appTransaction, [], .invalid, [.bindingAppAppleID], severity: .critical, appID: .value(1)),
        spec(
            "jws-binding::notification-other-app-id", "A notification of another app id in Production: Apple's verifiers compare appAppleId in Production.", .notification, [],
            .invalid, [.bindingAppAppleID], appID: .value(1)),
        spec(
            "jws-binding::realtime-other-app-id", "A realtime request of another app id in Production: Apple's verifiers compare appAppleId in Production.", .realtime, [],
            .invalid, [.bindingAppAppleID], appID: .value(1)),
        spec(
            "jws-binding::app-transaction-app-id-missing", "An AppTransaction without appAppleId in Production: it cannot match the app's id, and Apple's verifiers refuse it.",
            .appTransaction, [.removeField("appAppleId")], .invalid, [.bindingAppAppleID]),
        spec(
            "jws-binding::receipt-type-sandbox-in-production",
            "An AppTransaction with receiptType Sandbox checked as Production: receiptType is its environment, and Apple's verifiers refuse the mismatch.",
            .appTransaction, preset: .sandbox, [], .invalid, [.bindingEnvironment], environment: .production, appID: .value(1)),
    ]

    // MARK: - Nested JWS

    static let jwsNested: [VectorSpec] = [
        spec(
            "jws-nested::transaction-tampered",
            "The notification is genuine; its signedTransactionInfo's signature is not. Apple documents that the nested JWS must be verified too (node#216), or notifications forward forged transactions.",
            .notification, [.nested("signedTransactionInfo", .flipBit(8))], .invalid, [.jwsNested], severity: .critical, flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::renewal-tampered", "signedRenewalInfo's signature does not verify: the nested JWS must be verified like any other.", .notification,
            [.nested("signedRenewalInfo", .flipBit(8))], .invalid, [.jwsNested], severity: .critical, flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::transaction-foreign-chain", "signedTransactionInfo signed under another root: a forged transaction inside a genuine notification.",
            .notification, [.nested("signedTransactionInfo", .foreignChain)], .invalid, [.jwsNested], severity: .critical, flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::transaction-sandbox", "A Sandbox transaction inside a Production notification: the nested JWS binds its environment like any other.",
            .notification, [.nestedEnvironment("signedTransactionInfo", "Sandbox")], .invalid, [.jwsNested], flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::transaction-alg-none", "signedTransactionInfo with alg none: an unsigned transaction inside a genuine notification.", .notification,
            [.nested("signedTransactionInfo", .setHeader("alg", .string("none")))], .invalid, [.jwsNested], severity: .critical, flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::transaction-not-jws", "signedTransactionInfo is plain JSON text: an unsigned transaction where a JWS belongs.", .notification,
            [.replaceNested("signedTransactionInfo", "{\"transactionId\":\"1\"}")], .invalid, [.jwsNested], flags: ["JWS_NESTED_UNVERIFIED"]),
        spec(
            "jws-nested::transaction-other-bundle", "signedTransactionInfo of another app: the nested JWS binds its bundleId like any other.", .notification,
            [.nestedBundle("signedTransactionInfo", "com.other.app")], .invalid, [.jwsNested], flags: ["JWS_NESTED_UNVERIFIED"]),
    ]

    // MARK: - RESCIND_CONSENT's appData (issue 40)

    static let rescindConsent = (NotificationType.rescindConsent.rawValue, String?.none)
    /// The app's Apple id of the vectors that write an appData member whole: their scenario's, so every payload agrees.
    static let jwsAppAppleID: Int64 = 954_178_654
    /// appData as forge writes it for ``jwsScenario`` in Production, without its nested AppTransaction.
    static let jwsAppData: JSONValue = .object([("appAppleId", .integer(jwsAppAppleID)), ("bundleId", .string("com.example.app")), ("environment", .string("Production"))])

    /// `vector` with the app's Apple id ``jwsAppAppleID`` (not drawn from its seed).
    static func withAppAppleID(_ vector: VectorSpec) -> VectorSpec {
        var vector = vector
        vector.scenario.appItemID = jwsAppAppleID
        return vector
    }

    /// appData is bound like data (Apple's SignedDataVerifier reads bundleId, appAppleId and environment from it).
    static let jwsAppDataBinding: [VectorSpec] = [
        spec(
            "jws-binding::rescind-consent-other-bundle",
            "A genuine RESCIND_CONSENT for another app: appData's bundleId must match the app, as data's does (Apple's SignedDataVerifier binds appData alike).",
            .notification, [], .invalid, [.bindingBundleID], severity: .critical, bundleID: "com.other.app", notification: rescindConsent),
        spec(
            "jws-binding::rescind-consent-production-in-sandbox",
            "A genuine Production RESCIND_CONSENT checked as Sandbox: appData's environment must match, as data's does (Apple's SignedDataVerifier binds appData alike).",
            .notification, [], .invalid, [.bindingEnvironment], environment: .sandbox, notification: rescindConsent),
        withAppAppleID(
            spec(
                "jws-binding::rescind-consent-app-data-beside-data",
                "A RESCIND_CONSENT with data (this app's) beside appData: Apple sends one or the other, and a verifier that binds one while the app reads the other is confused. Apple's Python SignedDataVerifier binds data and accepts; only Apple could sign it, so apple-compatible takes either verdict and strict rejects (JWS_APP_DATA_SHAPE).",
                .notification,
                [.addField("data", jwsAppData)], .acceptable, [.payloadInvalidField], severity: .medium, flags: ["JWS_APP_DATA_SHAPE"], notification: rescindConsent)),
    ]

    /// The AppTransaction inside appData is verified like any nested JWS.
    static let jwsAppDataNested: [VectorSpec] = [
        spec(
            "jws-nested::app-transaction-tampered",
            "A genuine RESCIND_CONSENT whose appData.signedAppTransactionInfo's signature does not verify: a forged AppTransaction (whose consent ended) inside a genuine notification. Apple's Python SignedDataVerifier does not verify it; a server must, as for signedTransactionInfo.",
            .notification, [.nested("signedAppTransactionInfo", .flipBit(8))], .invalid, [.jwsNested], severity: .critical, flags: ["JWS_NESTED_UNVERIFIED"],
            notification: rescindConsent),
        spec(
            "jws-nested::app-transaction-foreign-chain",
            "appData.signedAppTransactionInfo signed under another root: a forged AppTransaction inside a genuine RESCIND_CONSENT. Apple's Python SignedDataVerifier does not verify it; a server must.",
            .notification, [.nested("signedAppTransactionInfo", .foreignChain)], .invalid, [.jwsNested], severity: .critical, flags: ["JWS_NESTED_UNVERIFIED"],
            notification: rescindConsent),
        withAppAppleID(
            spec(
                "jws-nested::app-transaction-missing",
                "A RESCIND_CONSENT whose appData has no signedAppTransactionInfo: nothing says whose consent ended. Apple's Python SignedDataVerifier does not look for it and accepts; only Apple could sign it, so apple-compatible takes either verdict and strict rejects (JWS_APP_DATA_SHAPE).",
                .notification, [.addField("appData", jwsAppData)], .acceptable, [.payloadMissingField], severity: .medium,
                flags: ["JWS_APP_DATA_SHAPE"], notification: rescindConsent)),
    ]

    // MARK: - Online checks (issue 26)

    /// Behind `online`: the chain's AIA points at the TEST responder on 127.0.0.1:6960, each certificate at the answer
    /// its path names, and the runner starts the responder. Verdicts follow Apple's four verifiers with online checks
    /// on (server-api-facts §5): what all of them refuse is invalid; where they split, either outside strict.
    static let jwsOnline: [VectorSpec] = {
        func online(
            _ name: String, _ description: String, leaf: OCSPPointer, intermediate: OCSPPointer = .answer(.good), _ verdict: Verdict,
            _ classes: [ErrorClass] = [], severity: Severity = .high, flags: [String] = []
        ) -> VectorSpec {
            var vector = spec(
                "jws-online::\(name)", description, .transaction, [.ocsp(leaf: leaf, intermediate: intermediate)], verdict, classes, severity: severity,
                flags: flags, features: [.online])
            vector.revision += 1  // the responder moved from port 46960 to 6960 (below the ephemeral ranges): new AIA bytes
            return vector
        }
        let status = "every one of Apple's verifiers with online checks on fails it"
        return [
            online(
                "good",
                "Both certificates good, answered by their issuers (ECDSA, a SHA-256 or SHA-1 CertID, the nonce echoed when sent, nextUpdate a week on). Every verifier that checks online must accept it.",
                leaf: .answer(.good), .valid, severity: .critical),
            online(
                "leaf-delegate",
                "The leaf good, signed by a delegated responder the intermediate certified with the ocspSigning EKU and sent in certs (RFC 6960 §4.2.2.2). Apple's verifiers accept delegates; so must every verifier.",
                leaf: .answer(.delegate), .valid),
            online(
                "leaf-revoked", "OCSP says the signing leaf is revoked: \(status), and so must every verifier.", leaf: .answer(.revoked), .invalid, [.chainRevoked],
                severity: .critical),
            online(
                "intermediate-revoked", "OCSP (answered by the root) says the intermediate is revoked: \(status).", leaf: .answer(.good), intermediate: .answer(.revoked), .invalid,
                [.chainRevoked], severity: .critical),
            online(
                "leaf-unknown", "OCSP says unknown for the leaf: a failure for Swift, Python and Node, retryable for Java; none accepts.", leaf: .answer(.unknown), .invalid,
                [.chainRevocationUnknown]),
            online("leaf-try-later", "The responder answers tryLater (3) with no status: \(status).", leaf: .answer(.tryLater), .invalid, [.chainRevocationUnknown]),
            online("leaf-malformed", "The responder answers malformedRequest (1): \(status).", leaf: .answer(.malformed), .invalid, [.chainRevocationUnknown]),
            online("leaf-unauthorized", "The responder answers unauthorized (6): \(status).", leaf: .answer(.unauthorized), .invalid, [.chainRevocationUnknown]),
            online(
                "leaf-http-500", "The leaf's responder answers HTTP 500: retryable for all four of Apple's verifiers (RETRYABLE_VERIFICATION_FAILURE), never an accept.",
                leaf: .answer(.http500), .invalid, [.chainRevocationUnavailable]),
            online(
                "intermediate-http-500", "The intermediate's responder answers HTTP 500: retryable for Apple's verifiers, never an accept.", leaf: .answer(.good),
                intermediate: .answer(.http500), .invalid, [.chainRevocationUnavailable]),
            online("leaf-garbage", "HTTP 200 with a body that is not an OCSP response: \(status) (Java: retryable).", leaf: .answer(.garbage), .invalid, [.chainRevocationUnknown]),
            online(
                "leaf-stale", "A good answer whose nextUpdate passed a day ago: Swift (4500 s leeway), Node and Python 3.1.2 (60 s) and Java's PKIX refuse it.",
                leaf: .answer(.stale), .invalid, [.chainRevocationUnknown]),
            online(
                "leaf-no-next-update",
                "A good answer without nextUpdate: Java accepts, Swift and Python 3.1.2 reject (OCSP_NO_NEXT_UPDATE). The status is good, so nothing is forged: apple-compatible takes either verdict, strict rejects.",
                leaf: .answer(.noNextUpdate), .acceptable, [.chainRevocationUnknown], severity: .medium, flags: ["OCSP_NO_NEXT_UPDATE"]),
            online(
                "leaf-wrong-key", "A good answer naming the intermediate as responder but signed by another key: \(status).", leaf: .answer(.wrongKey), .invalid,
                [.chainRevocationUnknown], severity: .critical),
            online(
                "leaf-delegate-no-eku",
                "A good answer signed by a certificate the intermediate issued without the ocspSigning EKU: not a responder (RFC 6960 §4.2.2.2), \(status).",
                leaf: .answer(.delegateWithoutEKU), .invalid, [.chainRevocationUnknown], severity: .critical),
            online(
                "leaf-no-ocsp",
                "The leaf's AIA names no OCSP responder: Swift skips the check and accepts, Python and Node fail, Java cannot determine it (OCSP_NO_RESPONDER). Only Apple's CA could issue it: apple-compatible takes either verdict, strict rejects.",
                leaf: .none, .acceptable, [.chainRevocationUnknown], severity: .medium, flags: ["OCSP_NO_RESPONDER"]),
        ]
    }()

    // MARK: - Resources

    /// Over ``jwsSizeBound``: behind `large`, either verdict outside strict (issue 21).
    static let jwsResource: [VectorSpec] = [
        spec(
            "jws-resource::payload-1mib",
            "A genuinely signed payload with a 1 MiB field. Apple's libraries read it; a verifier that refuses a JWS over 256 KiB (real ones are a few KiB) is sane. Nothing is forged, so only strict decides: it rejects (JWS_OVERSIZE). Either way it must be judged in time.",
            .transaction, [.fillField("padding", count: 1 << 20)], .acceptable, [.resource], severity: .medium, flags: ["JWS_OVERSIZE"], features: [.large]),
        spec(
            "jws-resource::x5c-100-entries",
            "x5c with 100 certificates (177 KiB, under the 256 KiB bound): not Apple's three, and a verifier that parses or chain-builds them all can be made to work hard. Refuse it early.",
            .transaction, [.chainRoles(Array(repeating: .leaf, count: 100))], .invalid, [.jwsX5C, .chainLength, .resource], severity: .medium),
        spec(
            "jws-resource::header-1mib",
            "A genuinely signed header with a 1 MiB member. Apple's libraries read it; a verifier that refuses a JWS over 256 KiB is sane. Nothing is forged, so only strict decides: it rejects (JWS_OVERSIZE).",
            .transaction, [.fillHeader("pad", count: 1 << 20)], .acceptable, [.resource], severity: .medium, flags: ["JWS_OVERSIZE"], features: [.large]),
    ]
}
