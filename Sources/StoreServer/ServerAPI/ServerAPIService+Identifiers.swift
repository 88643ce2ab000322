#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import _ForgeSupport
import AppStoreVocabulary
import StoreForge
import StoreModel

extension ServerAPIService {
    /// `GET /_forge/ids`: the ids a test calls the Server API with, per customer (in `--scenario` order) at the server
    /// clock `now` — what a fixture otherwise scrapes from a signed payload. Per purchase (one original transaction):
    /// its product, original and latest transaction id, the latest's order id (Look Up Order ID) and every transaction
    /// id made by `now`; per customer its bundle id, environment, appAppleId and appTransactionId. An `xcode-*` store's
    /// ids are "0" (its payloads'), and the Server API does not serve it (`served: false`); a customer whose scenario
    /// cannot be looked at `now` is listed with its error and no purchases.
    package func identifiers(now: Date) -> JSONValue {
        let customers = state.customers.enumerated().map { index, customer -> JSONValue in
            var members: [(String, JSONValue)] = [("customer", .integer(Int64(index)))]
            guard let forge else { return .object(JSONObject(members)) }
            let rendering: StoreRendering
            do throws(ForgeError) { rendering = try forge.rendering(customer.scenario, madeAt: customer.madeAt, now: now) } catch {
                members.append(("error", .string(error.message)))
                return .object(JSONObject(members))
            }
            let store = rendering.store
            let id = { (value: String) -> JSONValue in .string(rendering.isXcode ? "0" : value) }
            let made = store.transactions.filter { $0.purchaseDate <= now }
            var purchases: [(original: String, transactions: [Transaction])] = []
            for transaction in made {
                if let index = purchases.firstIndex(where: { $0.original == transaction.originalTransactionID }) {
                    purchases[index].transactions.append(transaction)
                } else {
                    purchases.append((transaction.originalTransactionID, [transaction]))
                }
            }
            members += [
                ("bundleId", .string(store.bundleID)), ("environment", store.environment.map { .string($0.rawValue) } ?? .null),
                ("served", .bool(!rendering.isXcode)), ("appAppleId", rendering.appAppleID.map(JSONValue.integer) ?? .null),
                ("appTransactionId", id(rendering.appTransactionID)),
                (
                    "purchases",
                    .array(
                        purchases.compactMap { purchase -> JSONValue? in
                            guard let latest = purchase.transactions.last else { return nil }
                            return .object([
                                ("productId", .string(latest.productID)), ("type", .string(latest.type.rawValue)), ("originalTransactionId", id(purchase.original)),
                                ("latestTransactionId", id(latest.transactionID)), ("orderId", .string(store.orderID(of: latest))),
                                ("transactionIds", .array(purchase.transactions.map { id($0.transactionID) })),
                            ])
                        })
                ),
            ]
            return .object(JSONObject(members))
        }
        return .object([("now", .string(ReceiptDate.format(now))), ("customers", .array(customers))])
    }
}
