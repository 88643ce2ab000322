public import AppStoreVocabulary
public import StoreModel
import ReceiptModel
public import _ForgeSupport
import JWSModel

/// The members Apple's models define (storekit2-facts §3.1, app-store-server-library 2026), per kind and object:
/// hand edits (`--set`) may only add these unless unknown keys are allowed, so a typo or a wrong level
/// (`appAppleId` at the top of a notification instead of in `data`) is an error rather than a silent extra member.
public enum PayloadSchema {
    static let transaction: Set<String> = [
        "originalTransactionId", "transactionId", "webOrderLineItemId", "bundleId", "productId", "subscriptionGroupIdentifier", "purchaseDate",
        "originalPurchaseDate", "expiresDate", "quantity", "type", "appAccountToken", "inAppOwnershipType", "signedDate", "revocationReason",
        "revocationDate", "isUpgraded", "offerType", "offerIdentifier", "environment", "storefront", "storefrontId", "transactionReason", "currency",
        "price", "offerDiscountType", "appTransactionId", "offerPeriod", "revocationType", "revocationPercentage", "advancedCommerceInfo",
        "billingPlanType", "commitmentInfo",
        // In Apple's changelog since 2025-03-24 (a migrated subscription's earlier original transaction); no Apple
        // library models it yet, so AppleModelDriftTests cannot see it: `documentedAhead` there names it.
        "previousOriginalTransactionId",
    ]
    static let renewal: Set<String> = [
        "expirationIntent", "originalTransactionId", "autoRenewProductId", "productId", "autoRenewStatus", "isInBillingRetryPeriod",
        "priceIncreaseStatus", "gracePeriodExpiresDate", "offerType", "offerIdentifier", "signedDate", "environment", "recentSubscriptionStartDate",
        "renewalDate", "currency", "renewalPrice", "offerDiscountType", "eligibleWinBackOfferIds", "appAccountToken", "appTransactionId", "offerPeriod",
        "advancedCommerceInfo", "commitmentInfo", "renewalBillingPlanType",
    ]
    /// A transaction's `commitmentInfo` (`TransactionCommitmentInfo`) and renewal info's (`RenewalCommitmentInfo`).
    static let transactionCommitmentInfo: Set<String> = ["billingPeriodNumber", "commitmentExpiresDate", "commitmentPrice", "totalBillingPeriods"]
    static let renewalCommitmentInfo: Set<String> = [
        "commitmentAutoRenewProductId", "commitmentAutoRenewStatus", "commitmentRenewalBillingPlanType", "commitmentRenewalDate", "commitmentRenewalPrice",
    ]
    static let appTransaction: Set<String> = [
        "receiptType", "appAppleId", "bundleId", "applicationVersion", "versionExternalIdentifier", "receiptCreationDate", "originalPurchaseDate",
        "originalApplicationVersion", "deviceVerification", "deviceVerificationNonce", "preorderDate", "appTransactionId", "originalPlatform", "signedDate",
    ]
    static let realtime: Set<String> = [
        "originalTransactionId", "appAppleId", "productId", "userLocale", "requestIdentifier", "signedDate", "environment",
    ]
    static let notification: Set<String> = [
        "notificationType", "subtype", "notificationUUID", "data", "version", "signedDate", "summary", "externalPurchaseToken", "appData",
    ]
    static let notificationData: Set<String> = [
        "environment", "appAppleId", "bundleId", "bundleVersion", "signedTransactionInfo", "signedRenewalInfo", "status", "consumptionRequestReason",
    ]
    static let notificationSummary: Set<String> = [
        "requestIdentifier", "environment", "appAppleId", "bundleId", "productId", "storefrontCountryCodes", "failedCount", "succeededCount",
    ]
    static let externalPurchaseToken: Set<String> = [
        "externalPurchaseId", "tokenCreationDate", "appAppleId", "bundleId", "tokenType", "tokenExpirationDate",
    ]
    /// RESCIND_CONSENT's `appData` (Apple's AppData).
    static let notificationAppData: Set<String> = [
        "appAppleId", "bundleId", "environment", "signedAppTransactionInfo",
    ]

    /// The members of the object at `path` in a payload of `kind`; nil where the schema is open or not modelled here
    /// (`advancedCommerceInfo`, array elements), which accepts any member.
    public static func members(of kind: JWSKind, at path: [String]) -> Set<String>? {
        switch (kind, path) {
        case (.transaction, []): transaction
        case (.renewal, []): renewal
        case (.transaction, ["commitmentInfo"]): transactionCommitmentInfo
        case (.renewal, ["commitmentInfo"]): renewalCommitmentInfo
        case (.appTransaction, []): appTransaction
        case (.realtime, []): realtime
        case (.notification, []): notification
        case (.notification, ["data"]): notificationData
        case (.notification, ["summary"]): notificationSummary
        case (.notification, ["externalPurchaseToken"]): externalPurchaseToken
        case (.notification, ["appData"]): notificationAppData
        default: nil
        }
    }

