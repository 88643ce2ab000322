#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import _ForgeSupport

/// What `forge storekit show` prints of a `.storekit` file: lines for people, JSON for programs. Linear in the file:
/// each product's group is found by id, never by searching the groups.
extension StoreKitConfiguration {
    /// The storefront prices are shown in: the file's, else the United States.
    public var listedStorefront: Storefront { storefront.flatMap(Storefront.init(code:)) ?? .unitedStates }

    /// One line per product, one per offer (the command adds the file's own line). Ids, names and offer ids are the
    /// file's text, so they are escaped (``TerminalText``): a control character or a bidi override in them is shown,
    /// never run by the terminal. Periods and prices were checked when read.
    public func listing() -> [String] {
        let storefront = listedStorefront
        let shown = TerminalText.escaped
        var lines: [String] = []
        lines.reserveCapacity(products.count)
        for product in products {
            var line = "\(shown(product.productID))  \(product.type.rawValue)"
            if let period = product.period { line += " \(period)" }
            if let price = product.price { line += "  \(price) \(storefront.currency)" }
            if let group = group(of: product.productID) {
                line += "  group \(shown(group.name)) (\(shown(group.id))) level \(product.groupLevel.map(String.init) ?? "?")"
            }
            if product.familyShareable == true { line += "  family-shareable" }
            if let name = names[product.productID] { line += "  \"\(shown(name))\"" }
            lines.append(line)
            for offer in [product.introductoryOffer].compactMap(\.self) + (product.offers ?? []) {
                let price = offer.price.map { " \($0) \(storefront.currency)" } ?? ""
                lines.append(
                    "    \(offer.kind.rawValue)\(offer.id.map { " \(shown($0))" } ?? ""): \(offer.paymentMode.rawValue)\(offer.period.map { " \(offer.periods ?? 1) × \($0)" } ?? "")\(price)"
                )
            }
        }
        return lines
    }

    /// The products as the scenario's `products` take them, with the version, storefront, time rate and groups; an
    /// error only if Foundation's encoder fails.
    public func listingJSON() throws -> JSONValue {
        let products = try JSONValue(parsing: JSONEncoder().encode(self.products))
        return .object([
            ("version", .integer(Int64(version))),
            ("storefront", storefront.map(JSONValue.string) ?? .null),
            ("timeRate", timeRate.map { .integer(Int64($0.rawValue)) } ?? .null),
            ("groups", .array(groups.map { .object([("id", .string($0.id)), ("name", .string($0.name)), ("products", .array($0.productIDs.map(JSONValue.string)))]) })),
            ("products", products),
        ])
    }
}
