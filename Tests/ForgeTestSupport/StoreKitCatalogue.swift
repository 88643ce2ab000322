/// `.storekit` files of any size for tests: the reader's and `forge storekit show`'s scale and group-id checks
/// use the same text.
public enum StoreKitCatalogue {
    /// A version-4 file: `consumables` consumables, then `groups` groups of `perGroup` monthly subscriptions, group
    /// `g` with the id `groupIDs[g]` (default `2100000g`).
    public static func text(consumables: Int, groups: Int, perGroup: Int, groupIDs: [String]? = nil) -> String {
        var text = #"{ "products" : ["#
        for index in 0..<consumables {
            text += (index == 0 ? "" : ",") + #"{ "displayPrice" : "0.99", "productID" : "coins.\#(index)", "referenceName" : "Coins \#(index)", "type" : "Consumable" }"#
        }
        text += #"], "subscriptionGroups" : ["#
        for group in 0..<groups {
            let id = groupIDs?[group] ?? "2100000\(group)"
            text += (group == 0 ? "" : ",") + #"{ "id" : "\#(id)", "name" : "Group \#(group)", "subscriptions" : ["#
            for level in 0..<perGroup {
                text +=
                    (level == 0 ? "" : ",")
                    + #"{ "displayPrice" : "4.99", "groupNumber" : \#(level % 1000 + 1), "productID" : "sub.\#(group).\#(level)", "recurringSubscriptionPeriod" : "P1M", "type" : "RecurringSubscription" }"#
            }
            text += "] }"
        }
        return text + #"], "version" : { "major" : 4, "minor" : 0 } }"#
    }
}
