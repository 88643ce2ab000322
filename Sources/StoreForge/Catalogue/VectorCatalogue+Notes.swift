import StoreModel
public import ReceiptCorpus
import _ForgeSupport

extension VectorCatalogue {
    /// Every flag a vector may carry, explained once: the bug class, what it means, why it matters.
    public static let notes: [String: Note] = receiptNotes.merging(jwsNotes) { receipt, _ in receipt }

    static let receiptNotes: [String: Note] = [
        "BER": Note(
            bugClass: "encoding-tolerance", description: "The container uses valid BER that is not DER: indefinite lengths or a segmented eContent, as every Xcode receipt does.",
            effect: "DER-only parsers reject genuine Xcode receipts.",
            links: ["https://github.com/Cocoanetics/Kvitto/issues/15", "https://github.com/RevenueCat/purchases-ios/pull/1446"]),
        "NON_MINIMAL_LENGTH": Note(
            bugClass: "encoding-tolerance", description: "Definite lengths use more length octets than needed (BER allows it, DER does not).",
            effect: "Strict DER parsers reject; lenient ones accept.", links: []),
        "UNSORTED_SET": Note(
            bugClass: "encoding-tolerance", description: "The payload SET OF is not in DER order (Xcode writes ascending type order).",
            effect: "Strict DER parsers reject.", links: []),
        "NON_MINIMAL_INTEGER": Note(bugClass: "encoding-tolerance", description: "An INTEGER value has a redundant leading zero byte.", effect: nil, links: []),
        "WRONG_INNER_TAG": Note(
            bugClass: "type-confusion",
            description:
                "One rule for every identity and date attribute (receipt type, bundle id, app version, creation and expiration dates): its value carries another string type than Apple documents (UTF8String for identities, IA5String for dates). The text is the same and the signature covers it, so nothing is forged: strict rejects, apple-compatible and lenient leave it to the validator.",
            effect: "Parsers that ignore the tag read the text anyway; strict ones reject. Apple's own receipts never do it.",
            links: ["https://developer.apple.com/library/archive/releasenotes/General/ValidateAppStoreReceipt/Chapters/ReceiptFields.html"]),
        "NEGATIVE_QUANTITY": Note(bugClass: "semantic-validation", description: "An in-app purchase has quantity -1.", effect: "Entitlement arithmetic goes wrong.", links: []),
        "INCOMPLETE_PURCHASE": Note(bugClass: "semantic-validation", description: "An in-app purchase lacks its product id.", effect: nil, links: []),
        "UNCOMMON_DIGEST": Note(
            bugClass: "algorithm-agility", description: "The receipt is signed consistently with a digest Apple never used for receipts (SHA-384, SHA-512).",
            effect: "Validators that map any non-SHA-1 digest to SHA-256 fail or, worse, pass by accident.",
            links: ["https://github.com/tikhop/TPInAppReceipt"]),
        "LEGACY_SHA1": Note(
            bugClass: "algorithm-agility", description: "SHA-1 digest, as all receipts before August 2023.", effect: nil,
            links: ["https://developer.apple.com/documentation/technotes/tn3138-handling-app-store-receipt-signing-certificate-changes"]),
        "SIGNED_ATTRIBUTES": Note(
            bugClass: "cms-variant",
            description: "The SignerInfo carries CMS signed attributes (Apple's never do); the signature covers them and messageDigest covers the content.",
            effect: "Validators that hash the content directly reject a correct signature.", links: []),
        "EXTRA_CERTIFICATE": Note(
            bugClass: "chain-shape", description: "More certificates are embedded than the chain needs.",
            effect: "Validators that demand exactly three embedded certificates reject.", links: []),
        "ROOT_NOT_EMBEDDED": Note(bugClass: "chain-shape", description: "The root is not embedded; it must come from the validator's trust store.", effect: nil, links: []),
        "CERTIFICATE_ORDER": Note(
            bugClass: "signer-identification", description: "Certificates are not embedded leaf first; the signer must be found by issuer and serial, not by position.",
            effect: "Validators taking certificates.first as the signer check the signature with the wrong key.",
            links: ["https://github.com/IdeasOnCanvas/AppReceiptValidator"]),
        "KEY_USAGE": Note(
            bugClass: "certificate-policy",
            description:
                "The signing certificate lacks the digitalSignature key usage. RFC 5280 §4.2.1.3 says the key then must not verify signatures, so rejecting is right; path validators that check no leaf key usage (OpenSSL with purpose any, Java's PKIX, swift-certificates' RFC 5280 policy) accept, and the signer is still Apple's chain: either verdict passes outside strict.",
            effect: nil, links: ["https://www.rfc-editor.org/rfc/rfc5280#section-4.2.1.3"]),
        "CRITICAL_MARKER": Note(
            bugClass: "certificate-policy",
            description:
                "The receipt-signing marker extension is marked critical (Apple's is not). RFC 5280 §4.2 requires rejecting a certificate with a critical extension the validator does not process, and Apple's server library (swift-certificates with an OID policy that lists no critical extensions) does reject it; a validator that processes the marker may accept. Strict and apple-compatible reject.",
            effect: "Validators that ignore criticality accept a certificate Apple's own verifier refuses.",
            links: ["https://www.rfc-editor.org/rfc/rfc5280#section-4.2"]),
        "FUTURE_CREATION": Note(bugClass: "time-policy", description: "The receipt's creation date is after the time it is judged at.", effect: nil, links: []),
        "HISTORICAL_VALIDATION": Note(
            bugClass: "time-policy", description: "The chain is valid at the receipt's creation date but expired now; Apple's practice judges it at creation.",
            effect: "Validators checking against the wall clock reject every old receipt (their fixtures expire).",
            links: ["https://github.com/IdeasOnCanvas/AppReceiptValidator/issues/90"]),
        "EXPIRED_SUBSCRIPTION_IS_VALID": Note(
            bugClass: "semantic-validation", description: "A subscription in the receipt has expired; the receipt itself is still valid.",
            effect: "Validators that reject such receipts lock out users who resubscribe.",
            links: ["https://github.com/j3k0/cordova-plugin-purchase/issues/825"]),
        "DUPLICATE_ATTRIBUTE": Note(
            bugClass: "parser-differential", description: "An identity attribute appears twice with different values.",
            effect: "Two parsers may read different values: one checks the bundle id the other grants.", links: []),
        "OPENSSL_DISAGREES": Note(
            bugClass: "oracle-disagreement",
            description: "OpenSSL's generic CMS verification (openssl cms -verify) accepts this receipt while Apple's receipt rules reject it; the vector's description says why.",
            effect: "A validator built on a generic CMS verify call inherits OpenSSL's tolerance here.", links: []),
        "TRANSPORT_ENCODING": Note(
            bugClass: "transport-tolerance",
            description:
                "The receipt is wrapped in a variant of its text form: base64 with line breaks, without padding or URL-safe, base64 of base64, PEM. Only harnesses declaring `transport-decoding` see these vectors (they test an adapter's decoding, not signature validation). Apple's own endpoints differ (verifyReceipt rejects line breaks; Apple's ReceiptUtility takes one base64 form), so only strict decides: it rejects.",
            effect: "Validators that accept only one form reject what some clients send; lenient decoders accept input Apple would not.",
            links: ["https://github.com/apple/app-store-server-library-node/issues/58"]),
    ]