    /// Refuses a pointer that is not RFC 6901 or names, at any level, a member Apple's schema does not have.
    public static func check(_ pointer: String, in kind: JWSKind, allowUnknownKeys: Bool) throws(ForgeError) {
        guard let tokens = JSONPointer.tokens(pointer), !tokens.isEmpty else {
            throw ForgeError(.invalidScenario, "'\(pointer)' is not a JSON pointer to a member (RFC 6901: /key or /object/key)")
        }
        guard !allowUnknownKeys else { return }
        for depth in tokens.indices {
            guard let known = members(of: kind, at: Array(tokens[..<depth])) else { return }
            guard known.contains(tokens[depth]) else {
                throw ForgeError(
                    .invalidScenario,
                    "unknown key '\(tokens[depth])' at \(pointer): Apple's \(kind.rawValue) schema has no such member there, and unknown keys are not allowed")
            }
        }
    }
}

/// One hand edit of a payload, written `POINTER=JSON` (`/data/appAppleId=1234`): the member an RFC 6901 pointer
/// names, set to a JSON value. A bare name is a top-level member (`storefront="FRA"` is `/storefront`). What the
/// pointer may name is ``PayloadSchema/check(_:in:allowUnknownKeys:)``'s to say when the edit is applied.
public struct PayloadAssignment: Sendable, Hashable {
    public let pointer: String
    public let value: JSONValue

    public init(pointer: String, value: JSONValue) {
        self.pointer = pointer
        self.value = value
    }

    /// Reads `POINTER=JSON`, split at the first `=` (a JSON value may hold more).
    public init(parsing text: String) throws(ForgeError) {
        guard let equals = text.firstIndex(of: "="), let value = try? JSONValue(parsing: Array(text[text.index(after: equals)...].utf8)) else {
            throw ForgeError(.conflictingOptions, "'\(text)' is not pointer=json: give e.g. /data/appAppleId=1234 or storefront=\"FRA\"")
        }
        self.init(pointer: Self.pointer(text[..<equals]), value: value)
    }

    /// A pointer as written by hand: one starting with `/` as it is, a bare name as the top-level member it names.
    public static func pointer(_ text: some StringProtocol) -> String { text.hasPrefix("/") ? String(text) : "/" + JSONPointer.escape(String(text)) }
}

extension JSONValue {
    /// Whether every number in it survives JSON: a non-finite one (`1e400` parses to infinity) would be written as `null`.
    var isCarriable: Bool {
        switch self {
        case .number(let value): value.isFinite
        case .array(let elements): elements.allSatisfy(\.isCarriable)
        case .object(let members): members.allSatisfy { $0.value.isCarriable }
        default: true
        }
    }

    /// Sets (or with nil removes) the member a pointer names; its parent must exist. Array elements are named by index.
    mutating func edit(_ pointer: String, setting value: JSONValue?) throws(ForgeError) {
        guard let tokens = JSONPointer.tokens(pointer), !tokens.isEmpty else {
            throw ForgeError(.invalidScenario, "'\(pointer)' is not a JSON pointer to a member (RFC 6901: /key or /object/key)")
        }
        try edit(tokens[...], setting: value, pointer: pointer)
    }

    private mutating func edit(_ tokens: ArraySlice<String>, setting value: JSONValue?, pointer: String) throws(ForgeError) {
        guard let token = tokens.first else { return }
        let rest = tokens.dropFirst()
        switch self {
        case .object(var members):
            if rest.isEmpty {
                members[token] = value
            } else {
                guard var child = members[token] else { throw ForgeError(.invalidScenario, "\(pointer): the payload has no member '\(token)' to edit inside") }
                try child.edit(rest, setting: value, pointer: pointer)
                members[token] = child
            }
            self = .object(members)
        case .array(var elements):
            guard let index = Int(token), elements.indices.contains(index) else {
                throw ForgeError(.invalidScenario, "\(pointer): '\(token)' is not an index of the array (0..<\(elements.count))")
            }
            if rest.isEmpty, let value {
                elements[index] = value
            } else if rest.isEmpty {
                elements.remove(at: index)
            } else {
                try elements[index].edit(rest, setting: value, pointer: pointer)
            }
            self = .array(elements)
        default:
            throw ForgeError(.invalidScenario, "\(pointer): '\(token)' is inside a value that is neither an object nor an array")
        }
    }
}
