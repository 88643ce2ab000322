#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import _ForgeSupport
package import ReceiptModel
package import StoreModel

/// A subscription's state at the time the checks evaluate: from a receipt, the latest expiry of each original
/// transaction's auto-renewable purchases; from a JWS, the transaction's own. What `validate` and `jws validate`
/// report beside the verdict, so a `valid` on an expired subscription says so.
package struct SubscriptionState: Sendable, Hashable {
    package let productID: String
    package let expires: Date
    package let revoked: Date?

    /// Its status: without renewal info only active, expired or revoked.
    package func status(at now: Date) -> SubscriptionStatus { SubscriptionStatus(expiresDate: expires, revoked: revoked != nil, renewal: nil, at: now) }

    /// The `subscriptions` member of a JSON report: the state at `now`.
    package func json(at now: Date) -> JSONValue {
        .object([
            ("productId", .string(productID)), ("state", .string(status(at: now).name)), ("expiresDate", .string(ReceiptDate.format(expires))),
            ("revocationDate", revoked.map { .string(ReceiptDate.format($0)) } ?? .null), ("evaluatedAt", .string(ReceiptDate.format(now))),
        ])
    }

    /// The receipt's subscriptions: per original transaction (else product), its purchase that expires last.
    package static func of(_ receipt: AppReceipt?) -> [SubscriptionState] {
        var latest: [String: SubscriptionState] = [:]
        var order: [String] = []
        for purchase in receipt?.inAppPurchases ?? [] {
            guard let expires = purchase.expiresDate else { continue }
            let key = purchase.originalTransactionID ?? purchase.productID ?? ""
            if let known = latest[key], known.expires >= expires { continue }
            if latest[key] == nil { order.append(key) }
            latest[key] = SubscriptionState(productID: purchase.productID ?? "?", expires: expires, revoked: purchase.cancellationDate)
        }
        return order.compactMap { latest[$0] }
    }

    /// A JWS transaction's subscription (its own, or a notification's signed transaction), when it expires.
    package static func of(_ report: JWSReport) -> [SubscriptionState] {
        let transaction = report.nested.first { $0.field == "signedTransactionInfo" }?.report.payload ?? report.payload
        guard let transaction, let milliseconds = transaction["expiresDate"]?.numericValue, let expires = ReceiptDate.instant(milliseconds: milliseconds) else {
            return []
        }
        let revoked = transaction["revocationDate"]?.numericValue.flatMap { ReceiptDate.instant(milliseconds: $0) }
        return [SubscriptionState(productID: transaction["productId"]?.stringValue ?? "?", expires: expires, revoked: revoked)]
    }
}