    /// What each feature requires of a validator; a harness skips vectors whose features it lacks.
    public static let features: [String: String] = Feature.descriptions

    /// The error classes, matched by prefix (DESIGN §5): owned by `ErrorClass`.
    public static let errorTaxonomy: [String: String] = ErrorClass.taxonomy

    /// How each profile resolves `acceptable` vectors (`Profile.resolve`).
    ///
    /// `apple-compatible` follows one rule, written here once: a quirk resolves to **valid** where Apple
    /// itself writes that shape or its own verifiers accept it (a validator that refuses it rejects what
    /// Apple signs), to **invalid** where RFC 5280 or Apple's verifiers refuse it and a validator could be
    /// fooled, and is left **open** (either verdict passes) where Apple never writes the shape and
    /// accepting it cannot let a forgery through. Each vector's description gives its own reason.
    public static let profiles: [String: Profile] = {
        let flags = Set(all.filter { $0.verdict == .acceptable }.flatMap(\.flags)).sorted()  // the quirks profiles decide
        let appleWrites = ["NON_MINIMAL_LENGTH", "UNSORTED_SET", "SIGNED_ATTRIBUTES"]
        let appleRefuses = ["CRITICAL_MARKER"]
        var appleCompatible: [String: Verdict] = [:]
        for flag in flags { appleCompatible[flag] = appleWrites.contains(flag) ? .valid : appleRefuses.contains(flag) ? .invalid : .acceptable }
        return [
            ProfileID.strict: Profile(
                description:
                    "Only Apple's exact shapes: every quirk is a rejection. For StoreKit 2 that means an AppTransaction's chain is judged at its signedDate when it has one (as Apple's Python library does), and a JWS over 256 KiB is refused.",
                acceptable: Dictionary(uniqueKeysWithValues: flags.map { ($0, .invalid) }), otherwise: .invalid),
            ProfileID.appleCompatible: Profile(
                description:
                    "Accepts what Apple writes and its verifiers accept, rejects what RFC 5280 or Apple's verifiers refuse, and leaves harmless shapes Apple never writes to the validator.",
                acceptable: appleCompatible, otherwise: .acceptable),
            ProfileID.lenient: Profile(description: "Either verdict passes on every acceptable vector.", acceptable: [:], otherwise: .acceptable),
        ]
    }()
}
