#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport
import StoreModel

/// The flag of `forge make` and `forge jws make` that sets each scenario field: the one place a key path meets
/// a flag. The store model's errors name key paths (`'purchases[0].expiresDate'`); for a scenario made from
/// flags the CLI prints the flag the user typed (`--expires`).
enum ScenarioFlags {
    /// Scenario field (the key path without `purchases[n].`) → flag (see ``ScenarioOptions``).
    static let byField: [String: String] = [
        "productId": "--product", "type": "--type", "quantity": "--quantity", "purchaseDate": "--purchase-date", "expiresDate": "--expires",
        "expired": "--expired", "renewals": "--renewals", "cancelled": "--cancelled", "trial": "--trial", "intro": "--intro", "promo": "--promo",
        "period": "--period", "bundleId": "--bundle-id", "deviceId": "--device-id", "now": "--now", "purchases": "--product",
        "billingPlan": "--billing-plan",
    ]

    /// The flag for a key path (`purchases[0].trial` → `--trial`); nil for a field no flag sets.
    static func flag(for keyPath: String) -> String? {
        let field = keyPath.hasPrefix("purchases[") ? keyPath.split(separator: ".", maxSplits: 1).dropFirst().first.map(String.init) ?? keyPath : keyPath
        return byField[field]
    }

    /// The error's message with each field it names (`'purchases[0].trial'`) said as its flag (`--trial`).
    static func message(_ error: ForgeError) -> String {
        error.fields.reduce(error.message) { message, keyPath in
            flag(for: keyPath).map { message.replacing("'\(keyPath)'", with: $0) } ?? message
        }
    }
}
